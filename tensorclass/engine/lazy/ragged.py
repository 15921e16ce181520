"""Reading keys whose members' leaves have different shapes: as a list, padded, or as a
nested tensor (``torch.nested``); ``densify`` turns the whole stack into nested tensors.

>>> import torch
>>> from tensorclass import TensorDict, lazy_stack
>>> stack = lazy_stack([TensorDict(obs=torch.zeros(3)), TensorDict(obs=torch.ones(5))])
>>> stack.get("obs", as_padded_tensor=True, padding_value=-1.0)
tensor([[ 0.,  0.,  0., -1., -1.],
        [ 1.,  1.,  1.,  1.,  1.]])
>>> stack.get_nestedtensor("obs").is_nested
True
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, overload

import torch
from torch import Tensor
from torch.nn import functional

from ...errors import BatchSizeError, StructureMismatchError
from ...keys import NestedKey
from ..core.lazy_stacks import is_lazy_stack
from ..core.state import MISSING, TensorCore
from ..ops import TensorOps
from .self_type import S

__all__ = ["densify", "get", "get_nestedtensor", "is_ragged", "pad_stack", "ragged_batch"]

_ABSENT = object()
_D = TypeVar("_D")
#: where ``get(key, as_padded_tensor=True)`` pads
_PaddingSide = Literal["left", "right"]


def ragged_batch(sizes: list[torch.Size], where: str) -> torch.Size:
    """The batch size the members of a lazy stack share, ``-1`` at each dim where they
    differ (episodes of different lengths: ``[3]`` and ``[5]`` give ``[-1]``, the stack
    dim left out). Members must have the same number of batch dims."""
    first = sizes[0]
    if any(len(size) != len(first) for size in sizes):
        shown = [list(size) for size in sizes]
        raise BatchSizeError(
            f"{where}: members have different numbers of batch dims {shown}; a lazy stack "
            f"needs one number of batch dims (their sizes may differ)"
        )
    return torch.Size(
        size if all(other[d] == size for other in sizes) else -1 for d, size in enumerate(first)
    )


def is_ragged(self: TensorCore) -> bool:
    """Whether some batch dim of ``self`` (a lazy stack) differs between its members (its
    size is then ``-1``)."""
    return -1 in self._batch_size


def pad_stack(tensors: list[Tensor], dim: int, side: str, value: float, key: object) -> Tensor:
    """Stack ``tensors`` along ``dim`` after padding each to the largest size of every dim."""
    if side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right', not {side!r}")
    ndims = {t.ndim for t in tensors}
    if len(ndims) != 1:
        shapes = [list(t.shape) for t in tensors]
        raise StructureMismatchError(
            f"cannot pad key {key!r}: the members' values have different numbers of dims {shapes}"
        )
    largest = [max(sizes) for sizes in zip(*(t.shape for t in tensors))]
    padded = []
    for t in tensors:
        spec: list[int] = []
        for size, target in zip(reversed(t.shape), reversed(largest)):
            missing = target - size
            spec += [missing, 0] if side == "left" else [0, missing]
        padded.append(functional.pad(t, spec, value=value) if any(spec) else t)
    return torch.stack(padded, dim)


def get(
    self: S,
    key: NestedKey,
    default: object = MISSING,
    *,
    as_list: bool = False,
    as_padded_tensor: bool = False,
    as_nested_tensor: bool = False,
    padding_side: _PaddingSide = "right",
    padding_value: float = 0.0,
    layout: torch.layout | None = None,
) -> Any:
    """The lazy stack's ``get`` (declared with its overloads in ``lazy/stack.py``)."""
    chosen = sum(map(bool, (as_list, as_padded_tensor, as_nested_tensor)))
    if not chosen:
        return TensorOps.get(self, key, default)
    if chosen > 1:
        raise ValueError("get: pass only one of as_list, as_padded_tensor, as_nested_tensor")
    values = _member_values(self, key, default)
    if values is None:
        return default
    if as_list:
        return values
    tensors = _tensors(key, values)
    if as_padded_tensor:
        return pad_stack(tensors, self._lazy.dim, padding_side, padding_value, key)
    return _nested(self, key, tensors, torch.jagged if layout is None else layout)


def _member_values(self: S, key: NestedKey, default: object) -> list[object] | None:
    """Each member's value under ``key``; None if a member lacks it and a default is
    given (as ``get``); else the usual missing-key error, naming the members."""
    members = self._lazy.members
    values = [m.get(key, _ABSENT) for m in members]
    if any(v is _ABSENT for v in values):
        if default is not MISSING:
            return None
        TensorOps.get(self, key)  # raises the error that names the members lacking it
    return values


def _tensors(key: NestedKey, values: list[Any]) -> list[Tensor]:
    if not all(isinstance(v, Tensor) for v in values):
        kinds = sorted({type(v).__name__ for v in values})
        raise TypeError(
            f"cannot read key {key!r} as a padded or nested tensor: the members hold "
            f"{', '.join(kinds)} values, not tensors (use as_list=True)"
        )
    return values


def _nested(self: S, key: NestedKey, tensors: list[Tensor], layout: torch.layout) -> Tensor:
    if self._lazy.dim != 0:
        raise ValueError(
            f"cannot read key {key!r} as a nested tensor: the stack dim is "
            f"{self._lazy.dim}, and a nested tensor's ragged values are along dim 0"
        )
    return torch.nested.nested_tensor(tensors, layout=layout)


@overload
def get_nestedtensor(self: S, key: NestedKey, *, layout: torch.layout | None = None) -> Tensor: ...


@overload
def get_nestedtensor(
    self: S, key: NestedKey, default: _D, *, layout: torch.layout | None = None
) -> Tensor | _D: ...


def get_nestedtensor(
    self: S, key: NestedKey, default: object = MISSING, *, layout: torch.layout | None = None
) -> Any:
    """The members' tensors under ``key`` as one ``torch.nested`` tensor (``layout``:
    ``torch.strided`` by default, or ``torch.jagged``); needs stack dim 0.

    >>> import torch
    >>> from tensorclass import TensorDict, lazy_stack
    >>> stack = lazy_stack([TensorDict(x=torch.zeros(2)), TensorDict(x=torch.zeros(4))])
    >>> [t.shape for t in stack.get_nestedtensor("x").unbind()]
    [torch.Size([2]), torch.Size([4])]
    """
    values = _member_values(self, key, default)
    if values is None:
        return default
    tensors = _tensors(key, values)
    return _nested(self, key, tensors, torch.strided if layout is None else layout)


def densify(self: S, layout: torch.layout = torch.strided) -> Any:
    """A dense instance of the members' class whose tensor keys are ``torch.nested``
    tensors of ``layout`` where the members' shapes differ (stacked tensors where they
    agree); nested lazy stacks are densified too. Needs stack dim 0.
    """
    leaves = self._lazy
    if leaves.dim != 0:
        raise ValueError(
            f"cannot densify a lazy stack along dim {leaves.dim}: nested tensors hold "
            f"their ragged values along dim 0 (permute the stack dim first)"
        )
    data: dict[str, object] = {}
    for key in leaves:
        values = [m._data[key] for m in leaves.members]
        first = values[0]
        if isinstance(first, Tensor) and all(isinstance(v, Tensor) for v in values):
            if all(v.shape == first.shape for v in values):
                data[key] = torch.stack(values)
            else:
                data[key] = torch.nested.nested_tensor(values, layout=layout)
        else:
            leaf = leaves[key]
            data[key] = leaf.densify(layout) if is_lazy_stack(leaf) else leaf
    return type(self)._new(data, self._batch_size, self._device, self._names)
