"""Tensor classes inside pydantic: core schema (as a model field) and JSON Schema.

- As a field of a ``BaseModel`` (or in a ``TypeAdapter``), a tensor class is validated by
  :func:`~tensorclass.validation.validate`: the input may be an instance, a ``TensorDict``
  or a mapping, and errors keep their full location (``("batch", "obs", "pixels")``).
- Serialisation: in Python mode (``model_dump()``) the instance is kept as it is (no
  copy); in JSON mode it is refused with a clear error, since tensors have no faithful
  JSON form (save them with memmap and store the path instead).
- JSON Schema describes the fields: non-tensor fields by their pydantic schema, nested
  tensor classes by reference (``$defs``; ``anyOf`` the reference and ``null`` when the
  field is optional), tensor fields by an ``x-tensor`` object with
  the spec's shape string, dtype and device. Defaults and
  ``field(metadata={"description": ...})`` are shown.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from pydantic import (
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PydanticSchemaGenerationError,
    TypeAdapter,
    WithJsonSchema,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import (
    CoreSchema,
    PydanticSerializationError,
    SchemaSerializer,
    core_schema,
    to_jsonable_python,
)

from ..fields import MISSING
from ..schema import Field, FieldKind
from .compiled import compiled, is_schema_class
from .run import validate

__all__ = ["class_core_schema", "class_json_schema", "json_schema", "kept_as_is"]

_ADAPTER = "__tensorclass_adapter__"
_BUILDING: set[type] = set()  # classes whose schema is being built (recursive classes)


def _ref(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}:{id(cls)}"


def tensor_json(f: Field) -> dict[str, Any]:
    """The JSON Schema of a tensor field: its spec under ``x-tensor``."""
    return {"x-tensor": f.spec.to_json() if f.spec is not None else {}}


def _field_schema(f: Field, handler: GetCoreSchemaHandler) -> CoreSchema:
    if f.kind is FieldKind.TENSOR:
        return handler.generate_schema(Annotated[Any, WithJsonSchema(tensor_json(f))])
    nested = f.nested_class
    if f.kind is FieldKind.NESTED and nested is not None:
        if not is_schema_class(nested):  # a TensorDict: any keys
            js = {"type": "object", "x-tensordict": True}
            return handler.generate_schema(Annotated[Any, WithJsonSchema(js)])
        found: CoreSchema
        if nested in _BUILDING:
            found = core_schema.definition_reference_schema(_ref(nested))
        else:
            found = handler.generate_schema(nested)
        return core_schema.nullable_schema(found) if f.optional else found
    if f.kind is FieldKind.NON_TENSOR:
        try:
            return handler.generate_schema(f.annotation)
        except PydanticSchemaGenerationError:
            pass
    return core_schema.any_schema()


@contextmanager
def _building(cls: type) -> Iterator[None]:
    _BUILDING.add(cls)
    try:
        yield
    finally:
        _BUILDING.discard(cls)


def _refuse_json(value: Any) -> Any:
    raise TypeError(
        f"{type(value).__name__} holds tensors, which have no faithful JSON form: save it "
        f"with memmap() and keep the path in the model, or exclude the field from JSON dumps"
    )


_KEPT: list[SchemaSerializer] = []


def kept_as_is() -> SchemaSerializer:
    """The ``__pydantic_serializer__`` of tensor classes: a Python dump keeps the instance.

    Tensor classes are dataclasses to the standard library, and pydantic dumps a dataclass
    it does not know as a dict of its fields; this serializer, found on the class, tells it
    to keep the instance instead (JSON dumps are refused by the field schema).
    """
    if not _KEPT:
        kept = core_schema.plain_serializer_function_ser_schema(lambda value: value)
        _KEPT.append(SchemaSerializer(core_schema.any_schema(serialization=kept)))
    return _KEPT[0]


def class_core_schema(cls: type, handler: GetCoreSchemaHandler) -> CoreSchema:
    """The pydantic core schema of a tensor class (``__get_pydantic_core_schema__``)."""
    validator = compiled(cls)
    with _building(cls):
        fields = {
            check.name: core_schema.typed_dict_field(
                _field_schema(check.field, handler),
                required=check.required and check.field.required,
            )
            for check in validator.checks
        }
    described = core_schema.typed_dict_schema(fields, extra_behavior="forbid")
    return core_schema.no_info_plain_validator_function(
        lambda value: validate(value, cls),
        ref=_ref(cls),
        json_schema_input_schema=described,
        serialization=core_schema.plain_serializer_function_ser_schema(
            _refuse_json, when_used="json"
        ),
    )


def class_json_schema(
    cls: type, schema: CoreSchema, handler: GetJsonSchemaHandler
) -> JsonSchemaValue:
    """The JSON Schema of a tensor class (``__get_pydantic_json_schema__``)."""
    json = handler(schema)
    target = handler.resolve_ref_schema(json)
    target["title"] = cls.__name__
    doc = cls.__dict__.get("__doc__")
    if doc:
        target["description"] = inspect.cleandoc(doc)
    target["x-tensorclass"] = {"class": f"{cls.__module__}.{cls.__qualname__}"}
    properties = target.get("properties", {})
    for f in compiled(cls).schema.fields:
        _describe_field(f, properties.get(f.name))
    return json


def _describe_field(f: Field, prop: dict[str, Any] | None) -> None:
    """Add a field's default and ``field(metadata={"description": ...})`` to its schema."""
    if prop is None:
        return
    description = f.metadata.get("description")
    if isinstance(description, str):
        prop["description"] = description
    if f.default is not MISSING and f.default is not None:
        try:
            prop["default"] = to_jsonable_python(f.default)
        except PydanticSerializationError:
            pass  # a default with no JSON form is left out


class _Lenient(GenerateJsonSchema):
    """Values with no JSON form (callables, arbitrary classes) get an empty schema."""

    def handle_invalid_for_json_schema(self, schema: Any, error_info: str) -> JsonSchemaValue:
        return {}


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of tensor class ``cls`` (nested classes under ``$defs``).

    A field whose values have no JSON form (a callable, an arbitrary class) is described
    by an empty schema instead of failing the whole class.
    """
    adapter = cls.__dict__.get(_ADAPTER)
    if adapter is None:
        adapter = TypeAdapter(cls)
        type.__setattr__(cls, _ADAPTER, adapter)
    result: dict[str, Any] = adapter.json_schema(schema_generator=_Lenient)
    return result
