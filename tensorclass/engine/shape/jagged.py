"""Nested jagged tensors (``torch.nested``, ``layout=torch.jagged``) as leaves.

Their dim 0 is the batch dim, but torch does not index (slice, list, mask) or concatenate an
NJT along dim 0. These helpers do it row by row (``unbind`` then one new NJT), as
tensordict's results read; they are called only after torch's own operation refused, so
dense leaves pay nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

import torch
from torch import Tensor

from ..core.lazy_stacks import is_lazy_stack
from ..core.state import TensorCore

__all__ = ["as_jagged", "is_jagged", "jagged_cat", "jagged_key", "jagged_parts", "jagged_take"]


def is_jagged(value: object) -> bool:
    """Whether ``value`` is a nested tensor of the jagged layout."""
    return isinstance(value, Tensor) and value.is_nested and value.layout is torch.jagged


def _rebuild(rows: Sequence[Tensor], like: Tensor) -> Tensor:
    if not rows:
        raise IndexError("selecting no row of a nested jagged tensor is not supported")
    return torch.nested.as_nested_tensor(list(rows), layout=torch.jagged).to(like.dtype)


def jagged_take(leaf: Tensor, index: object) -> Tensor | None:
    """``leaf`` (an NJT) at ``index`` along dim 0 (a slice, an integer list or tensor, a
    boolean mask), or ``None`` when ``index`` is not one of those (the caller's error
    stands)."""
    if not is_jagged(leaf):
        return None
    if isinstance(index, tuple):
        if len(index) != 1:
            return None
        index = index[0]
    if not isinstance(index, (slice, list, range, Tensor)):
        return None
    positions = torch.arange(leaf.size(0))[index]
    if positions.dim() != 1:
        return None
    rows = leaf.unbind()
    return _rebuild([rows[int(i)] for i in positions.tolist()], leaf)


def jagged_cat(leaves: Sequence[Tensor]) -> Tensor | None:
    """The NJTs ``leaves`` concatenated along dim 0, or ``None`` when one is not an NJT."""
    if not all(is_jagged(leaf) for leaf in leaves):
        return None
    return _rebuild([row for leaf in leaves for row in leaf.unbind()], leaves[0])


class _Jagged(Protocol):
    """What an NJT adds to ``Tensor`` (torch types it as a plain ``Tensor``)."""

    def lengths(self) -> Tensor | None: ...
    def offsets(self) -> Tensor: ...


def jagged_parts(leaf: Tensor) -> tuple[Tensor, Tensor]:
    """The plain tensors an NJT is made of: its own values and offsets (an NJT with holes,
    ``lengths()`` set, is made contiguous first), so ``as_jagged`` of them gives it back."""
    if cast(_Jagged, leaf).lengths() is not None:
        leaf = leaf.contiguous()
    return leaf.values(), cast(_Jagged, leaf).offsets()


def as_jagged(values: Tensor, offsets: Tensor) -> Tensor:
    """The NJT of ``values`` cut at ``offsets`` (a view of ``values``)."""
    return torch.nested.nested_tensor_from_jagged(values, offsets)


def jagged_key(node: TensorCore, path: tuple[str, ...] = ()) -> object:
    """The (nested) key of the first nested jagged tensor of ``node`` (members of lazy
    stacks included), or ``None``."""
    if is_lazy_stack(node):
        for member in node.members:
            found = jagged_key(member, path)
            if found is not None:
                return found
        return None
    for key, value in node._data.items():
        if is_jagged(value):
            return (*path, key) if path else key
        if isinstance(value, TensorCore):
            found = jagged_key(value, (*path, key))
            if found is not None:
                return found
    return None
