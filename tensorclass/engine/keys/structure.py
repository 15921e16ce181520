"""Methods on the key structure: clear, popitem, split_keys, separates, rename_keys, depth...

They read and write through the operations of :mod:`.access`
(``pop``, ``set``, ``select``, ``exclude``), so typed classes and lazy stacks follow the
same rules there: removing a field of a typed class unsets it (it reads as ``None``), a
locked instance refuses, and a lazy stack removes the key from its members.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch import Tensor

from ...errors import KeyNotFoundError, StructureMismatchError
from ...keys import NestedKey, unravel_key, unravel_key_tuple
from ...non_tensor import NonTensorData, NonTensorStack
from ..core.self_types import E
from ..core.state import MISSING, NO_DEFAULT, TensorCore
from .access import _owner, read_value
from .listing import _walk

__all__ = [
    "auto_device_",
    "clear",
    "clear_device_",
    "create_nested",
    "depth",
    "entry_class",
    "filter_empty_",
    "get_non_tensor",
    "is_non_tensor",
    "non_tensor_items",
    "param_count",
    "popitem",
    "rename_keys",
    "replace",
    "separates",
    "set_non_tensor",
    "sorted_keys",
    "split_keys",
]

_NON_TENSOR = (NonTensorData, NonTensorStack)


def _copy_structure(node: TensorCore) -> Any:
    """A copy of the nested instances of ``node``; the leaves are shared."""
    return node._like(
        {
            key: _copy_structure(leaf) if isinstance(leaf, TensorCore) else leaf
            for key, leaf in node._data.items()
        }
    )


def _depth(node: TensorCore) -> int:
    # tensordict's count: the longest key of keys(include_nested=True, leaves_only=True),
    # less one; an empty nested instance holds no leaf, so it adds no level (-1: no leaf)
    deepest = -1
    for leaf in node._data.values():
        if isinstance(leaf, TensorCore):
            inner = _depth(leaf)
            if inner >= 0:
                deepest = max(deepest, 1 + inner)
        else:
            deepest = max(deepest, 0)
    return deepest


def _drop_empty(node: TensorCore) -> bool:
    """Remove the nested instances without leaves under ``node``; whether ``node`` is empty."""
    empty = []
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore) and _drop_empty(leaf):
            empty.append(key)
    for key in empty:
        node._check_unlocked(key, "delete")
        del node._data[key]
    return not node._data


# -- removing ------------------------------------------------------------------------


def clear(self: E) -> E:
    """Remove every entry and return this instance.

    On a typed class this unsets every field (each reads as ``None``), as ``del`` does.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(2)}, [2]).clear().is_empty()
    True
    """
    keys = list(self._data)
    if keys:
        self._check_unlocked(keys[0] if len(keys) == 1 else keys, "delete")
    for key in keys:
        del self._data[key]
    return self


def popitem(self: E) -> tuple[str, Any]:
    """Remove the last top-level entry and return it as ``(key, value)``.

    Raises ``KeyError`` when there is no entry.
    """
    if not self._data:
        raise KeyNotFoundError(f"popitem(): this {type(self).__name__} has no entry")
    key = next(reversed(list(self._data)))
    return key, self.pop(key)


def filter_empty_(self: E) -> E:
    """Remove the nested instances that hold no leaf (at every depth), in place."""
    _drop_empty(self)
    return self


def separates(
    self: E,
    *keys: NestedKey,
    default: object = MISSING,
    strict: bool = True,
    filter_empty: bool = True,
) -> E:
    """Remove the entries ``keys`` and return them in a new instance (paths kept).

    A missing key is an error when ``strict`` and no ``default`` is given; with
    ``default`` it gets that value in the result, with ``strict=False`` it is skipped.
    ``filter_empty`` then removes the nested instances left without leaves.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2)}}, [2])
    >>> out = td.separates(("n", "b"))
    >>> list(out.keys(True, True)), list(td.keys())
    ([('n', 'b')], ['a'])
    """
    flats = [unravel_key_tuple(key) for key in keys]
    for flat, key in zip(flats, keys):
        if default is MISSING and strict and not self._has(_shown(flat)):
            raise self._missing_at(flat, key)
    out = self._like({})
    for flat in flats:
        leaf = _take(self, flat, "separate") if self._has(_shown(flat)) else _ABSENT
        if leaf is _ABSENT:
            if default is MISSING:
                continue
            out.set(flat, default)
        else:
            out._set_path(flat, leaf)
    if filter_empty:
        self.filter_empty_()
    return out


# -- splitting and renaming -------------------------------------------------------------


def split_keys(
    self: E,
    *key_sets: Iterable[NestedKey],
    inplace: bool = False,
    default: object = MISSING,
    strict: bool = True,
    reproduce_struct: bool = False,
) -> tuple[E, ...]:
    """One instance per set of keys, plus one with the entries left over (last).

    ``strict=False`` skips missing keys; a ``default`` fills them instead.
    ``inplace=True`` removes the chosen entries from this instance, which is then the
    last element. ``reproduce_struct=True`` gives every result the nested structure of
    this instance (empty nested instances where a set has no leaf).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2), "b": torch.ones(2), "c": torch.ones(2)}, [2])
    >>> first, rest = td.split_keys(["a", "b"])
    >>> list(first.keys()), list(rest.keys())
    (['a', 'b'], ['c'])
    """
    source = self if inplace else _copy_structure(self)
    outs: list[E] = []
    for key_set in key_sets:
        keys = [unravel_key(key) for key in key_set]
        part = source.empty(recurse=True) if reproduce_struct else source._like({})
        for key in keys:
            flat = unravel_key_tuple(key)
            if not source._has(_shown(flat)):
                if default is not MISSING:
                    part.set(key, default)
                elif strict:
                    raise self._missing_at(flat, key)
                continue
            part._set_path(flat, _take(source, flat, "split"))
        outs.append(part)
    if not reproduce_struct:
        source.filter_empty_()
    outs.append(source)
    return tuple(outs)


def rename_keys(self: E, mapping: Mapping[NestedKey, NestedKey], *, strict: bool = True) -> E:
    """A shallow copy with several keys renamed at once (``{old: new}``).

    Keys may swap places; a new key that exists and is not itself renamed away is an
    error. ``strict=False`` skips old keys that are missing.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2])
    >>> list(td.rename_keys({"a": "b", "b": "a"})["a"])
    [tensor(1.), tensor(1.)]
    """
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for old, new in mapping.items():
        flat_old = unravel_key_tuple(old)
        if not self._has(flat_old if len(flat_old) > 1 else flat_old[0]):
            if strict:
                raise self._missing_at(flat_old, old)
            continue
        pairs.append((flat_old, unravel_key_tuple(new)))
    moved = {old for old, _ in pairs}
    for old, new in pairs:
        if new not in moved and self._has(new if len(new) > 1 else new[0]):
            raise StructureMismatchError(
                f"rename_keys: cannot rename {_shown(old)!r} to {_shown(new)!r}: "
                f"{_shown(new)!r} exists and is not renamed away"
            )
    result: E = _copy_structure(self)
    values = [(new, _take(result, old, "rename")) for old, new in pairs]
    for new, leaf in values:
        result._set_path(new, leaf)
    return result


def _take(self: TensorCore, flat: tuple[str, ...], action: str) -> object:
    """Remove and return the stored leaf at ``flat`` (non-tensor wrappers kept)."""
    owner = _owner(self, flat)
    assert owner is not None
    owner._check_unlocked(_shown(flat), action)
    return owner._data.pop(flat[-1])


def replace(self: E, *args: Mapping[NestedKey, Any], **kwargs: object) -> E:
    """A shallow copy with some entries replaced (as ``dataclasses.replace``).

    Entries come from mappings (positional) and keyword arguments; this instance is
    unchanged.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2)}, [2])
    >>> td.replace(a=torch.ones(2))["a"]
    tensor([1., 1.])
    """
    result: E = _copy_structure(self)
    for mapping in args:
        result.update(mapping)
    if kwargs:
        result.update(kwargs)
    return result


def create_nested(self: E, key: NestedKey) -> E:
    """Add an empty nested instance at ``key`` (the parent's batch size and device)."""
    flat = unravel_key_tuple(key)
    owner = self
    for depth in range(len(flat)):
        part = flat[depth]
        child = owner._data.get(part, MISSING)
        if child is MISSING or depth == len(flat) - 1:
            owner.set(part, owner._nested_class(part)._new({}, owner._batch_size, owner._device))
            child = owner._data[part]
        if not isinstance(child, TensorCore):
            raise StructureMismatchError(
                f"create_nested: {_shown(flat[: depth + 1])!r} holds a "
                f"{type(child).__name__}, not a nested instance"
            )
        owner = child  # type: ignore[assignment]
    return self


# -- inspecting ------------------------------------------------------------------------


def sorted_keys(self: E) -> list[str]:
    """The top-level keys, sorted."""
    return sorted(self._data)


def depth(self: E) -> int:
    """How deep the leaves are: the length of the longest key of
    ``keys(include_nested=True, leaves_only=True)``, less one (0 when no leaf is nested;
    an empty nested instance holds no leaf, so it adds no level)."""
    return max(_depth(self), 0)


def entry_class(self: E, key: NestedKey) -> type:
    """The class of the stored entry at ``key``, without reading it.

    ``Tensor`` (or its subclass), the nested class, or ``NonTensorData`` /
    ``NonTensorStack`` for non-tensor values.
    """
    flat = unravel_key_tuple(key)
    if not self._has(flat if len(flat) > 1 else flat[0]):
        raise self._missing_at(flat, key)
    return type(self._leaf(flat if len(flat) > 1 else flat[0]))


def is_non_tensor(self: E, key: NestedKey) -> bool:
    """Whether the entry at ``key`` is a non-tensor value."""
    return self.entry_class(key) in _NON_TENSOR


def non_tensor_items(self: E, include_nested: bool = False) -> tuple[tuple[Any, Any], ...]:
    """The ``(key, value)`` pairs of the non-tensor entries (nested ones as tuples)."""
    return tuple(
        (key, read_value(leaf))
        for key, leaf in _walk(self, (), include_nested, True)
        if isinstance(leaf, _NON_TENSOR)
    )


def get_non_tensor(self: E, key: NestedKey, default: object = MISSING) -> Any:
    """The value stored at ``key``, as ``td[key]`` reads it (a non-tensor value comes back
    as itself, one value per element as a list); ``default`` for a missing key if given,
    else a ``KeyError``."""
    if default is MISSING or default is NO_DEFAULT:
        return self[key]
    return read_value(self.get(key, default))


def set_non_tensor(self: E, key: NestedKey, value: object) -> E:
    """Store ``value`` at ``key`` as a non-tensor value shared by the batch (a tensor too)."""
    return self.set(key, NonTensorData(value))


def param_count(self: E, *, count_duplicates: bool = True) -> int:
    """The number of elements of the tensor leaves (a tensor stored twice counts once
    with ``count_duplicates=False``)."""
    tensors = [leaf for _, leaf in _walk(self, (), True, True) if isinstance(leaf, Tensor)]
    if not count_duplicates:
        tensors = list({id(t): t for t in tensors}.values())
    return sum(t.numel() for t in tensors)


# -- devices ---------------------------------------------------------------------------


def auto_device_(self: E) -> E:
    """Set the device to the one every tensor leaf is on (if they share one)."""
    devices = {leaf.device for _, leaf in _walk(self, (), True, True) if isinstance(leaf, Tensor)}
    if len(devices) == 1:
        _set_device(self, devices.pop())
    return self


def clear_device_(self: E) -> E:
    """Set the device of this instance and its nested instances to ``None``."""
    _set_device(self, None)
    return self


def _set_device(node: TensorCore, device: torch.device | None) -> None:
    node._device = device
    for leaf in node._data.values():
        if isinstance(leaf, TensorCore):
            _set_device(leaf, device)


class _Absent:
    pass


_ABSENT: Any = _Absent()


def _shown(flat: tuple[str, ...]) -> str | tuple[str, ...]:
    return flat[0] if len(flat) == 1 else flat
