"""Non-tensor leaves as JSON values (for memmap metadata and distributed exchanges).

Only values that come back exactly from JSON are accepted: ``None``, ``bool``, ``int``,
``float``, ``str``, and lists and dicts (with string keys) of those. A per-element
``NonTensorStack`` becomes nested lists as deep as the batch dims.

An enum member is stored as its value and a pydantic model as its JSON dump
(``model_dump(mode="json")``); both must come down to the values above. Nothing in the data
names a class to rebuild them (loading never imports code): a field that declares the enum
or the model (``mode: Mode``, ``config: Config | None``) turns the value back into a member or
a model on the way in, and anything else (a ``TensorDict``, a field typed ``Any``) gets the
plain value.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from enum import Enum
from typing import Any, Union, get_args, get_origin

import numpy as np

from .errors import NotSerializableError
from .non_tensor import NonTensorData, NonTensorStack, object_array

__all__ = [
    "has_shape",
    "json_exact",
    "rebuilder_in",
    "rebuilder_of",
    "non_tensor_from_json",
    "non_tensor_to_json",
]


def json_exact(value: object, where: object) -> object:
    """``value`` as JSON stores it exactly (enum members as their values, pydantic models as
    their JSON dumps); raises
    :class:`NotSerializableError` naming ``where`` for anything JSON would change."""
    cls = type(value)
    if value is None or cls in (bool, int, float, str):
        return value
    if type(value) is list:
        return [json_exact(item, where) for item in value]
    if type(value) is dict and all(type(key) is str for key in value):
        return {key: json_exact(item, where) for key, item in value.items()}
    if isinstance(value, Enum):
        try:
            return json_exact(value.value, where)
        except NotSerializableError:
            raise _not_serializable(
                value, where, f"a member of the enum {cls.__name__} whose value"
            ) from None
    pydantic = sys.modules.get("pydantic")  # not imported: value cannot be one of its models
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return json_exact(value.model_dump(mode="json"), where)
    raise _not_serializable(value, where, "")


def _not_serializable(value: Any, where: object, whose: str) -> NotSerializableError:
    shown = value.value if whose else value
    return NotSerializableError(
        f"the non-tensor value under {where!r} is {whose + ' is ' if whose else ''}"
        f"a {type(shown).__name__} ({value!r:.60}), which JSON cannot store exactly; only "
        f"null, bool, int, float, str, list and dict with str keys (and enum members and "
        f"pydantic models made of those) can be saved or sent (convert it, or drop the key first)",
        key=where if isinstance(where, (str, tuple)) else None,
    )


def rebuilder_in(annotation: object) -> Callable[[object], object] | None:
    """What turns a JSON value back into the enum member or pydantic model a field
    annotation declares (``E``, ``E | None``), or ``None`` for any other annotation."""
    if isinstance(annotation, type):
        if issubclass(annotation, Enum):
            return annotation
        pydantic = sys.modules.get("pydantic")
        if pydantic is not None and issubclass(annotation, pydantic.BaseModel):
            return annotation.model_validate  # type: ignore[attr-defined,no-any-return]
        return None
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return rebuilder_in(members[0])
    return None


def rebuilder_of(owner: type, key: str) -> Callable[[object], object] | None:
    """:func:`rebuilder_in` for the field ``key`` of the tensor class ``owner`` (``None``
    for no such field, or a class without declared fields)."""
    schema = getattr(owner, "__tensorclass_schema__", None)  # every tensor class has one
    found = None if schema is None else schema.resolve().by_name.get(key)
    return None if found is None else rebuilder_in(found.annotation)


def _rebuilt(value: object, rebuild: Callable[[object], object] | None) -> object:
    if rebuild is None or value is None:
        return value
    try:
        return rebuild(value)
    except ValueError:  # pydantic's ValidationError is one
        return value  # validation on load names the problem, with what was allowed


def non_tensor_to_json(leaf: NonTensorData | NonTensorStack, where: object) -> tuple[str, Any]:
    """``("non_tensor", value)`` or ``("non_tensor_stack", nested lists)``, checked."""
    if type(leaf) is NonTensorData:
        return "non_tensor", json_exact(leaf.data, where)
    return "non_tensor_stack", json_exact(leaf.value(), where)


def non_tensor_from_json(
    kind: str,
    payload: object,
    shape: tuple[int, ...],
    rebuild: Callable[[object], object] | None = None,
) -> NonTensorData | NonTensorStack:
    """The leaf for a JSON payload made by :func:`non_tensor_to_json`; ``rebuild`` (from
    :func:`rebuilder_in`) turns each value back into what the receiving field declares."""
    if kind == "non_tensor":
        return NonTensorData(_rebuilt(payload, rebuild))
    array = object_array(shape, None)
    for index in np.ndindex(*shape):
        value: Any = payload
        for position in index:
            value = value[position]
        array[index] = _rebuilt(value, rebuild)
    return NonTensorStack(array)


def has_shape(values: object, shape: tuple[int, ...]) -> bool:
    """Whether ``values`` are nested lists with the sizes of ``shape`` (the payload of a
    per-element ``NonTensorStack``)."""
    if not shape:
        return True
    if type(values) is not list or len(values) != shape[0]:
        return False
    return all(has_shape(item, shape[1:]) for item in values)
