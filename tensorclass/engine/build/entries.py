"""Python containers as entries of a tensor class, and back: tuples, named tuples,
dataclasses, dicts.

:func:`entries` turns a container into the nested mapping a tensor class is built from: a
tuple's elements under ``"0"``, ``"1"``, ..., a named tuple's and a dataclass's under their
field names, a dict's under its keys. The values inside are converted by :func:`as_value`
(containers become nested mappings, lists become tensors when torch takes them), so a
nested container becomes a nested level. :func:`to_namedtuple` converts an instance back to
named tuples.

>>> import collections, torch
>>> Point = collections.namedtuple("Point", ["x", "y"])
>>> sorted(entries(Point(torch.zeros(2), (1, [2, 3]))).items(), key=str)[0]
('x', tensor([0., 0.]))
>>> entries((1, "a"))
{'0': 1, '1': 'a'}
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

import torch
from torch import Tensor

from ...non_tensor import NonTensorData, NonTensorStack
from ..core.state import TensorCore
from .struct_array import is_struct_array, struct_entries

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "as_value",
    "entries",
    "is_container",
    "is_dataclass_instance",
    "is_namedtuple",
    "namedtuple_fields",
    "to_namedtuple",
]


def is_namedtuple(value: object) -> TypeGuard[tuple[object, ...]]:
    """Whether ``value`` is a named tuple (``torch.return_types`` results included)."""
    return isinstance(value, tuple) and (
        hasattr(value, "_fields") or hasattr(type(value), "n_fields")
    )


def namedtuple_fields(value: tuple[object, ...]) -> tuple[str, ...]:
    """The field names of a named tuple (a ``torch.return_types`` result names its fields
    in ``__match_args__``)."""
    fields = getattr(value, "_fields", None)
    if fields is None:
        fields = inspect.getattr_static(type(value), "__match_args__")
    return tuple(fields)


def is_dataclass_instance(value: object) -> TypeGuard[DataclassInstance]:
    """Whether ``value`` is a dataclass instance (not a dataclass type)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def is_container(value: object) -> bool:
    """Whether :func:`entries` converts ``value`` (tensor classes are not containers here)."""
    return not isinstance(value, TensorCore) and (
        isinstance(value, (Mapping, tuple)) or is_dataclass_instance(value)
    )


def entries(container: object) -> dict[Any, Any]:
    """The entries of a dict, tuple, named tuple or dataclass instance, their values
    converted by :func:`as_value`."""
    if isinstance(container, Mapping):
        return {key: as_value(value) for key, value in container.items()}
    if is_namedtuple(container):
        names = namedtuple_fields(container)
        return {name: as_value(value) for name, value in zip(names, container)}
    if isinstance(container, tuple):
        return {str(index): as_value(value) for index, value in enumerate(container)}
    if is_dataclass_instance(container):
        return {f.name: as_value(getattr(container, f.name)) for f in dataclasses.fields(container)}
    raise TypeError(
        f"expected a dict, tuple, named tuple or dataclass instance; got {type(container).__name__}"
    )


def as_value(value: object) -> Any:
    """One value inside a container, as an entry: a tensor or a tensor class as it is, a
    container or a NumPy structured array as a nested mapping, a list as a tensor when
    ``torch.tensor`` takes it; anything else as it is (the class converts it: numbers and
    arrays become tensors, other values are stored as non-tensor values)."""
    if isinstance(value, (Tensor, TensorCore)):
        return value
    if is_container(value):
        return entries(value)
    if is_struct_array(value):
        return struct_entries(value)
    if isinstance(value, list):
        try:
            return torch.tensor(value)
        except (TypeError, ValueError, RuntimeError):
            return value
    return value


# -- back to named tuples ------------------------------------------------------------------

#: the named-tuple class of each typed class without extra keys (made once)
_tuple_classes: weakref.WeakKeyDictionary[type, type] = weakref.WeakKeyDictionary()


def _tuple_class(owner: TensorCore, keys: list[str], dest_cls: type | None, top: bool) -> type:
    if dest_cls is not None and (top or set(getattr(dest_cls, "_fields", ())) == set(keys)):
        return dest_cls
    schema = owner.__tensorclass_schema__
    cls: type = getattr(type(owner), "_member_cls", None) or type(owner)  # a lazy stack's members'
    if schema.dynamic or schema.extra_keys:
        name = "GenericDict" if schema.dynamic else f"{cls.__name__}Tuple"
        return _make_tuple_class(name, keys)
    found = _tuple_classes.get(cls)
    if found is None:
        made = _make_tuple_class(f"{cls.__name__}Tuple", keys)
        _tuple_classes[cls] = made
        return made
    return found


def _make_tuple_class(name: str, keys: list[str]) -> type:
    made: type = collections.namedtuple(name, keys, rename=True)  # type: ignore[misc]
    return made


def _plain(leaf: object, dest_cls: type | None) -> object:
    if isinstance(leaf, TensorCore):
        return to_namedtuple(leaf, dest_cls, top=False)
    if type(leaf) is NonTensorData or type(leaf) is NonTensorStack:
        return leaf.value()
    return leaf


def to_namedtuple(node: TensorCore, dest_cls: type | None = None, top: bool = True) -> Any:
    """``node`` as a named tuple, nested levels as nested named tuples.

    A ``TensorDict`` level becomes a ``GenericDict`` whose fields are its keys; a typed
    level an instance of one named-tuple class per typed class (``<Name>Tuple``), whose
    fields are the class's fields (``None`` for the fields not set). ``dest_cls`` is the class of the top
    level, and of the nested levels whose keys are its fields.
    """
    schema = node.__tensorclass_schema__
    data = node._data
    if schema.dynamic:
        keys = list(data)
    else:
        keys = [*schema.names, *(key for key in data if key not in schema.by_name)]
    values = [_plain(data[key], dest_cls) if key in data else None for key in keys]
    cls = _tuple_class(node, keys, dest_cls, top)
    fields = getattr(cls, "_fields", None)
    if fields is not None and tuple(fields) != tuple(keys) and set(fields) == set(keys):
        by_key = dict(zip(keys, values))
        values = [by_key[name] for name in fields]  # dest_cls may order them differently
    return cls(*values)
