"""Selecting batch elements and writing at an index, key by key: ``gather``,
``masked_select``, ``narrow``, ``tensor_split``, ``get_at``, ``set_at_``, ``update_at_``, ``copy_at_``, ``get_item_shape``.

An index is read against the batch dims, as for ``td[index]``: ``td.get_at("x", 0)`` is
``td["x"][0]`` and ``td.set_at_("x", v, idx)`` is ``td["x"][idx] = v``, written through to
the stored tensor (to the members of a lazy stack).

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"x": torch.arange(6).reshape(2, 3)}, batch_size=[2, 3])
>>> td.gather(1, torch.tensor([[2, 0], [1, 1]]))["x"].tolist()
[[2, 0], [4, 4]]
>>> td.set_at_("x", 0, (1, slice(None)))["x"].tolist()
[[0, 1, 2], [0, 0, 0]]
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import torch
from torch import Tensor

from ...errors import BatchSizeError, KeyNotFoundError
from ...keys import NestedKey, shown_key, unravel_key_tuple
from ...non_tensor import NonTensorData
from ...registry import dynamic_class
from ...switches import missing_gets_none
from ..core.self_types import E, Node, as_op
from ..core.state import MISSING, NO_DEFAULT, TensorCore
from ..keys.access import _entries, _flat_entries, _owner, read_value
from .batch_dims import _become, batch_dim
from .indexing import _broadcast_to, _fits, _leaves, indexed_batch_size, normalize_index
from .rearrange import _rearranged

__all__ = [
    "copy_at_",
    "gather",
    "get_at",
    "get_item_shape",
    "masked_select",
    "narrow",
    "set_at_",
    "tensor_split",
    "update_at_",
]


def _key(flat: tuple[str, ...]) -> str | tuple[str, ...]:
    return flat[0] if len(flat) == 1 else flat


def _expand_index(index: Tensor, shape: Sequence[int], batch_dims: int) -> Tensor:
    """``index`` (shaped like the batch dims) with singleton trailing dims expanded to the
    leaf's feature dims, as ``torch.gather`` needs."""
    extra = len(shape) - batch_dims
    if not extra:
        return index
    features = tuple(shape[batch_dims:])
    return index.reshape(*index.shape, *(1,) * extra).expand(*index.shape, *features)


def gather(
    self: E, dim: int, index: Tensor, out: TensorCore | None = None, *, inplace: bool = False
) -> E:
    """Gather along batch dim ``dim`` as ``torch.gather``, leaf by leaf.

    ``index`` has as many dims as the batch and gives the result's batch size; a leaf
    with feature dims takes it expanded to them (every feature is gathered). ``out=``
    receives the result in place; ``inplace=True`` makes this instance the result.
    """
    if inplace:
        if out is not None:
            raise ValueError("gather: pass out= or inplace=True, not both")
        return _become(self, self.gather(dim, index), "gather")
    bs = self._batch_size
    n = len(bs)
    d = batch_dim(dim, n)
    if index.ndim != n:
        raise BatchSizeError(
            f"gather: the index needs one dim per batch dim ({n}, batch size {list(bs)}); "
            f"got shape {list(index.shape)}"
        )

    new = torch.Size(index.shape)
    data: dict[str, object] = {}
    last: object = None  # leaves often share a shape: reuse the last expanded index
    found = index
    gather = torch.gather
    for key, leaf in self._data.items():
        if leaf.__class__ is not Tensor:
            break  # another kind of leaf: the general path below
        shape = leaf.shape
        if shape != last:
            last, found = shape, _expand_index(index, shape, n)
        data[key] = gather(leaf, d, found)
    else:
        result = type(self)._new(data, new, self._device, None)
        if out is None:
            return result
        as_op(out).update_(result)
        return out  # type: ignore[return-value]

    def tensor_fn(leaf: Tensor) -> Tensor:
        return gather(leaf, d, _expand_index(index, leaf.shape, n))

    def nested_fn(leaf: Node) -> Node:
        return leaf.gather(d, _expand_index(index, leaf._batch_size, n))

    result = _rearranged(self, tensor_fn, nested_fn, new)
    if out is not None:
        as_op(out).update_(result)
        return out  # type: ignore[return-value]
    return result


def masked_select(self: E, mask: Tensor, *, inplace: bool = False) -> E:
    """The elements where the boolean ``mask`` (over the leading batch dims) is true,
    along one new first batch dim, as ``td[mask]`` (trailing singleton mask dims past
    the batch dims are ignored; ``inplace=True`` makes this instance the result)."""
    if inplace:
        return _become(self, self.masked_select(mask), "masked_select")
    if mask.dtype is not torch.bool:
        raise TypeError(f"masked_select needs a boolean mask; got {mask.dtype}")
    bs = self._batch_size
    while mask.ndim > len(bs) and mask.shape[-1] == 1:
        mask = mask.squeeze(-1)
    if mask.shape != bs[: mask.ndim] or (not mask.ndim and bs):
        raise BatchSizeError(
            f"masked_select: a mask of shape {list(mask.shape)} does not match the leading "
            f"batch dims of batch size {list(bs)}"
        )
    result: E = self[mask]
    return result


# -- narrowing and splitting ---------------------------------------------------------------


def narrow(self: E, dim: int, start: int | Tensor, length: int) -> E:
    """The ``length`` elements from ``start`` along batch dim ``dim`` (a view, as
    ``torch.narrow``; a negative ``start`` counts from the end)."""
    bs = self._batch_size
    d = batch_dim(dim, len(bs))
    size = bs[d]
    begin = int(start) if isinstance(start, Tensor) else operator.index(start)
    if begin < 0:
        begin += size
    if not 0 <= begin <= size:
        raise IndexError(f"narrow: start {start} is out of range for dim {d} of size {size}")
    if length < 0 or begin + length > size:
        raise IndexError(
            f"narrow: start ({begin}) + length ({length}) exceeds dim {d} of size {size}"
        )
    result: E = self[(slice(None),) * d + (slice(begin, begin + length),)]
    return result


def tensor_split(
    self: E, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0
) -> tuple[E, ...]:
    """Split along batch dim ``dim`` as ``torch.tensor_split``: into that many nearly
    equal parts (an int), or at the given indices (a list or a 1-d tensor)."""
    bs = self._batch_size
    if not bs:
        raise ValueError("tensor_split needs at least one batch dim; the batch size is []")
    d = batch_dim(dim, len(bs))
    size = bs[d]
    spec: Any = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.ndim > 1 or spec.is_floating_point():
            raise ValueError(
                f"tensor_split: a tensor of indices must be a 0-d or 1-d integer tensor; "
                f"got {spec.ndim}-d {spec.dtype}"
            )
        spec = spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise ValueError(f"tensor_split: sections must be positive; got {spec}")
        small, extra = divmod(size, spec)
        bounds = [0]
        for part in range(spec):
            bounds.append(bounds[-1] + small + (1 if part < extra else 0))
    else:
        bounds = [0]
        for index in spec:
            index = operator.index(index)
            bounds.append(min(max(index + size if index < 0 else index, 0), size))
        bounds.append(size)
    return tuple(self.narrow(d, start, max(stop - start, 0)) for start, stop in pairwise(bounds))


# -- one key at an index -------------------------------------------------------------


def get_at(self: E, key: NestedKey, index: object, default: object = MISSING) -> Any:
    """``self[key][index]`` without building the intermediate result; for a missing key
    ``default`` if given, else ``None`` (a ``KeyError`` under
    ``set_get_defaults_to_none(False)``)."""
    flat = unravel_key_tuple(key)
    try:
        leaf = self._leaf(_key(flat))
    except KeyNotFoundError:
        if default is MISSING:
            if missing_gets_none():
                return None
            raise
        if default is NO_DEFAULT:
            raise
        return default
    if type(leaf) is NonTensorData:
        return leaf.data
    return read_value(leaf[normalize_index(index, self._batch_size)])


def set_at_(self: E, key: NestedKey, value: Any, index: object, *, non_blocking: bool = False) -> E:
    """Write ``value`` into the existing ``key`` at batch ``index``, in place (the
    value broadcasts to the selected elements, as ``tensor[index] = value``;
    ``non_blocking`` is accepted for compatibility: the write is an indexed copy)."""
    flat = unravel_key_tuple(key)
    normalized = normalize_index(index, self._batch_size)
    owner = _owner(self, flat)
    if owner is not None and type(owner._data) is dict and _dense_path(self, flat):
        leaf = owner._data.get(flat[-1], MISSING)
        if isinstance(leaf, Tensor):
            try:
                leaf[normalized] = value
            except RuntimeError:  # torch checks before writing: say which key and shapes
                target = indexed_batch_size(self._batch_size, normalized)
                _check_fits(self, flat, leaf.shape, value, target)
                raise
            return self
        if isinstance(leaf, Node):
            leaf._set_at(normalized, value)
            return self
    leaf = self._leaf(_key(flat))  # raises for a missing key
    target = indexed_batch_size(self._batch_size, normalized)
    if isinstance(leaf, Tensor) and not isinstance(value, TensorCore):
        features = leaf.shape[len(self._batch_size) :]
        value = torch.as_tensor(value, dtype=leaf.dtype)
        _check_fits(self, flat, leaf.shape, value, target)
        value = _broadcast_to(value, torch.Size((*target, *features)))
    part = dynamic_class()({flat: value}, batch_size=target)
    self._set_at(normalized, part)
    return self


def _check_fits(
    self: E, flat: tuple[str, ...], shape: torch.Size, value: Any, target: torch.Size
) -> None:
    """Raise, naming the key and both shapes, unless ``value`` broadcasts to the elements
    of batch shape ``target`` selected in the leaf of ``shape`` under ``flat``."""
    source = value.shape if isinstance(value, Tensor) else torch.as_tensor(value).shape
    expected = (*target, *shape[len(self._batch_size) :])
    if source != expected and not _fits(source, torch.Size(expected)):
        raise BatchSizeError(
            f"cannot write key {shown_key(flat)!r} at the index: value shape {list(source)} "
            f"does not fit the selected shape {list(expected)}; nothing was written"
        )


def update_at_(
    self: E,
    input_dict_or_td: Mapping[Any, Any] | TensorCore,
    idx: object,
    clone: bool = False,
    *,
    non_blocking: bool = False,
    keys_to_update: Sequence[NestedKey] | None = None,
) -> E:
    """Write every entry of ``input_dict_or_td`` into the existing keys at batch
    ``idx``, in place (``clone=True`` copies the values first; ``non_blocking`` is
    accepted for compatibility). Every key must exist: on a missing one nothing is
    written."""
    input, index = input_dict_or_td, idx
    whole = isinstance(input, TensorCore)
    if isinstance(input, TensorCore):
        entries = _leaves(input, ())
    else:
        entries = list(_flat_entries(_entries(input)))
    if keys_to_update is not None:
        wanted = {unravel_key_tuple(k) for k in keys_to_update}
        entries = [(k, v) for k, v in entries if k in wanted or k[:1] in wanted]
    for flat, _ in entries:
        if not self._has(_key(flat)):
            raise self._missing_at(flat, _key(flat))
    if whole and keys_to_update is None and not clone and entries:
        self._set_at(index, input)
        return self
    # Every shape is checked before anything is written (a refusal writes nothing);
    # tensors stored here (no lazy stack on the way) are then written directly.
    normalized = normalize_index(index, self._batch_size)
    target: torch.Size | None = None
    direct: list[tuple[Tensor, Tensor]] = []
    others: list[tuple[tuple[str, ...], Any]] = []
    for flat, value in entries:
        value = read_value(value)
        if not isinstance(value, Tensor):
            others.append((flat, value))
            continue
        if clone:
            value = value.clone()
        owner = _owner(self, flat)
        leaf = owner._data.get(flat[-1]) if owner is not None and _dense_path(self, flat) else None
        if len(entries) > 1:  # one write alone is checked by torch before it writes
            if target is None:
                target = indexed_batch_size(self._batch_size, normalized)
            shape = leaf.shape if isinstance(leaf, Tensor) else self.get_item_shape(flat)
            _check_fits(self, flat, shape, value, target)
        if isinstance(leaf, Tensor):
            # an advanced index refuses another dtype: cast now, not half way through
            direct.append((leaf, value if value.dtype == leaf.dtype else value.to(leaf.dtype)))
        else:
            others.append((flat, value))
    for leaf, value in direct:
        try:
            leaf[normalized] = value
        except RuntimeError:  # torch checks before writing: say which key and shapes
            if len(entries) == 1:  # (several were checked above)
                target = indexed_batch_size(self._batch_size, normalized)
                _check_fits(self, entries[0][0], leaf.shape, value, target)
            raise
    for flat, value in others:
        self.set_at_(flat, value, index)
    return self


def copy_at_(
    self: E, tensordict: Mapping[Any, Any] | TensorCore, idx: object, non_blocking: bool = False
) -> E:
    """Copy ``tensordict`` into this instance at batch ``idx``, in place (see
    :meth:`update_at_`)."""
    return self.update_at_(tensordict, idx)


def get_item_shape(self: E, key: NestedKey) -> torch.Size:
    """The shape of the value under ``key``: a tensor's shape, a nested instance's batch
    size, the batch size of the level holding a non-tensor value."""
    flat = unravel_key_tuple(key)
    leaf = self._leaf(_key(flat))
    if type(leaf) is NonTensorData:
        owner = _owner(self, flat)
        return owner._batch_size if owner is not None else self._batch_size
    shape: torch.Size = leaf.shape
    return shape


def _dense_path(node: TensorCore, flat: tuple[str, ...]) -> bool:
    """Whether every level down to the owner of ``flat`` stores its own leaves (no lazy
    stack, whose stored leaves are stacked copies)."""
    for part in flat[:-1]:
        if type(node._data) is not dict:
            return False
        node = node._data[part]
    return type(node._data) is dict
