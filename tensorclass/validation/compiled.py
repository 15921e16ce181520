"""The validator of one tensor class, compiled once and cached on the class.

Compiling reads the class's :class:`~tensorclass.Schema`: tensor fields keep their
:class:`~tensorclass.Spec`, non-tensor fields get a pydantic ``TypeAdapter`` for their
annotation. :func:`check_level` then checks the leaves of one instance (and, through
nested fields, the whole tree) against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from pydantic import ConfigDict, PydanticSchemaGenerationError, TypeAdapter, ValidationError
from torch import Tensor

from ..fields import MISSING
from ..non_tensor import NonTensorData, NonTensorStack, same_value
from ..schema import Field, FieldKind, Schema, is_typed
from ..specs import Spec
from .problems import Loc, Problems, describe
from .tensors import check_tensor

__all__ = ["ClassValidator", "FieldCheck", "check_leaf", "check_level", "compiled"]

_CACHE = "__tensorclass_validator__"


@dataclass(frozen=True)
class FieldCheck:
    """What validation checks for one field (the field's parts copied for speed)."""

    field: Field
    #: the adapter that validates non-tensor values (None: nothing to check)
    adapter: TypeAdapter[object] | None
    #: whether the field must hold a value (absent means None)
    required: bool
    name: str
    kind: FieldKind
    spec: Spec | None

    def default(self) -> object:
        """The field's default value (a fresh one from a factory), or None."""
        f = self.field
        if f.default is not MISSING:
            return f.default
        if f.default_factory is not MISSING:
            return f.default_factory()
        return None


def _adapter(annotation: object) -> TypeAdapter[object] | None:
    try:
        return TypeAdapter(annotation)
    except PydanticSchemaGenerationError:
        pass
    try:  # plain classes pydantic does not know: an isinstance check
        return TypeAdapter(annotation, config=ConfigDict(arbitrary_types_allowed=True))
    except Exception:  # an annotation pydantic cannot check is left unchecked
        return None


def _field_check(f: Field) -> FieldCheck:
    adapter = _adapter(f.annotation) if f.kind is FieldKind.NON_TENSOR else None
    required = not (f.optional or f.default is None or f.annotation is Any)
    return FieldCheck(f, adapter, required, f.name, f.kind, f.spec)


class ClassValidator:
    """The compiled checks of one tensor class (see :func:`compiled`)."""

    __slots__ = ("checks", "cls", "schema")

    def __init__(self, cls: type) -> None:
        schema: Schema = cls.__tensorclass_schema__.resolve()  # type: ignore[attr-defined]
        self.cls = cls
        self.schema = schema
        self.checks = tuple(_field_check(f) for f in schema.fields)


def compiled(cls: type) -> ClassValidator:
    """The validator of tensor class ``cls``, built on first use and cached on the class."""
    found = cls.__dict__.get(_CACHE)
    if found is not None and found.schema is cls.__tensorclass_schema__:  # type: ignore[attr-defined]
        return found  # type: ignore[no-any-return]
    validator = ClassValidator(cls)
    type.__setattr__(cls, _CACHE, validator)
    return validator


def is_schema_class(cls: type) -> bool:
    """Whether ``cls`` declares fields (a tensor class, not ``TensorDict``)."""
    return is_typed(cls)


def _check_value(check: FieldCheck, leaf: object, loc: Loc, problems: Problems) -> object:
    adapter = check.adapter
    assert adapter is not None
    if type(leaf) is NonTensorStack:
        array = leaf.array
        converted = np.empty(array.shape, dtype=object)
        changed = False
        for index in np.ndindex(array.shape):
            value = array[index]
            result = _validated(adapter, value, (*loc, *index), problems)
            converted[index] = result
            changed = changed or result is not value
        return NonTensorStack(converted) if changed else leaf
    value = leaf.data if type(leaf) is NonTensorData else leaf
    result = _validated(adapter, value, loc, problems)
    return leaf if result is value else NonTensorData(result)


def _validated(adapter: TypeAdapter[object], value: object, loc: Loc, problems: Problems) -> object:
    try:
        result = adapter.validate_python(value)
    except ValidationError as err:
        problems.extend(loc, err)
        return value
    return value if same_value(result, value) else result


def check_leaf(
    check: FieldCheck, leaf: object, batch: torch.Size, loc: Loc, problems: Problems
) -> object:
    """Check a stored tensor or non-tensor leaf; returns it, or its converted value."""
    kind = check.kind
    if kind is FieldKind.TENSOR:
        if not isinstance(leaf, Tensor):
            problems.add(
                loc, "tensor_type", "expected a tensor, got {actual}", leaf, actual=describe(leaf)
            )
        elif check.spec is not None:
            check_tensor(check.spec, leaf, batch, loc, problems)
    elif kind is FieldKind.NON_TENSOR and check.adapter is not None:
        return _check_value(check, leaf, loc, problems)
    return leaf


def check_level(
    validator: ClassValidator,
    data: dict[str, Any],
    batch: torch.Size,
    loc: Loc,
    problems: Problems,
) -> None:
    """Check the stored leaves of one instance, and of its nested instances."""
    for check in validator.checks:
        name = check.name
        leaf = data.get(name)
        here = (*loc, name)
        if leaf is None:
            if check.required:
                problems.missing(here, None)
        elif check.kind is FieldKind.NESTED:
            cls = type(leaf)
            if is_schema_class(cls):
                check_level(compiled(cls), leaf._data, leaf._batch_size, here, problems)
        else:
            converted = check_leaf(check, leaf, batch, here, problems)
            if converted is not leaf:
                data[name] = converted
