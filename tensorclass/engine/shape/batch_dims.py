"""Shape operations on the batch dims.

Each operation computes the new batch size once and applies the matching tensor operation
to every leaf, with the leaf's own trailing dims appended. Dims are normalised against the
batch dims first, so ``td.unsqueeze(-1)`` adds a batch dim, not a feature dim.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from ...errors import BatchSizeError, LockedError
from ...non_tensor import NonTensorData
from ..core.self_types import E, Node
from ..core.state import BatchSizeLike, Names, TensorCore, as_batch_size

__all__ = [
    "batch_dim",
    "chunk",
    "expand",
    "expand_as",
    "flip",
    "repeat",
    "reshape",
    "roll",
    "set_batch_size",
    "split",
    "squeeze_dims",
    "unbind",
]


def batch_dim(dim: int, ndim: int, *, extra: int = 0) -> int:
    """Normalise a (possibly negative) batch dim; ``extra`` allows one past the end."""
    bound = ndim + extra
    if not -bound <= dim < bound:
        raise IndexError(
            f"dim {dim} is out of range for {ndim} batch dims (valid: {-bound}..{bound - 1})"
        )
    return dim % bound if bound else 0


def squeeze_dims(dim: int | Sequence[int], ndim: int) -> list[int]:
    """The batch dims ``squeeze(dim)`` names (an int or a sequence, as torch takes),
    normalised and in increasing order; a dim named twice is an error, as in torch."""
    named = [dim] if isinstance(dim, int) else list(dim)
    dims = sorted(batch_dim(d, ndim) for d in named)
    if len(set(dims)) != len(dims):
        raise IndexError(f"squeeze: a dim appears more than once in {named}")
    return dims


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...]:
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return tuple(args)


def _infer_shape(shape: Sequence[int], numel: int, old: torch.Size) -> torch.Size:
    """Resolve one ``-1`` in a target batch shape and check the element count."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return torch.Size(shape)  # the common case: every size given
    shape = list(shape)
    if shape.count(-1) > 1:
        raise BatchSizeError(f"only one dim can be -1 in {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise BatchSizeError(f"cannot reshape batch size {list(old)} to {shape}")
        shape[shape.index(-1)] = numel // known
    if math.prod(shape) != numel:
        raise BatchSizeError(f"cannot reshape batch size {list(old)} to {shape}")
    return torch.Size(shape)


def _map_shape(
    self: E,
    fn: Callable[[Tensor | Node], Tensor | Node],
    batch_size: torch.Size,
    names: Names = None,
) -> E:
    data = {key: fn(leaf) for key, leaf in self._data.items()}
    return type(self)._new(data, batch_size, self._device, names)


def _view(
    self: E,
    *shape: int | Sequence[int] | torch.dtype,
    size: Sequence[int] | None = None,
    batch_size: Sequence[int] | None = None,
) -> E:
    """View the batch dims with a new shape (``-1`` infers one dim); shares storage.

    ``size=`` gives the shape by keyword. ``view(dtype)`` views every tensor as another
    dtype (as ``Tensor.view(dtype)``); the batch size stays, or is ``batch_size=`` when
    the reinterpretation changes the batch dims.
    """
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        dtype = shape[0]
        if batch_size is None:
            return _map_leaf_tensors(self, lambda t: t.view(dtype))
        return self.apply(lambda t: t.view(dtype), batch_size=batch_size)
    if size is not None:
        if shape:
            raise TypeError("view: pass the shape positionally or as size=, not both")
        shape = (tuple(size),)
    bs = self._batch_size
    new = _infer_shape(_sizes(shape), bs.numel(), bs)
    return _resize_leaves(self, new, "view")


def _map_leaf_tensors(self: E, fn: Callable[[Tensor], Tensor]) -> E:
    """``fn`` on every tensor leaf at every depth, the structure kept."""
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            data[key] = fn(leaf)
        elif isinstance(leaf, Node):
            data[key] = _map_leaf_tensors(leaf, fn)
        else:
            data[key] = leaf
    return type(self)._new(data, self._batch_size, self._device, self._names)


def _become(self: E, result: TensorCore, what: str) -> E:
    """Take the leaves, batch size and names of ``result`` in place (the ``inplace=True``
    form of a shape operation); nested instances are kept and changed in place too."""
    if type(self._data) is not dict:
        raise NotImplementedError(
            f"{what}(inplace=True) is not supported on a lazy stack (its batch size comes "
            f"from its members); call contiguous() first or use inplace=False"
        )
    if self._locked:
        raise LockedError(
            f"cannot {what}(inplace=True): this {type(self).__name__} is locked; call "
            f"unlock_() first or use inplace=False"
        )
    _rebind(self, result)
    return self


def reshape(self: E, *shape: int | Sequence[int]) -> E:
    """Reshape the batch dims (``-1`` infers one dim); copies only when needed."""
    bs = self._batch_size
    new = _infer_shape(_sizes(shape), bs.numel(), bs)
    if len(new) == 1 and len(bs) > 1:
        # Merging every batch dim into one is a flatten: no per-leaf target shape (every
        # leaf kind flattens its leading dims).
        end = len(bs) - 1
        data = {key: leaf.flatten(0, end) for key, leaf in self._data.items()}
        return type(self)._new(data, new, self._device)
    return _resize_leaves(self, new, "reshape")


def _resize_leaves(self: E, new: torch.Size, method: str) -> E:
    """``leaf.<method>(*new, *feature dims)`` for every leaf (view or reshape)."""
    n = len(self._batch_size)
    tensor_op = getattr(Tensor, method)
    data = {}
    last: torch.Size | None = None  # leaves often share a shape: reuse the last target
    target: tuple[int, ...] = ()
    for key, leaf in self._data.items():
        if leaf.__class__ is Tensor:
            shape = leaf.shape
            if shape != last:
                last, target = shape, (*new, *shape[n:])
            # unpacked (faster); a 0-d target needs the empty tuple
            data[key] = tensor_op(leaf, *target) if target else tensor_op(leaf, ())
        else:
            data[key] = getattr(leaf, method)((*new, *leaf.shape[n:]))
    return type(self)._new(data, new, self._device)


def _flatten(self: E, start_dim: int = 0, end_dim: int = -1, *, inplace: bool = False) -> E:
    """Merge the batch dims ``start_dim..end_dim`` into one (``inplace=True`` changes this
    instance and returns it)."""
    if inplace:
        return _become(self, self.flatten(start_dim, end_dim), "flatten")
    n = len(self._batch_size)
    if n == 0:
        return self.unsqueeze(0)  # as for a 0-d tensor: one dim of size 1
    start, end = batch_dim(start_dim, n), batch_dim(end_dim, n)
    if start > end:
        raise IndexError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    bs = self._batch_size
    new = torch.Size((*bs[:start], math.prod(bs[start : end + 1]), *bs[end + 1 :]))
    return _map_shape(self, lambda leaf: leaf.flatten(start, end), new)


def _unflatten(self: E, dim: int, unflattened_size: Sequence[int], *, inplace: bool = False) -> E:
    """Split the batch dim ``dim`` into ``unflattened_size`` (``inplace=True`` changes
    this instance and returns it)."""
    if inplace:
        return _become(self, self.unflatten(dim, unflattened_size), "unflatten")
    bs = self._batch_size
    d = batch_dim(dim, len(bs))
    inner = _infer_shape(unflattened_size, bs[d], bs[d : d + 1])
    new = torch.Size((*bs[:d], *inner, *bs[d + 1 :]))
    return _map_shape(self, lambda leaf: leaf.unflatten(d, inner), new)


def _squeeze(self: E, dim: int | Sequence[int] | None = None) -> E:
    """Remove batch dims of size 1: all of them, or those of ``dim`` (an int or a
    sequence of ints, as ``torch.squeeze``) that have size 1."""
    bs = self._batch_size
    if dim is None:
        dims = [d for d, size in enumerate(bs) if size == 1]
    else:
        dims = [d for d in squeeze_dims(dim, len(bs)) if bs[d] == 1]
    if not dims:
        return _map_shape(self, lambda leaf: leaf, bs, self._names)
    new = torch.Size([size for d, size in enumerate(bs) if d not in dims])
    names = self._names
    if names is not None:
        names = tuple(name for d, name in enumerate(names) if d not in dims)
    data = dict(self._data)
    for d in reversed(dims):
        data = {key: leaf.squeeze(d) for key, leaf in data.items()}
    return type(self)._new(data, new, self._device, names)


def _unsqueeze(self: E, dim: int) -> E:
    """Insert a batch dim of size 1 at ``dim``."""
    bs = self._batch_size
    d = batch_dim(dim, len(bs), extra=1)
    sizes = list(bs)
    sizes.insert(d, 1)
    names = self._names
    if names is not None:
        names = (*names[:d], None, *names[d:])
    data = {key: leaf.unsqueeze(d) for key, leaf in self._data.items()}
    return type(self)._new(data, torch.Size(sizes), self._device, names)


def _permute(self: E, *dims: int | Sequence[int]) -> E:
    """Reorder the batch dims (feature dims stay where they are)."""
    bs = self._batch_size
    n = len(bs)
    order = list(_sizes(dims))
    identity = list(range(n))
    if sorted(order) != identity:  # negative dims, or not a permutation
        order = [batch_dim(d, n) for d in order]
        if sorted(order) != identity:
            raise IndexError(f"permute needs each of the {n} batch dims once; got {list(dims)}")
    new = torch.Size([bs[d] for d in order])
    names = self._names
    if names is not None:
        names = tuple(names[d] for d in order)
    moved = [d for d in identity if order[d] != d]
    if len(moved) == 2:
        # One swap: a transpose, the same for every leaf whatever its rank.
        d0, d1 = moved
        data = {key: leaf.transpose(d0, d1) for key, leaf in self._data.items()}
        return type(self)._new(data, new, self._device, names)
    if not moved:
        return type(self)._new(dict(self._data), new, self._device, names)
    # The full permutation per leaf rank, passed unpacked (torch parses ints faster
    # than one tuple); leaves often share a rank, so the last one is reused.
    data = {}
    last_rank = -1
    full: tuple[int, ...] = ()
    for key, leaf in self._data.items():
        rank = leaf.dim() if leaf.__class__ is Tensor else len(leaf.shape)
        if rank != last_rank:
            last_rank, full = rank, (*order, *range(n, rank))
        data[key] = leaf.permute(*full)
    return type(self)._new(data, new, self._device, names)


def _transpose(self: E, dim0: int, dim1: int) -> E:
    """Swap two batch dims."""
    n = len(self._batch_size)
    d0, d1 = batch_dim(dim0, n), batch_dim(dim1, n)
    order = list(range(n))
    order[d0], order[d1] = order[d1], order[d0]
    return self.permute(order)


def expand(self: E, *shape: int | Sequence[int]) -> E:
    """Broadcast the batch dims to ``shape`` (new leading dims allowed); no copy."""
    sizes = _sizes(shape)
    bs = self._batch_size
    offset = len(sizes) - len(bs)
    if offset < 0:
        raise BatchSizeError(
            f"expand: shape {list(sizes)} has fewer dims than batch size {list(bs)}"
        )
    new_list = []
    for i, size in enumerate(sizes):
        old = bs[i - offset] if i >= offset else 1
        if size == -1:
            size = old
        if old not in (1, size):
            raise BatchSizeError(f"cannot expand batch size {list(bs)} to {list(sizes)}")
        new_list.append(size)
    new = torch.Size(new_list)
    n = len(bs)
    # Feature dims keep their size (-1), so the target depends on the leaf rank only.
    data = {}
    last_rank = -1
    target: tuple[int, ...] = ()
    for key, leaf in self._data.items():
        if leaf.__class__ is Tensor:
            rank = leaf.dim()
            if rank != last_rank:
                last_rank, target = rank, (*new_list, *(-1,) * (rank - n))
            # unpacked (faster); a 0-d target needs the empty tuple
            data[key] = leaf.expand(*target) if target else leaf.expand(())
        else:
            data[key] = leaf.expand((*new, *leaf.shape[n:]))
    return type(self)._new(data, new, self._device)


def expand_as(self: E, other: Any) -> E:
    """Expand to the batch shape of ``other`` (a tensor class or a tensor)."""
    return self.expand(other.shape)


def repeat(self: E, *repeats: int | Sequence[int], inplace: bool = False) -> E:
    """Tile the batch dims ``repeats`` times (copies; ``inplace=True`` changes this
    instance and returns it)."""
    if inplace:
        return _become(self, self.repeat(*repeats), "repeat")
    reps = _sizes(repeats)
    bs = self._batch_size
    if len(reps) < len(bs):
        raise BatchSizeError(f"repeat needs at least {len(bs)} counts; got {list(reps)}")
    padded = (1,) * (len(reps) - len(bs)) + tuple(bs)
    new = torch.Size([a * b for a, b in zip(padded, reps)])
    n = len(bs)

    def repeat_leaf(leaf: Tensor | Node) -> Tensor | Node:
        return leaf.repeat(*reps, *(1,) * (len(leaf.shape) - n))

    return _map_shape(self, repeat_leaf, new)


def flip(self: E, dims: int | Sequence[int]) -> E:
    """Reverse the order of elements along batch ``dims``."""
    n = len(self._batch_size)
    norm = [batch_dim(d, n) for d in ([dims] if isinstance(dims, int) else dims)]
    return _map_shape(self, lambda leaf: leaf.flip(norm), self._batch_size, self._names)


def roll(
    self: E,
    shifts: int | Sequence[int],
    dims: int | Sequence[int] | None = None,
    *,
    inplace: bool = False,
) -> E:
    """Roll elements along batch ``dims`` by ``shifts`` (``dims=None``: over the
    flattened batch, as ``torch.roll``; ``inplace=True`` writes the rolled values into
    this instance's tensors)."""
    if inplace:
        rolled = self.roll(shifts, dims)
        if type(self._data) is not dict:  # a lazy stack's roll may reorder its members
            rolled = rolled.clone()
        self.update_(rolled)
        return self
    if dims is None or (not isinstance(dims, int) and not len(dims)):
        flat = self.reshape(-1) if len(self._batch_size) != 1 else self
        return flat.roll(shifts, 0).reshape(self._batch_size)
    n = len(self._batch_size)
    if isinstance(dims, int):
        norm: int | list[int] = batch_dim(dims, n)
    else:
        norm = [batch_dim(d, n) for d in dims]
    return _map_shape(self, lambda leaf: leaf.roll(shifts, norm), self._batch_size, self._names)


def unbind(self: E, dim: int = 0) -> tuple[E, ...]:
    """Split along a batch dim into a tuple of instances (dim removed)."""
    bs = self._batch_size
    d = batch_dim(dim, len(bs))
    count = bs[d]
    new = torch.Size((*bs[:d], *bs[d + 1 :]))
    names = self._names
    if names is not None:
        names = (*names[:d], *names[d + 1 :])
    keys = list(self._data)
    columns = [
        (leaf,) * count if type(leaf) is NonTensorData else leaf.unbind(d)
        for leaf in self._data.values()
    ]
    cls, device = type(self), self._device
    return tuple(
        cls._new(dict(zip(keys, row)), new, device, names)
        for row in (zip(*columns) if columns else [()] * count)
    )


def split(self: E, split_size: int | Sequence[int], dim: int = 0) -> tuple[E, ...]:
    """Split along a batch dim into parts of ``split_size`` (or of the given sizes)."""
    bs = self._batch_size
    d = batch_dim(dim, len(bs))
    total = bs[d]
    if isinstance(split_size, int):
        if split_size <= 0:
            raise ValueError(f"split_size must be positive; got {split_size}")
        sections = [split_size] * (total // split_size)
        if total % split_size or not sections:
            sections.append(total % split_size)
    else:
        sections = list(split_size)
        if sum(sections) != total:
            raise BatchSizeError(
                f"split sizes {sections} do not add up to batch dim {d} of size {total}"
            )
    return self._split_sections(sections, d)


def chunk(self: E, chunks: int, dim: int = 0) -> tuple[E, ...]:
    """Split along a batch dim into ``chunks`` nearly equal parts (as ``torch.chunk``)."""
    if chunks <= 0:
        raise ValueError(f"chunks must be positive; got {chunks}")
    d = batch_dim(dim, len(self._batch_size))
    total = self._batch_size[d]
    if total == 0:  # as torch.chunk: that many empty parts
        return self._split_sections([0] * chunks, d)
    return self.split(-(-total // chunks), d)


def _split_sections(self: E, sections: list[int], d: int) -> tuple[E, ...]:
    bs = self._batch_size
    keys = list(self._data)
    columns: list[Sequence[object]] = []
    for leaf in self._data.values():
        if type(leaf) is NonTensorData:
            columns.append((leaf,) * len(sections))
        elif isinstance(leaf, torch.Tensor):
            columns.append(torch.split(leaf, sections, d))
        elif hasattr(leaf, "split_at"):
            columns.append(leaf.split_at(sections, d))
        else:
            columns.append(leaf._split_sections(sections, d))
    cls, device, names = type(self), self._device, self._names
    return tuple(
        cls._new(dict(zip(keys, row)), torch.Size((*bs[:d], size, *bs[d + 1 :])), device, names)
        for size, row in zip(sections, zip(*columns) if columns else [()] * len(sections))
    )


def set_batch_size(self: E, batch_size: BatchSizeLike) -> E:
    """Set a new batch size (checked against every leaf) and return this instance."""
    self._set_batch_size(as_batch_size(batch_size))
    return self


def _rebind(node: TensorCore, result: TensorCore) -> None:
    data = node._data
    for key, leaf in result._data.items():
        old = data.get(key)
        if isinstance(leaf, TensorCore) and isinstance(old, TensorCore) and type(old._data) is dict:
            _rebind(old, leaf)
        else:
            data[key] = leaf
    node._batch_size = result._batch_size
    node._names = result._names
