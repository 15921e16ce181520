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

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

import torch
from torch import Tensor
from torch.nn import functional
from torch.nn.utils.rnn import pad_sequence

from ...errors import BatchSizeError, StructureMismatchError
from ...keys import NestedKey
from ...switches import missing_gets_none
from ..core.lazy_stacks import is_lazy_stack
from ..core.state import MISSING, NO_DEFAULT, TensorCore
from ..ops import TensorOps
from .self_type import S

if TYPE_CHECKING:
    from ...tensordict import TensorDict

__all__ = [
    "copy_",
    "densify",
    "flatten_keys",
    "get",
    "get_nestedtensor",
    "is_ragged",
    "nary",
    "named_apply",
    "pad_stack",
    "ragged_batch",
    "rename_key_",
    "unflatten_keys",
    "update_",
]

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
    columns = list(zip(*(t.shape for t in tensors)))  # each dim's sizes
    largest = [max(sizes) for sizes in columns]
    if (
        dim == 0
        and all(min(sizes) == max(sizes) for sizes in columns[1:])
        and len({(t.dtype, t.device) for t in tensors}) == 1
    ):
        # only the first dim differs: torch pads and stacks in one call (a pad per member
        # copies each once more before the stack); vmap has no rule for it: padded below
        try:
            return pad_sequence(tensors, batch_first=True, padding_value=value, padding_side=side)
        except RuntimeError:
            pass
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
        return None if default is MISSING else default
    if as_list:
        return values
    tensors = _tensors(key, values)
    if as_padded_tensor:
        return pad_stack(tensors, self._lazy.dim, padding_side, padding_value, key)
    return _nested(self, key, tensors, torch.jagged if layout is None else layout)


def _member_values(self: S, key: NestedKey, default: object) -> list[object] | None:
    """Each member's value under ``key``; None if a member lacks it and a default is
    given (or ``get``'s default is ``None``); else the usual missing-key error, naming the
    members."""
    members = self._lazy.members
    values = [m.get(key, _ABSENT) for m in members]
    if any(v is _ABSENT for v in values):
        if default is NO_DEFAULT or (default is MISSING and not missing_gets_none()):
            self[key]  # raises the error that names the members lacking it
        return None
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
        return None if default is MISSING else default
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


# -- member by member where the members' batch sizes differ ------------------------------
# A ragged stack has no dense layout, so these operations, which the engine computes on the
# stacked keys, run on each member instead (a stack that is not ragged keeps the engine's).


def _parts_of(self: S, other: object, what: str) -> list[Any]:
    """One part of ``other`` (an instance over the stack's batch dims) per member."""
    parts = self._split_other(other)
    if parts is None:
        shown = list(other._batch_size) if isinstance(other, TensorCore) else type(other).__name__
        raise BatchSizeError(
            f"{what}: cannot split {shown} between the members of a ragged lazy stack "
            f"(batch_size={list(self._batch_size)}); give an instance of its batch size"
        )
    return parts


def update_(
    self: S,
    input_dict_or_td: Mapping[Any, Any] | TensorCore | None = None,
    clone: bool = False,
    *,
    non_blocking: bool = False,
    keys_to_update: Iterable[NestedKey] | None = None,
) -> S:
    """``update_`` of a lazy stack (member by member when ragged)."""
    if not is_ragged(self) or not isinstance(input_dict_or_td, TensorCore):
        result: S = TensorOps.update_(
            self,
            input_dict_or_td,
            clone,
            non_blocking=non_blocking,
            keys_to_update=keys_to_update,
        )
        return result
    parts = _parts_of(self, input_dict_or_td, "update_")
    for member, part in zip(self._lazy.members, parts):  # each checks its keys first
        for key in part.keys(True, True):
            if key not in member.keys(True, True):
                raise member._missing(key)
    for member, part in zip(self._lazy.members, parts):
        member.update_(part, clone, non_blocking=non_blocking, keys_to_update=keys_to_update)
    return self


def copy_(self: S, tensordict: Mapping[Any, Any] | TensorCore, non_blocking: bool = False) -> S:
    """``copy_`` of a lazy stack (member by member when ragged)."""
    if not is_ragged(self):
        result: S = TensorOps.copy_(self, tensordict, non_blocking)
        return result
    return update_(self, tensordict, non_blocking=non_blocking)


def nary(
    self: S, fn: Callable[..., Tensor], operands: tuple[object, ...], kwargs: dict[str, object]
) -> S:
    """The lazy stack's ``_nary`` (``lerp``, ``addcmul``...: ``fn(leaf, *operands)`` for
    every tensor leaf): member by member when ragged and every operand splits between
    the members, else the engine's."""
    split = [self._split_other(o) for o in operands] if is_ragged(self) else [None]
    if any(parts is None for parts in split):
        result: S = TensorOps._nary(self, fn, operands, kwargs)
        return result
    members = [
        m._nary(fn, tuple(parts[i] for parts in split if parts is not None), kwargs)
        for i, m in enumerate(self._lazy.members)
    ]
    restacked: S = self._restack(members, self._lazy.dim)
    return restacked


def named_apply(
    self: S,
    fn: Callable[..., Any],
    *others: TensorCore,
    nested_keys: bool = False,
    batch_size: Any = None,
    device: Any = MISSING,
    names: Any = None,
    inplace: bool = False,
    default: Any = MISSING,
    filter_empty: bool | None = None,
    propagate_lock: bool = False,
    call_on_nested: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    out: TensorCore | None = None,
) -> S:
    """``named_apply`` of a lazy stack (see ``TensorDict.named_apply``): member by member
    when ragged (``batch_size``, ``names`` and ``out`` then need a stack that is not)."""
    options: dict[str, Any] = {
        "nested_keys": nested_keys,
        "device": device,
        "inplace": inplace,
        "default": default,
        "filter_empty": filter_empty,
        "propagate_lock": propagate_lock,
        "call_on_nested": call_on_nested,
        "is_leaf": is_leaf,
    }
    if not is_ragged(self) or batch_size is not None or names is not None or out is not None:
        engine: S = TensorOps.named_apply(
            self, fn, *others, batch_size=batch_size, names=names, out=out, **options
        )
        return engine
    split = [_parts_of(self, other, "named_apply") for other in others]
    results = [
        m.named_apply(fn, *(parts[i] for parts in split), **options)
        for i, m in enumerate(self._lazy.members)
    ]
    if inplace:
        return self
    if any(r is None for r in results):  # fn returned nothing for every leaf
        return cast(S, None)  # as the engine's named_apply
    result: S = self._restack(results, self._lazy.dim)
    return result


def rename_key_(self: S, old_key: NestedKey, new_key: NestedKey, safe: bool = False) -> S:
    """``rename_key_`` of a lazy stack (in each member when ragged)."""
    if not is_ragged(self):
        result: S = TensorOps.rename_key_(self, old_key, new_key, safe)
        return result
    for member in self._lazy.distinct():  # a refusal in a member leaves the others as they are
        if old_key not in member.keys(True) or (safe and new_key in member.keys(True)):
            TensorOps.rename_key_(member, old_key, new_key, safe)  # raises its clear error
    for member in self._lazy.distinct():
        member.rename_key_(old_key, new_key, safe)
    return self


def flatten_keys(
    self: S,
    separator: str = ".",
    inplace: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
) -> TensorDict:
    """``flatten_keys`` of a lazy stack (in each member when ragged)."""
    if not is_ragged(self) or is_leaf is not None:
        return TensorOps.flatten_keys(self, separator, inplace, is_leaf)
    results = [m.flatten_keys(separator, inplace) for m in self._lazy.members]
    # a lazy stack stands where the engine's signature says TensorDict (its members' class)
    return cast("TensorDict", self if inplace else self._restack(results, self._lazy.dim))


def unflatten_keys(self: S, separator: str = ".", inplace: bool = False) -> TensorDict:
    """``unflatten_keys`` of a lazy stack (in each member when ragged)."""
    if not is_ragged(self):
        return TensorOps.unflatten_keys(self, separator, inplace)
    results = [m.unflatten_keys(separator, inplace) for m in self._lazy.members]
    return cast("TensorDict", self if inplace else self._restack(results, self._lazy.dim))
