"""Rearranging, narrowing and repeating the batch dims: ``movedim``, ``swapaxes``, ``rot90``,
``fliplr``/``flipud``, ``atleast_*d``, ``broadcast_to``, ``pad``, ``tile``,
``repeat_interleave``.

Each follows the torch function of the same name applied to the batch dims (the leaves' own
feature dims are left as they are). Most are written with the shape operations of
:mod:`~tensorclass.engine.shape.batch_dims` (``permute``, ``transpose``, ``flip``,
``unsqueeze``, ``expand``, indexing), so a lazy stack keeps its members through them.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"x": torch.zeros(2, 3, 5)}, batch_size=[2, 3])
>>> td.movedim(0, 1).batch_size, td.movedim(0, 1)["x"].shape
(torch.Size([3, 2]), torch.Size([3, 2, 5]))
>>> td.rot90().batch_size
torch.Size([3, 2])
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ...non_tensor import NonTensorStack
from ..core.self_types import E, Node
from .batch_dims import _become, _map_leaf_tensors, batch_dim

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_to",
    "fliplr",
    "flipud",
    "moveaxis",
    "movedim",
    "pad",
    "positions_like",
    "repeat_interleave",
    "rot90",
    "swapaxes",
    "swapdims",
    "tile",
    "to_padded_tensor",
]


def positions_like(leaf: NonTensorStack, pick: Tensor) -> NonTensorStack:
    """The values of a per-element leaf at the flat batch positions ``pick`` (any shape)."""
    return NonTensorStack(leaf.array.reshape(-1)[pick.cpu().numpy()])


def _dims(value: int | Sequence[int]) -> list[int]:
    return [value] if isinstance(value, int) else list(value)


def _rearranged(
    self: E,
    tensor_fn: Callable[[Tensor], Tensor],
    nested_fn: Callable[[Node], Node],
    new: torch.Size,
) -> E:
    """``tensor_fn`` on every tensor leaf, ``nested_fn`` on every nested instance; a
    per-element non-tensor leaf takes the values at the positions ``tensor_fn`` moves
    the batch elements to (a shared value is kept)."""
    data: dict[str, object] = {}
    positions: Tensor | None = None
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            data[key] = tensor_fn(leaf)
        elif isinstance(leaf, Node):
            data[key] = nested_fn(leaf)
        elif type(leaf) is NonTensorStack:
            if positions is None:
                bs = self._batch_size
                positions = tensor_fn(torch.arange(bs.numel()).reshape(bs))
            data[key] = positions_like(leaf, positions)
        else:
            data[key] = leaf
    return type(self)._new(data, new, self._device, None)


# -- moving dims -----------------------------------------------------------------------


def movedim(self: E, source: int | Sequence[int], destination: int | Sequence[int]) -> E:
    """Move batch dims ``source`` to positions ``destination`` (as ``torch.movedim``).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"x": torch.zeros(2, 3, 4)}, [2, 3, 4]).movedim(-1, 0).batch_size
    torch.Size([4, 2, 3])
    """
    n = len(self._batch_size)
    src = [batch_dim(d, n) for d in _dims(source)]
    dst = [batch_dim(d, n) for d in _dims(destination)]
    if len(src) != len(dst):
        raise ValueError(
            f"movedim: source {list(_dims(source))} and destination "
            f"{list(_dims(destination))} must name as many dims"
        )
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"movedim: repeated dim in source {src} or destination {dst}")
    order: list[int | None] = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    return self.permute([next(rest) if d is None else d for d in order])


def moveaxis(self: E, source: int | Sequence[int], destination: int | Sequence[int]) -> E:
    """Alias of :meth:`movedim` (as ``torch.moveaxis``)."""
    return self.movedim(source, destination)


def swapaxes(self: E, axis0: int, axis1: int) -> E:
    """Swap two batch dims (as ``torch.swapaxes``; same as :meth:`transpose`)."""
    return self.transpose(axis0, axis1)


def swapdims(self: E, axis0: int, axis1: int) -> E:
    """Swap two batch dims (as ``torch.swapdims``; same as :meth:`transpose`)."""
    return self.transpose(axis0, axis1)


def rot90(self: E, k: int = 1, dims: Sequence[int] = (0, 1)) -> E:
    """Rotate by 90 degrees ``k`` times in the plane of batch ``dims`` (as ``torch.rot90``:
    from the first dim towards the second)."""
    n = len(self._batch_size)
    if len(dims) != 2:
        raise ValueError(f"rot90 needs exactly 2 dims; got {list(dims)}")
    if n < 2:
        raise ValueError(f"rot90 needs at least 2 batch dims; batch size {list(self.shape)}")
    d0, d1 = batch_dim(dims[0], n), batch_dim(dims[1], n)
    if d0 == d1:
        raise ValueError(f"rot90 needs two different dims; got {list(dims)}")
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.flip([])


def fliplr(self: E) -> E:
    """Reverse batch dim 1 (as ``torch.fliplr``: needs at least 2 batch dims)."""
    if len(self._batch_size) < 2:
        raise ValueError(f"fliplr needs at least 2 batch dims; batch size {list(self.shape)}")
    return self.flip([1])


def flipud(self: E) -> E:
    """Reverse batch dim 0 (as ``torch.flipud``: needs at least 1 batch dim)."""
    if not self._batch_size:
        raise ValueError("flipud needs at least 1 batch dim; the batch size is []")
    return self.flip([0])


# -- adding dims -------------------------------------------------------------------------


def atleast_1d(self: E) -> E:
    """At least one batch dim (as ``torch.atleast_1d``: a 0-d batch becomes ``[1]``)."""
    return self.unsqueeze(0) if not self._batch_size else self


def atleast_2d(self: E) -> E:
    """At least two batch dims (as ``torch.atleast_2d``: dims of size 1 go in front)."""
    n = len(self._batch_size)
    if n >= 2:
        return self
    return self.unsqueeze(0) if n == 1 else self.unsqueeze(0).unsqueeze(0)


def atleast_3d(self: E) -> E:
    """At least three batch dims, as ``torch.atleast_3d``: ``[]`` becomes ``[1, 1, 1]``,
    ``[n]`` becomes ``[1, n, 1]`` and ``[m, n]`` becomes ``[m, n, 1]``."""
    n = len(self._batch_size)
    if n >= 3:
        return self
    if n == 2:
        return self.unsqueeze(2)
    if n == 1:
        return self.unsqueeze(0).unsqueeze(2)
    return self.unsqueeze(0).unsqueeze(0).unsqueeze(0)


def broadcast_to(self: E, shape: Sequence[int]) -> E:
    """Broadcast the batch dims to ``shape`` (as ``torch.broadcast_to``; same as
    :meth:`expand`): no copy."""
    return self.expand(shape)


# -- padding ------------------------------------------------------------------------------


def pad(self: E, pad_size: Sequence[int], value: float = 0.0, inplace: bool = False) -> E:
    """Pad the batch dims with ``value``: ``pad_size`` is ``[before, after]`` for batch dim
    0, then for dim 1, and so on (negative sizes crop, as ``torch.nn.functional.pad``).
    Non-tensor values take ``None`` in the new elements; ``inplace=True`` changes this
    instance and returns it.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"x": torch.ones(2, 3)}, batch_size=[2])
    >>> td.pad([1, 0], value=-1)["x"][:, 0].tolist()
    [-1.0, 1.0, 1.0]
    """
    if inplace:
        return _become(self, self.pad(pad_size, value), "pad")
    bs = self._batch_size
    pads = [operator.index(p) for p in pad_size]
    if len(pads) % 2 or len(pads) > 2 * len(bs):
        raise ValueError(
            f"pad: pad_size needs a (before, after) pair per padded batch dim, at most "
            f"{len(bs)} pairs for batch size {list(bs)}; got {pads}"
        )
    new = list(bs)
    for i, size in enumerate(pads):
        new[i // 2] += size
    if min(new, default=0) < 0:
        raise ValueError(f"pad: {pads} would make batch size {list(bs)} negative")
    padded = len(pads) // 2
    pairs = [p for d in reversed(range(padded)) for p in pads[2 * d : 2 * d + 2]]
    new_size = torch.Size(new)
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            data[key] = F.pad(leaf, [0, 0] * (leaf.ndim - padded) + pairs, value=value)
        elif isinstance(leaf, Node):
            data[key] = leaf.pad(pads, value)
        elif type(leaf) is NonTensorStack:
            data[key] = _pad_stack(leaf, pads, new_size)
        else:
            data[key] = leaf
    return type(self)._new(data, new_size, self._device, self._names)


def to_padded_tensor(self: E, padding: float = 0.0, mask_key: Any = None) -> E:
    """Nested (jagged) tensor leaves as regular tensors padded with ``padding`` (as
    ``torch.nested.to_padded_tensor``); other leaves are kept. ``mask_key`` stores the
    mask of the real elements of the first padded leaf (through its ragged dim)."""
    padded: list[Tensor] = []

    def fn(leaf: Tensor) -> Tensor:
        if not leaf.is_nested:
            return leaf
        padded.append(leaf)
        out: Tensor = torch.nested.to_padded_tensor(leaf, padding)
        return out

    result = _map_leaf_tensors(self, fn)
    if mask_key is not None:
        if not padded:
            raise ValueError("to_padded_tensor(mask_key=...): no leaf is a nested tensor")
        leaf = padded[0]
        ones = torch.ones_like(leaf, dtype=torch.bool)
        mask = torch.nested.to_padded_tensor(ones, False)
        ragged = getattr(leaf, "_ragged_idx", 1)
        mask = mask[(...,) + (0,) * (mask.ndim - ragged - 1)] if mask.ndim > ragged + 1 else mask
        result.set(mask_key, mask)
    return result


# -- repeating ----------------------------------------------------------------------------


def tile(self: E, dims: int | Sequence[int]) -> E:
    """Repeat the batch dims as ``torch.tile``: fewer counts than batch dims repeat the
    last ones; more add leading batch dims."""
    reps = _dims(dims)
    n = len(self._batch_size)
    return self.repeat([1] * (n - len(reps)) + reps)


def repeat_interleave(
    self: E,
    repeats: int | Tensor,
    dim: int | None = None,
    *,
    output_size: int | None = None,
    inplace: bool = False,
) -> E:
    """Repeat each element along batch dim ``dim`` ``repeats`` times, keeping repeats
    together (as ``torch.repeat_interleave``; ``dim=None`` flattens the batch first;
    ``inplace=True`` makes this instance the result)."""
    if inplace:
        result = self.repeat_interleave(repeats, dim, output_size=output_size)
        return _become(self, result, "repeat_interleave")
    bs = self._batch_size
    if dim is None:
        flat = self.reshape(-1) if len(bs) != 1 else self
        return flat.repeat_interleave(repeats, 0, output_size=output_size)
    d = batch_dim(dim, len(bs))
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        if repeats.ndim != 1 or repeats.shape[0] != bs[d]:
            raise ValueError(
                f"repeat_interleave: repeats of shape {list(repeats.shape)} must have one "
                f"count per element of batch dim {d} (size {bs[d]})"
            )
        total = output_size if output_size is not None else int(repeats.sum())
    else:
        total = bs[d] * int(repeats)
    new = torch.Size((*bs[:d], total, *bs[d + 1 :]))

    def tensor_fn(leaf: Tensor) -> Tensor:
        return leaf.repeat_interleave(repeats, d, output_size=output_size)

    def nested_fn(leaf: Node) -> Node:
        return leaf.repeat_interleave(repeats, d, output_size=output_size)

    return _rearranged(self, tensor_fn, nested_fn, new)


def _pad_stack(leaf: NonTensorStack, pad_size: Sequence[int], new: torch.Size) -> NonTensorStack:
    """A per-element leaf padded with ``None`` (negative sizes crop)."""
    out = np.full(tuple(new), None, dtype=object)
    source, target = [], []
    for d in range(len(new)):
        before = pad_size[2 * d] if 2 * d < len(pad_size) else 0
        size = leaf.array.shape[d]
        start = max(-before, 0)
        stop = min(size, new[d] - before)
        source.append(slice(start, max(stop, start)))
        target.append(slice(start + before, max(stop, start) + before))
    out[tuple(target)] = leaf.array[tuple(source)]
    return NonTensorStack(out)
