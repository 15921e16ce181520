"""The class methods that build lazy stacks: ``LazyStackedTensorDict.lazy_stack`` (the
spelling tensordict users reach for), ``maybe_dense_stack`` and ``from_dict``.

>>> import torch
>>> from tensorclass import LazyStackedTensorDict, TensorDict
>>> stack = LazyStackedTensorDict.lazy_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(4))])
>>> stack.get("a", as_list=True)
[tensor([0., 0., 0.]), tensor([0., 0., 0., 0.])]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from ..errors import StructureMismatchError
from ..registry import dynamic_class
from .lazy_ragged import LazyRagged, pad_stack

__all__ = ["LazyBuilders"]


def _stack_tensors(
    items: list[Tensor],
    dim: int,
    as_list: bool,
    as_padded_tensor: bool,
    as_nested_tensor: bool,
    padding_side: str,
    padding_value: float,
    layout: torch.layout | None,
) -> Any:
    """``lazy_stack`` of plain tensors: stacked, or as a list, padded or nested."""
    if sum(map(bool, (as_list, as_padded_tensor, as_nested_tensor))) > 1:
        raise ValueError("lazy_stack: pass only one of as_list, as_padded_tensor, as_nested_tensor")
    if as_list:
        return items
    if as_padded_tensor:
        return pad_stack(items, dim, padding_side, padding_value, "items")
    if as_nested_tensor:
        if dim != 0:
            raise ValueError(f"lazy_stack: a nested tensor stacks along dim 0, not {dim}")
        if any(t.is_nested for t in items):
            raise ValueError("lazy_stack: nested tensors cannot be nested again")
        return torch.nested.nested_tensor(items, layout=torch.jagged if layout is None else layout)
    return torch.stack(items, dim)


class LazyBuilders(LazyRagged):
    """Class methods building lazy stacks (see the module documentation)."""

    __slots__ = ()

    @staticmethod
    def _restack(members: list[Any], dim: int) -> Any:
        """A lazy stack of ``members`` along ``dim`` (``LazyStackedTensorDict`` defines it)."""
        raise NotImplementedError

    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[Any],
        dim: int = 0,
        *,
        device: Any = None,
        out: Any = None,
        stack_dim_name: str | None = None,
        strict_shape: bool = False,
        as_list: bool = False,
        as_padded_tensor: bool = False,
        as_nested_tensor: bool = False,
        padding_side: str = "right",
        layout: torch.layout | None = None,
        padding_value: float = 0.0,
    ) -> Any:
        """:func:`~tensorclass.lazy_stack` as a class method (tensordict's spelling).

        ``device`` moves the members there first; ``stack_dim_name`` names the new dim;
        ``out`` (an instance of the stacked batch size) receives the values in place. The
        members must have one batch size, so ``strict_shape`` changes nothing. Given plain
        tensors, they are stacked with ``torch.stack``, or returned as a list
        (``as_list``), padded (``as_padded_tensor``, with ``padding_side`` and
        ``padding_value``) or as a ``torch.nested`` tensor of ``layout``
        (``as_nested_tensor``), as ``get`` reads a lazy stack's ragged keys.

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict, TensorDict
        >>> tds = [TensorDict(a=torch.zeros(2), batch_size=[2]) for _ in range(3)]
        >>> LazyStackedTensorDict.lazy_stack(tds, 1, stack_dim_name="t").names
        [None, 't']
        """
        members = list(items)
        if members and all(isinstance(m, Tensor) for m in members):
            return _stack_tensors(
                members,
                dim,
                as_list,
                as_padded_tensor,
                as_nested_tensor,
                padding_side,
                padding_value,
                layout,
            )
        if device is not None:
            members = [m.to(device) for m in members]
        result = cls._restack(members, dim)
        if stack_dim_name is not None:
            names = list(result._names or (None,) * len(result._batch_size))
            names[result.stack_dim] = stack_dim_name
            object.__setattr__(result, "_names", tuple(names))
        if out is not None:
            out.update_(result)
            return out
        return result

    @classmethod
    def maybe_dense_stack(
        cls, items: Sequence[Any], dim: int = 0, out: Any = None, strict: bool = False
    ) -> Any:
        """A dense ``torch.stack`` of ``items`` when they have the same keys and shapes,
        else a lazy stack. ``strict=True`` refuses instead of stacking lazily.

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict, TensorDict
        >>> same = [TensorDict(a=torch.zeros(2)) for _ in range(2)]
        >>> type(LazyStackedTensorDict.maybe_dense_stack(same)).__name__
        'TensorDict'
        >>> ragged = [TensorDict(a=torch.zeros(2)), TensorDict(a=torch.zeros(3))]
        >>> type(LazyStackedTensorDict.maybe_dense_stack(ragged)).__name__
        'LazyStackedTensorDict[TensorDict]'
        """
        members = list(items)
        try:
            return torch.stack(members, dim, out=out)
        except StructureMismatchError:
            if strict:
                raise
        result = cls._restack(members, dim)
        if out is not None:
            out.update_(result)
            return out
        return result

    @classmethod
    def from_dict(
        cls,
        input_dict: Sequence[Mapping[Any, Any]] | Mapping[str, Mapping[Any, Any]],
        *,
        auto_batch_size: bool = False,
        batch_size: Any = None,
        device: Any = None,
        batch_dims: int | None = None,
        stack_dim_name: str | None = None,
        stack_dim: int = 0,
        names: Any = None,
    ) -> Any:
        """A lazy stack of one instance per dict of ``input_dict`` (a list of dicts, or a
        dict whose keys are ``"0"``, ``"1"``...), each built by ``from_dict`` of the members'
        class with ``batch_size`` (``[]`` if not given, unless ``auto_batch_size=True``,
        which infers it up to ``batch_dims`` dims), ``device``; the dicts may have different
        keys and shapes. ``names`` names every dim of the result (exclusive with
        ``stack_dim_name``).

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict
        >>> stack = LazyStackedTensorDict.from_dict([{"a": torch.zeros(3)}, {"a": torch.ones(5)}])
        >>> stack.batch_size, stack.members[1]["a"].shape
        (torch.Size([2]), torch.Size([5]))
        """
        if isinstance(input_dict, Mapping):
            order = [str(i) for i in range(len(input_dict))]
            if sorted(input_dict) != sorted(order):
                raise KeyError(
                    f"from_dict: a dict of dicts needs the keys {order}, got {list(input_dict)}"
                )
            dicts = [input_dict[k] for k in order]
        else:
            dicts = list(input_dict)
        if names is not None and stack_dim_name is not None:
            raise ValueError("from_dict: pass names or stack_dim_name, not both")
        member: Any = getattr(cls, "_member_cls", None) or dynamic_class()
        # as tensordict: without a batch size, members get [] unless auto_batch_size=True
        size = batch_size if batch_size is not None or auto_batch_size else []
        members = [member.from_dict(d, size, device, batch_dims=batch_dims) for d in dicts]
        result = cls.lazy_stack(members, stack_dim, stack_dim_name=stack_dim_name)
        if names is not None:
            result.names = names
        return result
