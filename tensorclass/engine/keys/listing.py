"""Listing the keys of an instance: the depth-first walks that give ``(key, leaf)`` pairs,
and the views ``keys()`` returns (:class:`KeysView`, :class:`FilteredKeysView`).

A nested key is a tuple of strings; a walk lists a nested instance before its entries
(unless ``leaves_only``) and enters it when ``include_nested``. ``is_leaf(cls)`` may decide
what a leaf is, and ``sort=True`` sorts the keys (see :func:`~.access.keys`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import countOf, itemgetter

from torch import Tensor

from ...keys import unravel_key_tuple
from ..core.state import TensorCore

__all__ = ["FilteredKeysView", "KeysView"]


def _nests(data: object) -> bool:
    """Whether a storage dict holds a nested instance (a storage that is not a dict may).

    A C-level count of the values whose type is ``Tensor`` (all of them is the common flat
    case), else an ``isinstance`` per value (a loop: as fast as a ``map`` of the bound
    ``__instancecheck__``, which ``torch.compile`` cannot trace).
    """
    if type(data) is not dict:
        return True
    values = data.values()
    if countOf(map(type, values), Tensor) == len(data):
        return False
    for value in values:
        if isinstance(value, TensorCore):
            return True
    return False


def _walk(
    node: TensorCore,
    prefix: tuple[str, ...],
    include_nested: bool,
    leaves_only: bool,
    is_leaf: Callable[[type], bool] | None = None,
) -> list[tuple[str | tuple[str, ...], object]]:
    """``(key, leaf)`` pairs, depth first (a list: cheaper than nested generators).

    ``is_leaf(type(entry))``, when given, decides what is a leaf: an entry it accepts is a
    leaf (a nested instance is then not entered); one it refuses is a node: entered if it
    is a nested instance, left out of ``leaves_only`` walks.
    """
    out: list[tuple[str | tuple[str, ...], object]] = []
    if is_leaf is None:
        _walk_into(node, prefix, include_nested, leaves_only, out)
    else:
        _walk_is_leaf_into(node, prefix, include_nested, leaves_only, is_leaf, out)
    return out


def _walk_into(
    node: TensorCore,
    prefix: tuple[str, ...],
    include_nested: bool,
    leaves_only: bool,
    out: list[tuple[str | tuple[str, ...], object]],
) -> None:
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            path = (*prefix, key)
            if not leaves_only:
                out.append((path if prefix else key, leaf))
            if include_nested:
                _walk_into(leaf, path, include_nested, leaves_only, out)
        else:
            out.append(((*prefix, key) if prefix else key, leaf))


def _walk_is_leaf_into(
    node: TensorCore,
    prefix: tuple[str, ...],
    include_nested: bool,
    leaves_only: bool,
    is_leaf: Callable[[type], bool],
    out: list[tuple[str | tuple[str, ...], object]],
) -> None:
    for key, leaf in node._data.items():
        path = (*prefix, key) if prefix else key
        if is_leaf(type(leaf)):
            out.append((path, leaf))
            continue
        if not leaves_only:
            out.append((path, leaf))
        if include_nested and isinstance(leaf, TensorCore):
            _walk_is_leaf_into(leaf, (*prefix, key), include_nested, leaves_only, is_leaf, out)


_first = itemgetter(0)


def _sort_key(entry: tuple[str | tuple[str, ...], object]) -> tuple[str, ...]:
    key = entry[0]
    return (key,) if type(key) is str else key  # type: ignore[return-value]


def _entries_of(
    node: TensorCore,
    include_nested: bool,
    leaves_only: bool,
    is_leaf: Callable[[type], bool] | None,
    sort: bool,
) -> list[tuple[str | tuple[str, ...], object]]:
    """The ``(key, leaf)`` pairs :func:`.access.keys` and its siblings list."""
    data = node._data
    out: list[tuple[str | tuple[str, ...], object]]
    if (
        is_leaf is None
        and type(data) is dict
        and (not (include_nested or leaves_only) or not _nests(data))
    ):  # one level (no option, or nothing nested): the dict's items, every key a string
        out = list(data.items())
        one_level = True
    else:
        out = _walk(node, (), include_nested, leaves_only, is_leaf)
        one_level = not include_nested
    if sort:  # string keys sort as they are; nested ones as tuples of their parts
        out.sort(key=_first if one_level else _sort_key)
    return out


def _count(node: TensorCore, include_nested: bool, leaves_only: bool) -> int:
    """How many entries :func:`_walk` gives, without building their keys."""
    count = 0
    for leaf in node._data.values():
        if isinstance(leaf, TensorCore):
            if not leaves_only:
                count += 1
            if include_nested:
                count += _count(leaf, include_nested, leaves_only)
        else:
            count += 1
    return count


class KeysView:
    """The keys of a tensor class, optionally nested (tuples) and leaves only.

    ``in`` accepts any spelling of a nested key:

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": {"b": torch.zeros(())}})
    >>> list(td.keys(include_nested=True))
    ['a', ('a', 'b')]
    >>> (("a",), ("b",)) in td.keys(include_nested=True)
    True
    """

    __slots__ = ("_include_nested", "_leaves_only", "_owner")

    def __init__(self, owner: TensorCore, include_nested: bool, leaves_only: bool) -> None:
        self._owner = owner
        self._include_nested = include_nested
        self._leaves_only = leaves_only

    def __iter__(self) -> Iterator[str | tuple[str, ...]]:
        data = self._owner._data
        if not self._include_nested and not self._leaves_only:
            return iter(data)
        if not _nests(data):  # flat: every key is a leaf key (a snapshot, as below)
            return iter(list(data))
        walk = _walk(self._owner, (), self._include_nested, self._leaves_only)
        return iter([key for key, _ in walk])

    def __len__(self) -> int:
        data = self._owner._data
        if (not self._include_nested and not self._leaves_only) or not _nests(data):
            return len(data)
        return _count(self._owner, self._include_nested, self._leaves_only)

    def __contains__(self, key: object) -> bool:
        if key.__class__ is str:  # one level: the storage's own lookup
            data = self._owner._data
            return key in data and not (self._leaves_only and isinstance(data[key], TensorCore))
        flat = unravel_key_tuple(key)
        if len(flat) > 1 and not self._include_nested:
            return False
        if not self._owner._has(flat if len(flat) > 1 else flat[0]):
            return False
        return not (self._leaves_only and isinstance(self._owner._leaf(flat), TensorCore))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeysView):
            return list(self) == list(other)
        if isinstance(other, (set, frozenset)):
            return set(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)})"


class FilteredKeysView(KeysView):
    """The keys listed with ``is_leaf`` or ``sort`` (see :func:`.access.keys`)."""

    __slots__ = ("_is_leaf", "_sort")

    def __init__(
        self,
        owner: TensorCore,
        include_nested: bool,
        leaves_only: bool,
        is_leaf: Callable[[type], bool] | None,
        sort: bool,
    ) -> None:
        super().__init__(owner, include_nested, leaves_only)
        self._is_leaf = is_leaf
        self._sort = sort

    def _list(self) -> list[str | tuple[str, ...]]:
        entries = _entries_of(
            self._owner, self._include_nested, self._leaves_only, self._is_leaf, self._sort
        )
        return [key for key, _ in entries]

    def __iter__(self) -> Iterator[str | tuple[str, ...]]:
        return iter(self._list())

    def __len__(self) -> int:
        return len(self._list())

    def __contains__(self, key: object) -> bool:
        try:
            flat = unravel_key_tuple(key)
        except TypeError:
            return False
        return (flat[0] if len(flat) == 1 else flat) in self._list()
