"""Tensor classes as pytree nodes, so ``torch.vmap``, ``torch.func`` and tree utilities see
through them.

A node's children are its tensor leaves at every depth, in key order (whatever a
``tree_map`` puts there is kept as it is); nested levels, non-tensor leaves, the device, the
names and the lock travel in the context. The context does not
store the batch size: ``vmap`` hides the mapped dim from every leaf inside the function and
adds it back outside, so the batch size is read off a child on unflatten. The context keeps
the number of dims each child has after the batch dims, and the batch size is the child's
shape without them.

Every subclass of ``TensorDictBase`` is registered when it is defined (``TensorDict`` and
each tensor class); :func:`register_pytree` registers any other class built on the engine.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"x": torch.zeros(4, 3), "y": torch.ones(4)}, batch_size=[4])
>>> torch.vmap(lambda t: t["x"].sum() + t["y"])(td).shape
torch.Size([4])
>>> out = torch.vmap(lambda t: t * 2)(td)
>>> out.batch_size
torch.Size([4])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import torch
import torch.utils._pytree as pytree
from torch import Tensor
from torch.nn import Parameter

from ...non_tensor import NonTensorData, NonTensorStack
from ..core.state import Names, TensorCore

_set_locked = TensorCore.__dict__["_locked"].__set__
# Classes registered with their own hooks (lazy stacks): a child of their own inside a node.
_OWN_NODES: set[type] = set()
_tuple_new = tuple.__new__
_Size = torch.Size

__all__ = ["NodeContext", "flatten_node", "own_node", "register_pytree", "unflatten_node"]
_functorch = torch._C._functorch


def own_node(value: object) -> bool:
    """Whether ``value`` is an instance of a class that flattens itself (a lazy stack)."""
    return value.__class__ in _OWN_NODES


class NodeContext(NamedTuple):
    """What a flattened instance keeps besides its children (nested levels included)."""

    entries: tuple[tuple[Any, ...], ...]
    """Per key, in storage order: ``("leaf", key, trailing)`` for a child (``trailing`` =
    its dims after this level's batch dims), ``("fixed", key, leaf)`` for a non-tensor
    leaf, ``("node", key, cls, context, extra)`` for a nested instance (``extra`` = its
    batch dims beyond this level's), whose children follow in the flat list,
    ``("tree", key, extra)`` for a nested instance that is a pytree node of its own (a lazy
    stack): one child, flattened by its own hooks."""
    batch_size: torch.Size
    """The batch size, used only when no child carries it."""
    device: torch.device | None
    names: Names
    locked: bool


def _flatten_into(node: TensorCore, children: list[Any]) -> NodeContext:
    n = len(node._batch_size)
    entries: list[tuple[Any, ...]] = []
    for key, leaf in node._data.items():
        cls = leaf.__class__
        # Exact classes first: isinstance against Tensor is slow for anything but a plain
        # tensor (its metaclass hooks it), and vmap flattens trees of ints.
        if cls is Tensor or cls is Parameter:
            children.append(leaf)
            entries.append(("leaf", key, leaf.dim() - n))
        elif cls is int:
            children.append(leaf)
            entries.append(("leaf", key, 0))
        elif cls is NonTensorData or cls is NonTensorStack:
            entries.append(("fixed", key, leaf))
        elif cls in _OWN_NODES:
            children.append(leaf)
            entries.append(("tree", key, len(leaf._batch_size) - n))
        elif isinstance(leaf, TensorCore):
            sub = _flatten_into(leaf, children)
            entries.append(("node", key, cls, sub, len(leaf._batch_size) - n))
        elif isinstance(leaf, Tensor):
            children.append(leaf)
            entries.append(("leaf", key, leaf.dim() - n))
        else:
            # Anything else is a leaf a tree_map put there.
            children.append(leaf)
            shape = getattr(leaf, "shape", None)
            entries.append(("leaf", key, 0 if shape is None else len(shape) - n))
    # tuple.__new__ directly: a NamedTuple's own constructor is a Python function.
    return _tuple_new(
        NodeContext,
        (tuple(entries), node._batch_size, node._device, node._names, node._locked),
    )


def flatten_node(node: TensorCore) -> tuple[list[Any], NodeContext]:
    """Every leaf of ``node`` (nested levels included, depth first) and the context that
    rebuilds it. One node for the whole tree keeps ``vmap``'s per-node work small."""
    children: list[Any] = []
    return children, _flatten_into(node, children)


def _flatten_with_keys(node: TensorCore) -> tuple[list[tuple[Any, Any]], NodeContext]:
    children, context = flatten_node(node)
    return [(pytree.MappingKey(path), c) for path, c in zip(_paths(context, ()), children)], context


def _paths(context: NodeContext, prefix: tuple[str, ...]) -> list[Any]:
    out: list[Any] = []
    for entry in context.entries:
        if entry[0] == "leaf":
            out.append((*prefix, entry[1]) if prefix else entry[1])
        elif entry[0] == "node":
            out.extend(_paths(entry[3], (*prefix, entry[1])))
        elif entry[0] == "tree":
            out.append((*prefix, entry[1]) if prefix else entry[1])
    return out


def _build(
    cls: type[TensorCore], values: list[Any], position: int, context: NodeContext
) -> tuple[Any, int]:
    """Rebuild one level from ``values[position:]``; returns it and the next position.

    The batch size is read off the children: a tensor child's shape without its trailing
    dims, a nested level's batch size without its extra dims. ``vmap`` (and a jacobian with
    respect to an instance) puts dims in front of every child, and every child gives the
    same reading. When they differ (a jacobian of an instance output puts the input's dims
    after each leaf) or a child is something a ``tree_map`` put there (an instance per leaf:
    ``jacrev`` of an instance with respect to an instance, ``hessian``), the stored batch
    size is kept if it is still a prefix of every child, else the children's longest common
    prefix: the result is always a valid instance."""
    data: dict[str, object] = {}
    batch_size: torch.Size | None = None
    agree = True
    others: list[torch.Size] | None = None  # shapes of children a tree_map put there
    for entry in context.entries:
        kind = entry[0]
        if kind == "leaf":
            value = values[position]
            position += 1
            data[entry[1]] = value
            kind_of = value.__class__
            if kind_of is int:  # vmap unflattens ints
                continue
            if kind_of is Tensor or kind_of is Parameter or isinstance(value, Tensor):
                shape = value.shape
                trailing = entry[2]
                prefix = shape[: len(shape) - trailing] if trailing else shape
                if batch_size is None:
                    batch_size = prefix if prefix.__class__ is _Size else _Size(prefix)
                elif agree and prefix != batch_size:
                    agree = False
            else:
                shape = getattr(value, "shape", None)
                if shape is not None:
                    others = [] if others is None else others
                    others.append(_Size(shape))
            continue
        # a nested level gives its batch size without its own extra dims
        level: TensorCore | None = None
        if kind == "tree":
            value = values[position]
            position += 1
            data[entry[1]] = value
            if isinstance(value, TensorCore):
                level, extra = value, entry[2]
            elif getattr(value, "shape", None) is not None:
                others = [] if others is None else others
                others.append(_Size(value.shape))
        elif kind == "node":
            nested, position = _build(entry[2], values, position, entry[3])
            data[entry[1]] = nested
            if entry[3].entries:
                level, extra = nested, entry[4]
        else:
            data[entry[1]] = entry[2]
        if level is not None:
            nested_size = level._batch_size
            prefix = nested_size[: len(nested_size) - extra]
            if batch_size is None:
                batch_size = prefix
            elif agree and prefix != batch_size:
                agree = False
    if not agree or others is not None:
        batch_size = _settle(data, batch_size if agree else None, context.batch_size)
    elif batch_size is None:
        batch_size = context.batch_size
    names = context.names
    if names is not None and len(names) != len(batch_size):
        names = _names_inside_vmap(names, batch_size, data)
    node = cls._new(data, batch_size, context.device, names)
    if context.locked:  # this level only: nested levels restore their own
        _set_locked(node, True)
    return node, position


def _names_inside_vmap(
    names: tuple[str | None, ...], batch: torch.Size, data: dict[str, Any]
) -> Names:
    """The names of a level rebuilt inside ``vmap`` (one batch dim fewer): those of the dims
    a batched leaf says are left, else none."""
    if len(names) != len(batch) + 1:
        return None
    for value in data.values():
        if isinstance(value, Tensor) and _functorch.is_batchedtensor(value):
            bdim = _functorch.maybe_get_bdim(value)
            if bdim is not None and 0 <= bdim < len(names):
                left = names[:bdim] + names[bdim + 1 :]
                return left if any(n is not None for n in left) else None
            return None
    return None


def _leading_shape(leaf: Any) -> torch.Size | None:
    """What a child's leading dims are checked against: a nested level's batch size, a
    tensor's shape (``None`` for a non-tensor value)."""
    if isinstance(leaf, TensorCore):
        return leaf._batch_size
    if leaf.__class__ is int or isinstance(leaf, (NonTensorData, NonTensorStack)):
        return None
    shape = getattr(leaf, "shape", None)
    return None if shape is None else _Size(shape)


def _settle(data: dict[str, Any], reading: torch.Size | None, stored: torch.Size) -> torch.Size:
    """The batch size of a level whose children disagree (see :func:`_build`): the reading
    if every child starts with it, else the stored batch size if every child starts with
    it, else their longest common prefix."""
    shapes = [shape for shape in map(_leading_shape, data.values()) if shape is not None]
    for candidate in (reading, stored):
        if candidate is not None and all(s[: len(candidate)] == candidate for s in shapes):
            return candidate
    common = shapes[0] if shapes else stored
    for shape in shapes[1:]:
        size = 0
        for a, b in zip(common, shape):
            if a != b:
                break
            size += 1
        common = common[:size]
    return _Size(common[: len(stored)]) if len(common) > len(stored) else _Size(common)


def unflatten_node(cls: type[TensorCore], values: Iterable[Any], context: NodeContext) -> Any:
    """Rebuild an instance of ``cls`` from its leaves and a context (batch sizes read off
    the leaves)."""
    node, _ = _build(cls, list(values), 0, context)
    return node


def register_pytree(cls: type[TensorCore]) -> None:
    """Register ``cls`` as a pytree node (done for every ``TensorDictBase`` subclass); a class
    with ``_pytree_hooks`` (flatten, unflatten, flatten with keys) is registered with them."""
    if cls in pytree.SUPPORTED_NODES:
        return
    hooks = getattr(cls, "_pytree_hooks", None)
    if hooks is not None:  # a class that flattens itself (lazy stacks: lazy_pytree)
        flatten, unflatten_own, with_keys = hooks
        pytree.register_pytree_node(cls, flatten, unflatten_own, flatten_with_keys_fn=with_keys)
        _OWN_NODES.add(cls)
        return

    def unflatten(values: Iterable[Any], context: NodeContext) -> Any:
        return unflatten_node(cls, values, context)

    pytree.register_pytree_node(
        cls,
        flatten_node,
        unflatten,
        flatten_with_keys_fn=_flatten_with_keys,
    )
