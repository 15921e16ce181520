"""Which storages ``consolidate()`` made, and the buffer a consolidated instance views.

A module of its own so that both :mod:`.consolidate` and the exchanges of
:mod:`.distributed` (which send a consolidated instance's buffer as it is) can ask.
"""

from __future__ import annotations

import weakref

import torch
from torch import Tensor

from ..core.lazy_stacks import is_lazy_stack
from ..core.state import TensorCore
from ..shape.jagged import is_jagged, jagged_parts
from .consolidated_file import tensors_of
from .flat_buffer import ALIGN, byte_layout

__all__ = [
    "LAZY_LEVEL",
    "LEVEL",
    "NESTED_ENTRY",
    "JAGGED_ENTRY",
    "TENSOR_ENTRY",
    "VALUE_ENTRY",
    "buffer_of",
    "has_buffers",
    "layout_of",
    "register_buffer",
]

#: the first item of a level in a :func:`layout_of` description: an instance, a lazy stack
LEVEL, LAZY_LEVEL = 0, 1
#: the second item of an entry: a tensor, a nested level, any other value
TENSOR_ENTRY, NESTED_ENTRY, VALUE_ENTRY, JAGGED_ENTRY = 0, 1, 2, 3

#: the storages made by ``consolidate`` (dropped when the last view of one is freed)
_BUFFERS: weakref.WeakSet[torch.UntypedStorage] = weakref.WeakSet()


def has_buffers() -> bool:
    """Whether any consolidated buffer is alive (a cheap test before :func:`buffer_of`)."""
    return bool(_BUFFERS)


def register_buffer(buffer: Tensor) -> None:
    """Record ``buffer``'s storage as one that ``consolidate`` made."""
    _BUFFERS.add(buffer.untyped_storage())


def buffer_of(node: TensorCore) -> Tensor | None:
    """The consolidated buffer (a ``uint8`` tensor over the whole storage) that every
    tensor of ``node`` views, laid out as :mod:`.wire_pack` says; ``None`` otherwise."""
    if not _BUFFERS:
        return None
    tensors = tensors_of(node)
    if not tensors:
        return None
    storage = tensors[0].untyped_storage()
    if storage not in _BUFFERS:
        return None
    offsets, total = byte_layout(tensors)
    if storage.nbytes() != total:
        return None
    for tensor, offset in zip(tensors, offsets):
        if (
            tensor.untyped_storage() is not storage
            or tensor.storage_offset() * tensor.element_size() != offset
            or not tensor.is_contiguous()
        ):
            return None
    return torch.empty((0,), dtype=torch.uint8, device=storage.device).set_(storage)


class _NotPacked(Exception):
    """A tensor of the tree is not where the consolidated layout puts it."""


class _Walk:
    """One walk of a tree checking the consolidated layout and describing the tree."""

    __slots__ = ("offset", "storage")

    def __init__(self) -> None:
        self.storage: torch.UntypedStorage | None = None
        self.offset = 0

    def level(self, node: TensorCore) -> tuple[object, ...]:
        if is_lazy_stack(node):
            members = tuple(self.level(member) for member in node.members)
            return (LAZY_LEVEL, node.stack_dim, node._locked, members)
        entries: list[tuple[object, ...]] = []
        append = entries.append
        storage, offset = self.storage, self.offset
        for key, value in node._data.items():
            if value.__class__ is not Tensor and is_jagged(value):
                self.storage, self.offset = storage, offset
                values, ends = jagged_parts(value)
                append((key, JAGGED_ENTRY, self.part(values), self.part(ends)))
                storage, offset = self.storage, self.offset
            elif isinstance(value, Tensor):
                # inline (a call per tensor costs as much as the checks): the tensor is the
                # next one in the buffer, contiguous, at the aligned offset the order gives
                found = value.untyped_storage()
                if found is not storage:
                    if storage is not None or found not in _BUFFERS:
                        raise _NotPacked
                    storage = self.storage = found
                dtype = value.dtype
                if value.storage_offset() * dtype.itemsize != offset or not value.is_contiguous():
                    raise _NotPacked
                offset += -(-value.nbytes // ALIGN) * ALIGN
                append((key, TENSOR_ENTRY, dtype, tuple(value.shape)))
            elif isinstance(value, TensorCore):
                self.offset = offset
                append((key, NESTED_ENTRY, self.level(value)))
                storage, offset = self.storage, self.offset
            else:
                append((key, VALUE_ENTRY, value))
        self.offset = offset
        return (
            LEVEL,
            type(node),
            tuple(node._batch_size),
            node._device,
            node._names,
            node._locked,
            tuple(entries),
        )

    def part(self, tensor: Tensor) -> tuple[torch.dtype, tuple[int, ...]]:
        """One of a nested jagged tensor's two tensors (its values, its offsets), checked
        as the next tensor of the buffer, as :meth:`level` checks a plain leaf."""
        found = tensor.untyped_storage()
        if found is not self.storage:
            if self.storage is not None or found not in _BUFFERS:
                raise _NotPacked
            self.storage = found
        if tensor.storage_offset() * tensor.dtype.itemsize != self.offset or not (
            tensor.is_contiguous()
        ):
            raise _NotPacked
        self.offset += -(-tensor.nbytes // ALIGN) * ALIGN
        return tensor.dtype, tuple(tensor.shape)


def layout_of(node: TensorCore) -> tuple[Tensor, tuple[object, ...]] | None:
    """``node``'s consolidated buffer with a description of its tree, found in one walk
    (``None`` when ``node`` is not consolidated, as for :func:`buffer_of`).

    The description holds plain values only: a level is ``(LEVEL, class, batch size,
    device, names, locked, entries)`` or ``(LAZY_LEVEL, stack dim, locked, members)``; an
    entry is ``(key, TENSOR_ENTRY, dtype, shape)``, ``(key, NESTED_ENTRY, level)``,
    ``(key, VALUE_ENTRY, value)`` or, for a nested jagged tensor, ``(key, JAGGED_ENTRY,
    (dtype, shape) of its values, (dtype, shape) of its offsets)``. A tensor's place in the buffer follows from the order
    (the layout of :func:`~.flat_buffer.byte_layout`), so it is not recorded.
    """
    if not _BUFFERS:
        return None
    walk = _Walk()
    try:
        description = walk.level(node)
    except _NotPacked:
        return None
    storage = walk.storage
    if storage is None or storage.nbytes() != walk.offset:
        return None
    buffer = torch.empty((0,), dtype=torch.uint8, device=storage.device).set_(storage)
    return buffer, description
