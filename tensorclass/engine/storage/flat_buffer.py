"""Packing several tensors into one flat buffer for ``torch.distributed``.

``send(consolidated=True)`` sends every tensor of an instance as one ``uint8`` message, and
collectives given ``bucket_bytes`` reduce a few flat buffers instead of one per dtype.
Offsets in a byte buffer are aligned (to 16 bytes) so that each tensor can be viewed in
place with its own dtype.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["ALIGN", "byte_layout", "pack_bytes", "split_buckets", "views_into"]

ALIGN = 16


def _nbytes(tensor: Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def byte_layout(tensors: list[Tensor]) -> tuple[list[int], int]:
    """Each tensor's byte offset in the packed buffer, and the buffer's size."""
    offsets, total = [], 0
    for tensor in tensors:
        offsets.append(total)
        total += -(-_nbytes(tensor) // ALIGN) * ALIGN
    return offsets, total


def pack_bytes(tensors: list[Tensor], device: torch.device) -> Tensor:
    """One ``uint8`` buffer on ``device`` holding the bytes of every tensor (aligned)."""
    offsets, total = byte_layout(tensors)
    buffer = torch.zeros(total, dtype=torch.uint8, device=device)
    for tensor, offset in zip(tensors, offsets):
        view = _typed_view(buffer, offset, tensor)
        view.copy_(tensor.detach())
    return buffer


def views_into(buffer: Tensor, tensors: list[Tensor]) -> list[Tensor]:
    """Views of ``buffer`` (packed by :func:`pack_bytes` for tensors of these dtypes and
    shapes), one per tensor."""
    offsets, _ = byte_layout(tensors)
    return [_typed_view(buffer, offset, tensor) for tensor, offset in zip(tensors, offsets)]


def _typed_view(buffer: Tensor, offset: int, like: Tensor) -> Tensor:
    return buffer[offset : offset + _nbytes(like)].view(like.dtype).view(like.shape)


def split_buckets(tensors: list[Tensor], bucket_bytes: int | None) -> list[list[Tensor]]:
    """Consecutive groups of ``tensors`` of at most ``bucket_bytes`` bytes each (a larger
    tensor is a group of its own); one group if ``bucket_bytes`` is ``None``."""
    if bucket_bytes is None:
        return [tensors] if tensors else []
    if bucket_bytes <= 0:
        raise ValueError(f"bucket_bytes must be positive; got {bucket_bytes}")
    buckets: list[list[Tensor]] = []
    current: list[Tensor] = []
    size = 0
    for tensor in tensors:
        nbytes = _nbytes(tensor)
        if current and size + nbytes > bucket_bytes:
            buckets.append(current)
            current, size = [], 0
        current.append(tensor)
        size += nbytes
    if current:
        buckets.append(current)
    return buckets
