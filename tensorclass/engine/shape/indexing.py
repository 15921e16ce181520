"""Indexing along the batch dims: ``td[idx]`` and ``td[idx] = value``.

An index is normalised once against the batch size (``...`` expanded, lists and ranges as
tensors) and then applied to every leaf unchanged: the batch dims lead every leaf, so one
index selects the same elements everywhere. Writing with a key that does not exist yet
allocates it for the whole batch first (lazy pre-allocation; rows not written read as
zeros).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import EllipsisType
from typing import Any, TypeAlias, overload

import numpy as np
import torch
from torch import Tensor

from ...errors import BatchSizeError, StructureMismatchError
from ...keys import NestedKey, shown_key, unravel_key_tuple
from ...non_tensor import NonTensorData, NonTensorStack, same_value
from ...registry import dynamic_class
from ..core.self_types import E, as_op
from ..core.state import _NO_DIMS, FAST_WRITE, MISSING, Names, TensorCore, fast_write
from ..keys.access import READ_KEY, WRAPPED, read_key, read_path, read_str, read_value
from .inplace import holds_lazy, run_through_lazy
from .jagged import jagged_take

__all__ = [
    "BatchIndex",
    "IndexPart",
    "__getitem__",
    "__getitems__",
    "__setitem__",
    "indexed_batch_size",
    "normalize_index",
]


IndexPart: TypeAlias = (
    int | slice | EllipsisType | Tensor | range | list[int] | list[bool] | np.ndarray | None
)
"""One part of a batch index: what ``td[part]`` accepts along one batch dim (or more)."""

BatchIndex: TypeAlias = IndexPart | tuple[IndexPart, ...]
"""A batch index: one part or a tuple of parts (``td[0]``, ``td[:, None, mask]``)."""

#: a planned write of ``td[index] = value``, run at the normalised index once all are planned
_Write: TypeAlias = Callable[[tuple[Any, ...]], None]


def _all_strings(key: tuple[object, ...]) -> bool:
    for part in key:
        if part.__class__ is not str:
            return False
    return True


def _is_key_tuple(index: tuple[Any, ...]) -> bool:
    for part in index:
        cls = type(part)
        if cls is not str and (cls is not tuple or not _is_key_tuple(part)):
            return False
    return True


def _check_no_key_parts(index: tuple[object, ...]) -> None:
    """A tuple mixing strings with other parts is a bad key, not a batch index."""
    for part in index:
        if type(part) is str or (type(part) is tuple and part and _is_key_tuple(part)):
            unravel_key_tuple(index)  # raises InvalidKeyError naming the bad part


def normalize_index(index: Any, batch_size: torch.Size) -> tuple[Any, ...]:
    """Normalise an index against ``batch_size``: a tuple with ``...`` expanded.

    Lists, ranges and NumPy arrays become tensors; too many indices are an error.
    """
    if isinstance(index, Tensor):
        consumed = index.ndim if index.dtype is torch.bool else 1
        if consumed > len(batch_size) or (index.dtype is torch.bool and index.ndim == 0):
            return normalize_index((index,), batch_size)
        return (index,)
    parts = list(index) if type(index) is tuple else [index]
    consumed = 0
    ellipsis_at = -1
    for pos, part in enumerate(parts):
        cls = type(part)
        if cls is int or cls is slice:
            consumed += 1
        elif part is None:
            continue
        elif part is Ellipsis:
            if ellipsis_at >= 0:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = pos
        elif isinstance(part, Tensor):
            consumed += part.ndim if part.dtype is torch.bool else 1
        elif cls is list or cls is range or isinstance(part, np.ndarray):
            tensor = torch.as_tensor(list(part) if cls is range else part)
            if not len(part):
                tensor = tensor.long()
            parts[pos] = tensor
            consumed += tensor.ndim if tensor.dtype is torch.bool else 1
        elif isinstance(part, (int, np.integer)) and cls is not bool:
            parts[pos] = int(part)
            consumed += 1
        else:
            raise TypeError(
                f"invalid index {part!r} ({cls.__name__}); index the batch dims with ints, "
                f"slices, None, ..., lists, ranges or tensors, or read a key with a str"
            )
    if consumed > len(batch_size):
        raise IndexError(
            f"too many indices: {consumed} dims indexed, but the batch size "
            f"{list(batch_size)} has {len(batch_size)}"
        )
    if ellipsis_at >= 0:
        parts[ellipsis_at : ellipsis_at + 1] = [slice(None)] * (len(batch_size) - consumed)
    return tuple(parts)


def _batch_index_error(err: IndexError, batch_size: torch.Size) -> IndexError:
    """An indexing error from a leaf, told in terms of the batch size (the leaf's own
    feature dims would only confuse)."""
    return IndexError(f"{err} (indexing batch_size={list(batch_size)})")


def _probe(batch_size: torch.Size) -> Tensor:
    """A tensor of the batch shape that costs no memory (for shape arithmetic)."""
    return torch.zeros(()).expand(batch_size)


def indexed_batch_size(batch_size: torch.Size, index: tuple[Any, ...]) -> torch.Size:
    """The batch size after indexing with a normalised ``index``."""
    if len(index) <= len(batch_size):  # ints and unit-step slices: counted, no probe
        sizes = []
        for part, size in zip(index, batch_size):
            if part.__class__ is slice and part.step in (None, 1):
                sizes.append(len(range(*part.indices(size))))
            elif part.__class__ is not int or not -size <= part < size:
                break
        else:
            return torch.Size((*sizes, *batch_size[len(index) :]))
    try:
        return _probe(batch_size)[index].shape
    except IndexError as err:
        raise IndexError(f"{err} (batch_size={list(batch_size)})") from None


def _result_batch_size(
    before: dict[str, Any], after: dict[str, Any], batch_size: torch.Size, index: Any
) -> torch.Size:
    """The batch size after indexing, read off the first leaf that has dims of its own."""
    n = len(batch_size)
    for key, leaf in after.items():
        if leaf.__class__ is not NonTensorData:  # (a stack of equal values may become one)
            old: torch.Size = before[key].shape
            new: torch.Size = leaf.shape
            return new[: len(new) - (len(old) - n)]
    return indexed_batch_size(batch_size, index)


def _indexed_names(names: Names, index: tuple[Any, ...]) -> Names:
    """The dim names after ``index``: a tensor part's dims are unnamed, the others keep
    their names (with several tensor parts, torch may move their dims: no names)."""
    if names is None:
        return None
    if sum(1 for part in index if isinstance(part, Tensor)) > 1:
        return None
    out: list[str | None] = []
    dims = iter(names)
    for part in index:
        if part is None:
            out.append(None)
        elif type(part) is int:
            next(dims)
        elif type(part) is slice:
            out.append(next(dims))
        elif part.dtype is torch.bool:  # a mask: its dims become one unnamed dim
            for _ in range(part.ndim):
                next(dims)
            out.append(None)
        else:  # an integer tensor: its dims, unnamed, stand for the dim it indexes
            next(dims)
            out.extend([None] * part.ndim)
    out.extend(dims)
    return tuple(out) if any(name is not None for name in out) else None


def _fits(source: torch.Size, target: torch.Size) -> bool:
    """Whether a value of shape ``source`` broadcasts to ``target`` as torch's indexed
    write broadcasts it: leading dims of size 1 beyond ``target``'s are dropped (a
    ``[1, 28, 28]`` value fits ``[28, 28]``), then dims of size 1 stretch."""
    extra = len(source) - len(target)
    if extra > 0:
        for size in source[:extra]:
            if size != 1:
                return False
        source = source[extra:]
    return all(s in (1, t) for s, t in zip(reversed(source), reversed(target)))


def _broadcast_to(source: Tensor, target: torch.Size) -> Tensor:
    """``source`` expanded to ``target`` (a view), its extra leading dims of size 1 dropped
    first; ``_fits(source.shape, target)`` must hold."""
    extra = source.ndim - len(target)
    if extra > 0:
        source = source.reshape(source.shape[extra:])
    return source.expand(target)


@overload
def __getitem__(self: E, index: str) -> Any: ...


@overload
def __getitem__(self: E, index: tuple[NestedKey, ...]) -> Any: ...


@overload
def __getitem__(self: E, index: BatchIndex) -> E: ...


@READ_KEY
def __getitem__(self: E, index: Any) -> Any:
    """``td["key"]`` or ``td["a", "b"]`` reads a key; anything else indexes the batch."""
    cls = index.__class__
    if cls is str:
        if (found := read_str(self, index, WRAPPED)) is not MISSING:  # inlined (as in get)
            return found
        return self._absent(index)  # outside the handler: nothing chained
    if cls is tuple:
        # A tuple of strings naming an existing leaf, walked inline (as in get); ()
        # indexes the batch.
        if index:
            if (found := read_path(self, index, WRAPPED)) is not MISSING:  # inlined
                return found
        if index and _is_key_tuple(index):
            return read_key(self, index)
        _check_no_key_parts(index)
    return self._index(index)


def __getitems__(self: E, indices: Sequence[int] | Tensor) -> E:
    """The batch elements at ``indices`` (along the first batch dim) as one instance, read
    with one indexing per leaf: ``torch.utils.data.DataLoader`` calls it with the list of a
    batch's sample indices, so ``DataLoader(td, batch_size=4, collate_fn=lambda x: x)``
    yields instances of batch size ``[4]``."""
    if type(indices) is list:
        # one long tensor (an empty list would make a float one); booleans stay a mask
        indices = torch.tensor(indices) if indices else torch.empty(0, dtype=torch.long)
    return self._index(indices)


@FAST_WRITE
def __setitem__(self: E, index: Any, value: Any) -> None:
    """``td["key"] = v`` writes a key; ``td[idx] = v`` writes batch elements."""
    cls = index.__class__
    if cls is str:
        if fast_write(self, index, value):  # inlined (a frame less)
            self._data[index] = value
            return
        self._set_str(index, value)
    elif cls is tuple and self._set_existing_path(index, value, False):
        pass
    elif cls is tuple and index and _is_key_tuple(index):
        self._set_path(index if _all_strings(index) else unravel_key_tuple(index), value)
    else:
        if cls is tuple:
            _check_no_key_parts(index)
        self._set_at(index, value)


# -- reading batch elements ------------------------------------------------------------


def _index(self: E, index: object) -> E:
    batch_size = self._batch_size
    if index.__class__ is int and batch_size:
        size = batch_size[0]
        if not -size <= index < size:
            raise IndexError(
                f"index {index} is out of range for batch dim 0 of size {size} "
                f"(batch_size={list(batch_size)})"
            )
        data = {}
        for key, leaf in self._data.items():  # a loop: cheaper than a comprehension
            data[key] = leaf[index]
        names = self._names
        return type(self)._new(
            data,
            batch_size[1:] if len(batch_size) > 1 else _NO_DIMS,
            self._device,
            names[1:] if names is not None else None,
        )
    if index.__class__ is slice and batch_size:
        data = {}
        for key, leaf in self._data.items():
            try:
                data[key] = leaf[index]
            except RuntimeError:
                taken = jagged_take(leaf, index)
                if taken is None:
                    raise
                data[key] = taken
        length = len(range(*index.indices(batch_size[0])))
        if len(batch_size) == 1:
            new_size = torch.Size((length,))
        else:
            new_size = torch.Size((length, *batch_size[1:]))
        return type(self)._new(data, new_size, self._device, self._names)
    # An integer tensor picks along dim 0 as it is: the batch size is known without a leaf.
    picks = (
        index
        if isinstance(index, Tensor)
        and batch_size
        and not index.dtype.is_floating_point
        and index.dtype is not torch.bool
        else None
    )
    normalized: Any = index if picks is not None else normalize_index(index, batch_size)
    try:
        data = {key: leaf[normalized] for key, leaf in self._data.items()}
    except NotImplementedError:
        data = {key: _take(leaf, normalized) for key, leaf in self._data.items()}
    except IndexError as err:
        raise _batch_index_error(err, batch_size) from None
    if picks is not None:
        new_size = torch.Size((*picks.shape, *batch_size[1:]))
        names = self._names
        if names is not None:
            names = _indexed_names(names, (picks,))
        return type(self)._new(data, new_size, self._device, names)
    return type(self)._new(
        data,
        _result_batch_size(self._data, data, batch_size, normalized),
        self._device,
        _indexed_names(self._names, normalized),
    )


# -- writing batch elements ------------------------------------------------------------


def _set_at(self: E, index: object, value: object) -> None:
    if (type(index) is int or type(index) is slice) and isinstance(value, TensorCore):
        pairs: list[tuple[Tensor, Tensor]] = []
        if self._batch_size and _collect_exact(self, value, index, pairs):
            if torch._C._are_functorch_transforms_active():  # no batching rule for foreach
                for target, source in pairs:
                    target[index] = source
            elif pairs:  # one fused copy into the selected views
                torch._foreach_copy_([t[index] for t, _ in pairs], [s for _, s in pairs])
            return
    if type(self._data) is dict and holds_lazy(self):
        # the leaves of a nested lazy stack are stacked copies: the keys the value
        # brings are allocated here (the lazy stacks' in their members), then a dense
        # copy is written and its written tensors copied back (a refusal writes nothing)
        if isinstance(value, Mapping):
            value = dynamic_class()(value)
        if isinstance(value, TensorCore):
            normalized = normalize_index(index, self._batch_size)
            _plan_structured_write(self, value, indexed_batch_size(self._batch_size, normalized))

        def write_copy(copy: TensorCore) -> None:
            as_op(copy)._set_at(index, value)

        run_through_lazy(self, f"writing at {index!r}", write_copy)
        return
    normalized = normalize_index(index, self._batch_size)
    target_size = indexed_batch_size(self._batch_size, normalized)
    if isinstance(value, Mapping):
        value = dynamic_class()(value)
    if isinstance(value, TensorCore):
        writes = _plan_structured_write(self, value, target_size)
    else:
        writes = _plan_broadcast_write(self, value, target_size)
    for write in writes:
        write(normalized)


def _plan_broadcast_write(self: E, value: object, target_size: torch.Size) -> list[_Write]:
    """Write one tensor or scalar into every tensor leaf (checked before writing)."""
    source = value if isinstance(value, Tensor) else torch.as_tensor(value)
    n = len(self._batch_size)
    writes = []
    for key, leaf in _tensor_leaves(self, ()):
        target = target_size + leaf.shape[n:]
        if not _fits(source.shape, target):
            raise BatchSizeError(
                f"cannot write a value of shape {list(source.shape)} into key {shown_key(key)!r} "
                f"at the index: the selected elements have shape {list(target)}"
            )
        # Each leaf gets the value in its own dtype: torch casts a number or a list for
        # any index, but an advanced index (index_put_) refuses a tensor of another
        # dtype, which would fail after other leaves were written.
        cast = source if source.dtype == leaf.dtype else source.to(leaf.dtype)
        writes.append(_tensor_write(leaf, cast))
    return writes


def _plan_structured_write(self: E, value: TensorCore, target_size: torch.Size) -> list[_Write]:
    """Write every leaf of ``value`` to the same key here, allocating missing keys."""
    skip = len(value._batch_size)
    if not _fits(value._batch_size, target_size):
        raise BatchSizeError(
            f"cannot write a {type(value).__name__} of batch size "
            f"{list(value._batch_size)} at an index selecting batch shape {list(target_size)}"
        )
    attach: list[tuple[TensorCore, str, object]] = []
    try:
        return [
            _plan_leaf_write(self, value, path, source, target_size, skip, attach)
            for path, source in _leaves(value, ())
        ]
    except BaseException:
        for owner, key, _ in reversed(attach):  # nothing half-written: undo allocations
            del owner._data[key]
        raise


def _plan_leaf_write(
    self: E,
    root: TensorCore,
    path: tuple[str, ...],
    source: object,
    target_size: torch.Size,
    skip: int,
    attach: list[tuple[TensorCore, str, object]],
) -> _Write:
    owner, target = _target_for(self, root, path, source, skip, attach)
    if isinstance(source, Tensor):
        if not isinstance(target, Tensor):
            raise StructureMismatchError(
                f"cannot write a tensor into key {shown_key(path)!r}: it holds "
                f"{type(read_value(target)).__name__} values"
            )
        shape = target_size + target.shape[len(self._batch_size) :]
        if not _fits(source.shape, shape):
            raise BatchSizeError(
                f"cannot write key {shown_key(path)!r} at the index: value shape "
                f"{list(source.shape)} does not fit the selected shape {list(shape)}"
            )
        return _tensor_write(target, source)
    if isinstance(target, Tensor):
        raise StructureMismatchError(
            f"cannot write a non-tensor value into key {shown_key(path)!r}: it holds tensors"
        )
    return _non_tensor_write(owner, path[-1], source)


def _target_for(
    self: E,
    root: TensorCore,
    path: tuple[str, ...],
    source: object,
    skip: int,
    attach: list[tuple[TensorCore, str, object]],
) -> tuple[TensorCore, object]:
    """The leaf at ``path`` here, allocated for the whole batch when missing.

    A missing nested level takes the class and the extra batch dims of the level it
    receives (``root`` is the value written), as stacking would.
    """
    owner: TensorCore = self
    source_owner: Any = root
    for part in path[:-1]:
        source_sub = source_owner._data[part]
        sub = owner._data.get(part, MISSING)
        if sub is MISSING:
            if owner._locked:
                owner._check_unlocked(shown_key(path), "add")
            extra = source_sub._batch_size[len(source_owner._batch_size) :]
            cls = (
                type(source_sub)
                if owner.__tensorclass_schema__.dynamic
                else owner._nested_class(part)
            )
            sub = cls._new({}, owner._batch_size + extra, owner._device)
            attach.append((owner, part, sub))
            owner._data[part] = sub
        owner, source_owner = sub, source_sub
    leaf = owner._data.get(path[-1], MISSING)
    if leaf is not MISSING:
        return owner, leaf
    if owner._locked:
        owner._check_unlocked(shown_key(path), "add")
    if isinstance(source, Tensor):
        device = owner._device if owner._device is not None else source.device
        shape = self._batch_size + source.shape[skip:]
        allocated: Any = torch.zeros(shape, dtype=source.dtype, device=device)
    elif type(source) is NonTensorData:
        allocated = NonTensorData(source.data)
    else:
        allocated = NonTensorStack.full(owner._batch_size, None)
    leaf = owner._convert(path[-1], allocated, shown_key(path))
    owner._data[path[-1]] = leaf
    attach.append((owner, path[-1], leaf))
    return owner, leaf


def _collect_exact(
    target: TensorCore, source: TensorCore, index: int | slice, pairs: list[tuple[Tensor, Tensor]]
) -> bool:
    """The fast path of ``target[index] = source`` for an int or a slice.

    Succeeds (collecting ``(target leaf, source leaf)`` pairs, writing nothing) only when both
    hold the same keys, every leaf is a tensor, and every source shape is exactly the
    selected part of its target; anything else goes through the general, checked path.
    """
    data, other = target._data, source._data
    if type(data) is not dict or data.keys() != other.keys():  # a lazy stack's are copies
        return False
    size = target._batch_size[0]
    if type(index) is int:
        if not -size <= index < size:
            return False
        selected = None
    else:
        selected = len(range(*index.indices(size)))  # type: ignore[union-attr]
    for key, leaf in data.items():
        value = other[key]
        if isinstance(leaf, Tensor):
            if not isinstance(value, Tensor):
                return False
            shape = leaf.shape
            if selected is None:
                if value.shape != shape[1:]:
                    return False
            elif value.shape[0] != selected or value.shape[1:] != shape[1:]:
                return False
            pairs.append((leaf, value))
        elif isinstance(leaf, TensorCore) and isinstance(value, TensorCore):
            if not leaf._batch_size or not _collect_exact(leaf, value, index, pairs):
                return False
        else:
            return False
    return True


def _leaves(node: TensorCore, prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], object]] = []
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            out.extend(_leaves(leaf, (*prefix, key)))
        else:
            out.append(((*prefix, key), leaf))
    return out


def _tensor_leaves(node: TensorCore, prefix: tuple[str, ...]) -> list[tuple[Any, Tensor]]:
    return [(path, leaf) for path, leaf in _leaves(node, prefix) if isinstance(leaf, Tensor)]


def _tensor_write(target: Tensor, source: Tensor) -> _Write:
    def write(index: tuple[Any, ...]) -> None:
        target[index] = source

    return write


def _non_tensor_write(owner: TensorCore, key: str, source: object) -> _Write:
    def write(index: tuple[Any, ...]) -> None:
        current = owner._data[key]
        if type(current) is NonTensorData:
            if type(source) is NonTensorData and same_value(current.data, source.data):
                return
            current = NonTensorStack.full(owner._batch_size, current.data)
            owner._data[key] = current
        current[index] = source

    return write


def _take(leaf: Any, index: Any) -> Any:
    """``leaf[index]``; a nested jagged tensor, which torch does not index along dim 0 with a
    list or a mask, row by row (``shape/jagged.py``)."""
    try:
        return leaf[index]
    except NotImplementedError:
        taken = jagged_take(leaf, index)
        if taken is None:
            raise
        return taken
