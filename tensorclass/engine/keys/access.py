"""Reading and writing by key: get, set, update, pop, keys, select, exclude, flatten.

What ``keys()`` returns, and the walks that list the entries, are in ``key_views.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import countOf
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import torch
from torch import Tensor

from ...errors import KeyCollisionError, KeyNotFoundError, SchemaError, StructureMismatchError
from ...keys import NestedKey, unravel_key, unravel_key_tuple
from ...non_tensor import LIVE_WRAPPERS, NonTensorData, NonTensorStack
from ...switches import missing_gets_none
from ..core.inline import Inlined
from ..core.lazy_stacks import is_lazy
from ..core.paths import walk
from ..core.self_types import E, Node
from ..core.state import (
    FAST_WRITE,
    GET_KEEPS_STACKS,
    MISSING,
    NO_DEFAULT,
    READ_AS_VALUES,
    BatchSizeLike,
    DeviceLike,
    TensorCore,
    as_batch_size,
    as_device,
    check_names,
    fast_write,
)
from .listing import FilteredKeysView, KeysView, _count, _entries_of, _nests, _walk

if TYPE_CHECKING:
    from ...tensordict import TensorDict

__all__ = [
    "READ_KEY",
    "WRAPPED",
    "cloned_input",
    "del_",
    "empty",
    "exclude",
    "filter_non_tensor_data",
    "get",
    "get_value",
    "is_empty",
    "items",
    "joined_keys",
    "keys",
    "pop",
    "read_key",
    "read_path",
    "read_str",
    "read_value",
    "rename_key_",
    "select",
    "set",
    "set_",
    "setdefault",
    "unflatten_keys",
    "update",
    "update_",
    "values",
    "with_entries",
]

#: ``self`` of the private helpers that also run on nested instances (typed ``TensorCore``)
C = TypeVar("C", bound=TensorCore)

_NON_TENSOR = (NonTensorData, NonTensorStack)


#: read first (its guard would recompile compiled code whenever the wrapper count changes)
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling

#: the leaves ``td[key]`` reads as their value (a stack: its values as a list)
WRAPPED = READ_AS_VALUES


def read_value(leaf: Any) -> Any:
    """What ``td[key]`` returns for a stored leaf: non-tensor wrappers give their value."""
    cls = type(leaf)
    if cls is NonTensorData or cls is NonTensorStack:
        return leaf.value()
    return leaf


def get_value(leaf: Any, unwraps: frozenset[type] = GET_KEEPS_STACKS) -> Any:
    """What ``get`` returns for a stored leaf: the leaves whose class is in ``unwraps``
    (a shared non-tensor value, for a ``TensorDict``) give their value, a stack stays a
    :class:`~tensorclass.NonTensorStack`."""
    return leaf.value() if type(leaf) in unwraps else leaf


# -- reading -----------------------------------------------------------------------


def read_str(node: TensorCore, key: str, unwrap: frozenset[Any] | None) -> Any:
    """The read key walk of a str key: the value under ``key`` (the non-tensor wrappers
    whose class is in ``unwrap``, or with ``None`` in the class's ``_get_unwraps``, give
    their value), or ``MISSING``.

    With :func:`read_path`, the one key walk of reads: ``get`` and ``td[key]`` call them as
    ``if (found := read_str(self, key, unwrap)) is not MISSING: return found``, and
    :data:`READ_KEY` inlines them there (see :mod:`..core.inline`). ``td[key]`` unwraps
    :data:`WRAPPED` (a stack gives its values as a list), ``get`` passes ``None``: the
    class's ``_get_unwraps`` (a ``TensorDict`` keeps a stack a ``NonTensorStack``; an
    argument of an inlined rule is a name or a constant).
    """
    try:
        leaf = node._data[key]
    except KeyError:
        pass
    else:
        if leaf.__class__ is Tensor:
            return leaf
        return leaf.value() if leaf.__class__ in (unwrap or node._get_unwraps) else leaf
    return MISSING


def read_path(node: TensorCore, key: tuple[Any, ...], unwrap: frozenset[Any] | None) -> Any:
    """The read key walk of a tuple of strings naming an existing leaf (as
    :func:`read_str`); ``MISSING`` for anything else (a nested tuple, a missing level, a
    leaf on the way), which the caller takes by its general path. ``()`` gives ``node``."""
    leaf: Any = node
    try:
        for part in key:
            leaf = leaf._data[part]
    except (KeyError, AttributeError, TypeError):
        pass
    else:
        if leaf.__class__ is Tensor:
            return leaf
        return leaf.value() if leaf.__class__ in (unwrap or node._get_unwraps) else leaf
    return MISSING


#: :func:`read_str` and :func:`read_path`, inlined into ``get`` and ``__getitem__``
READ_KEY = Inlined(read_str, read_path)


@READ_KEY
def get(
    self: E,
    key: NestedKey,
    default: object = MISSING,
    # positional-or-keyword, not keyword-only: keyword-only defaults cost every call ~30 ns
    as_padded_tensor: bool = False,
    as_nested_tensor: bool = False,
    padding_side: Literal["left", "right"] = "right",
    padding_value: float = 0.0,
    layout: torch.layout | None = None,
) -> Any:
    """The value under ``key`` (a string or nested tuple); for a missing key ``default``
    if given, else ``None`` (``td[key]`` raises, and ``get`` too given ``NO_DEFAULT`` or
    under ``set_get_defaults_to_none(False)``).

    A shared non-tensor value comes back as itself (a string, a number, an object); one
    value per element as its :class:`~tensorclass.NonTensorStack`. ``as_padded_tensor``
    and ``as_nested_tensor`` (with ``padding_side``, ``padding_value``, ``layout``) are for
    lazy stacks of ragged members; here, where every element has one shape, the stored
    tensor is both (as in tensordict 0.15.3).
    """
    if key.__class__ is str:
        if (found := read_str(self, key, None)) is not MISSING:  # inlined (READ_KEY)
            return found
        if default is MISSING:
            if missing_gets_none():
                return None
        elif default is not NO_DEFAULT:
            return default
        # outside the handler: the error raised here has no internal KeyError chained
        return self._absent(key)
    if key.__class__ is tuple:
        # A tuple of strings naming an existing leaf, walked inline; anything else
        # (nested tuples, a missing level, a leaf on the way) takes the general path.
        if (found := read_path(self, key, None)) is not MISSING:  # inlined (READ_KEY)
            return found
    flat = unravel_key_tuple(key)
    if self._has(flat if len(flat) > 1 else flat[0]):
        return get_value(self._leaf(flat if len(flat) > 1 else flat[0]), self._get_unwraps)
    if default is MISSING:
        return _absent_path(self, flat, key, missing_gets_none())
    if default is not NO_DEFAULT:
        return default
    return _absent_path(self, flat, key)


def read_key(self: E, key: tuple[Any, ...]) -> Any:
    """``td[key]`` for a key tuple that the inline walk did not take (nested tuples, a
    missing level): the value (a stack as its list), or a ``KeyError`` (``None`` for a
    declared field that is not set)."""
    flat = unravel_key_tuple(key)
    if self._has(flat if len(flat) > 1 else flat[0]):
        return read_value(self._leaf(flat if len(flat) > 1 else flat[0]))
    return _absent_path(self, flat, key)


def _absent_path(self: E, flat: tuple[str, ...], where: object, none: bool = False) -> object:
    """Reading a missing (nested) key: ``None`` for a declared field of a typed class
    that is not set (and for any missing key when ``none``: ``get``'s default), else a
    ``KeyError`` that names the level where the path breaks. A path through a leaf is an
    error either way."""
    owner = _owner(self, flat)
    if owner is not None:
        if none:
            return None
        return owner._absent(flat[-1], where if len(flat) > 1 else None)
    if none and isinstance(walk(self, flat)[0], TensorCore):
        return None  # a level above the key is missing
    raise self._missing_at(flat, where)


def __contains__(self: E, key: object) -> bool:
    if key.__class__ is str:
        return key in self._data
    flat = unravel_key_tuple(key)
    return self._has(flat if len(flat) > 1 else flat[0])


def keys(
    self: E,
    include_nested: bool = False,
    leaves_only: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    *,
    sort: bool = False,
) -> KeysView:
    """The keys; nested ones as tuples when ``include_nested``; no sub-instances when
    ``leaves_only``.

    ``is_leaf(cls)`` decides which entries are leaves (a nested instance it accepts is
    not entered; an entry it refuses is left out of ``leaves_only``); ``sort=True``
    lists the keys in sorted order (nested keys as tuples of their parts).
    """
    if is_leaf is None and not sort:
        return KeysView(self, include_nested, leaves_only)
    return FilteredKeysView(self, include_nested, leaves_only, is_leaf, sort)


def _one_level(
    data: Mapping[str, object],
    include_nested: bool,
    leaves_only: bool,
    is_leaf: Callable[[type], bool] | None,
    sort: bool,
) -> bool:
    """Whether :func:`values` and :func:`items` read one level: no option, or a plain dict
    with nothing nested (then the dict's own values are the answer)."""
    return (
        is_leaf is None
        and not sort
        and type(data) is dict
        and (not (include_nested or leaves_only) or not _nests(data))
    )


def _plain_level(self: TensorCore, data: Mapping[str, object]) -> bool:
    """Whether the values of one level are read as stored (no non-tensor wrapper to unwrap)."""
    return (
        self._no_wrappers
        or (not _is_dynamo_compiling() and not LIVE_WRAPPERS)
        or countOf(map(type, data.values()), Tensor) == len(data)
    )


#: :func:`_one_level` and :func:`_plain_level`, inlined into :func:`values` and :func:`items`
#: (two calls cost a fifth of a typed class's ``values()``)
LEVEL_RULES = Inlined(_one_level, _plain_level)


@LEVEL_RULES
def values(
    self: E,
    include_nested: bool = False,
    leaves_only: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    *,
    sort: bool = False,
) -> Iterator[Any]:
    """The values, in the order of :meth:`keys` (same arguments)."""
    data = self._data
    if _one_level(data, include_nested, leaves_only, is_leaf, sort):
        if _plain_level(self, data):
            return iter(data.copy().values())  # nothing to unwrap; a copy is a snapshot
        return iter(list(map(get_value, data.values(), repeat(self._get_unwraps))))
    entries = _entries_of(self, include_nested, leaves_only, is_leaf, sort)
    if not _is_dynamo_compiling() and not LIVE_WRAPPERS:  # nothing to unwrap (at any depth)
        return iter([leaf for _, leaf in entries])
    # map/repeat, not a comprehension over self: a closure makes self a cell variable,
    # which every call pays for (+4% on a typed class's values())
    return map(get_value, [leaf for _, leaf in entries], repeat(self._get_unwraps))


@LEVEL_RULES
def items(
    self: E,
    include_nested: bool = False,
    leaves_only: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    *,
    sort: bool = False,
) -> Iterator[tuple[str | tuple[str, ...], Any]]:
    """``(key, value)`` pairs, in the order of :meth:`keys` (same arguments)."""
    data = self._data
    if _one_level(data, include_nested, leaves_only, is_leaf, sort):
        if _plain_level(self, data):
            return iter(data.copy().items())  # nothing to unwrap; a copy is a snapshot
        unwrapped = map(get_value, data.values(), repeat(self._get_unwraps))
        return iter(list(zip(data.keys(), unwrapped)))
    entries = _entries_of(self, include_nested, leaves_only, is_leaf, sort)
    if not _is_dynamo_compiling() and not LIVE_WRAPPERS:  # nothing to unwrap (at any depth)
        return iter(entries)
    keys = [key for key, _ in entries]  # no closure over self (see values)
    return zip(keys, map(get_value, [leaf for _, leaf in entries], repeat(self._get_unwraps)))


def is_empty(self: E) -> bool:
    """Whether there is no leaf at all (nested instances without leaves count as empty)."""
    return _count(self, True, True) == 0


# -- writing -----------------------------------------------------------------------


@FAST_WRITE
def set(
    self: E, key: NestedKey, item: object, inplace: bool = False, *, non_blocking: bool = False
) -> E:
    """Write ``item`` under ``key``; checks its batch size and moves it to the device.

    With ``inplace=True`` an existing tensor is written in place (its storage is kept);
    a missing key is created. ``non_blocking`` is accepted for ``tensordict``
    compatibility (writes and device moves here are synchronous).
    """
    if key.__class__ is str:
        if not inplace and fast_write(self, key, item):  # inlined (a frame less)
            self._data[key] = item
            return self
        self._set_str(key, item, inplace)
    elif key.__class__ is tuple and self._set_existing_path(key, item, inplace):
        pass
    else:
        self._set_path(unravel_key_tuple(key), item, inplace)
    return self


def set_(self: E, key: NestedKey, item: object, *, non_blocking: bool = False) -> E:
    """Write ``item`` into the existing entry ``key``, in place (``non_blocking`` is
    accepted for ``tensordict`` compatibility)."""
    flat = unravel_key_tuple(key)
    owner = _owner(self, flat)
    if owner is None or flat[-1] not in owner._data:
        raise self._missing_at(flat, key)
    owner._write_inplace(flat[-1], item, key)
    return self


def setdefault(self: E, key: NestedKey, default: object, inplace: bool = False) -> Any:
    """The value under ``key``; if missing, ``default`` is set first (with ``inplace``
    as :meth:`set` takes it) and returned."""
    flat = unravel_key_tuple(key)
    if not self._has(flat if len(flat) > 1 else flat[0]):
        self.set(key, default, inplace)
    return self.get(key)


def update(
    self: E,
    input_dict_or_td: Mapping[Any, Any] | TensorCore | None = None,
    clone: bool = False,
    inplace: bool = False,
    *,
    non_blocking: bool = False,
    keys_to_update: Iterable[NestedKey] | None = None,
    is_leaf: Callable[[type], bool] | None = None,
    update_batch_size: bool = False,
    ignore_lock: bool = False,
) -> E:
    """Write every entry of ``input_dict_or_td`` (a mapping or a tensor class).

    Nested mappings merge into existing nested instances (unless ``is_leaf`` accepts
    their class: then they replace). Every value is checked before anything is
    written, so a bad value leaves this instance unchanged. ``keys_to_update`` limits
    the update to those keys (and the keys nested under them); ``clone`` copies the
    values first; ``inplace`` writes into existing tensors; ``ignore_lock`` writes even
    when this instance is locked; ``update_batch_size=True`` takes the batch size of
    a tensor class given as input (its entries replace the existing ones).
    """
    if input_dict_or_td is None:
        return self
    other: Any = input_dict_or_td
    if clone:
        other = cloned_input(other)
    if update_batch_size and isinstance(other, TensorCore):
        return _update_resized(self, other)
    if ignore_lock and self._locked:
        return update_unlocked(self, other, inplace, keys_to_update, is_leaf)
    entries = _entries(other)
    if keys_to_update is not None:
        wanted = {unravel_key_tuple(k) for k in keys_to_update}
        entries = [  # a wanted key selects itself and everything under it
            (k, v)
            for k, v in _flat_entries(entries)
            if any(k[:depth] in wanted for depth in range(1, len(k) + 1))
        ]
    plan: list[tuple[TensorCore, str, object, bool]] = []
    _plan_update(self, entries, (), inplace, plan, is_leaf)
    if not inplace:  # every write replaces an entry (in-place writes need ``inplace``)
        for owner, key, leaf, _ in plan:
            if leaf is MISSING:  # None unsets a field of a typed class
                owner._data.pop(key, None)
            else:
                owner._data[key] = leaf
        return self
    # a lazy stack's leaf is a stacked copy: its writes go to the members (each checked
    # before anything is written)
    lazy_writes = {
        i: owner._inplace_writes(key, leaf)
        for i, (owner, key, leaf, write_in_place) in enumerate(plan)
        if write_in_place and is_lazy(owner)
    }
    for i, (owner, key, leaf, write_in_place) in enumerate(plan):
        if i in lazy_writes:
            for member, part in lazy_writes[i]:
                member._write_inplace(key, part)
        elif write_in_place:
            owner._data[key].copy_(leaf)
        elif leaf is MISSING:  # None unsets a field of a typed class
            owner._data.pop(key, None)
        else:
            owner._data[key] = leaf
    return self


def _update_resized(self: E, other: TensorCore) -> E:
    """``update(other, update_batch_size=True)``: take ``other``'s entries and batch
    size; every other entry must fit it (else nothing changes)."""
    self._check_unlocked(list(other._data), "replace")
    saved, saved_size = dict(self._data), self._batch_size
    try:
        self._batch_size = other._batch_size  # the new entries are checked against it
        converted = {key: self._convert(key, leaf) for key, leaf in other._data.items()}
        self._data.update(converted)
        self._batch_size = saved_size
        self._set_batch_size(other._batch_size)  # checks the entries kept
    except BaseException:
        self._data.clear()
        self._data.update(saved)
        self._batch_size = saved_size
        raise
    return self


@FAST_WRITE
def _plan_update(
    self: TensorCore,
    entries: Iterable[tuple[object, object]],
    prefix: tuple[str, ...],
    inplace: bool,
    plan: list[tuple[TensorCore, str, object, bool]],
    is_leaf: Callable[[type], bool] | None = None,
) -> None:
    for raw_key, value in entries:
        if type(raw_key) is str:  # the common key: no tuple to flatten
            key = raw_key
        else:
            flat = unravel_key_tuple(raw_key)
            if len(flat) > 1:
                nested = [(flat[0], {flat[1:]: value})]
                _plan_update(self, nested, prefix, inplace, plan, is_leaf)
                continue
            key = flat[0]
        where = (*prefix, key) if prefix else key
        if value is None and self._none_unsets(key, where):
            if self._locked and key in self._data:
                self._check_unlocked(where, "delete")
            plan.append((self, key, MISSING, False))
            continue
        current = self._data.get(key, MISSING)
        # a tensor first: the Mapping ABC's check costs ~0.3 us on a tensor
        is_nested_value = (
            not isinstance(value, Tensor)
            and isinstance(value, (Mapping, TensorCore))
            and (is_leaf is None or not is_leaf(type(value)))
        )
        if isinstance(current, TensorCore) and is_nested_value:
            _plan_update(current, _entries(value), (*prefix, key), inplace, plan, is_leaf)
            continue
        if current is MISSING or not inplace or not isinstance(current, Tensor):
            if self._locked:
                self._check_unlocked(where, "add" if current is MISSING else "replace")
            leaf = value if fast_write(self, key, value) else self._convert(key, value, where)
            plan.append((self, key, leaf, False))
            continue
        leaf = self._convert(key, value, where)
        if not isinstance(leaf, Tensor) or leaf.shape != current.shape:
            shape = list(getattr(leaf, "shape", ()))
            raise StructureMismatchError(
                f"cannot update {where!r} in place: stored shape {list(current.shape)}, "
                f"new value shape {shape}"
            )
        plan.append((self, key, leaf, True))


def update_(
    self: E,
    input_dict_or_td: Mapping[Any, Any] | TensorCore | None = None,
    clone: bool = False,
    *,
    non_blocking: bool = False,
    keys_to_update: Iterable[NestedKey] | None = None,
) -> E:
    """Write every entry of ``input_dict_or_td`` in place; every key must already
    exist (``keys_to_update`` limits the keys written, ``clone`` copies first)."""
    if input_dict_or_td is None:
        return self
    other = input_dict_or_td
    for key, _ in _flat_entries(_entries(other)):
        if keys_to_update is not None:
            break
        if not self._has(key if len(key) > 1 else key[0]):
            raise self._missing_at(key, key if len(key) > 1 else key[0])
    if keys_to_update is not None:
        for raw in keys_to_update:
            flat = unravel_key_tuple(raw)
            if not self._has(flat if len(flat) > 1 else flat[0]):
                raise self._missing_at(flat, raw)
    return self.update(other, clone, True, keys_to_update=keys_to_update)


# -- removing and renaming -----------------------------------------------------------


def pop(self: E, key: NestedKey, default: object = MISSING) -> Any:
    """Remove ``key`` and return its value (or ``default`` if given and missing)."""
    flat = unravel_key_tuple(key)
    owner = _owner(self, flat)
    if owner is None or flat[-1] not in owner._data:
        if default is not MISSING and default is not NO_DEFAULT:
            return default
        raise self._missing_at(flat, key)
    owner._check_unlocked(key, "delete")
    return read_value(owner._data.pop(flat[-1]))


def del_(self: E, key: NestedKey) -> E:
    """Delete ``key``; returns this instance."""
    self.pop(key)
    return self


def __delitem__(self: E, key: NestedKey) -> None:
    self.pop(key)


def rename_key_(self: E, old_key: NestedKey, new_key: NestedKey, safe: bool = False) -> E:
    """Move the entry ``old_key`` to ``new_key`` (``safe=True`` refuses to overwrite)."""
    old, new = unravel_key_tuple(old_key), unravel_key_tuple(new_key)
    owner = _owner(self, old)
    if owner is None or old[-1] not in owner._data:
        raise self._missing_at(old, old_key)
    if old == new:
        return self
    if safe and self._has(new if len(new) > 1 else new[0]):
        raise KeyError(f"cannot rename {old_key!r} to {new_key!r}: the key exists")
    owner._check_unlocked(old_key, "rename")
    # Take the entry out first (the new key may lie inside it), put it back on failure.
    saved = dict(owner._data)
    leaf = owner._data.pop(old[-1])
    try:
        self.set(new_key, leaf)
    except BaseException:
        owner._data.clear()
        owner._data.update(saved)
        raise
    return self


# -- choosing keys ---------------------------------------------------------------------


def select(
    self: E,
    *keys: NestedKey,
    inplace: bool = False,
    strict: bool = True,
    as_tensordict: bool = False,
) -> E:
    """A new instance with only ``keys`` (nested keys keep their path).

    ``strict=False`` skips keys that are missing instead of raising;
    ``as_tensordict=True`` gives a ``TensorDict`` (for a typed class).
    """
    tree = _key_tree(keys)
    data = _select(self, tree, strict, ())
    if as_tensordict and not inplace:
        return self._as_dynamic()._like(data)  # type: ignore[return-value]
    if inplace:
        self._check_unlocked(keys[0] if len(keys) == 1 else list(keys), "select")
        self._data.clear()
        self._data.update(data)
        return self
    return self._like(data)


def exclude(self: E, *keys: NestedKey, inplace: bool = False) -> E:
    """A new instance without ``keys`` (missing keys are ignored)."""
    tree = _key_tree(keys)
    data = _exclude(self, tree)
    if inplace:
        self._check_unlocked(keys[0] if len(keys) == 1 else list(keys), "exclude")
        self._data.clear()
        self._data.update(data)
        return self
    return self._like(data)


def empty(
    self: E,
    recurse: bool = False,
    *,
    batch_size: BatchSizeLike = None,
    device: DeviceLike = MISSING,
    names: Sequence[str | None] | None = MISSING,
) -> E:
    """An unlocked instance of the same class, batch size, device and names, with no
    tensors.

    ``recurse=True`` keeps the nested instances (emptied) and the non-tensor values.
    ``batch_size=`` gives another batch size (nested instances keep their extra dims),
    ``device=`` another device (``None``: none), ``names=`` other dim names (by
    default the names are kept when the number of batch dims is).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(3), "b": {"c": torch.ones(3)}}, [3])
    >>> list(td.empty(recurse=True).keys(include_nested=True)), td.empty().batch_size
    (['b'], torch.Size([3]))
    >>> td.empty(batch_size=[]).batch_size
    torch.Size([])
    """
    size = self._batch_size if batch_size is None else as_batch_size(batch_size)
    where = self._device if device is MISSING else as_device(device)
    return _emptied(self, recurse, size, where, names)


def _emptied(
    self: C,
    recurse: bool,
    size: torch.Size,
    device: torch.device | None,
    names: Sequence[str | None] | None,
) -> C:
    old = len(self._batch_size)
    data: dict[str, object] = {}
    if recurse:
        for key, leaf in self._data.items():
            if isinstance(leaf, TensorCore):
                nested = torch.Size((*size, *leaf._batch_size[old:]))
                data[key] = _emptied(leaf, True, nested, device, None)
            elif type(leaf) is NonTensorData or (
                type(leaf) is NonTensorStack and leaf.shape == size
            ):
                data[key] = leaf
    if names is MISSING:
        kept = self._names if len(size) == old else None
    else:
        kept = check_names(names, len(size))
    return type(self)._new(data, size, device, kept)


def filter_non_tensor_data(self: E) -> E:
    """A new instance without the non-tensor entries (recursively)."""
    data = {
        key: leaf.filter_non_tensor_data() if isinstance(leaf, Node) else leaf
        for key, leaf in self._data.items()
        if not isinstance(leaf, _NON_TENSOR)
    }
    return self._like(data)


def joined_keys(
    self: TensorCore, separator: str, is_leaf: Callable[[type], bool] | None
) -> dict[str, object]:
    """The entries of ``flatten_keys``: every leaf under its nested key joined by
    ``separator`` (``("a", "b")`` becomes ``"a.b"``); ``is_leaf`` keeps the nested instances
    whose class it accepts whole."""
    flat: dict[str, object] = {}
    if is_leaf is not None:  # values that are not tensor classes stay leaves
        given = is_leaf
        is_leaf = lambda cls: not issubclass(cls, TensorCore) or given(cls)  # noqa: E731
    for key, leaf in _walk(self, (), True, True, is_leaf):
        name = key if type(key) is str else separator.join(key)
        if name in flat:
            raise KeyCollisionError(
                f"Flattening keys in tensordict causes keys to collide (flatten_keys): two "
                f"keys become "
                f"{name!r}; choose another separator"
            )
        flat[name] = leaf
    return flat


def with_entries(self: TensorCore, data: dict[str, object], inplace: bool, what: str) -> TensorDict:
    """A TensorDict of ``data``, or with ``inplace`` this instance rewritten to hold it
    (only a ``TensorDict``: a class with fixed fields refuses)."""
    if inplace:
        return _rewrite_keys(self, data, what)
    return self._as_dynamic()._like(data)


def unflatten_keys(self: TensorCore, separator: str = ".", inplace: bool = False) -> TensorDict:
    """A TensorDict where ``"a.b"`` becomes the nested key ``("a", "b")``.

    ``inplace=True`` rewrites this instance instead (a ``TensorDict``).
    """
    result = self._as_dynamic()._like({})
    data = result._data
    origin: dict[tuple[str, ...], str] = {}  # each path set, and the key it came from
    made: dict[tuple[str, ...], TensorCore] = {(): result}  # the levels made here, by path
    for key, leaf in self._data.items():
        if isinstance(leaf, Node):
            leaf = leaf.unflatten_keys(separator)
        # The common cases directly: a new key of a level this call made (its leaves come
        # from an instance of the same batch size, checked already); _place handles the
        # rest (clashes, merges, levels that came from this instance).
        if separator not in key:
            if key not in data:
                origin[(key,)] = key
                data[key] = leaf
                continue
            _place(result, (key,), leaf, key, origin)
            continue
        path = tuple(key.split(separator))
        parent = made.get(path[:-1])
        if parent is None:
            parent = _make_levels(result, path[:-1], made)
        if parent is not None and path[-1] not in parent._data:
            for end in range(1, len(path) + 1):
                origin.setdefault(path[:end], key)
            parent._data[path[-1]] = leaf
            continue
        _place(result, path, leaf, key, origin)
    if inplace:
        return _rewrite_keys(self, result._data, "unflatten_keys")
    return result


def _make_levels(
    result: TensorCore, path: tuple[str, ...], made: dict[tuple[str, ...], TensorCore]
) -> TensorCore | None:
    """The level at ``path`` of ``result``, making the missing ones (as ``_set_path``
    does); ``None`` when a level on the way exists and was not made by ``unflatten_keys``."""
    node = result
    for end in range(1, len(path) + 1):
        level = made.get(path[:end])
        if level is None:
            part = path[end - 1]
            if part in node._data:
                return None
            level = node._nested_class(part)._new({}, result._batch_size, result._device)
            node._data[part] = made[path[:end]] = level
        node = level
    return node


def _rewrite_keys(self: TensorCore, data: dict[str, object], what: str) -> TensorDict:
    """Replace every entry with ``data`` (the in-place key rewrites)."""
    if not type(self).__tensorclass_schema__.dynamic:
        raise SchemaError(
            f"{what}(inplace=True): {type(self).__name__} has fixed fields; use the "
            f"returned TensorDict instead"
        )
    if list(data) != list(self._data):
        self._check_unlocked(list(self._data), what)
    self._data.clear()
    self._data.update(data)
    return self  # type: ignore[return-value]  # a dynamic class: a TensorDict


def _place(
    result: TensorCore,
    path: tuple[str, ...],
    leaf: object,
    key: str,
    origin: dict[tuple[str, ...], str],
) -> None:
    """Set ``path`` of ``result`` for ``unflatten_keys``, refusing a path another key already
    gave a value (``"a.b"`` and ``"a"`` holding a tensor): one of them would be lost. Two
    nested instances at the same path merge, key by key. ``origin`` maps each path set so
    far (and its parents) to the key it came from, for the message."""
    reached, depth = walk(result, path)
    clash = depth == len(path) and not (
        isinstance(reached, TensorCore) and isinstance(leaf, TensorCore)
    )
    if clash or (depth < len(path) and depth > 0 and not isinstance(reached, TensorCore)):
        where = path[: max(depth, 1)]
        raise KeyCollisionError(
            f"Unflattening key(s) in tensordict will override an existing for unflattened "
            f"key {where if len(where) > 1 else where[0]!r} (unflatten_keys): the keys "
            f"{origin.get(where, '?')!r} and {key!r} both give it a value; one would be "
            f"lost (rename one of them)",
            key=key,
        )
    if depth == len(path) and isinstance(leaf, TensorCore):  # two nested instances: merge
        for inner, value in leaf._data.items():
            _place(result, (*path, inner), value, key, origin)
        return
    for end in range(1, len(path) + 1):
        origin.setdefault(path[:end], key)
    result._set_path(path, leaf)


def _owner(node: TensorCore, flat: tuple[str, ...]) -> TensorCore | None:
    """The instance that holds (or would hold) the last part of ``flat``, or ``None`` when
    a level above it is missing or is a leaf."""
    owner, depth = walk(node, flat[:-1])
    return owner if depth == len(flat) - 1 and isinstance(owner, TensorCore) else None


def _entries(other: object) -> list[tuple[object, object]]:
    if isinstance(other, TensorCore):
        return list(other._data.items())
    if isinstance(other, Mapping):
        return list(other.items())
    raise TypeError(f"expected a mapping or a tensor class; got {type(other).__name__}")


def update_unlocked(
    self: E,
    other: Mapping[NestedKey, object] | TensorCore,
    inplace: bool,
    keys_to_update: Iterable[NestedKey] | None,
    is_leaf: Callable[[type], bool] | None,
) -> E:
    """``self.update(other, ...)`` (``ignore_lock=True``): the lock lifted for the call,
    set again after it, even when it fails."""
    self.unlock_()
    try:
        return self.update(other, False, inplace, keys_to_update=keys_to_update, is_leaf=is_leaf)
    finally:
        self.lock_()


def cloned_input(value: object) -> Any:
    """A copy of an update's input: tensors and tensor classes cloned, mappings rebuilt."""
    if isinstance(value, (Tensor, TensorCore)):
        copy: Any = value
        return copy.clone()
    if isinstance(value, Mapping):
        return {key: cloned_input(sub) for key, sub in value.items()}
    return value


def _flat_entries(
    entries: Iterable[tuple[object, object]],
) -> Iterator[tuple[tuple[str, ...], object]]:
    for raw_key, value in entries:
        key = unravel_key_tuple(raw_key)
        if isinstance(value, (Mapping, TensorCore)):
            for sub_key, sub_value in _flat_entries(_entries(value)):
                yield (*key, *sub_key), sub_value
        else:
            yield key, value


_WHOLE: dict[str, object] = {}


def _key_tree(keys: Iterable[NestedKey]) -> dict[str, object]:
    """``["a", ("b", "c")]`` as ``{"a": WHOLE, "b": {"c": WHOLE}}``."""
    tree: dict[str, Any] = {}
    for key in keys:
        flat = unravel_key_tuple(unravel_key(key))
        node = tree
        for part in flat[:-1]:
            child = node.get(part)
            if child is _WHOLE:
                break
            node = node.setdefault(part, {})
        else:
            node[flat[-1]] = _WHOLE
    return tree


def _select(
    owner: TensorCore, tree: dict[str, Any], strict: bool, prefix: tuple[str, ...]
) -> dict[str, object]:
    data: dict[str, object] = {}
    for key, sub in tree.items():
        leaf = owner._data.get(key, MISSING)
        if leaf is MISSING:
            if strict:
                raise owner._missing(key, (*prefix, key) if prefix else None)
            continue
        if sub is _WHOLE:
            data[key] = leaf
        elif isinstance(leaf, TensorCore):
            data[key] = leaf._like(_select(leaf, sub, strict, (*prefix, key)))
        elif strict:
            raise KeyNotFoundError(
                f"cannot select inside {(*prefix, key)!r}: it holds a {type(leaf).__name__}"
            )
    return data


def _exclude(owner: TensorCore, tree: dict[str, Any]) -> dict[str, object]:
    data: dict[str, object] = {}
    for key, leaf in owner._data.items():
        sub = tree.get(key)
        if sub is None:
            data[key] = leaf
        elif sub is not _WHOLE and isinstance(leaf, TensorCore):
            data[key] = leaf._like(_exclude(leaf, sub))
    return data
