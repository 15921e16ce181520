"""Padding instances to a common length: ``pad``, ``pad_sequence`` and ``unpad_sequence``.

``pad_sequence`` stacks instances whose leaves differ in length along one dim (a batch dim,
or a feature dim of the leaves), padding each to the longest; ``return_mask=True`` adds a
boolean mask per key marking the real elements, and ``unpad_sequence`` undoes it.

>>> import torch
>>> from tensorclass import TensorDict, pad_sequence, unpad_sequence
>>> seqs = [TensorDict({"obs": torch.ones(n, 2)}, [n]) for n in (2, 3)]
>>> padded = pad_sequence(seqs, return_mask=True)
>>> padded.batch_size, padded["masks", "obs"].tolist()
(torch.Size([2, 3]), [[True, True, False], [True, True, True]])
>>> [item.batch_size[0] for item in unpad_sequence(padded)]
[2, 3]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.utils.rnn import pad_sequence as torch_pad_sequence

from ...errors import StructureMismatchError
from ...keys import NestedKey, unravel_key_tuple
from ..core.state import TensorCore
from ..shape.indexing import _leaves
from .functions import stack

if TYPE_CHECKING:
    from ..ops import TensorOps

__all__ = ["pad", "pad_sequence", "unpad_sequence"]

T = TypeVar("T", bound="TensorOps")


def pad(tensordict: T, pad_size: Sequence[int], value: float = 0.0, inplace: bool = False) -> T:
    """Pad the batch dims of ``tensordict`` (see :meth:`TensorDict.pad`).

    >>> import torch
    >>> from tensorclass import TensorDict, pad
    >>> pad(TensorDict({"x": torch.ones(2)}, [2]), [0, 2])["x"].tolist()
    [1.0, 1.0, 0.0, 0.0]
    """
    result: T = tensordict.pad(pad_size, value, inplace=inplace)
    return result


def _pad_dim(leaf: Any, pad_dim: int, key: tuple[str, ...]) -> int:
    ndim = len(leaf.shape)
    if ndim == 0:
        raise ValueError(f"pad_sequence: key {key!r} holds a 0-d value, which cannot be padded")
    pos = pad_dim if pad_dim >= 0 else ndim + pad_dim
    if not 0 <= pos < ndim:
        raise IndexError(
            f"pad_sequence: pad_dim={pad_dim} is out of range for key {key!r} of shape "
            f"{list(leaf.shape)}"
        )
    return pos


def _padded(leaf: Tensor, pos: int, length: int, value: Any, left: bool) -> Tensor:
    missing = length - leaf.shape[pos]
    if not missing:
        return leaf
    pairs = [0, 0] * (leaf.ndim - 1 - pos) + ([missing, 0] if left else [0, missing])
    return F.pad(leaf, pairs, value=value)


def pad_sequence(
    list_of_tensordicts: Sequence[T],
    pad_dim: int = 0,
    padding_value: float | Mapping[NestedKey, float] = 0.0,
    out: T | None = None,
    return_mask: bool | NestedKey = False,
    padding_side: str = "right",
) -> T:
    """Stack instances along a new first batch dim, padding every leaf along ``pad_dim`` to
    the longest (as ``torch.nn.utils.rnn.pad_sequence(batch_first=True)``, key by key).

    ``pad_dim`` counts the dims of each instance's leaves: a batch dim (the result's batch
    size takes the longest length) or, past them, a feature dim. ``padding_value`` is one
    number or a number per key; ``padding_side="left"`` pads in front. ``return_mask=True``
    (or a key) adds a boolean mask per key under ``"masks"`` (or that key): ``True`` on the
    real elements. ``out=`` receives the result in place.
    """
    items = list(list_of_tensordicts)
    if not items:
        raise ValueError("pad_sequence needs at least one tensor class")
    if padding_side not in ("left", "right"):
        raise ValueError(f"padding_side must be 'left' or 'right'; got {padding_side!r}")
    first = items[0]
    masks_key: tuple[str, ...] | None = None
    if return_mask is not False:
        if not first.__tensorclass_schema__.dynamic:
            raise StructureMismatchError(
                f"pad_sequence(return_mask=...) adds mask keys, which {type(first).__name__} "
                f"does not declare; convert with to_tensordict() first"
            )
        masks_key = ("masks",) if return_mask is True else unravel_key_tuple(return_mask)
    values: dict[tuple[str, ...], float] = {}
    default: float
    if isinstance(padding_value, Mapping):
        values = {unravel_key_tuple(k): v for k, v in padding_value.items()}
        default = 0.0
    else:
        default = padding_value
    columns = [dict(_leaves(item, ())) for item in items]
    keys = list(columns[0])
    for index, column in enumerate(columns[1:], 1):
        if column.keys() != columns[0].keys():
            raise StructureMismatchError(
                f"pad_sequence: item {index} has keys {sorted(column)}, item 0 has {sorted(keys)}"
            )
    unknown = [k for k in values if k not in columns[0]]
    if unknown:
        raise KeyError(f"pad_sequence: padding_value names keys that no item has: {unknown}")
    n = len(first._batch_size)
    tensor_keys = [k for k in keys if isinstance(columns[0][k], Tensor)]
    positions = {k: _pad_dim(columns[0][k], pad_dim, k) for k in tensor_keys}
    batch_pos = {p for p in positions.values() if p < n}
    if batch_pos and (len(batch_pos) > 1 or len(set(positions.values())) > 1):
        raise StructureMismatchError(
            f"pad_sequence: pad_dim={pad_dim} falls on different dims of different keys "
            f"({ {k: p for k, p in positions.items()} })"
        )
    left = padding_side == "left"
    if batch_pos or (not tensor_keys and n):
        pos = batch_pos.pop() if batch_pos else pad_dim % n
        length = max(item._batch_size[pos] for item in items)
        result: Any = _pad_stacked(items, pos, length, values, default, padding_side, ())
        padded_items = []
        for item in items if result is None else ():
            missing = length - item._batch_size[pos]
            sizes = [0, 0] * pos + ([missing, 0] if left else [0, missing])
            if not values or not missing:
                padded_items.append(item.pad(sizes, default))
            else:
                padded_items.append(_pad_per_key(item, pos, length, values, default, left))
        if result is None:
            result = stack(padded_items)
        if masks_key is not None:
            for key in keys:
                masks = [
                    _padded(
                        torch.ones(item._batch_size, dtype=torch.bool), pos, length, False, left
                    )
                    for item in items
                ]
                result.set((*masks_key, *key), torch.stack(masks))
    else:
        lengths = {k: max(column[k].shape[positions[k]] for column in columns) for k in tensor_keys}
        padded_items = [
            _pad_leaves(item, positions, lengths, values, default, left) for item in items
        ]
        result = stack(padded_items)
        if masks_key is not None:
            for key in tensor_keys:
                pos, length = positions[key], lengths[key]
                masks = [
                    _padded(
                        torch.ones(*item._batch_size, column[key].shape[pos], dtype=torch.bool),
                        n,
                        length,
                        False,
                        left,
                    )
                    for item, column in zip(items, columns)
                ]
                result.set((*masks_key, *key), torch.stack(masks))
    if out is not None:
        out.update_(result)
        return out
    padded_result: T = result
    return padded_result


def _pad_stacked(
    levels: list[Any],
    pos: int,
    length: int,
    values: dict[tuple[str, ...], float],
    default: Any,
    side: str,
    path: tuple[str, ...],
) -> Any:
    """The padded stack built key by key with ``torch.nn.utils.rnn.pad_sequence`` (one
    call per key), or None when a level holds something else than tensors and nested
    instances of one class (the general path pads item by item, then stacks)."""
    first = levels[0]
    cls = type(first)
    if any(type(level) is not cls or type(level._data) is not dict for level in levels):
        return None
    extra = {"padding_side": side} if side == "left" else {}
    data: dict[str, object] = {}
    for key, leaf in first._data.items():
        column = [level._data[key] for level in levels]
        if isinstance(leaf, Tensor):
            if pos:
                column = [t.transpose(0, pos) for t in column]
            try:
                out = torch_pad_sequence(
                    column,
                    batch_first=True,
                    padding_value=values.get((*path, key), default),
                    **extra,
                )
            except RuntimeError:
                return None  # shapes that do not line up: the general path says why
            data[key] = out.transpose(1, pos + 1) if pos else out
        elif isinstance(leaf, TensorCore):
            nested = _pad_stacked(column, pos, length, values, default, side, (*path, key))
            if nested is None:
                return None
            data[key] = nested
        else:
            return None
    size = [len(levels), *first._batch_size]
    size[pos + 1] = length
    device = first._device if all(level._device == first._device for level in levels) else None
    return cls._new(data, torch.Size(size), device)


def _pad_per_key(
    item: Any, pos: int, length: int, values: dict[tuple[str, ...], float], default: Any, left: bool
) -> Any:
    """``item`` padded along batch dim ``pos`` with a padding value per key."""

    def fn(key: str | tuple[str, ...], leaf: Tensor) -> Tensor:
        path = key if isinstance(key, tuple) else (key,)
        return _padded(leaf, pos, length, values.get(path, default), left)

    size = list(item._batch_size)
    size[pos] = length
    padded = item.named_apply(fn, nested_keys=True, batch_size=size)
    rest = item.exclude(*[k for k, leaf in _leaves(item, ()) if isinstance(leaf, Tensor)])
    if not rest.is_empty():  # non-tensor values: padded with None
        missing = length - item._batch_size[pos]
        sizes = [0, 0] * pos + ([missing, 0] if left else [0, missing])
        padded.update(rest.pad(sizes))
    return padded


def _pad_leaves(
    item: Any,
    positions: dict[tuple[str, ...], int],
    lengths: dict[tuple[str, ...], int],
    values: dict[tuple[str, ...], float],
    default: Any,
    left: bool,
) -> Any:
    """``item`` with every tensor padded along its own (feature) dim."""

    def fn(key: str | tuple[str, ...], leaf: Tensor) -> Tensor:
        path = key if isinstance(key, tuple) else (key,)
        return _padded(leaf, positions[path], lengths[path], values.get(path, default), left)

    return item.named_apply(fn, nested_keys=True)


def unpad_sequence(
    padded: Any, mask: TensorCore | Tensor | None = None, *, pad_dim: int = 0
) -> list[Any]:
    """Undo :func:`pad_sequence`: the items, each cut back to its real elements (the
    ``True`` run of its mask), in a list (their batch sizes may differ, which a lazy stack
    does not allow).

    ``mask`` is the masks instance (by default the ``"masks"`` entry of ``padded``, which
    is dropped) or a boolean tensor of shape ``[len(padded), longest length]``.
    """
    if not padded._batch_size:
        raise ValueError("unpad_sequence needs the items along the first batch dim")
    if mask is None:
        if "masks" not in padded._data:
            raise ValueError(
                "unpad_sequence needs a mask: pass mask=, or pad with "
                "pad_sequence(..., return_mask=True)"
            )
        mask = padded._data["masks"]
        padded = padded.exclude("masks")
    n = len(padded._batch_size) - 1
    leaves = [(k, leaf) for k, leaf in _leaves(padded, ()) if isinstance(leaf, Tensor)]
    pads = {k: (pad_dim if pad_dim >= 0 else leaf.ndim - 1 + pad_dim) for k, leaf in leaves}

    def runs(key: tuple[str, ...] | None, pos: int) -> list[tuple[int, int]]:
        if isinstance(mask, Tensor):
            m = mask
        else:
            assert mask is not None and key is not None
            m = mask._leaf(key if len(key) > 1 else key[0]).movedim(min(pos, n) + 1, -1)
            if m.ndim > 2:
                m = m.flatten(1, -2).any(1)
        out = []
        for row in m:
            found = row.nonzero().flatten().tolist()
            start, count = (found[0], len(found)) if found else (0, 0)
            if found and found[-1] - start + 1 != count:
                raise ValueError(
                    f"unpad_sequence: the mask{f' of key {key!r}' if key else ''} marks "
                    f"elements that are not one contiguous run"
                )
            out.append((start, count))
        return out

    count = padded._batch_size[0]
    if n and all(p < n for p in pads.values()):
        pos = next(iter(pads.values()), pad_dim % n)
        bounds = runs(next(iter(pads), None), pos)
        items = [padded[i].narrow(pos, s, c) for i, (s, c) in enumerate(bounds)]
    else:
        cut = {k: runs(k, p) for k, p in pads.items()}
        items = []
        for i in range(count):
            item = padded[i]  # a new instance (and new nested ones): set() rebinds its leaves
            for key, bounds in cut.items():
                start, length = bounds[i]
                leaf = item.get(key)
                if start or length != leaf.shape[pads[key]]:
                    item.set(key, leaf.narrow(pads[key], start, length))
            items.append(item)
    return items
