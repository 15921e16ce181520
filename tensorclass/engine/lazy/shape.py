"""Batch-dim operations of lazy stacks that keep the members: indexing, writes at an index,
``unbind``, ``split``, ``unsqueeze``/``squeeze``, ``permute``, ``expand``, ``flip``, ``roll``,
and ``view``/``reshape``/``flatten``/``unflatten`` that leave the stack dim whole.

Each one works on the members (or picks some of them) and stacks the results lazily again,
so results still share the members' tensors and writes through them reach the members.
Indexing the stack dim with an int returns the member itself. What cannot be expressed per
member (reshapes across the stack dim, advanced indexing mixing the stack dim with others)
falls back to the dense engine: a copy in the members' class.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import EllipsisType
from typing import Any, TypeVar, cast

import torch
from torch import Tensor

from ...errors import BatchSizeError, OperandError
from ...keys import NestedKey, shown_key
from ...registry import dynamic_class
from ..core.self_types import Node
from ..core.state import TensorCore
from ..shape import batch_dims, context, indexing
from ..shape.batch_dims import _infer_shape, _sizes, batch_dim, squeeze_dims
from ..shape.indexing import (
    _broadcast_to,
    _fits,
    _plan_structured_write,
    _tensor_leaves,
    normalize_index,
)
from ..shape.inplace import first_difference, holds_lazy
from ..shape.selection import update_at_ as indexing_update_at_
from .leaves import LazyLeaves
from .self_type import S

__all__ = [
    "expand",
    "flatten",
    "flip",
    "permute",
    "reshape",
    "roll",
    "squeeze",
    "unbind",
    "unflatten",
    "unsqueeze",
    "update_at_",
    "view",
]


def _whole(part: object) -> bool:
    return type(part) is slice and part == slice(None)


_S = TypeVar("_S")
_C = TypeVar("_C", bound=TensorCore)


def _restack(members: Sequence[Any], dim: int, like: S) -> S:
    """A lazy stack of ``members`` (typed like ``like``, the stack it comes from)."""
    result: S = like._restack(list(members), dim)
    return result


def _member(member: Any, like: _S) -> _S:
    """A member returned where the stack's type is declared."""
    result: _S = member
    return result


def _at_target(value: _C, target: torch.Size, like: object) -> _C:
    """``value`` with batch size ``target``, each tensor broadcast as a dense write at an
    index broadcasts it: to ``target`` and the feature dims of the leaf it writes (those of
    ``like``, a member), or its own dims after its batch dims for a key ``like`` lacks."""
    skip = len(value._batch_size)
    member = like if isinstance(like, TensorCore) else None
    like_dims = 0 if member is None else len(member._batch_size)
    data: dict[str, object] = {}
    for key, leaf in value._data.items():
        own = member._data.get(key) if member is not None and key in member._data else None
        if isinstance(leaf, Tensor):
            if isinstance(own, Tensor):
                shape = target + own.shape[like_dims:]
            else:
                shape = target + leaf.shape[skip:]
            if not _fits(leaf.shape, shape):
                raise BatchSizeError(
                    f"cannot write key {key!r} at the index: value shape {list(leaf.shape)} "
                    f"does not fit the selected shape {list(shape)}"
                )
            data[key] = _broadcast_to(leaf, shape)
        elif isinstance(leaf, TensorCore):
            if isinstance(own, TensorCore):
                extra = own._batch_size[like_dims:]
            else:
                extra = leaf._batch_size[skip:]
            data[key] = _at_target(leaf, torch.Size((*target, *extra)), own)
        else:
            data[key] = leaf
    return type(value)._new(data, target, value._device, None)


def _lazy(self: S) -> LazyLeaves:
    """The storage of a lazy stack: its members (a ``LazyLeaves`` mapping)."""
    return cast(LazyLeaves, self._data)  # a lazy stack's ``_data`` is its ``LazyLeaves``


# -- reading at an index -------------------------------------------------------------


def _index(self: S, index: object) -> S:
    leaves = self._lazy
    members, stack = leaves.members, leaves.dim
    normalized = normalize_index(index, self._batch_size)
    if any(isinstance(part, Tensor) for part in normalized):
        picked = _pick_members(self, normalized)
        return picked if picked is not None else indexing._index(self, index)
    stack_part, member_parts, before = _split_index(self, normalized)
    member_index = tuple(member_parts)
    whole = all(_whole(part) for part in member_index)

    def take(member: Node) -> Any:
        return member if whole else member[member_index]

    if type(stack_part) is int:
        if not -len(members) <= stack_part < len(members):
            raise IndexError(
                f"index {stack_part} is out of range for the stack dim {stack} of size "
                f"{len(members)} (batch_size={list(self._batch_size)})"
            )
        return _member(take(members[stack_part]), self)
    chosen = members[stack_part]
    if not chosen:
        return indexing._index(self, index)
    return _restack([take(m) for m in chosen], before, self)


def _split_index(
    self: S, normalized: tuple[object, ...], ragged: bool = False
) -> tuple[Any, list[Any], int]:
    """``normalized`` split at the stack dim: the part that indexes it (``slice(None)``
    when the index stops before it), the parts that index the members (new dims ``None``
    included), and how many dims of the result come before the stack dim. ``ragged``: a
    tensor at a member's dim is refused (a ragged stack has no dense layout to index)."""
    stack = self._lazy.dim
    dim, before, found = 0, 0, False
    stack_part: Any = slice(None)
    member_parts: list[Any] = []
    for part in normalized:
        if part is None:
            member_parts.append(None)
            before += 0 if found else 1
            continue
        if dim == stack:
            stack_part, found = part, True
        else:
            if ragged and isinstance(part, Tensor) and part.ndim > 0:
                raise IndexError(
                    f"cannot index a ragged lazy stack (batch_size={list(self._batch_size)}) "
                    f"with a tensor at dim {dim}: index the stack dim {stack} first"
                )
            member_parts.append(part)
            before += 1 if (not found and type(part) is slice) else 0
        dim += 1
    if not found:  # the batch dims the index leaves out (before the stack dim) are kept
        before += stack - dim
    return stack_part, member_parts, before


def _pick_members(self: S, normalized: tuple[object, ...]) -> S | None:
    """A single integer or boolean index on the stack dim: pick members (else None)."""
    leaves = self._lazy
    tensors = [p for p in normalized if isinstance(p, Tensor)]
    if len(tensors) != 1 or None in normalized:
        return None
    dim = 0
    for part in normalized:
        if part is tensors[0]:
            break
        dim += 1
    index = tensors[0]
    if dim != leaves.dim or not all(_whole(p) for p in normalized if p is not index):
        return None
    count = len(leaves.members)
    if index.dtype is torch.bool:
        if index.ndim != 1:
            return None
        if index.shape[0] != count:  # as torch: a mask must match the dim it indexes
            raise IndexError(
                f"the boolean mask of length {index.shape[0]} does not match the stack "
                f"dim {dim} of size {count} (batch_size={list(self._batch_size)})"
            )
        index = index.nonzero().squeeze(-1)
    if index.ndim > 1 or index.is_floating_point():
        return None
    positions: Any = index.tolist()
    for position in [positions] if index.ndim == 0 else positions:
        if not -count <= position < count:
            raise IndexError(
                f"index {position} is out of range for the stack dim {dim} of size "
                f"{count} (batch_size={list(self._batch_size)})"
            )
    if index.ndim == 0:
        return _member(leaves.members[positions], self)
    if not positions:
        return None
    return _restack([leaves.members[i] for i in positions], leaves.dim, self)


# -- writing at an index -------------------------------------------------------------


def _member_parts(self: S, index: object) -> tuple[list[tuple[Any, Any]], int | None]:
    """Where ``index`` falls member by member: ``(member, index into it)`` for each member
    it selects (in order), and the dim of the result that holds them (``None`` when one
    integer picks a single member). Used by ragged stacks, whose batch has no dense layout;
    an index that a member-by-member split cannot express is refused."""
    leaves = self._lazy
    members, stack = leaves.members, leaves.dim
    normalized = normalize_index(index, self._batch_size)
    stack_part, member_parts, before = _split_index(self, normalized, ragged=True)
    member_index: Any = tuple(member_parts) if member_parts else Ellipsis
    if isinstance(stack_part, Tensor):
        stack_part = stack_part.tolist()
        if isinstance(stack_part, list) and stack_part and isinstance(stack_part[0], bool):
            stack_part = [i for i, keep in enumerate(stack_part) if keep]
    positions = range(len(members))
    if isinstance(stack_part, int):
        if not -len(members) <= stack_part < len(members):
            raise IndexError(
                f"index {stack_part} is out of range for the stack dim {stack} of size "
                f"{len(members)} (batch_size={list(self._batch_size)})"
            )
        return [(members[stack_part], member_index)], None
    chosen = positions[stack_part] if isinstance(stack_part, slice) else stack_part
    return [(members[i], member_index) for i in chosen], before


def _ragged_values(value: object, count: int, dim: int | None) -> list[object]:
    """The value each of ``count`` selected members receives: an instance is split along
    ``dim`` (one part per member), anything else is given whole to each."""
    if dim is None or not isinstance(value, TensorCore):
        return [value] * count
    parts: tuple[object, ...] = cast(Any, value).unbind(dim)
    if len(parts) != count:
        raise BatchSizeError(
            f"cannot write a {type(value).__name__} of batch size {list(value._batch_size)} "
            f"into {count} members of a ragged lazy stack: its dim {dim} has {len(parts)} "
            f"entries"
        )
    return list(parts)


def _set_at_ragged(self: S, index: object, value: object) -> None:
    """``self[index] = value`` member by member (each member checks its own write first)."""
    parts, dim = _member_parts(self, index)
    values = _ragged_values(value, len(parts), dim)
    for (member, member_index), part in zip(parts, values):
        _check_write(member, member_index, part)
    for (member, member_index), part in zip(parts, values):
        target: Any = member
        target[member_index] = part


def _check_write(member: Any, index: object, value: object) -> None:
    """Refuse (before any member is written) a value whose batch size does not fit."""
    if isinstance(value, TensorCore):
        selected = torch.Size(member[index].batch_size)
        if not _fits(value._batch_size, selected):
            raise BatchSizeError(
                f"cannot write a {type(value).__name__} of batch size "
                f"{list(value._batch_size)} into a member of a ragged lazy stack at an "
                f"index selecting batch shape {list(selected)}"
            )


def update_at_(
    self: S,
    input_dict_or_td: Mapping[Any, Any] | TensorCore,
    idx: object,
    clone: bool = False,
    *,
    non_blocking: bool = False,
    keys_to_update: Sequence[NestedKey] | None = None,
) -> S:
    """``update_at_`` of a lazy stack: member by member when the stack is ragged (members
    of different batch sizes), else the dense engine's."""
    if -1 not in self._batch_size:
        result: S = indexing_update_at_(
            self,
            input_dict_or_td,
            idx,
            clone,
            non_blocking=non_blocking,
            keys_to_update=keys_to_update,
        )
        return result
    parts, dim = _member_parts(self, idx)
    values = _ragged_values(input_dict_or_td, len(parts), dim)
    for (member, member_index), part in zip(parts, values):
        if isinstance(part, TensorCore):
            _check_write(member, member_index, part)
    for (member, member_index), part in zip(parts, values):
        member.update_at_(
            part, member_index, clone, non_blocking=non_blocking, keys_to_update=keys_to_update
        )
    return self


def _set_at(self: S, index: object, value: object) -> None:
    if -1 in self._batch_size:
        _set_at_ragged(self, index, value)
        return
    if len(self._lazy.distinct()) != len(self._lazy.members):
        _check_repeated_set_at(self, index, value)
    _set_at_members(self, index, value)


def _check_repeated_set_at(self: S, index: object, value: object) -> None:
    """Refuse ``self[index] = value`` (nothing written) when a member held at several
    positions would receive different values at one of its elements: the write is
    made on copies of the members, and each selected element must then hold what a
    dense stack would (a later position must not overwrite an earlier one)."""
    leaves = self._lazy
    copies = {id(member): member.clone() for member in leaves.distinct()}
    trial = _restack([copies[id(m)] for m in leaves.members], leaves.dim, self)
    _set_at_members(trial, index, value)
    expected = self.contiguous()
    expected[index] = value
    found = first_difference(trial.contiguous()[index], expected[index])
    if found is not None:
        where = f"key {shown_key(found)!r}" if found else "the value"
        raise OperandError(
            f"writing at {index!r}: the lazy stack holds a member at several positions, "
            f"which would receive different values for {where} (torch refuses an "
            f"in-place write into elements that share memory); stack distinct members "
            f"(clone them) or write the same value at those positions; nothing was "
            f"written",
            key=shown_key(found) if found else None,
        )


def _set_at_members(self: S, index: object, value: object) -> None:
    leaves = self._lazy
    members, stack, batch_size = leaves.members, leaves.dim, self._batch_size
    normalized = normalize_index(index, batch_size)
    positions = torch.arange(batch_size.numel()).reshape(batch_size)[normalized]
    target = positions.shape
    coords = torch.unravel_index(positions.reshape(-1), batch_size)
    owner_of, rest = coords[stack], coords[:stack] + coords[stack + 1 :]
    if isinstance(value, Mapping):
        value = dynamic_class()(value)
    flat: Any = None
    source: Tensor | None = None
    if isinstance(value, TensorCore):
        if not _fits(value._batch_size, target):
            raise BatchSizeError(
                f"cannot write a {type(value).__name__} of batch size "
                f"{list(value._batch_size)} at an index selecting batch shape {list(target)}"
            )
        full: Any = value
        if value._batch_size != target:  # its leaves broadcast as a dense write's do
            full = _at_target(value, target, members[0])
        flat = full.reshape(-1)
    else:
        source = value if isinstance(value, Tensor) else torch.as_tensor(value)
        for member in leaves.distinct():  # checked first: a refusal writes nothing
            for key, leaf in _tensor_leaves(member, ()):
                shape = target + leaf.shape[len(member._batch_size) :]
                if not _fits(source.shape, shape):
                    raise BatchSizeError(
                        f"cannot write a value of shape {list(source.shape)} into key "
                        f"{shown_key(key)!r} at the index: the selected elements have "
                        f"shape {list(shape)}"
                    )
    for number, member in enumerate(members):
        mask = owner_of == number
        if not bool(mask.any()):
            if flat is not None:
                # allocate keys the value brings in this member too (lazy pre-allocation;
                # refused, as a dense write's, when the member cannot take them)
                empty = flat[:0] if rest or not flat._batch_size[0] else flat[0]
                _plan_structured_write(member, empty, empty._batch_size)
            continue
        member_index: Any = tuple(c[mask] for c in rest) if rest else Ellipsis
        if flat is not None:
            part = flat[mask]
            member._set_at(member_index, part if rest else part[-1])
        elif source is not None and source.ndim == 0:
            member._set_at(member_index, value)
        else:
            assert source is not None
            _write_tensor(member, member_index, source, target, mask, bool(rest))


def _write_tensor(
    member: TensorCore,
    member_index: tuple[Tensor, ...] | EllipsisType,
    source: Tensor,
    target: torch.Size,
    mask: Tensor,
    has_rest: bool,
) -> None:
    """Write one tensor into every tensor leaf of ``member`` at its selected elements."""
    chunks: dict[str, Any] = {}
    for key, leaf in _tensor_leaves(member, ()):
        features = leaf.shape[len(member._batch_size) :]
        chunk = _broadcast_to(source, target + features).reshape(-1, *features)[mask]
        chunk = chunk if has_rest else chunk[-1]
        if source.dtype != leaf.dtype:  # as the dense write: each leaf in its dtype
            chunk = chunk.to(leaf.dtype)
        if type(member._data) is dict and not holds_lazy(member):
            leaf[member_index] = chunk
            continue
        level = chunks
        for part in key[:-1]:
            level = level.setdefault(part, {})
        level[key[-1]] = chunk
    if chunks:  # the leaves of nested lazy stacks are copies: a structured write
        size = [int(mask.sum())] if has_rest else []
        target_member: Any = member
        target_member._set_at(member_index, dynamic_class()(chunks, batch_size=size))


# -- splitting ---------------------------------------------------------------------------


def unbind(self: S, dim: int = 0) -> tuple[S, ...]:
    """Split along a batch dim; along the stack dim this gives the members themselves."""
    leaves = self._lazy
    d = batch_dim(dim, len(self._batch_size))
    if d == leaves.dim:
        return tuple(leaves.members)
    if self._batch_size[d] == -1:
        raise BatchSizeError(
            f"cannot unbind dim {d} of a ragged lazy stack (batch_size="
            f"{list(self._batch_size)}): its members have different sizes there"
        )
    member_dim = d if d < leaves.dim else d - 1
    new_stack = leaves.dim if d > leaves.dim else leaves.dim - 1
    columns = [member.unbind(member_dim) for member in leaves.members]
    return tuple(_restack(row, new_stack, self) for row in zip(*columns))


def _split_sections(self: S, sections: list[int], d: int) -> tuple[S, ...]:
    leaves = self._lazy
    if self._batch_size[d] == -1:
        raise BatchSizeError(
            f"cannot split dim {d} of a ragged lazy stack (batch_size="
            f"{list(self._batch_size)}): its members have different sizes there"
        )
    if d == leaves.dim:
        out, start = [], 0
        for size in sections:
            group = leaves.members[start : start + size]
            if group:
                out.append(_restack(group, d, self))
            else:
                out.append(indexing._index(self, (slice(None),) * d + (slice(start, start),)))
            start += size
        return tuple(out)
    member_dim = d if d < leaves.dim else d - 1
    columns = [m._split_sections(sections, member_dim) for m in leaves.members]
    return tuple(_restack(row, leaves.dim, self) for row in zip(*columns))


# -- adding, removing and moving dims ---------------------------------------------------


def unsqueeze(self: S, dim: int) -> S:
    """Insert a batch dim of size 1 (the members get it; the stack stays lazy)."""
    leaves = self._lazy
    d = batch_dim(dim, len(self._batch_size), extra=1)
    if d <= leaves.dim:
        return _restack([m.unsqueeze(d) for m in leaves.members], leaves.dim + 1, self)
    return _restack([m.unsqueeze(d - 1) for m in leaves.members], leaves.dim, self)


def squeeze(self: S, dim: int | Sequence[int] | None = None) -> S:
    """Remove batch dims of size 1; squeezing a stack dim of size 1 gives the member."""
    leaves = self._lazy
    members, stack, bs = leaves.members, leaves.dim, self._batch_size
    if dim is not None and not isinstance(dim, int):  # several: the last first
        result = self
        for d in reversed(squeeze_dims(dim, len(bs))):
            result = result.squeeze(d)
        return result
    if dim is None:
        ones_before = sum(1 for d in range(stack) if bs[d] == 1)
        squeezed = [m.squeeze() for m in members]
        if bs[stack] == 1:
            return _member(squeezed[0], self)
        return _restack(squeezed, stack - ones_before, self)
    d = batch_dim(dim, len(bs))
    if bs[d] != 1:
        return _restack(members, stack, self)
    if d == stack:
        return _member(members[0], self)
    member_dim = d if d < stack else d - 1
    new_stack = stack - 1 if d < stack else stack
    return _restack([m.squeeze(member_dim) for m in members], new_stack, self)


def permute(self: S, *dims: object) -> S:
    """Reorder the batch dims; the members are permuted, the stack dim moves."""
    leaves = self._lazy
    n = len(self._batch_size)
    order = [batch_dim(d, n) for d in _sizes(dims)]
    if sorted(order) != list(range(n)):
        raise IndexError(f"permute needs each of the {n} batch dims once; got {list(dims)}")
    stack = leaves.dim
    member_order = [d if d < stack else d - 1 for d in order if d != stack]
    members = [m.permute(member_order) if member_order else m for m in leaves.members]
    return _restack(members, order.index(stack), self)


def expand(self: S, *shape: object) -> S:
    """Broadcast the members' batch dims (the stack dim keeps its size); no copy."""
    leaves = self._lazy
    sizes = list(_sizes(shape))
    offset = len(sizes) - len(self._batch_size)
    if offset < 0:
        raise BatchSizeError(
            f"expand: shape {sizes} has fewer dims than batch size {list(self._batch_size)}"
        )
    at = leaves.dim + offset
    count = len(leaves.members)
    member_sizes = sizes[:at] + sizes[at + 1 :]
    expanded = [m.expand(member_sizes) for m in leaves.members]
    if sizes[at] in (-1, count):
        return _restack(expanded, at, self)
    if count != 1:
        raise BatchSizeError(
            f"cannot expand the stack dim of a lazy stack (size {count}) to {sizes[at]}: "
            f"only a dim of size 1 expands (batch_size={list(self._batch_size)})"
        )
    if sizes[at] == 0:
        return batch_dims.expand(self, *sizes)
    # as torch expands a dim of size 1: the one member (one memory) at every position
    return _restack(expanded * sizes[at], at, self)


def flip(self: S, dims: int | Sequence[int]) -> S:
    """Reverse batch ``dims``; flipping the stack dim reverses the members."""
    leaves = self._lazy
    n = len(self._batch_size)
    norm = [batch_dim(d, n) for d in ([dims] if isinstance(dims, int) else dims)]
    stack = leaves.dim
    member_dims = [d if d < stack else d - 1 for d in norm if d != stack]
    members = [m.flip(member_dims) if member_dims else m for m in leaves.members]
    if stack in norm:
        members.reverse()
    return _restack(members, stack, self)


def roll(
    self: S,
    shifts: int | Sequence[int],
    dims: int | Sequence[int] | None = None,
    *,
    inplace: bool = False,
) -> S:
    """Roll along one batch dim; rolling the stack dim rotates the members."""
    leaves = self._lazy
    if inplace or not isinstance(dims, int) or not isinstance(shifts, int):
        return batch_dims.roll(self, shifts, dims, inplace=inplace)
    d = batch_dim(dims, len(self._batch_size))
    members = list(leaves.members)
    if d == leaves.dim:
        shift = shifts % len(members)
        members = members[-shift:] + members[:-shift] if shift else members
    else:
        member_dim = d if d < leaves.dim else d - 1
        members = [m.roll(shifts, member_dim) for m in members]
    return _restack(members, leaves.dim, self)


# -- reshaping around the stack dim ------------------------------------------------------


def _reshaped(self: S, new: torch.Size, method: str) -> S | None:
    """The members reshaped with ``method`` so that the stack dim stays whole, or None.

    A row-major reshape keeps the members apart when the new shape is ``A + [N] + B``
    with ``prod(A)`` the product of the dims before the stack dim (and so ``prod(B)``
    that of the dims after it): each member is reshaped from its own dims to ``A + B``.
    """
    leaves = self._lazy
    old, stack, count = self._batch_size, leaves.dim, len(leaves.members)
    if not old.numel():
        return None
    before = math.prod(old[:stack])
    product = 1
    for at, size in enumerate(new):
        if product == before and size == count:
            target = torch.Size((*new[:at], *new[at + 1 :]))
            members = [getattr(m, method)(target) for m in leaves.members]
            return _restack(members, at, self)
        product *= size
        if product > before and before:
            return None
    return None


def view(
    self: S,
    *shape: int | Sequence[int] | torch.dtype,
    size: Sequence[int] | None = None,
    batch_size: Sequence[int] | None = None,
) -> S:
    """View the batch dims with a new shape; a lazy stack when the stack dim stays whole
    (see ``TensorDict.view``), else a dense copy."""
    if size is not None or batch_size is not None or any(isinstance(s, torch.dtype) for s in shape):
        return context.view(self, *shape, size=size, batch_size=batch_size)
    sizes = _sizes(shape)
    if -1 in self._batch_size:
        raise BatchSizeError(
            f"cannot view a ragged lazy stack (batch_size={list(self._batch_size)}) as "
            f"{list(sizes)}: its members have different sizes; reshape(-1) gives their "
            f"elements as a lazy stack"
        )
    new = _infer_shape(sizes, self._batch_size.numel(), self._batch_size)
    result = _reshaped(self, new, "view")
    return context.view(self, new) if result is None else result


def _ragged_rows(self: S) -> S | None:
    """A ragged stack (stack dim 0) flattened to one batch dim: a lazy stack of every
    member's elements in order (views of the members), as tensordict flattens one; None
    for a stack that is not ragged or whose stack dim is not 0."""
    leaves = self._lazy
    if -1 not in self._batch_size or leaves.dim != 0:
        return None
    rows = [row for member in leaves.members for row in member.reshape(-1).unbind(0)]
    if not rows:
        return None
    return _restack(rows, 0, self)


def reshape(self: S, *shape: int | Sequence[int]) -> S:
    """Reshape the batch dims; a lazy stack when the stack dim stays whole (see
    ``TensorDict.reshape``), else a dense copy. A ragged stack reshapes only to one
    dim (``reshape(-1)``): a lazy stack of the members' elements."""
    if -1 in self._batch_size:
        sizes = _sizes(shape)
        rows = _ragged_rows(self) if len(sizes) == 1 and sizes[0] in (-1, self.numel()) else None
        if rows is None:
            raise BatchSizeError(
                f"cannot reshape a ragged lazy stack (batch_size={list(self._batch_size)}) "
                f"to {list(sizes)}: only reshape(-1) with stack dim 0 (its members' elements "
                f"in order) is defined"
            )
        return rows
    new = _infer_shape(_sizes(shape), self._batch_size.numel(), self._batch_size)
    result = _reshaped(self, new, "reshape")
    return batch_dims.reshape(self, new) if result is None else result


def flatten(self: S, start_dim: int = 0, end_dim: int = -1, *, inplace: bool = False) -> S:
    """Merge batch dims ``start_dim..end_dim``; lazy unless the stack dim is merged."""
    n = len(self._batch_size)
    if inplace:
        return context.flatten(self, start_dim, end_dim, inplace=True)
    if n == 0:
        return context.flatten(self, start_dim, end_dim)
    start, end = batch_dim(start_dim, n), batch_dim(end_dim, n)
    stack = self._lazy.dim
    if -1 in self._batch_size and (start, end) == (0, n - 1) and n > 1:
        return reshape(self, -1)
    if start > end or (start <= stack <= end and start != end):
        return context.flatten(self, start_dim, end_dim)
    bs = self._batch_size
    new = torch.Size((*bs[:start], math.prod(bs[start : end + 1]), *bs[end + 1 :]))
    result = _reshaped(self, new, "reshape")
    return context.flatten(self, start_dim, end_dim) if result is None else result


def unflatten(self: S, dim: int, unflattened_size: Sequence[int], *, inplace: bool = False) -> S:
    """Split batch dim ``dim`` into ``unflattened_size``; lazy unless ``dim`` is the stack
    dim."""
    sizes = unflattened_size
    bs = self._batch_size
    d = batch_dim(dim, len(bs))
    if inplace or d == self._lazy.dim:
        return context.unflatten(self, dim, sizes, inplace=inplace)
    inner = _infer_shape(sizes, bs[d], bs[d : d + 1])
    result = _reshaped(self, torch.Size((*bs[:d], *inner, *bs[d + 1 :])), "reshape")
    return context.unflatten(self, dim, sizes) if result is None else result
