"""Building instances from Python containers, pytrees and NumPy structured arrays, and
converting them back: ``from_tuple``, ``from_namedtuple``, ``from_dataclass``, ``from_any``,
``from_pytree``/``to_pytree``, ``from_struct_array``/``to_struct_array``, ``to_namedtuple``.

Each ``from_*`` classmethod returns an instance of the class it is called on, with the batch
size rule of :mod:`.instances` (whose constructors from mappings these call). They are
attached to ``TensorOps`` (``engine/ops.py``); ``from_dataclass`` and ``from_any`` have
overloads, written once here as the Protocols :class:`FromDataclass` and :class:`FromAny`
that ``TensorOps`` declares them with. What a container
becomes is ``containers.py``'s, ``pytree_convert.py``'s and
``struct_array.py``'s.

>>> import torch
>>> from tensorclass import TensorDict
>>> TensorDict.from_tuple((torch.zeros(3), 1), batch_size=[]).keys()
KeysView(['0', '1'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict, TypeVar, overload

import numpy as np
from torch import Tensor
from typing_extensions import Unpack

from ...registry import typed_class
from ..core.self_types import E
from ..core.state import BatchSizeLike, DeviceLike, TensorCore
from . import entries as _entries
from . import struct_array as _struct_array
from .entries import as_value, entries, is_dataclass_instance, is_namedtuple
from .instances import _auto, _build
from .pytrees import PYTREE_TYPE, pytree_entries, rebuild
from .struct_array import is_struct_array, struct_entries

__all__ = [
    "FromAny",
    "FromDataclass",
    "from_any",
    "from_dataclass",
    "from_namedtuple",
    "from_pytree",
    "from_struct_array",
    "from_tuple",
    "to_namedtuple",
    "to_pytree",
    "to_struct_array",
]

_T_co = TypeVar("_T_co", covariant=True)


class _Options(TypedDict, total=False):
    """The batch-size and device keywords every ``from_*`` constructor takes."""

    auto_batch_size: bool | None
    batch_dims: int | None
    device: DeviceLike
    batch_size: BatchSizeLike


class _WithDest(_Options, total=False):
    """``from_dataclass``'s keywords: those of every ``from_*``, and the typed class."""

    dest_cls: type | None


class FromDataclass(Protocol[_T_co]):
    """The type of ``X.from_dataclass`` (``_T_co`` is ``X``): an ``X``, or with
    ``as_tensorclass=True`` an instance of a typed class made at run time (``Any``)."""

    @overload
    def __call__(
        self,
        dataclass: object,
        *,
        as_tensorclass: Literal[False] = ...,
        **options: Unpack[_WithDest],
    ) -> _T_co: ...

    @overload
    def __call__(
        self, dataclass: object, *, as_tensorclass: Literal[True], **options: Unpack[_WithDest]
    ) -> Any: ...


class FromAny(Protocol[_T_co]):
    """The type of ``X.from_any`` (``_T_co`` is ``X``): an ``X`` from a mapping, a tuple or a
    structured array, a tensor as it is, anything else as :func:`.entries.as_value` gives it."""

    @overload
    def __call__(
        self, obj: Mapping[Any, Any] | tuple[Any, ...] | np.ndarray, **options: Unpack[_Options]
    ) -> _T_co: ...

    @overload
    def __call__(self, obj: Tensor, **options: Unpack[_Options]) -> Tensor: ...

    @overload
    def __call__(self, obj: object, **options: Unpack[_Options]) -> Any: ...


def _typed_nodes(cls: type[TensorCore], found: dict[str, object]) -> dict[str, object]:
    """Pytree entries for ``cls``: a typed level is its own node type (no
    ``"_pytree_type"`` entry), down its declared nested classes."""
    schema = cls.__tensorclass_schema__
    if schema.extra_keys:  # TensorDict, TypedTensorDict: the entry is a key like another
        return found
    out = {key: value for key, value in found.items() if key != PYTREE_TYPE}
    for key, value in out.items():
        declared = schema.by_name.get(key)
        if isinstance(value, dict) and declared is not None and declared.nested_class:
            out[key] = _typed_nodes(declared.nested_class, value)
    return out


def from_tuple(
    cls: type[E],
    obj: tuple[Any, ...],
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> E:
    """Build from a tuple: a ``TensorDict`` gets the keys ``"0"``, ``"1"``, ...; a typed
    class takes the elements as its fields, in order. Nested tuples, named tuples,
    dataclasses and dicts become nested levels; lists become tensors when torch takes
    them.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict.from_tuple((torch.zeros(3, 4), torch.ones(3)), auto_batch_size=True)
    >>> sorted(td.keys()), td.batch_size
    (['0', '1'], torch.Size([3]))
    """
    auto = _auto("from_tuple", auto_batch_size, batch_size, batch_dims)
    values = [as_value(value) for value in obj]
    schema = cls._dense_class().__tensorclass_schema__
    if schema.dynamic:
        found = {str(index): value for index, value in enumerate(values)}
    else:
        if len(values) > len(schema.names):
            raise TypeError(
                f"{cls.__name__}.from_tuple: {len(values)} values for the "
                f"{len(schema.names)} fields {schema.field_list()}"
            )
        found = dict(zip(schema.names, values))
    return _build(cls, found, batch_size, device, None, auto, batch_dims)


def from_namedtuple(
    cls: type[E],
    named_tuple: tuple[Any, ...],
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> E:
    """Build from a named tuple (a ``torch.return_types`` result too): one entry per
    field; nested containers become nested levels (see :meth:`from_tuple`).
    :meth:`to_namedtuple` converts back.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> sorted(TensorDict.from_namedtuple(torch.tensor([2, 0, 1]).max(0)).keys())
    ['indices', 'values']
    """
    if not is_namedtuple(named_tuple):
        raise TypeError(f"from_namedtuple expects a named tuple; got {type(named_tuple).__name__}")
    auto = _auto("from_namedtuple", auto_batch_size, batch_size, batch_dims)
    return _build(cls, entries(named_tuple), batch_size, device, None, auto, batch_dims)


# -- pytrees and structured arrays ---------------------------------------------------------


def from_pytree(
    cls: type[E],
    pytree: object,
    *,
    batch_size: BatchSizeLike = None,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
) -> E:
    """Build from a pytree (nested lists, tuples, named tuples and dicts of tensors,
    numbers and arrays) that :meth:`to_pytree` gives back.

    Each container becomes a nested level that records its type under
    ``"_pytree_type"``; a list's or tuple's elements are under ``"0"``, ``"1"``, ...
    A typed class takes a mapping (or named tuple) of its fields at the top.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> tree = {"obs": torch.zeros(3, 4), "pair": (torch.zeros(3), torch.ones(3))}
    >>> td = TensorDict.from_pytree(tree, auto_batch_size=True)
    >>> td.batch_size, type(td.to_pytree()["pair"]).__name__
    (torch.Size([3]), 'tuple')
    """
    auto = _auto("from_pytree", auto_batch_size, batch_size, batch_dims)
    if isinstance(pytree, TensorCore):
        return cls.from_tensordict(pytree)
    found = pytree_entries(pytree)
    if not isinstance(found, dict):
        raise TypeError(
            f"from_pytree needs a list, tuple or dict at the top; got {type(pytree).__name__}"
        )
    return _build(
        cls, _typed_nodes(cls._dense_class(), found), batch_size, None, None, auto, batch_dims
    )


def to_pytree(self: E) -> Any:
    """The pytree :meth:`from_pytree` built this instance from (an instance that did not
    come from one, with no ``"_pytree_type"`` entry, is returned as it is).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict.from_pytree({"a": [torch.zeros(2), torch.ones(2)]}).to_pytree()
    {'a': [tensor([0., 0.]), tensor([1., 1.])]}
    """
    return rebuild(self)


def from_struct_array(
    cls: type[E],
    struct_array: np.ndarray,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> E:
    """Build from a NumPy structured array, one entry per field; the batch size is the
    array's shape unless given.

    Numeric fields share the array's memory (a write to either is seen by the other),
    except on another device or when torch cannot view the field; nested structured
    fields become nested levels; string fields hold one value per element.
    :meth:`to_struct_array` converts back.

    >>> import numpy as np
    >>> from tensorclass import TensorDict
    >>> x = np.array([("Rex", 9), ("Fido", 3)], dtype=[("name", "U10"), ("age", "i4")])
    >>> td = TensorDict.from_struct_array(x)
    >>> x["age"] += 1  # shared memory
    >>> td["age"], td["name"]
    (tensor([10,  4], dtype=torch.int32), ['Rex', 'Fido'])
    """
    if not is_struct_array(struct_array):
        raise TypeError(f"from_struct_array expects a NumPy structured array; got {struct_array!r}")
    auto = _auto("from_struct_array", auto_batch_size, batch_size, batch_dims)
    size = struct_array.shape if batch_size is None else batch_size
    return _build(cls, struct_entries(struct_array), size, device, None, auto, batch_dims)


def to_struct_array(self: E) -> np.ndarray:
    """A new NumPy structured array of the batch shape holding a copy of every leaf: a
    field per key, the feature dims as the field's shape, nested instances as nested
    fields, strings as ``"U"`` fields.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.tensor([1, 2]), "b": torch.tensor([4.0, 5.0])}, [2])
    >>> td.to_struct_array()
    array([(1, 4.), (2, 5.)], dtype=[('a', '<i8'), ('b', '<f4')])
    """
    return _struct_array.to_struct_array(self)


def to_namedtuple(self: E, dest_cls: type | None = None) -> Any:
    """This instance as a named tuple (nested instances as nested named tuples).

    A ``TensorDict`` level gives a ``GenericDict`` whose fields are its keys; a typed
    level an instance of one named-tuple class per typed class, whose fields are its
    fields. ``dest_cls`` is the named-tuple class of the top level (and of the nested
    levels whose keys are its fields). :meth:`from_namedtuple` converts back.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(2), "n": {"b": "text"}}, [2]).to_namedtuple()
    GenericDict(a=tensor([0., 0.]), n=GenericDict(b='text'))
    """
    return _entries.to_namedtuple(self, dest_cls)


def from_dataclass(
    cls: type[E],
    dataclass: object,
    *,
    dest_cls: type | None = None,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    as_tensorclass: bool = False,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> Any:
    """Build from a dataclass instance: one entry per field (nested dataclasses become
    nested levels, see :meth:`from_tuple`).

    ``as_tensorclass=True`` converts to a typed class instead, as
    :func:`tensorclass.from_dataclass` does: ``dest_cls`` if given, else a tensor class
    made once per dataclass (``<Name>_tc``, same fields); given a dataclass type, it
    returns that class.

    >>> import dataclasses, torch
    >>> from tensorclass import TensorDict
    >>> @dataclasses.dataclass
    ... class Data:
    ...     obs: torch.Tensor
    ...     reward: torch.Tensor
    >>> data = Data(obs=torch.zeros(3, 4), reward=torch.ones(3))
    >>> TensorDict.from_dataclass(data, auto_batch_size=True).batch_size
    torch.Size([3])
    >>> type(TensorDict.from_dataclass(data, as_tensorclass=True, batch_size=[3])).__name__
    'Data_tc'
    """
    if as_tensorclass:
        return typed_class()._from_dataclass(
            dataclass,
            dest_cls=dest_cls,
            auto_batch_size=auto_batch_size,
            batch_dims=batch_dims,
            batch_size=batch_size,
            device=device,
        )
    if not is_dataclass_instance(dataclass):
        raise TypeError(
            f"from_dataclass expects a dataclass instance; got {dataclass!r} (pass "
            f"as_tensorclass=True to turn a dataclass type into a tensor class)"
        )
    auto = _auto("from_dataclass", auto_batch_size, batch_size, batch_dims)
    return _build(cls, entries(dataclass), batch_size, device, None, auto, batch_dims)


def from_any(
    cls: type[E],
    obj: object,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> Any:
    """Convert ``obj`` by its type, recursively: a dict with :meth:`from_dict`, a named
    tuple with :meth:`from_namedtuple`, a tuple with :meth:`from_tuple`, a dataclass
    instance with :meth:`from_dataclass`, a NumPy structured array with
    :meth:`from_struct_array`, another tensor class with :meth:`from_tensordict`.

    A tensor, or an instance of this class, is returned as it is; a list becomes a
    tensor when torch takes it; anything else is returned unchanged.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict.from_any({"obs": torch.zeros(3, 4), "pair": (torch.zeros(3), 1)})
    >>> sorted(td.keys(include_nested=True, leaves_only=True), key=str)
    [('pair', '0'), ('pair', '1'), 'obs']
    >>> TensorDict.from_any([1, 2, 3])
    tensor([1, 2, 3])
    """
    options: dict[str, Any] = {
        "auto_batch_size": auto_batch_size,
        "batch_dims": batch_dims,
        "device": device,
        "batch_size": batch_size,
    }
    target = cls._dense_class()  # (a lazy-stack class's from_dict reads a list)
    if isinstance(obj, TensorCore):
        return obj if isinstance(obj, target) else target.from_tensordict(obj)
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, Mapping):  # its values converted too
        return target.from_dict(entries(obj), **options)
    if is_namedtuple(obj):
        return target.from_namedtuple(obj, **options)
    if isinstance(obj, tuple):
        return target.from_tuple(obj, **options)
    if is_dataclass_instance(obj):
        return target.from_dataclass(obj, **options)
    if is_struct_array(obj):
        return target.from_struct_array(obj, **options)
    return as_value(obj)
