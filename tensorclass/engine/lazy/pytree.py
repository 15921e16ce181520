"""Lazy stacks as pytree nodes: ``torch.func`` transforms and ``vmap`` take them as inputs
and give them back as outputs, with the same meaning as the dense stack.

A lazy stack's children are one tensor per key, the members' leaves stacked along the stack
dim (a nested level is a nested lazy stack, a child of its own), so dim ``i`` of a child is
batch dim ``i`` of the stack, as for a dense instance: ``in_dims`` and jacobian dims mean
the same on both. Members whose leaves under a key have different shapes (ragged) give a
child padded with zeros to the largest size of every dim; the context keeps each member's
shape, and rebuilding cuts each member's part back out. Padding is harmless to derivatives:
a rebuilt member reads only its own region, so a gradient is zero in the padding, and it is
cut away when the result is rebuilt.

Rebuilding reads what a transform did to the children from their shapes at flatten time:

- same shapes: the members are cut back out (``grad``, ``jacrev`` of a scalar, ...);
- extra leading dims (``vmap``'s output dim, a jacobian with respect to the stack): they go
  in front of every member's batch size, and the stack dim moves after them;
- extra trailing dims (a returned stack's jacobian with respect to a tensor): every member's
  leaves carry them; the batch sizes stay;
- one dim fewer (inside ``vmap``): mapping the stack dim gives the function one member, a
  dense instance of the members' class; mapping another dim gives a lazy stack whose
  members lack that dim. Mapping the stack dim, or a dim where the members' sizes differ,
  of a ragged key is an error naming the key and the shapes.

Keys only some members hold are not children (as when reading the stack): the rebuilt
members lack them. Members that are lazy stacks themselves come back dense.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

import torch
import torch.utils._pytree as pytree
from torch import Tensor

from ...errors import StructureMismatchError
from ...non_tensor import NonTensorData, NonTensorStack, stack_non_tensors
from ...switches import stacks_capture
from ..core.self_types import as_op
from ..core.state import Names, TensorCore
from ..torch_api.vmap import mark_mapped_stack
from .leaves import LazyLeaves
from .ragged import pad_stack

if TYPE_CHECKING:
    from .stack import LazyStackedTensorDict

__all__ = ["StackContext", "flatten_stack", "flatten_stack_with_keys", "unflatten_stack"]

_functorch = torch._C._functorch
_set_locked = TensorCore.__dict__["_locked"].__set__
_Size = torch.Size
_NON_TENSOR = (NonTensorData, NonTensorStack)

#: what the context keeps of one common key (see ``StackContext.entries``)
_TensorEntry = tuple[Literal["tensor"], str, torch.Size, tuple[torch.Size, ...] | None]
_Entry = (
    _TensorEntry
    | tuple[Literal["node"], str, torch.Size]
    | tuple[Literal["value"], str]
    | tuple[Literal["fixed"], str, tuple[NonTensorData | NonTensorStack, ...]]
)
#: an index cutting one member's part out of a child
_Index = tuple[int | slice, ...]
#: where the members' parts of a tensor key were cut from: the key, its child's position,
#: one index per member
_Cut = tuple[str, int, list[_Index]]


class StackContext(NamedTuple):
    """What a flattened lazy stack keeps besides its children."""

    stack_cls: type[LazyStackedTensorDict]
    """The lazy-stack class (its ``_restack`` rebuilds the stack)."""
    dim: int
    """The stack dim."""
    member_batch: torch.Size
    """The members' batch size."""
    members: tuple[tuple[type[TensorCore], torch.device | None, Names, bool], ...]
    """Per member: its class (dense), device, names and lock."""
    entries: tuple[_Entry, ...]
    """Per common key: ``("tensor", key, shape, ragged)`` (``shape``: the child's;
    ``ragged``: each member's shape, or ``None`` when they are equal), ``("node", key,
    batch_size)`` for a nested lazy stack, ``("value", key)`` for one object every member
    holds (a tree_map put it there), ``("fixed", key, values)`` for the members' non-tensor
    values."""
    member_batches: tuple[torch.Size, ...] | None = None
    """Each member's batch size when they differ (a ragged stack), else ``None``."""


def _member_batches(members: list[TensorCore]) -> tuple[torch.Size, ...] | None:
    first = members[0]._batch_size
    if all(m._batch_size == first for m in members):
        return None
    return tuple(m._batch_size for m in members)


@contextlib.contextmanager
def _at_members_level(members: list[TensorCore]) -> Iterator[None]:
    """Run the stacking at the level of the members' tensors: the transforms above it are
    left for the time. Stacking under them would wrap the result at their level, and the
    transform being entered would then wrap it a second time (``hessian``: "wrapped->level()
    < level"); the transform, not the stacking, is what lifts the children."""
    if not torch._C._are_functorch_transforms_active():
        yield
        return
    levels = [_functorch.maybe_get_level(t) for m in members for t in m._own_tensors()]
    top = max(levels, default=-1)
    popped = []
    try:
        while True:
            current = _functorch.peek_interpreter_stack()
            if current is None or current.level() <= top:
                break
            popped.append(_functorch.pop_dynamic_layer_stack())
        yield
    finally:
        for layer in reversed(popped):
            _functorch.push_dynamic_layer_stack(layer)


def flatten_stack(stack: LazyStackedTensorDict) -> tuple[list[object], StackContext]:
    """The children of a lazy stack (one per common key) and the context that rebuilds it."""
    leaves = _leaves(stack)
    cached = _cached(leaves)
    if cached is not None:
        return cached
    members = list(leaves.members)
    with _at_members_level(members):
        return _flatten(stack, members)


def _leaves(stack: LazyStackedTensorDict) -> LazyLeaves:
    # a lazy stack's ``_data`` is its ``LazyLeaves`` (read directly: no property for
    # torch.compile to trace through)
    return cast(LazyLeaves, stack._data)


def _flatten(
    stack: LazyStackedTensorDict, members: list[TensorCore]
) -> tuple[list[object], StackContext]:
    leaves = _leaves(stack)
    d = leaves.dim
    children: list[object] = []
    entries: list[_Entry] = []
    for key in leaves:
        values = [member._data[key] for member in members]
        first = values[0]
        if isinstance(first, Tensor):
            if not all(isinstance(v, Tensor) for v in values):
                raise StructureMismatchError(
                    f"cannot flatten key {key!r} of the lazy stack: tensors mixed with other values"
                )
            shapes = tuple(v.shape for v in values)
            if all(shape == shapes[0] for shape in shapes):
                child = torch.stack(values, d)
                entries.append(("tensor", key, child.shape, None))
            else:
                # pad_stack raises (naming the key) when the numbers of dims differ
                child = pad_stack(values, d, "right", 0.0, key)
                entries.append(("tensor", key, child.shape, shapes))
            children.append(child)
        elif isinstance(first, TensorCore):
            if not all(isinstance(v, TensorCore) for v in values):
                raise StructureMismatchError(
                    f"cannot flatten key {key!r} of the lazy stack: nested instances mixed "
                    f"with other values"
                )
            nested = stack._restack(values, d)
            children.append(nested)
            entries.append(("node", key, nested._batch_size))
        elif type(first) not in _NON_TENSOR and all(v is first for v in values):
            # what a tree_map put in every member (vmap rebuilds the tree with ints): a
            # child again, so the tree keeps its number of leaves
            children.append(first)
            entries.append(("value", key))
        else:
            entries.append(("fixed", key, tuple(values)))
    states = tuple((type(m), m._device, m._names, m._locked) for m in members)
    context = StackContext(
        type(stack), d, members[0]._batch_size, states, tuple(entries), _member_batches(members)
    )
    return children, context


def flatten_stack_with_keys(
    stack: LazyStackedTensorDict,
) -> tuple[list[tuple[pytree.MappingKey[str, object], object]], StackContext]:
    """:func:`flatten_stack`, each child with its key."""
    children, context = flatten_stack(stack)
    keys = [entry[1] for entry in context.entries if entry[0] != "fixed"]
    return [(pytree.MappingKey(k), c) for k, c in zip(keys, children)], context


class _Tree(NamedTuple):
    """What a stack rebuilt by :func:`unflatten_stack` keeps: its children, their context,
    and each member with its leaves as they were given."""

    children: list[object]
    context: StackContext
    members: tuple[tuple[TensorCore, dict[str, object]], ...]
    cuts: tuple[_Cut, ...]
    """Per tensor key: the key, its child's position and one index per member."""
    marked: list[bool]
    """Whether each child required grad when the members' parts were cut out of it."""

    def refresh(self, members: list[TensorCore]) -> None:
        """Cut the members' parts again out of the children that became differentiable
        since (``grad`` marks them in place after rebuilding its input, and the parts cut
        before do not carry the gradient back to them inside a transform)."""
        marks = [isinstance(c, Tensor) and c.requires_grad for c in self.children]
        for child in self.children:
            data = getattr(child, "_data", None)
            if isinstance(child, TensorCore) and isinstance(data, LazyLeaves):
                data.members  # noqa: B018 (a nested stack refreshes its own members)
        if marks == self.marked:
            return
        for key, at, indices in self.cuts:
            if marks[at] == self.marked[at]:
                continue
            child = self.children[at]
            if not isinstance(child, Tensor):  # (a cut is made of a tensor child only)
                continue
            for (member, part), index in zip(self.members, indices):
                if member._data.get(key) is part[key]:  # not replaced since
                    part[key] = member._data[key] = child[index]
        self.marked[:] = marks


def _cached(leaves: LazyLeaves) -> tuple[list[object], StackContext] | None:
    """The children a stack was rebuilt from, while its members still hold what was cut
    out of them. A transform flattens its input again after rebuilding it (grad: to mark
    the children as requiring grad, then to differentiate with respect to them): stacking
    the members again would give new tensors the function's result does not depend on."""
    tree = leaves.tree
    if tree is None or len(leaves.members) != len(tree.members):
        return None
    context = tree.context
    batches = context.member_batches or (context.member_batch,) * len(tree.members)
    for member, (given, part), batch in zip(leaves.members, tree.members, batches):
        if member is not given or member._batch_size != batch:
            return None
        data = member._data
        if len(data) != len(part) or any(data.get(k) is not v for k, v in part.items()):
            return None
    return list(tree.children), tree.context


def _remember(
    stack: LazyStackedTensorDict,
    children: list[object],
    context: StackContext,
    parts: list[dict[str, object]],
    cuts: list[_Cut],
) -> None:
    """Keep on a rebuilt stack the children it was rebuilt from (see :func:`_cached`),
    with their context as flattening the stack would give it: tensors and nested stacks
    only (a tree_map that put other values there rebuilds differently)."""
    entries: list[_Entry] = []
    values = iter(children)
    for entry in context.entries:
        if entry[0] == "fixed":
            entries.append(entry)
            continue
        value = next(values)
        if entry[0] == "tensor" and isinstance(value, Tensor):
            shapes = tuple(_shape(part[entry[1]]) for part in parts) if entry[3] else None
            entries.append(("tensor", entry[1], value.shape, shapes))
        elif entry[0] == "node" and isinstance(value, TensorCore):
            entries.append(("node", entry[1], value._batch_size))
        else:
            return
    leaves = _leaves(stack)
    members = leaves.members
    states = tuple((type(m), m._device, m._names, m._locked) for m in members)
    fresh = StackContext(
        type(stack),
        leaves.dim,
        members[0]._batch_size,
        states,
        tuple(entries),
        _member_batches(members),
    )
    marks = [isinstance(c, Tensor) and c.requires_grad for c in children]
    # copies: a member's storage is its part, and a write to it must make the cache stale
    given = tuple((member, dict(part)) for member, part in zip(members, parts))
    leaves.tree = _Tree(children, fresh, given, tuple(cuts), marks)


class _Layout(NamedTuple):
    """How a transform changed the children: ``drop`` leading dims gone (``jacfwd`` turns
    the dim it mapped into trailing dims), ``lead`` dims put in front, ``hidden`` (a dim of
    the flatten-time shapes) mapped by vmap, extra dims after the rest (``trailing``)."""

    drop: int
    lead: tuple[int, ...]
    hidden: int | None

    def position(self, full: int) -> int:
        """Where dim ``full`` of a flatten-time shape is now."""
        return len(self.lead) + full - self.drop - (self.hidden is not None and self.hidden < full)


_SAME = _Layout(0, (), None)


def _shape_of(value: object, entry: _Entry) -> tuple[torch.Size, torch.Size] | None:
    """The shape a child has now and had at flatten time (``None``: nothing to read)."""
    if entry[0] == "value":
        return None
    if entry[0] == "tensor":
        if isinstance(value, Tensor):
            return value.shape, entry[2]
        if isinstance(value, TensorCore):  # a tree_map put an instance there (jacobians)
            return value._batch_size, entry[2]
        return None
    if isinstance(value, TensorCore) and entry[0] == "node":
        return value._batch_size, entry[2]
    return None


def _shape(leaf: object) -> torch.Size:
    # a member's part of a tensor key: a tensor cut out of the child
    assert isinstance(leaf, Tensor)
    return leaf.shape


def _hidden_dims(value: object, got: torch.Size, want: torch.Size) -> set[int]:
    """The dims of ``want`` vmap may have mapped to leave ``got``."""
    if isinstance(value, Tensor) and _functorch.is_batchedtensor(value):
        bdim = _functorch.maybe_get_bdim(value)
        if _functorch.get_unwrapped(value).shape == want and bdim is not None:
            return {bdim % len(want)}
    return {i for i in range(len(want)) if want[:i] + want[i + 1 :] == got}


def _layout(children: list[object], context: StackContext) -> _Layout:
    """Read the transform's change off the children (see the module documentation)."""
    readings = []
    for value, entry in zip(children, (e for e in context.entries if e[0] != "fixed")):
        found = _shape_of(value, entry)
        if found is not None:
            readings.append((value, *found))
    changed = [r for r in readings if r[1] != r[2]]
    if not changed:
        return _SAME
    if all(len(g) == len(w) - 1 for _, g, w in changed):
        # inside vmap: one dim mapped; a batched tensor says which
        common: set[int] | None = None
        for value, got, want in changed:
            dims = _hidden_dims(value, got, want)
            if len(dims) == 1 and isinstance(value, Tensor) and _functorch.is_batchedtensor(value):
                common = dims
                break
            common = dims if common is None else common & dims
        if common and len(changed) == len(readings):
            return _Layout(0, (), min(common))
    extra = len(changed[0][1]) - len(changed[0][2])
    if extra > 0 and len(changed) == len(readings):
        lead = tuple(changed[0][1][:extra])
        if all(g[: len(g) - len(w)] == lead and g[len(g) - len(w) :] == w for _, g, w in readings):
            return _Layout(0, lead, None)
    for drop in range(context.dim + 1):  # dims after the others (jacobians of a stack output)
        if all(g[: len(w) - drop] == w[drop:] for _, g, w in readings):
            return _Layout(drop, (), None)
    shapes = [(list(w), list(g)) for _, g, w in changed]
    raise StructureMismatchError(
        f"cannot rebuild the lazy stack: its children went from/to shapes {shapes}, which is "
        f"none of: dims added in front, dims added after, one dim mapped by vmap"
    )


def _ragged_error(
    key: object, shapes: Iterable[Sequence[int]], what: str
) -> StructureMismatchError:
    listed = [list(s) for s in shapes]
    return StructureMismatchError(
        f"cannot map {what} of the lazy stack's key {key!r}: its members' values have shapes "
        f"{listed} (ragged); map another dim or make the shapes equal"
    )


def _member_index(
    entry: _TensorEntry, layout: _Layout, d: int, count: int, ndim: int
) -> list[_Index]:
    """One index per member cutting its part out of a child of a tensor key (``ndim``: the
    dims indexed, those of the flatten-time shape still there)."""
    key, ragged = entry[1], entry[3]
    hidden = layout.hidden
    differ = (
        set()
        if ragged is None
        else {j for j in range(len(ragged[0])) if len({s[j] for s in ragged}) > 1}
    )
    if hidden is not None and differ:
        in_member = hidden if hidden < d else hidden - 1
        if hidden == d or in_member in differ:
            what = "the stack dim" if hidden == d else f"dim {hidden}"
            raise _ragged_error(key, ragged or (), what)
    indices = []
    for m in range(count):
        index: list[int | slice] = [slice(None)] * ndim
        index[layout.position(d)] = m
        for j in differ:
            assert ragged is not None
            index[layout.position(j if j < d else j + 1)] = slice(0, ragged[m][j])
        indices.append(tuple(index))
    return indices


def _rebuilt_batch(given: torch.Size, layout: _Layout, d: int) -> torch.Size:
    """A member's batch size after a transform changed the children (see ``_Layout``)."""
    batch = list(given[layout.drop :])
    hidden = layout.hidden
    if hidden is not None and hidden != d:
        in_member = hidden if hidden < d else hidden - 1
        if in_member < len(given):
            del batch[in_member]
    return _Size((*layout.lead, *batch))


def unflatten_stack(values: Iterable[object], context: StackContext) -> TensorCore:
    """Rebuild a lazy stack from its children (see the module documentation); a dense
    member when vmap maps the stack dim."""
    children = list(values)
    layout = _layout(children, context)
    d = context.dim
    hidden = layout.hidden
    count = 1 if hidden == d else len(context.members)
    parts: list[dict[str, object]] = [{} for _ in range(count)]
    cuts: list[_Cut] = []
    position = 0
    for entry in context.entries:
        key = entry[1]
        if entry[0] == "fixed":
            if hidden == d:
                parts[0][key] = stack_non_tensors(
                    list(entry[2]), d, context.member_batch, capture=stacks_capture()
                )
            else:
                for part, fixed in zip(parts, entry[2]):
                    part[key] = fixed
            continue
        value = children[position]
        position += 1
        if entry[0] == "value" or not isinstance(value, (Tensor, TensorCore)):
            for part in parts:  # what a tree_map put there, as it is
                part[key] = value
        elif hidden == d and (entry[0] == "node" or entry[3] is None):
            parts[0][key] = value  # vmap maps the stack dim: the one member's value
        elif entry[0] == "node":
            # an instance (unbind: the members, for a lazy stack)
            nested = value if isinstance(value, Tensor) else as_op(value)
            for part, item in zip(parts, nested.unbind(layout.position(d))):
                part[key] = item
        else:
            ndim = len(layout.lead) + len(entry[2]) - layout.drop - (hidden is not None)
            indices = _member_index(entry, layout, d, count, ndim)
            if isinstance(value, Tensor):
                for part, index in zip(parts, indices):
                    part[key] = value[index]
                cuts.append((key, position - 1, indices))
            else:  # an instance (a jacobian's): unbind, as indexing a lazy stack may move dims
                at = layout.position(d)
                for part, index, piece in zip(parts, indices, as_op(value).unbind(at)):
                    rest = index[:at] + index[at + 1 :]
                    whole = all(i == slice(None) for i in rest)
                    part[key] = piece if whole else piece[rest]
    if context.member_batches is None:  # one batch size for every member
        batches = [_rebuilt_batch(context.member_batch, layout, d)] * count
    else:
        batches = [_rebuilt_batch(given, layout, d) for given in context.member_batches]
    if context.member_batches is not None and hidden is not None and hidden != d:
        in_member = hidden if hidden < d else hidden - 1
        sizes = {given[in_member] for given in context.member_batches if in_member < len(given)}
        if len(sizes) > 1:
            raise _ragged_error("batch", context.member_batches, f"dim {hidden}")
    members = []
    for part, (cls, device, names, locked), member_batch in zip(parts, context.members, batches):
        if names is not None and len(names) != len(member_batch):
            names = None
        member = cls._new(part, member_batch, device, names)
        if locked:  # this level only, as the dense nodes: nested levels restore their own
            _set_locked(member, True)
        members.append(member)
    if hidden == d:
        mark_mapped_stack(members[0], context.stack_cls)  # returned, it is a stack again
        return members[0]
    stack: LazyStackedTensorDict = context.stack_cls._restack(members, layout.position(d))
    _remember(stack, children, context, parts, cuts)
    return stack
