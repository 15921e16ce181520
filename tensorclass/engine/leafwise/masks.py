"""Checking a batch mask (``masked_fill``, ``where``) before any leaf is touched.

A mask covers the LEADING batch dims: a mask of shape ``(4,)`` on a batch ``[4, 1]``
selects along dim 0, and each leaf sees it with singleton dims appended (never aligned
from the right, which would broadcast leaves past the batch size). A mask dim of size 1
broadcasts, as in torch. A mask on another device than a leaf is refused naming that key.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ...errors import BatchSizeError, OperandError
from ..core.state import TensorCore

__all__ = ["check_mask", "expand_mask"]


def expand_mask(mask: Tensor, leaf: Tensor) -> Tensor:
    """``mask`` (over leading batch dims) with singleton dims appended for ``leaf``."""
    extra = leaf.ndim - mask.ndim
    return mask.reshape(mask.shape + (1,) * extra) if extra > 0 else mask


def check_mask(node: TensorCore, mask: Any, op: str) -> None:
    """Raise, naming the key, if ``mask`` cannot select over ``node``'s leading batch dims
    or sits on another device than one of its tensors."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}: the mask must be a tensor; got {type(mask).__name__}")
    batch = tuple(node._batch_size)
    shape = tuple(mask.shape)
    fits = len(shape) <= len(batch) and all(m in (b, 1) for m, b in zip(shape, batch, strict=False))
    if not fits:
        key = _first_key(node)
        raise BatchSizeError(
            f"{op}: the mask of shape {list(shape)} does not cover the leading batch dims "
            f"{list(batch)} (at key {key!r}); expected a shape like {list(batch[: len(shape)])}",
            key=key,
        )
    if mask.ndim:
        for part in _parts(node):
            _check_devices(part, mask.device, op, ())


def _parts(node: TensorCore) -> list[TensorCore]:
    """The instances holding ``node``'s tensors: its members for a lazy stack."""
    lazy = getattr(node, "_lazy", None)
    return [node] if lazy is None else [p for m in lazy.members for p in _parts(m)]


def _first_key(node: TensorCore) -> str | tuple[str, ...] | None:
    lazy = getattr(node, "_lazy", None)
    if lazy is not None:
        return _first_key(lazy.members[0]) if lazy.members else None
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            inner = _first_key(leaf)
            if inner is not None:
                return (key, *((inner,) if isinstance(inner, str) else inner))
        elif isinstance(leaf, Tensor):
            return key
    return None


def _check_devices(node: TensorCore, device: torch.device, op: str, path: tuple[str, ...]) -> None:
    if getattr(node, "_lazy", None) is not None:  # a lazy stack nested in a member
        for part in _parts(node):
            _check_devices(part, device, op, path)
        return
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            if leaf.device != device:
                where = key if not path else (*path, key)
                raise OperandError(
                    f"{op}: the tensor under {where!r} is on {leaf.device}, the mask on "
                    f"{device}; expected the same device",
                    key=where,
                )
        elif isinstance(leaf, TensorCore):
            _check_devices(leaf, device, op, (*path, key))
