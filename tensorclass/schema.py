"""The schema of a tensor class: its fields, compiled once when the class is created.

Everything that needs to know a class's fields reads its :class:`Schema`: the generated
``__init__``, ``set`` and attribute writes, ``repr``, validation and the type-checker
plugins. Each field has a *kind*, derived from its annotation, that says how values are
stored:

- ``tensor``: a ``torch.Tensor`` (numbers, lists and arrays are converted);
- ``nested``: a nested tensor class or ``TensorDict`` (a mapping is converted);
- ``non_tensor``: any other value, stored as it is and shared along the batch;
- ``any``: decided by the value, as in a ``TensorDict``.
"""

from __future__ import annotations

import collections.abc
import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import partial
from typing import Any, ClassVar, Protocol, Union

import numpy as np
import torch
from torch import Tensor

from .annotations import resolve_annotations
from .collection import TensorCollection
from .errors import (
    BatchSizeError,
    FieldTypeError,
    KeyNotFoundError,
    SchemaError,
    TensorClassError,
)
from .fields import MISSING
from .non_tensor import NonTensorData, NonTensorStack
from .registry import dynamic_class, params_held
from .specs import Spec, has_spec_metadata, spec_from_annotation
from .switches import lists_per_element
from .unbatched import UnbatchedTensor

__all__ = [
    "DYNAMIC",
    "AnySchema",
    "DynamicSchema",
    "Field",
    "FieldKind",
    "Schema",
    "classify_annotation",
    "convert_dynamic",
    "is_typed",
    "nested_from_mapping",
    "resolved_schema",
]

_NUMERIC = (bool, int, float, complex, np.ndarray, np.generic, list, tuple)


class _Parent(Protocol):
    """What building a nested instance reads of the instance it goes under."""

    @property
    def _batch_size(self) -> torch.Size: ...

    @property
    def _device(self) -> torch.device | None: ...


class _Owner(_Parent, Protocol):
    """What converting a value reads of the instance it is written into (the engine's
    state): the batch-prefix check, the nested build and the class's schema."""

    __tensorclass_schema__: ClassVar[Schema | DynamicSchema]

    def _check_leaf(self, key: str, leaf: object, where: object = None) -> object:
        """The leaf checked against the batch size and moved to the device."""

    def _nested_from_mapping(self, key: str, value: Mapping[str, object], where: object) -> object:
        """The nested instance under ``key`` built from a mapping."""


class FieldKind(enum.Enum):
    """How a field's values are stored, derived from its annotation.

    - ``TENSOR``: a ``torch.Tensor`` (numbers, lists and arrays are converted);
    - ``NESTED``: a nested tensor class or ``TensorDict`` (a mapping is converted);
    - ``NON_TENSOR``: any other value, stored as it is and shared along the batch;
    - ``ANY``: decided by the value, as in a ``TensorDict``;
    - ``UNRESOLVED``: a forward reference not resolved yet (resolved on first use).
    """

    TENSOR = "tensor"
    NESTED = "nested"
    NON_TENSOR = "non_tensor"
    ANY = "any"
    UNRESOLVED = "unresolved"


@dataclass(frozen=True)
class Field:
    """One declared field of a tensor class."""

    name: str
    annotation: Any
    kind: FieldKind
    default: Any = MISSING
    default_factory: Any = MISSING
    kw_only: bool = False
    optional: bool = False
    nested_class: type[Any] | None = None
    metadata: Mapping[str, Any] = dataclass_field(default_factory=dict)
    owner: str = ""
    spec: Spec | None = dataclass_field(default=None, init=False)
    #: whether a plain tensor can be stored as it is (the fast path of attribute writes)
    holds_tensors: bool = dataclass_field(default=False, init=False, repr=False, compare=False)
    #: whether the instance's repr lists the field (``dataclasses.field(repr=False)``: no)
    shown: bool = dataclass_field(default=True, compare=False)
    #: how values are converted: ``"annotation"`` (the kind decides), ``"nocast"`` (a tensor
    #: field keeps numbers and text as they are) or ``"autocast"`` (values are converted to
    #: the annotation's type): the class options ``TensorClass["nocast"]``/``["autocast"]``
    cast: str = "annotation"

    def __post_init__(self) -> None:
        if self.cast not in _CASTS:
            raise SchemaError(f"{self.owner}.{self.name}: cast must be one of {_CASTS}")
        if self.cast == "nocast" and self.kind is FieldKind.TENSOR:
            # decided by the value: a tensor (or list...) as in a TensorDict, a number kept
            object.__setattr__(self, "kind", FieldKind.ANY)
        # The converter is looked up once here: hashing an enum member costs a Python call.
        object.__setattr__(self, "convert", partial(_CONVERTERS[self.kind], self))
        if self.cast == "nocast" and self.kind is FieldKind.ANY:
            object.__setattr__(self, "convert", partial(_convert_nocast, self))
        elif self.kind is FieldKind.NON_TENSOR and _strip_optional(self.annotation)[0] in _TEXT:
            object.__setattr__(self, "convert", partial(_convert_text, self))
        if self.cast == "autocast" and self.kind is FieldKind.NON_TENSOR:
            target = _autocast_target(self.annotation)
            if target is not None:
                object.__setattr__(self, "convert", partial(_autocast, target, self.convert, self))
        object.__setattr__(self, "holds_tensors", self.kind is FieldKind.TENSOR)
        if self.kind is FieldKind.TENSOR:
            try:
                spec = spec_from_annotation(self.annotation)
            except SchemaError as err:
                raise SchemaError(f"{self.owner}.{self.name}: {err}") from None
            object.__setattr__(self, "spec", spec)
        elif self.kind is not FieldKind.UNRESOLVED and has_spec_metadata(self.annotation):
            raise SchemaError(
                f"{self.owner}.{self.name}: a Spec describes a tensor, but the field holds "
                f"{self.kind.value} values"
            )

    @property
    def required(self) -> bool:
        """Whether the constructor needs a value for this field."""
        return self.default is MISSING and self.default_factory is MISSING

    def convert(self, owner: Any, value: object, where: object = None) -> Any:
        """Turn ``value`` into a checked leaf of ``owner`` for this field.

        (Replaced per instance by the converter of the field's kind, bound once.)
        """
        return _CONVERTERS[self.kind](self, owner, value, where)


def _strip_optional(annotation: object) -> tuple[object, bool]:
    """``X | None`` as ``(X, True)``; other annotations unchanged."""
    origin = typing.get_origin(annotation)
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        if len(args) == 1:
            return args[0], optional
        return Union[tuple(args)], optional  # noqa: UP007
    return annotation, False


def _is_tensor_type(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Tensor)


def classify_annotation(
    annotation: object,
) -> tuple[FieldKind, bool, type[TensorCollection] | None]:
    """The kind of a resolved annotation, whether it is optional, and its nested class."""
    if annotation is typing.Annotated or typing.get_origin(annotation) is typing.Annotated:
        return classify_annotation(typing.get_args(annotation)[0])
    inner, optional = _strip_optional(annotation)
    if typing.get_origin(inner) is typing.Annotated:
        inner = typing.get_args(inner)[0]
    if isinstance(inner, type) and issubclass(inner, UnbatchedTensor):
        return FieldKind.ANY, optional, None  # stored whole, read back unwrapped
    if _is_tensor_type(inner) or _is_tensor_like_annotation(inner):
        return FieldKind.TENSOR, optional, None
    if isinstance(inner, type) and issubclass(inner, TensorCollection):
        return FieldKind.NESTED, optional, inner
    origin = typing.get_origin(inner)
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        if any(
            _is_tensor_type(arg) or (isinstance(arg, type) and issubclass(arg, TensorCollection))
            for arg in typing.get_args(inner)
        ):
            return FieldKind.ANY, optional, None
    if inner is Any:
        return FieldKind.ANY, optional, None
    return FieldKind.NON_TENSOR, optional, None


def _is_tensor_like_annotation(annotation: object) -> bool:
    """jaxtyping-style array annotations (``Float[Tensor, "b 3"]``) wrap a tensor type."""
    dtype_holder = getattr(annotation, "array_type", None)
    return dtype_holder is not None and _is_tensor_type(dtype_holder)


_TENSORABLE = (bool, int, float, complex, np.ndarray, np.generic, list, tuple)


def nested_from_mapping(cls: type[Any], key: str, mapping: Mapping[Any, Any], parent: Any) -> Any:
    """Build the nested instance of ``cls`` under ``key`` of ``parent`` from a mapping;
    errors name the full key path."""
    try:
        return cls._from_mapping(mapping, parent._batch_size, parent._device)
    except TensorClassError as err:
        raise err.under(key) from None


def convert_dynamic(owner: _Owner, key: str, value: object, where: object = None) -> object:
    """Turn a user value into a checked leaf of ``owner`` under ``key``, decided by the value
    (the conversion of a dynamic schema, and of ``Any`` fields).

    Tensors and tensor classes are checked against the batch size (and moved to the device);
    a mapping becomes the nested class of ``key``; numbers, lists and arrays of numbers
    become tensors; another list holds one value per element (see :func:`per_element`);
    anything else is a non-tensor value shared along the batch (a ``TensorDictParams`` too,
    unless ``registry.serve_as_tensordict`` is on: then the tensor class of its parameters).
    """
    if isinstance(value, (Tensor, TensorCollection)):
        if value.__class__ is UnbatchedTensor:
            return NonTensorData(value)  # kept whole: exempt from the batch dims
        return owner._check_leaf(key, value, where)
    if isinstance(value, Mapping):
        return owner._nested_from_mapping(key, value, where)
    if type(value) is NonTensorData:
        return value.shared()
    if type(value) is NonTensorStack:
        return owner._check_leaf(key, value, where)
    if isinstance(value, _TENSORABLE):
        try:
            tensor = torch.as_tensor(value, device=owner._device)
        except (TypeError, ValueError, RuntimeError):
            if isinstance(value, list) and lists_per_element():
                return per_element(owner, key, value, where)
            return NonTensorData(value)
        return owner._check_leaf(key, tensor, where)
    held = params_held(value)
    if held is not None:  # a TensorDictParams, served as tensordict: its parameters
        return owner._check_leaf(key, held, where)
    return NonTensorData(value)


def per_element(owner: Any, key: str, values: list[Any], where: object = None) -> Any:
    """A list written under ``key`` that is not numbers, as one value per element: the
    stack of its items when they are tensors of one shape (or tensor classes), else a
    :class:`NonTensorStack` (nested lists of one length give one dim each). Its dims must
    start with the batch size: a list of another length is refused."""
    if all(isinstance(item, Tensor) for item in values):
        shapes = {item.shape for item in values}
        if len(shapes) == 1:
            return owner._check_leaf(key, torch.stack(values).to(owner._device), where)
    elif all(isinstance(item, TensorCollection) for item in values):
        return owner._check_leaf(key, torch.stack(values), where)
    stack = NonTensorStack.from_values(values)
    shape, batch_size = stack.shape, owner._batch_size
    if shape[: len(batch_size)] != batch_size:
        raise BatchSizeError(
            f"batch dimension mismatch: {type(owner).__name__}: the list for key "
            f"{where or key!r} has shape "
            f"{list(shape)}, which does not start with the batch size {list(batch_size)}: "
            f"a list holds one value per batch element (set_non_tensor({key!r}, value) "
            f"stores a list as one value shared by the batch)",
            key=key,
        )
    return stack


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _convert_tensor(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    if isinstance(value, Tensor):
        if value.__class__ is UnbatchedTensor:
            raise FieldTypeError(
                f"{type(owner).__name__}.{field.name} is a batched tensor field; an "
                f"UnbatchedTensor needs a field annotated UnbatchedTensor (or Any)",
                key=field.name,
            )
        return owner._check_leaf(field.name, value, where)
    if isinstance(value, _NUMERIC):
        try:
            tensor = torch.as_tensor(value, device=owner._device)
        except (TypeError, ValueError, RuntimeError):
            pass
        else:
            return owner._check_leaf(field.name, tensor, where)
    raise FieldTypeError(
        f"{type(owner).__name__}.{field.name} expects a tensor; got {_describe(value)}",
        key=field.name,
    )


def _nested_misfit(owner: _Owner, name: str, value: Any, where: object) -> BatchSizeError:
    """The error for a nested instance whose batch size does not start with the owner's."""
    inner, outer = list(value.batch_size), list(owner._batch_size)
    key = where if isinstance(where, (str, tuple)) else name
    cls = type(value).__name__
    if inner:
        cause = f"its batch size {inner} does not start with {outer}"
    else:
        cause = "it was built without batch_size= (so its batch size is [])"
    return BatchSizeError(
        f"{type(owner).__name__}: the nested {cls} for key {key!r} has batch size "
        f"{inner}, which does not fit the batch size {outer}: {cause}; build it with "
        f"{cls}(..., batch_size={outer})",
        key=key,
    )


def _convert_nested(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    cls = field.nested_class
    assert cls is not None
    if isinstance(value, cls):
        try:
            return owner._check_leaf(field.name, value, where)
        except BatchSizeError:
            raise _nested_misfit(owner, field.name, value, where) from None
    if isinstance(value, TensorCollection):
        value = value._data  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        nested = nested_from_mapping(cls, field.name, value, owner)
        return owner._check_leaf(field.name, nested, where)
    raise FieldTypeError(
        f"{type(owner).__name__}.{field.name} expects a {cls.__name__} (or a mapping of its "
        f"fields); got {_describe(value)}",
        key=field.name,
    )


def _convert_non_tensor(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    if type(value) is NonTensorData:
        return value.shared()
    if type(value) is NonTensorStack:
        return owner._check_leaf(field.name, value, where)
    if (
        isinstance(value, list)
        and value
        and lists_per_element()
        and _list_per_element(field, value)
    ):
        return per_element(owner, field.name, value, where)
    return NonTensorData(value)


_LIST_LIKE = frozenset(
    (
        list,
        tuple,
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        collections.abc.Iterable,
        collections.abc.Collection,
    )
)


def _list_per_element(field: Field, value: list[Any]) -> bool:
    """Whether a list written to a non-tensor field holds one value per element, as the
    annotation says: a list-typed field (``list[str]``, ``Sequence[int]``...) takes a list
    as one value, shared by the batch, unless every item is itself a list (one list per
    element); another class (``str``, a dataclass...) takes a list as one value per
    element unless the list is an instance of it; ``object`` and what the annotation
    cannot decide take tensordict's rule (one value per element)."""
    annotation, _ = _strip_optional(field.annotation)
    origin = typing.get_origin(annotation) or annotation
    if origin in _LIST_LIKE:
        return all(type(item) is list for item in value)
    if isinstance(origin, type) and origin is not object:
        return not isinstance(value, origin)
    return True


_TEXT = (str, bytes)  # fields whose values are never converted from another type


def _convert_text(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    """A ``str`` (or ``bytes``) field: another type (an ``int``...) is refused, as
    pydantic refuses it on validation, rather than stored and found wrong later."""
    expected, optional = _strip_optional(field.annotation)
    assert isinstance(expected, type)  # a str or bytes field (see Field.__post_init__)
    inner = value.data if type(value) is NonTensorData else value
    if type(inner) is list and inner and lists_per_element():
        for item in inner:  # one value per element: each one is checked
            if not isinstance(item, expected) and not (optional and item is None):
                raise FieldTypeError(
                    f"{type(owner).__name__}.{field.name} is a {expected.__name__} field; "
                    f"the list written to it holds one value per element, and one is "
                    f"{_describe(item)}",
                    key=field.name,
                )
        return per_element(owner, field.name, inner, where)
    if not isinstance(inner, expected) and not (optional and inner is None):
        if type(value) is not NonTensorStack:
            raise FieldTypeError(
                f"{type(owner).__name__}.{field.name} is a {expected.__name__} field; got "
                f"{_describe(inner)}",
                key=field.name,
            )
    return _convert_non_tensor(field, owner, value, where)


def _convert_any(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    return convert_dynamic(owner, field.name, value, where)


_CASTS = ("annotation", "nocast", "autocast")
#: what ``nocast`` keeps as it is in a tensor field (stored as non-tensor data)
_KEPT_BY_NOCAST = (bool, int, float, complex, str, bytes)


def _convert_nocast(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    """A tensor field of a ``nocast`` class: numbers and text are kept as they are (shared
    along the batch); tensors, lists and mappings are stored as a ``TensorDict`` stores
    them."""
    if isinstance(value, _KEPT_BY_NOCAST):
        return NonTensorData(value)
    return convert_dynamic(owner, field.name, value, where)


#: the annotations ``autocast`` converts to, by calling them on the value
_AUTOCAST_TYPES = frozenset((bool, int, float, complex, str, bytes, list, tuple, set, frozenset))


def _autocast_target(annotation: object) -> type | None:
    """The type an ``autocast`` field converts its values to (``Optional`` stripped,
    ``list[int]`` is ``list``), or ``None`` when the annotation is not one it converts to."""
    stripped, _ = _strip_optional(annotation)
    origin = typing.get_origin(stripped) or stripped
    return origin if origin in _AUTOCAST_TYPES else None


def _autocast(
    target: type,
    convert: Callable[[_Owner, object, object], object],
    field: Field,
    owner: _Owner,
    value: object,
    where: object = None,
) -> object:
    """A non-tensor field of an ``autocast`` class: the value is converted to the
    annotation's type (``int(2.7)``, ``str(3)``), ``None`` kept; a value that does not
    convert is a ``FieldTypeError`` naming the field."""
    if value is not None and type(value) is not target and not isinstance(value, NonTensorData):
        try:
            value = target(
                value.item() if isinstance(value, Tensor) and target in _AUTOCAST_SCALARS else value
            )
        except (TypeError, ValueError, RuntimeError) as err:
            raise FieldTypeError(
                f"{type(owner).__name__}.{field.name} is an autocast {target.__name__} field; "
                f"{_describe(value)} does not convert: {err}",
                key=field.name,
            ) from None
    return convert(owner, value, where)


_AUTOCAST_SCALARS = (bool, int, float, complex)


def _convert_unresolved(field: Field, owner: _Owner, value: object, where: object = None) -> object:
    schema = type(owner).__tensorclass_schema__
    resolved = schema.resolve()
    return resolved.by_name[field.name].convert(owner, value, where)


_CONVERTERS: dict[FieldKind, Callable[[Field, _Owner, object, object], object]] = {
    FieldKind.TENSOR: _convert_tensor,
    FieldKind.NESTED: _convert_nested,
    FieldKind.NON_TENSOR: _convert_non_tensor,
    FieldKind.ANY: _convert_any,
    FieldKind.UNRESOLVED: _convert_unresolved,
}


@dataclass(frozen=True)
class Schema:
    """The compiled description of a tensor class (immutable).

    Attributes:
        name: the class name.
        fields: the fields in constructor order (inherited first).
        by_name: the same fields by name.
        frozen: whether fields may be reassigned.
        owner: the class this schema describes.
        validate: whether the constructor checks specs and annotations
            (``class X(TensorClass, validate=True)``).
        extra_keys: whether keys other than the fields may be stored, converted by their
            value as in a ``TensorDict`` (``class X(TensorClass, extra_keys=True)``, the
            schema of ``TypedTensorDict``).
        kw_only: whether every field is keyword-only (``class X(TensorClass, kw_only=True)``).
    """

    name: str
    fields: tuple[Field, ...]
    frozen: bool
    owner: Any
    by_name: Mapping[str, Field] = dataclass_field(default_factory=dict)
    validate: bool = False
    extra_keys: bool = False
    kw_only: bool = False
    #: the field names, in order
    names: tuple[str, ...] = dataclass_field(default=(), init=False)
    #: whether every annotation has been resolved (forward references included)
    resolved: bool = dataclass_field(default=True, init=False)

    def __post_init__(self) -> None:
        # A plain dict typed as a read-only Mapping: torch.compile stops tracing at any
        # read of a mappingproxy once a dict was mutated (every field write mutates one).
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "names", tuple(f.name for f in self.fields))
        resolved = all(f.kind is not FieldKind.UNRESOLVED for f in self.fields)
        object.__setattr__(self, "resolved", resolved)

    #: a fixed schema: only the declared fields are keys
    dynamic: ClassVar[bool] = False

    @property
    def fast_keys(self) -> frozenset[str]:
        """The keys a plain tensor may be stored under once its batch prefix is checked."""
        return frozenset(f.name for f in self.fields if f.holds_tensors)

    def field_list(self) -> str:
        """The field names for messages: ``'a', 'b'`` (or ``(none)``)."""
        return ", ".join(repr(n) for n in self.names) or "(none)"

    def field(self, owner: object, key: str) -> Field:
        """The field ``key``; a ``KeyNotFoundError`` listing the fields if there is none."""
        found = self.by_name.get(key)
        if found is None:
            raise KeyNotFoundError(
                f"{type(owner).__name__} has no field {key!r}; its fields are {self.field_list()}",
                key=key,
            )
        return found

    def unknown_key(self, owner: object, key: object, where: object) -> KeyNotFoundError | None:
        """The error for reading ``key`` when it is not a field (``None`` if it is one, or if
        the schema takes extra keys)."""
        if type(key) is not str or key in self.by_name or self.extra_keys:
            return None
        prefix = f"key {where!r}: " if where is not None else ""
        return KeyNotFoundError(
            f"{prefix}{type(owner).__name__} has no field {key!r}; its fields are "
            f"{self.field_list()}",
            key=key,
        )

    def convert(self, owner: Any, key: str, value: object, where: object = None) -> Any:
        """Turn a user value into a checked leaf of ``owner`` for the field ``key``."""
        found = self.by_name.get(key)
        if found is None:
            if self.extra_keys:
                return convert_dynamic(owner, key, value, where)
            raise owner._missing(key, where if where != key else None)
        return found.convert(owner, value, where)

    def absent(self, owner: Any, key: str, where: object = None) -> Any:
        """What reading a key that is not stored gives: ``None`` for a declared field."""
        if key in self.by_name:
            return None
        raise owner._missing(key, where)

    def none_unsets(self, owner: Any, key: str, where: object = None) -> bool:
        """Writing ``None`` to a declared field unsets it (an extra key stores it)."""
        if key not in self.by_name:
            if self.extra_keys:
                return False
            raise owner._missing(key, where if where != key else None)
        return True

    def nested_class(self, owner: object, key: str) -> type[Any]:
        """The class a nested mapping under ``key`` becomes."""
        if self.extra_keys and key not in self.by_name:
            return dynamic_class()
        found = self.field(owner, key)
        if found.kind is FieldKind.NESTED and found.nested_class is not None:
            return found.nested_class
        if found.kind in (FieldKind.ANY, FieldKind.UNRESOLVED):
            return dynamic_class()
        raise KeyNotFoundError(
            f"{type(owner).__name__}.{key} holds {found.kind.value} values, not nested keys"
        )

    def resolve(self) -> Schema:
        """Resolve forward references; installs and returns the resolved schema."""
        if self.resolved:
            return self
        hints = resolve_annotations(self.owner, strict=True)
        fields = []
        for f in self.fields:
            if f.kind is FieldKind.UNRESOLVED:
                if isinstance(hints[f.name], str):  # never a str annotation: a name left over
                    raise NameError(
                        f"cannot resolve the annotation {f.annotation!r} of {self.name}.{f.name}"
                    )
                kind, optional, nested = classify_annotation(hints[f.name])
                f = Field(
                    f.name,
                    hints[f.name],
                    kind,
                    f.default,
                    f.default_factory,
                    f.kw_only,
                    optional,
                    nested,
                    f.metadata,
                    f.owner,
                    shown=f.shown,
                    cast=f.cast,
                )
            fields.append(f)
        schema = Schema(
            self.name,
            tuple(fields),
            self.frozen,
            self.owner,
            validate=self.validate,
            extra_keys=self.extra_keys,
            kw_only=self.kw_only,
        )
        # The class installs it (and regenerates its __init__, whose converters were bound
        # to the old fields): class building is above this layer.
        self.owner.__tensorclass_install__(schema)
        return schema


class DynamicSchema:
    """The schema of ``TensorDict``: any string key, each value converted by what it is.

    It answers the same questions as :class:`Schema` (how a value is converted, what an
    absent key reads as, which class a nested mapping becomes, which keys take the fast
    path), so the engine reads one policy object whatever the class.
    """

    dynamic: ClassVar[bool] = True
    name = "TensorDict"
    fields: tuple[Field, ...] = ()
    names: tuple[str, ...] = ()
    by_name: Mapping[str, Field] = types.MappingProxyType({})
    frozen = False
    validate = False
    #: any key is stored
    extra_keys = True
    kw_only = False
    resolved = True
    owner: None = None
    #: every key takes the fast path
    fast_keys: frozenset[str] | None = None

    def __repr__(self) -> str:
        return "DynamicSchema()"

    def resolve(self) -> DynamicSchema:
        """Nothing to resolve."""
        return self

    def field_list(self) -> str:
        """No declared fields."""
        return "(none)"

    def unknown_key(self, owner: object, key: object, where: object) -> KeyNotFoundError | None:
        """Every key may be written: no key is unknown to the schema."""
        return None

    def convert(self, owner: _Owner, key: str, value: object, where: object = None) -> object:
        """Turn a user value into a checked leaf (see :func:`convert_dynamic`)."""
        return convert_dynamic(owner, key, value, where)

    def absent(self, owner: Any, key: str, where: object = None) -> Any:
        """A key that is not stored is an error that lists the stored keys."""
        raise owner._missing(key, where)

    def none_unsets(self, owner: object, key: str, where: object = None) -> bool:
        """``None`` is stored as a value."""
        return False

    def nested_class(self, owner: object, key: str) -> type[Any]:
        """Nested mappings become ``TensorDict``."""
        return dynamic_class()


#: the one dynamic schema
DYNAMIC = DynamicSchema()

#: the schema of any tensor class: fixed fields or the dynamic one
AnySchema = Schema | DynamicSchema


def is_typed(cls: type) -> bool:
    """Whether ``cls`` is a tensor class with declared fields (not ``TensorDict``)."""
    schema = getattr(cls, "__tensorclass_schema__", None)
    return schema is not None and not schema.dynamic


def resolved_schema(cls: type) -> Schema | None:
    """The resolved schema of a tensor class with declared fields; ``None`` for a class
    with a dynamic schema (``TensorDict``: any key)."""
    schema = getattr(cls, "__tensorclass_schema__", None)
    if schema is None or schema.dynamic:
        return None
    return schema.resolve()  # type: ignore[no-any-return]
