"""Tensor classes as pytree nodes, so ``torch.vmap``, ``torch.func`` and tree utilities see
through them.

A node's children are its tensor leaves and nested instances, in key order (whatever a
``tree_map`` puts there is kept as it is); non-tensor leaves, the device, the names and the
lock travel in the context. The context does not
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

from ._core import Names, TensorCore
from .non_tensor import NonTensorData, NonTensorStack

__all__ = ["NodeContext", "flatten_node", "register_pytree", "unflatten_node"]


class NodeContext(NamedTuple):
    """What a flattened instance keeps besides its children."""

    order: tuple[str, ...]
    """Every key, in storage order."""
    children: tuple[str, ...]
    """The keys whose values are children (tensors and nested instances)."""
    trailing: tuple[int, ...]
    """For each child, its number of dims after the batch dims."""
    fixed: tuple[tuple[str, Any], ...]
    """Non-tensor leaves, kept as they are."""
    batch_size: torch.Size
    """The batch size, used only when no child carries it."""
    device: torch.device | None
    names: Names
    locked: bool


def flatten_node(node: TensorCore) -> tuple[list[Any], NodeContext]:
    """The children of ``node`` and the context that rebuilds it."""
    n = len(node._batch_size)
    keys: list[str] = []
    children: list[Any] = []
    trailing: list[int] = []
    fixed: list[tuple[str, Any]] = []
    for key, leaf in node._data.items():
        cls = type(leaf)
        if cls is NonTensorData or cls is NonTensorStack:
            fixed.append((key, leaf))
            continue
        keys.append(key)
        children.append(leaf)
        # Tensors and nested instances; anything else is a leaf a tree_map put there.
        trailing.append(len(leaf.shape) - n if hasattr(leaf, "shape") else 0)
    context = NodeContext(
        tuple(node._data) if fixed else tuple(keys),
        tuple(keys),
        tuple(trailing),
        tuple(fixed),
        node._batch_size,
        node._device,
        node._names,
        node._locked,
    )
    return children, context


def _flatten_with_keys(node: TensorCore) -> tuple[list[tuple[Any, Any]], NodeContext]:
    children, context = flatten_node(node)
    return [(pytree.MappingKey(k), c) for k, c in zip(context.children, children)], context


def _batch_size_of(values: list[Any], context: NodeContext) -> torch.Size:
    for value, extra in zip(values, context.trailing):
        shape = getattr(value, "shape", None)
        if shape is not None:
            return torch.Size(shape[: len(shape) - extra])
    return context.batch_size


def unflatten_node(cls: type[TensorCore], values: Iterable[Any], context: NodeContext) -> Any:
    """Rebuild an instance of ``cls`` from children and a context (batch size from a child)."""
    values = list(values)
    batch_size = _batch_size_of(values, context)
    by_key = dict(zip(context.children, values))
    if context.fixed:
        by_key.update(context.fixed)
        data = {k: by_key[k] for k in context.order if k in by_key}
    else:
        data = by_key
    names = context.names
    if names is not None and len(names) != len(batch_size):
        names = None
    node = cls._new(data, batch_size, context.device, names)
    if context.locked and not node._locked:
        node.lock_()
    return node


def register_pytree(cls: type[TensorCore]) -> None:
    """Register ``cls`` as a pytree node (done for every ``TensorDictBase`` subclass)."""
    if cls in pytree.SUPPORTED_NODES:
        return

    def unflatten(values: Iterable[Any], context: NodeContext) -> Any:
        return unflatten_node(cls, values, context)

    pytree.register_pytree_node(
        cls,
        flatten_node,
        unflatten,
        flatten_with_keys_fn=_flatten_with_keys,
    )
