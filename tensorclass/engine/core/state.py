"""The storage every tensor class shares: a dict of leaves, a batch size, a device, names.

``TensorCore`` holds the state and the boundary checks. Operations whose results are valid
by construction build them with :meth:`TensorCore._new`, which skips every check; values
that come from users go through :meth:`TensorCore._convert`, which checks the key, the
batch-size prefix and the device, and says which key was wrong.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast, overload

import torch
from torch import Tensor
from typing_extensions import Self

from ...collection import TensorCollection
from ...errors import BatchSizeError, BatchSizeTypeError, KeyNotFoundError, LockedError
from ...non_tensor import NonTensorData, NonTensorStack
from ...registry import dynamic_class
from ...schema import DYNAMIC, AnySchema, FieldKind, nested_from_mapping
from .inline import Inlined
from .paths import walk

if TYPE_CHECKING:
    from ...tensordict import TensorDict  # built through the registry at run time
    from ..ops import TensorOps

#: the leaves a ``TensorDict``'s ``get`` reads as their value (a stack stays a stack)
GET_KEEPS_STACKS: frozenset[type] = frozenset((NonTensorData,))
#: the leaves ``td[key]`` (and a typed class's ``get``) read as their value
READ_AS_VALUES: frozenset[type] = frozenset((NonTensorData, NonTensorStack))

__all__ = [
    "FAST_WRITE",
    "GET_KEEPS_STACKS",
    "READ_AS_VALUES",
    "TensorCore",
    "as_batch_size",
    "as_device",
    "fast_write",
    "fits_batch",
    "nested_from_mapping",
    "set_state",
]

_object_new = object.__new__
_set_attribute = object.__setattr__
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_NO_DIMS = torch.Size(())


class _Missing(enum.Enum):
    """The "no value given" sentinel (an enum member, so torch.compile can trace it)."""

    MISSING = "missing"
    NO_DEFAULT = "no default"

    def __repr__(self) -> str:
        return f"<{self.value}>"


MISSING: Any = _Missing.MISSING

NO_DEFAULT: Any = _Missing.NO_DEFAULT
"""tensordict's ``NO_DEFAULT``: passed as ``default=`` to ``get``, a missing key raises
``KeyNotFoundError`` (a ``KeyError``) instead of giving a default back (``get`` without a
default gives ``None``)."""

BatchSizeLike = int | Sequence[int] | torch.Size | None
DeviceLike = torch.device | str | int | None
Names = tuple[str | None, ...] | None


def as_batch_size(batch_size: BatchSizeLike) -> torch.Size:
    """Turn ``None``, an int, a list or a ``torch.Size`` into a ``torch.Size``."""
    if batch_size.__class__ is torch.Size:
        return batch_size
    if batch_size is None:
        return _NO_DIMS
    if isinstance(batch_size, int):
        batch_size = (batch_size,)
    try:
        size = torch.Size(batch_size)
    except TypeError:
        raise BatchSizeTypeError(
            f"batch_size must be an int, a sequence of ints or a torch.Size; got {batch_size!r}"
        ) from None
    for dim in size:
        if dim < 0:
            raise BatchSizeError(f"batch_size must not be negative; got {list(size)}")
    return size


def fits_batch(shape: Sequence[int], batch_size: Sequence[int]) -> bool:
    """Whether ``shape`` starts with ``batch_size``: the one batch-prefix check.

    Every write of a leaf (``set``, ``td[key] = v``, attribute writes, constructors) asks
    this. One or two batch dims compare ints (slicing a ``torch.Size`` costs more than the
    whole call).

    >>> import torch
    >>> fits_batch(torch.Size([4, 3]), torch.Size([4])), fits_batch(torch.Size([3]), torch.Size([4]))
    (True, False)
    """
    n = len(batch_size)
    try:
        if n == 1:
            return shape[0] == batch_size[0]
        if n == 2:
            return shape[0] == batch_size[0] and shape[1] == batch_size[1]
    except IndexError:  # fewer dims than the batch
        return False
    return n == 0 or shape[:n] == batch_size


def fast_write(node: TensorCore, key: str, value: Any) -> bool:
    """Whether a write of ``value`` under the str ``key`` of ``node`` takes the fast path:
    stored as it is, without :meth:`TensorCore._convert`.

    The one write fast path: a plain tensor, an unlocked instance without a device, a key
    that takes any tensor (a dynamic schema: ``_fast_set``) or a tensor field of a typed
    class (``_tensor_fields``; both read as ``_fast_keys``, one lookup), and the batch
    prefix (``fits_batch``, its one- and two-dim cases inline: a call costs as much again). Every write follows it: ``set``,
    ``td[key] = v``, a typed class's attribute writes, ``TensorDict(...)``, ``update`` and
    ``_set_str`` (nested writes). It is inlined into each of them
    (:data:`FAST_WRITE`), so it is written here only.
    """
    return (
        value.__class__ is Tensor
        and not node._locked
        and node._device is None
        and ((keys := node._fast_keys) is None or key in keys)
        and (
            shape[0] == size[0]
            if (n := len(size := node._batch_size)) == 1 and (shape := value.shape)
            else shape[0] == size[0] and shape[1] == size[1]
            if n == 2 and len(shape := value.shape) > 1
            else fits_batch(value.shape, size)
        )
    )


#: :func:`fast_write`, inlined into the functions it decorates (see :mod:`.inline`)
FAST_WRITE = Inlined(fast_write)


def as_device(device: DeviceLike) -> torch.device | None:
    """Turn a device spelling into a ``torch.device`` (``None`` stays ``None``)."""
    if device is None or type(device) is torch.device:
        return device
    return torch.device(device)


def check_names(names: Sequence[str | None] | None, ndim: int) -> Names:
    """Validate dimension names against the number of batch dims."""
    if names is None:
        return None
    names = tuple(names)
    if len(names) != ndim:
        raise BatchSizeError(
            f"names must name each of the {ndim} batch dims; got {len(names)}: {list(names)}"
        )
    seen = [name for name in names if name is not None]
    if len(seen) != len(set(seen)) or not all(isinstance(name, str) for name in seen):
        raise BatchSizeError(f"names must be distinct strings or None; got {list(names)}")
    return names if seen else None


class TensorCore(TensorCollection):
    """State and boundary checks shared by every tensor class (internal base).

    The class's schema (``__tensorclass_schema__``: a fixed :class:`~tensorclass.schema.Schema`
    or the dynamic one) is the policy the boundary reads: how a value for a key is converted,
    what an absent key reads as, which class a nested mapping becomes. The class-level flags
    below are derived from it by :meth:`_derive_flags` when the class is built.
    """

    __slots__ = ("_batch_size", "_data", "_device", "_entered", "_last_op", "_locked", "_names")

    _data: dict[str, Any]
    _batch_size: torch.Size
    _device: torch.device | None
    _names: Names
    _locked: bool

    __tensorclass_schema__: ClassVar[AnySchema] = DYNAMIC

    #: whether a plain tensor may go straight into ``_data`` under any key once its batch
    #: prefix is checked (a dynamic schema; typed classes allow it for ``_tensor_fields``)
    _fast_set: ClassVar[bool] = True
    #: the keys that take a plain tensor by that fast path in classes without ``_fast_set``
    _tensor_fields: ClassVar[frozenset[str]] = frozenset()
    #: the two above as the write fast path reads them, in one lookup: ``None`` when any
    #: key takes a plain tensor (``_fast_set``), else ``_tensor_fields``
    _fast_keys: ClassVar[frozenset[str] | None] = None
    #: whether instances are locked for good (frozen classes: no key added, replaced or removed)
    _frozen: ClassVar[bool] = False
    #: whether the instance ``__dict__`` is the storage dict (typed classes: a field read is
    #: a plain attribute read)
    _dict_storage: ClassVar[bool] = False
    #: the class :meth:`_new` fills before giving the result its class: the class itself when
    #: it has no ``__setattr__`` of its own, a class of the same memory layout without one
    #: (plain attribute stores are half the cost of the slot descriptors), or ``None`` when
    #: there is none (the slot descriptors are used)
    _blank: ClassVar[type | None] = None
    #: whether no stored value can be a non-tensor wrapper (every field a tensor or a nested
    #: class, no other key): reads of every value then need no unwrapping
    _no_wrappers: ClassVar[bool] = False
    #: the non-tensor leaves ``get`` reads as their value: a ``TensorDict`` keeps a stack
    #: (:data:`GET_KEEPS_STACKS`), a typed class reads it as a list as its attributes do
    #: (:data:`READ_AS_VALUES`), as tensordict's tensorclass does
    _get_unwraps: ClassVar[frozenset[type]] = frozenset((NonTensorData,))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fast_keys = None if cls._fast_set else cls._tensor_fields

    @classmethod
    def _derive_flags(cls, schema: AnySchema, blank: type | None) -> None:
        """Derive the class-level flags from the class's schema (when the class is built)."""
        cls._fast_set = schema.dynamic
        cls._tensor_fields = frozenset() if schema.fast_keys is None else schema.fast_keys
        cls._fast_keys = None if cls._fast_set else cls._tensor_fields
        cls._frozen = schema.frozen
        # Keys that are not fields would shadow methods in an instance dict.
        cls._dict_storage = not schema.extra_keys
        cls._blank = blank
        cls._get_unwraps = GET_KEEPS_STACKS if schema.extra_keys else READ_AS_VALUES
        cls._no_wrappers = not schema.extra_keys and all(
            f.kind is FieldKind.TENSOR or f.kind is FieldKind.NESTED for f in schema.fields
        )

    @classmethod
    def _new(
        cls,
        data: dict[str, Any],
        batch_size: torch.Size,
        device: torch.device | None = None,
        names: Names = None,
    ) -> Self:
        """Build an instance from leaves known to be valid: no checks, no copies.

        This is the one constructor every operation uses for its result.
        """
        blank = cls._blank
        if blank is cls:  # a dynamic schema (never frozen): plain slot stores
            new: Any = _object_new(cls)
            new._data = data
            new._batch_size = batch_size
            new._device = device
            new._names = names
            new._locked = False
            return new  # type: ignore[no-any-return]
        if blank is None or _is_dynamo_compiling():
            new = _object_new(cls)
            set_state(new, cls, data, batch_size, device, names, cls._frozen)
            return new  # type: ignore[no-any-return]
        # Filled as the blank (plain attribute stores), then given its class.
        new = _object_new(blank)
        new._data = data
        if cls._dict_storage:
            new.__dict__ = data
        new._batch_size = batch_size
        new._device = device
        new._names = names
        new._locked = cls._frozen
        new.__class__ = cls
        return new  # type: ignore[no-any-return]

    def _like(self, data: dict[str, Any], batch_size: torch.Size | None = None) -> Self:
        """A new instance of the same class, device and (unless reshaped) names."""
        if batch_size is None:
            return type(self)._new(data, self._batch_size, self._device, self._names)
        return type(self)._new(data, batch_size, self._device, None)

    # -- shape, device, names -------------------------------------------------------------

    @property
    def batch_size(self) -> torch.Size:
        """The batch shape: the leading dims every leaf shares.

        Assigning a new batch size checks every leaf against it.
        """
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value: BatchSizeLike) -> None:
        self._set_batch_size(as_batch_size(value))

    def _set_batch_size(self, new: torch.Size) -> None:
        # Check every leaf first, then change: a failed assignment changes nothing.
        changes: list[tuple[TensorCore, torch.Size]] = [(self, new)]
        self._check_batch_size(new, (), changes)
        for node, size in changes:
            if len(size) != len(node._batch_size):
                node._names = None
            node._batch_size = size

    def _check_batch_size(
        self, new: torch.Size, path: tuple[str, ...], changes: list[tuple[TensorCore, torch.Size]]
    ) -> None:
        """Check ``new`` against every leaf; add the nested instances whose batch size must
        grow to ``new`` (those shorter than it) to ``changes``, with their new size."""
        for key, leaf in self._data.items():
            if type(leaf) is NonTensorData:
                continue
            if isinstance(leaf, TensorCore) and not fits_batch(leaf._batch_size, new):
                if fits_batch(new, leaf._batch_size):
                    changes.append((leaf, new))
                    leaf._check_batch_size(new, (*path, key), changes)
                    continue
            if not fits_batch(leaf.shape, new):
                where = (*path, key) if path else key
                raise BatchSizeError(
                    f"cannot set batch_size={list(new)} on {type(self).__name__}: key "
                    f"{where!r} has shape {list(leaf.shape)}",
                    key=where,
                )

    @property
    def shape(self) -> torch.Size:
        """Same as :attr:`batch_size`, so the instance reads like a tensor."""
        return self._batch_size

    @property
    def batch_dims(self) -> int:
        """The number of batch dimensions."""
        return len(self._batch_size)

    @property
    def ndim(self) -> int:
        """The number of batch dimensions (as for tensors)."""
        return len(self._batch_size)

    def dim(self) -> int:
        """The number of batch dimensions."""
        return len(self._batch_size)

    def ndimension(self) -> int:
        """The number of batch dimensions."""
        return len(self._batch_size)

    @overload
    def size(self, dim: None = None) -> torch.Size: ...

    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: int | None = None) -> torch.Size | int:
        """The batch size, or the size of one batch dim."""
        return self._batch_size if dim is None else self._batch_size[dim]

    def numel(self) -> int:
        """The number of elements in the batch (the product of the batch size)."""
        return self._batch_size.numel()

    @property
    def device(self) -> torch.device | None:
        """The device every leaf lives on, or ``None`` when leaves may differ."""
        return self._device

    @property
    def names(self) -> list[str | None]:
        """The names of the batch dims (``None`` for unnamed dims)."""
        names = self._names
        return list(names) if names is not None else [None] * len(self._batch_size)

    @names.setter
    def names(self, value: Sequence[str | None] | None) -> None:
        self._names = check_names(value, len(self._batch_size))

    @property
    def is_locked(self) -> bool:
        """Whether keys can be added, replaced or deleted (see :meth:`lock_`)."""
        return self._locked

    def lock_(self) -> Self:
        """Refuse new, replaced or deleted keys (here and in nested instances).

        In-place writes (``set_``, ``update_``, ``td[idx] = ...``) still work.
        """
        self._locked = True
        for leaf in self._data.values():
            if isinstance(leaf, TensorCore):
                leaf.lock_()
        return self

    def unlock_(self) -> Self:
        """Undo :meth:`lock_` (here and in nested instances)."""
        self._locked = False
        for leaf in self._data.values():
            if isinstance(leaf, TensorCore):
                leaf.unlock_()
        return self

    def _check_unlocked(self, key: object, action: str) -> None:
        if self._locked:
            raise LockedError(
                f"Cannot modify locked {type(self).__name__}: cannot {action} key {key!r}; "
                f"write in place with set_()/update_() or call unlock_() first"
            )

    # -- boundary: turning user values into leaves ---------------------------------------

    def _convert(self, key: str, value: Any, where: object = None) -> Any:
        """Turn a user value into a checked leaf for ``key``, as the schema says."""
        return self.__tensorclass_schema__.convert(self, key, value, where)

    def _check_leaf(self, key: str, leaf: Any, where: object = None) -> Any:
        """Check the batch-size prefix of a leaf and move it to the device."""
        batch_size = self._batch_size
        shape = leaf.shape
        if not fits_batch(shape, batch_size):
            raise BatchSizeError(
                f"batch dimension mismatch: {type(self).__name__}: the value for key "
                f"{where or key!r} has shape "
                f"{list(shape)}, which does not start with the batch size {list(batch_size)}",
                key=where or key,  # type: ignore[arg-type]
            )
        device = self._device
        if device is not None and type(leaf) is not NonTensorStack and leaf.device != device:
            leaf = leaf.to(device)
        return leaf

    def _nested_class(self, key: str) -> type[TensorCore]:
        """The class a nested mapping under ``key`` becomes, as the schema says."""
        return self.__tensorclass_schema__.nested_class(self, key)

    def _nested_from_mapping(self, key: str, value: Mapping[Any, Any], where: object) -> Any:
        return nested_from_mapping(self._nested_class(key), key, value, self)

    @classmethod
    def _from_mapping(
        cls, mapping: Mapping[Any, Any], batch_size: torch.Size, device: torch.device | None
    ) -> Self:
        """Build an instance from a (nested) mapping, checking every value."""
        raise NotImplementedError  # each concrete class says how it is built

    # -- key primitives --------------------------------------------------------------------

    def _missing(self, key: object, where: object = None) -> KeyNotFoundError:
        unknown = self.__tensorclass_schema__.unknown_key(self, key, where)
        if unknown is not None:  # not a field of a typed class
            return unknown
        keys = list(self._data)
        shown = ", ".join(repr(k) for k in keys[:20]) + (", ..." if len(keys) > 20 else "")
        available = f"available keys: {shown}" if keys else "it has no keys"
        return KeyNotFoundError(
            f"key {where or key!r} not found in {type(self).__name__}; {available}"
        )

    def _absent(self, key: str, where: object = None) -> Any:
        """What reading ``key`` gives when it is not stored: a clear ``KeyError``, or
        ``None`` for a declared field that is not set (as the schema says)."""
        return self.__tensorclass_schema__.absent(self, key, where)

    def _none_unsets(self, key: str, where: object = None) -> bool:
        """Whether writing ``None`` under ``key`` unsets it (typed fields) rather than
        storing ``None`` as a value (a TensorDict)."""
        return self.__tensorclass_schema__.none_unsets(self, key, where)

    def _missing_at(self, flat: tuple[str, ...], where: object) -> KeyNotFoundError:
        """The error for a missing nested key, raised at the level where the path breaks
        (so the keys it lists are the ones next to the missing part)."""
        node, depth = walk(self, flat)
        if depth == len(flat):
            return KeyNotFoundError(f"key {where!r} not found", key=flat)
        if not isinstance(node, TensorCore):
            return KeyNotFoundError(
                f"key {where!r} not found: {flat[:depth]!r} holds a "
                f"{type(node).__name__}, not a nested tensor class",
                key=flat,
            )
        return node._missing(flat[depth], where if len(flat) > 1 else None)

    def _leaf(self, key: str | tuple[str, ...]) -> Any:
        """The stored leaf for a normalised key (raises a clear KeyError when missing)."""
        if type(key) is str:
            try:
                return self._data[key]
            except KeyError:
                raise self._missing(key) from None
        node, depth = walk(self, key)
        if depth == len(key):
            return node
        if not isinstance(node, TensorCore):
            raise KeyNotFoundError(
                f"key {key!r} not found: {key[:depth]!r} holds a "
                f"{type(node).__name__}, not a nested tensor class"
            )
        raise node._missing(key[depth], key)

    def _has(self, key: str | tuple[str, ...]) -> bool:
        if type(key) is str:
            return key in self._data
        return walk(self, key)[1] == len(key)

    def _own_tensors(self) -> list[Tensor]:
        """The tensors stored in this instance (at every depth), not copies of them."""
        out: list[Tensor] = []
        for leaf in self._data.values():
            if isinstance(leaf, Tensor):
                out.append(leaf)
            elif isinstance(leaf, TensorCore):
                out.extend(leaf._own_tensors())  # a lazy stack's: its members'
        return out

    @FAST_WRITE
    def _set_str(
        self,
        key: str,
        value: Any,
        inplace: bool = False,
        where: object = None,
        *,
        validated: object = None,
        non_blocking: bool = False,
    ) -> None:
        """Set one key of this level: in place when asked and present, else replace.

        ``validated`` and ``non_blocking`` are tensordict's keywords of this method, taken for
        the programs that call it (TorchRL, under ``install_as_tensordict``): the value is
        checked and converted in every case."""
        data = self._data
        if not inplace and fast_write(self, key, value):
            data[key] = value
            return
        if inplace and key in data:
            self._write_inplace(key, value, where)
            return
        if value is None and self._none_unsets(key, where):  # a typed field: unset it
            if key in data:
                self._check_unlocked(where or key, "delete")
                del data[key]
            return
        leaf = self._convert(key, value, where)
        if self._locked:
            self._check_unlocked(where or key, "add" if key not in data else "replace")
        data[key] = leaf

    def _set_existing_path(self, key: tuple[Any, ...], value: Any, inplace: bool) -> bool:
        """Set under a tuple of strings whose levels all exist, straight on the last level
        (what :meth:`_set_path` does); ``False`` when that does not apply (a missing level,
        a nested tuple, a lazy stack): the caller takes the general path."""
        last = len(key) - 1
        if last < 1 or not self._fast_set or key[last].__class__ is not str:
            return False
        # paths.walk, inline: the hot path of nested writes (calling it measured +50 ns,
        # +11%, on td.set of a 3-level key); every other key primitive calls walk.
        parent: Any = self
        try:  # a non-str part is not a key (KeyError); a leaf on the way has no _data
            for index in range(last):
                parent = parent._data[key[index]]
        except (KeyError, AttributeError, TypeError):
            return False
        if not isinstance(parent, TensorCore):
            return False
        parent._set_str(key[last], value, inplace, key)
        return True

    def _set_path(
        self, key: tuple[str, ...], value: Any, inplace: bool = False, where: object = None
    ) -> None:
        """Set a nested key, creating missing levels only once the value is known good."""
        where = where or key
        if len(key) == 1:
            self._set_str(key[0], value, inplace, where)
            return
        parent, depth = walk(self, key[:-1])  # fast path: every level exists
        if depth == len(key) - 1 and isinstance(parent, TensorCore):
            parent._set_str(key[-1], value, inplace, where)
            return
        head = key[0]
        sub = self._data.get(head, MISSING)
        if sub is MISSING:
            # Fill a detached level first, so a bad value leaves no empty level behind.
            fresh = self._nested_class(head)._new({}, self._batch_size, self._device)
            fresh._set_path(key[1:], value, inplace, where)
            if self._locked:
                self._check_unlocked(head, "add")
            self._data[head] = fresh
            return
        if not isinstance(sub, TensorCore):
            raise KeyNotFoundError(
                f"cannot set {where!r}: {head!r} holds a {type(sub).__name__}, "
                f"not a nested tensor class"
            )
        sub._set_path(key[1:], value, inplace, where)

    def _write_inplace(self, key: str, value: Any, where: object = None) -> None:
        """Copy ``value`` into the existing leaf under ``key``."""
        target = self._data[key]
        if isinstance(target, Tensor):
            source = value if isinstance(value, Tensor) else torch.as_tensor(value)
            try:
                target.copy_(source)
            except RuntimeError as err:
                raise BatchSizeError(
                    f"cannot write key {where or key!r} in place: a value of shape "
                    f"{list(source.shape)} does not fit the stored shape "
                    f"{list(target.shape)} ({err})"
                ) from None
        elif isinstance(target, TensorCore):
            cast("TensorOps", target).update_(value)  # every instance is a TensorOps
        else:
            self._data[key] = self._convert(key, value, where)

    def _as_dynamic(self) -> TensorDict:
        """This instance's leaves in a TensorDict (sharing the leaves)."""
        dynamic: type[TensorDict] = dynamic_class()
        return dynamic._new(self._data.copy(), self._batch_size, self._device, self._names)


def set_state(
    obj: Any,
    cls: type[TensorCore],
    data: Mapping[str, Any],
    batch_size: torch.Size,
    device: torch.device | None,
    names: Names,
    locked: bool,
) -> None:
    """Set an instance's state with ``object.__setattr__`` (bypassing a class's own
    ``__setattr__``; torch.compile traces it, unlike the slot descriptors' ``__set__``).

    ``data`` is the storage: a dict, or the members' mapping of a lazy stack.
    """
    _set_attribute(obj, "_data", data)
    if cls._dict_storage:
        _set_attribute(obj, "__dict__", data)
    _set_attribute(obj, "_batch_size", batch_size)
    _set_attribute(obj, "_device", device)
    _set_attribute(obj, "_names", names)
    _set_attribute(obj, "_locked", locked)
