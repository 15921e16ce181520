"""Which storages ``consolidate()`` made, and the buffer a consolidated instance views.

A module of its own so that both :mod:`.consolidate` and the exchanges of
:mod:`.distributed` (which send a consolidated instance's buffer as it is) can ask.
"""

from __future__ import annotations

import weakref

import torch
from torch import Tensor

from ..core.state import TensorCore
from .consolidated_file import tensors_of
from .flat_buffer import byte_layout

__all__ = ["buffer_of", "has_buffers", "register_buffer"]

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
