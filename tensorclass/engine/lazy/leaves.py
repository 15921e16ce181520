"""The storage of a lazy stack: a mapping whose values are stacked when they are read.

:class:`LazyLeaves` stands where a dense instance keeps its dict of leaves (``_data``), so
every engine operation that reads leaves works on a lazy stack unchanged: it sees each key's
members stacked along the stack dim, one key at a time. Writing a leaf splits it along the
stack dim and stores one part in each member.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from ...errors import KeyNotFoundError, StructureMismatchError
from ...non_tensor import NonTensorData, NonTensorStack, stack_non_tensors
from ...switches import stacks_capture
from ..core.state import MISSING, TensorCore
from ..leafwise.reductions import shape_mismatch
from ..shape.inplace import distinct_writes

if TYPE_CHECKING:
    from .pytree import _Tree
    from .stack import LazyStackedTensorDict

__all__ = ["LazyLeaves", "split_leaf", "stack_leaves"]

_NON_TENSOR = (NonTensorData, NonTensorStack)


def _unstackable(key: object, shapes: list[list[int]], err: RuntimeError) -> str:
    return (
        f"cannot stack key {key!r} of the lazy stack: the members hold shapes "
        f"{shapes} ({err}); read it with get(key, as_padded_tensor=True), "
        f"as_nested_tensor=True or as_list=True, or from each member"
    )


def stack_leaves(
    leaves: list[Any],
    dim: int,
    member_batch: torch.Size,
    key: object,
    restack: Callable[[list[Any], int], Any],
) -> Any:
    """Stack the members' leaves under one key (nested instances stay lazy: ``restack``
    makes a lazy stack of them)."""
    first = leaves[0]
    if isinstance(first, Tensor):
        if not all(isinstance(leaf, Tensor) for leaf in leaves):
            raise StructureMismatchError(
                f"cannot stack key {key!r}: tensors mixed with other values"
            )
        try:
            return torch.stack(leaves, dim)
        except RuntimeError as err:
            raise shape_mismatch(leaves, _unstackable, key, err) from None
    if isinstance(first, TensorCore):
        if not all(isinstance(leaf, TensorCore) for leaf in leaves):
            raise StructureMismatchError(
                f"cannot stack key {key!r}: nested instances mixed with other values"
            )
        return restack(leaves, dim)
    if all(type(leaf) in _NON_TENSOR for leaf in leaves):
        return stack_non_tensors(leaves, dim, member_batch, capture=stacks_capture())
    raise StructureMismatchError(f"cannot stack key {key!r}: the members hold different kinds")


def split_leaf(leaf: Any, dim: int, count: int) -> tuple[Any, ...]:
    """The parts of a stacked leaf, one per member (the inverse of :func:`stack_leaves`)."""
    if type(leaf) is NonTensorData:
        return (leaf,) * count
    parts: tuple[object, ...] = tuple(leaf.unbind(dim))
    return parts


class LazyLeaves(MutableMapping[str, Any]):
    """The ``_data`` of a lazy stack (see the module documentation).

    Iterating gives the keys every member has (in the first member's order).
    """

    __slots__ = ("_members", "dim", "owner", "tree")

    def __init__(self, owner: LazyStackedTensorDict, members: list[Any], dim: int) -> None:
        self.owner = owner
        self._members = members
        self.dim = dim
        #: the pytree children this stack was rebuilt from (see lazy_pytree), if any
        self.tree: _Tree | None = None

    @property
    def members(self) -> list[Any]:
        """The stacked instances (brought up to date with the pytree children the stack
        was rebuilt from, see lazy_pytree)."""
        if self.tree is not None:
            self.tree.refresh(self._members)
        return self._members

    @members.setter
    def members(self, members: list[Any]) -> None:
        self._members = members

    def member_batch(self) -> torch.Size:
        """The batch size of each member."""
        size: torch.Size = self.members[0]._batch_size
        return size

    def missing_from(self, key: str) -> list[int]:
        """The indices of the members that lack ``key``."""
        return [i for i, member in enumerate(self.members) if key not in member._data]

    def __getitem__(self, key: str) -> Any:
        leaves = []
        for member in self.members:
            leaf = member._data.get(key, MISSING)
            if leaf is MISSING:
                raise self.owner._missing(key)
            leaves.append(leaf)
        return stack_leaves(leaves, self.dim, self.member_batch(), key, self.owner._restack)

    def __setitem__(self, key: str, leaf: object) -> None:
        parts = split_leaf(leaf, self.dim, len(self.members))
        writes = distinct_writes(self.members, parts, f"setting {key!r}", (key,))
        for member in self.members:
            if member._locked:
                member._check_unlocked(key, "add" if key not in member._data else "replace")
        for member, part in writes:
            member._data[key] = part

    def distinct(self) -> list[Any]:
        """The members, each once (a stack built with repeated indices holds some twice)."""
        return list({id(member): member for member in self.members}.values())

    def __delitem__(self, key: str) -> None:
        if self.missing_from(key):
            raise self.owner._missing(key)
        members = self.distinct()
        for member in members:
            member._check_unlocked(key, "delete")
        for member in members:
            del member._data[key]

    def __iter__(self) -> Iterator[str]:
        first, *others = self.members
        return iter([key for key in first._data if all(key in m._data for m in others)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        return all(key in member._data for member in self.members)

    def copy(self) -> dict[str, Any]:
        """The stacked leaves of the common keys, in a plain dict."""
        return {key: self[key] for key in self}

    def __repr__(self) -> str:
        return f"LazyLeaves(keys={list(self)}, members={len(self.members)}, dim={self.dim})"


def missing_key_error(leaves: LazyLeaves, key: object, where: object = None) -> KeyNotFoundError:
    """A KeyNotFoundError that says which members hold ``key`` and which lack it."""
    owner = type(leaves.owner).__name__
    if isinstance(key, str):
        lacking = leaves.missing_from(key)
        having = [i for i in range(len(leaves.members)) if i not in lacking]
        if having:
            name = repr(key) if where in (None, key) else f"{where!r}: {key!r}"
            return KeyNotFoundError(
                f"key {name} is only in members {having} of the {owner} (members "
                f"{lacking} lack it), so it cannot be stacked; read it from the members "
                f"(stack.members[i]) or set it through the stack to give it to every member",
                key=where or key,  # type: ignore[arg-type]
            )
    keys = list(leaves)
    shown = ", ".join(repr(k) for k in keys[:20]) + (", ..." if len(keys) > 20 else "")
    return KeyNotFoundError(
        f"key {where or key!r} not found in {owner}; keys every member has: {shown or 'none'}",
        key=where or key if isinstance(where or key, (str, tuple)) else None,  # type: ignore[arg-type]
    )
