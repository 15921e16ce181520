"""``TensorClass``: tensor classes with declared, typed fields.

A class body with annotations declares the fields (dataclass rules: defaults,
``field(default_factory=...)``, ``ClassVar`` excluded, ``__post_init__``). At class creation
the metaclass compiles a :class:`~tensorclass.schema.Schema` and generates ``__init__``.

Instances store their leaves in the instance ``__dict__``, so reading a tensor field is a
plain attribute read; writes go through ``__setattr__``, which checks the value.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from torch import Tensor
from typing_extensions import Self, dataclass_transform

from .errors import (
    FieldTypeError,
    FrozenInstanceError,
    KeyNotFoundError,
    SchemaError,
    TensorClassError,
)
from .fields import MISSING, FieldSpec, field
from .loading import load_memmap
from .non_tensor import NonTensorData, NonTensorStack
from .schema import DYNAMIC, AnySchema, Field, FieldKind, Schema, classify_annotation
from .tensordict_core._core import TensorCore, as_batch_size, as_device, check_names
from .tensordict_core.base import TensorDictBase
from .tensordict_core.memmap.load import ClassPolicy
from .tensordict_core.memmap.tensor import PathLike
from .tensordict_core.storage_methods import StorageMethods

if TYPE_CHECKING:
    from ._typing import InitAttr, ReadOnlyAfterInit
    from .tensordict import TensorDict
    from .tensordict_core._core import BatchSizeLike, DeviceLike

__all__ = [
    "TensorClass",
    "TensorClassMeta",
    "install_schema",
    "regenerate_init",
    "resolve_annotations",
]

_object_new = object.__new__
_set_data = TensorCore.__dict__["_data"].__set__
_set_batch_size = TensorCore.__dict__["_batch_size"].__set__
_set_device = TensorCore.__dict__["_device"].__set__
_set_names = TensorCore.__dict__["_names"].__set__
_set_locked = TensorCore.__dict__["_locked"].__set__
_set = object.__setattr__
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_SLOT_NAMES = frozenset((*TensorCore.__slots__, "__dict__"))
_FACTORY: Any = type("_Factory", (), {"__repr__": lambda self: "<factory>"})()
_MUTABLE_DEFAULTS = (list, dict, set, Tensor, TensorCore)
_NO_DEFAULT: Any = None  # the declared default of batch_size/device/names (typing only)


class _NonTensorField(property):
    """Reads a non-tensor field: the stored wrapper gives back its value.

    A ``property`` (its ``__get__`` is C) around a closure: one Python frame per read, the
    least a stored ``NonTensorData`` needs to be unwrapped.
    """

    def __init__(self, name: str) -> None:
        def read(obj: Any) -> Any:
            try:
                leaf = obj._data[name]
            except KeyError:
                return None
            cls = leaf.__class__
            if cls is NonTensorData:
                return leaf.data
            if cls is NonTensorStack:
                return leaf.value()
            return leaf

        def write(obj: Any, value: Any) -> None:
            obj._set_field(name, value)

        super().__init__(read, write)
        self.name = name


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        stripped = annotation.replace(" ", "")
        return stripped.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return annotation is ClassVar or typing.get_origin(annotation) is ClassVar


def _evaluate(annotation: Any, globalns: dict[str, Any], localns: dict[str, Any]) -> Any:
    if isinstance(annotation, str):
        annotation = eval(annotation, globalns, localns)
    try:
        return typing._eval_type(annotation, globalns, localns)  # type: ignore[attr-defined]
    except TypeError:
        return annotation


def _own_annotations(klass: type) -> dict[str, Any]:
    return dict(inspect.get_annotations(klass))


def resolve_annotations(cls: type, strict: bool) -> dict[str, Any]:
    """The resolved field annotations of ``cls`` and its tensor-class bases.

    Unresolvable forward references raise ``NameError`` when ``strict``, else they are
    left as the string.
    """
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if not isinstance(klass, TensorClassMeta) or "__tensorclass_schema__" not in vars(klass):
            continue
        globalns = _module_namespace(klass)
        localns = {
            **vars(klass).get("__tensorclass_namespace__", {}),
            klass.__name__: klass,
            cls.__name__: cls,
        }
        for name, annotation in _own_annotations(klass).items():
            if _is_classvar(annotation):
                continue
            try:
                hints[name] = _evaluate(annotation, globalns, localns)
            except NameError:
                if strict:
                    raise NameError(
                        f"cannot resolve the annotation {annotation!r} of "
                        f"{klass.__name__}.{name}; define it before the first instance"
                    ) from None
                hints[name] = annotation
    return hints


def _reserved_names() -> frozenset[str]:
    return frozenset(name for name in dir(TensorClass) if not name.startswith("__"))


def _check_field_name(cls: type, name: str, inherited: Mapping[str, Field]) -> None:
    if name in inherited:
        return
    if name in _RESERVED:
        raise SchemaError(
            f"{cls.__name__}.{name}: the name {name!r} is reserved by TensorClass (an "
            f"attribute or method of every tensor class); choose another field name"
        )
    own = cls.__dict__.get(name, MISSING)
    if callable(own) or isinstance(own, (property, classmethod, staticmethod)):
        raise SchemaError(f"{cls.__name__}.{name} is declared both as a field and a method")
    for base in cls.__mro__[1:]:
        if name in vars(base) and not isinstance(vars(base)[name], _NonTensorField):
            raise SchemaError(f"{cls.__name__}.{name}: the field would hide {base.__name__}.{name}")


def _make_field(cls: type, name: str, annotation: Any) -> Field:
    default = cls.__dict__.get(name, MISSING)
    factory: Any = MISSING
    kw_only = False
    metadata: Mapping[str, Any] = {}
    if isinstance(default, FieldSpec):
        spec = default
        default, factory, kw_only, metadata = (
            spec.default,
            spec.default_factory,
            spec.kw_only,
            spec.metadata,
        )
    if isinstance(default, _MUTABLE_DEFAULTS):
        raise SchemaError(
            f"{cls.__name__}.{name}: a {type(default).__name__} default would be shared by "
            f"every instance; use field(default_factory=...)"
        )
    if name in cls.__dict__:
        delattr(cls, name)  # the default lives in the schema, not on the class
    if isinstance(annotation, str):
        kind, optional, nested = FieldKind.UNRESOLVED, False, None
    else:
        kind, optional, nested = classify_annotation(annotation)
    return Field(
        name, annotation, kind, default, factory, kw_only, optional, nested, metadata, cls.__name__
    )


def _check_order(cls: type, fields: tuple[Field, ...]) -> None:
    seen_default = None
    for f in fields:
        if f.kw_only:
            continue
        if not f.required:
            seen_default = f.name
        elif seen_default is not None:
            raise SchemaError(
                f"{cls.__name__}: the field {f.name!r} without a default follows "
                f"{seen_default!r}, which has one; give it a default or field(kw_only=True)"
            )


def install_schema(cls: type, schema: AnySchema) -> None:
    """Attach a schema to its class, derive the engine's class-level flags from it, and add
    the attribute readers its fields need."""
    type.__setattr__(cls, "__tensorclass_schema__", schema)
    engine_class: Any = cls
    if schema.dynamic:
        # No fields to route: attribute writes are the plain slot stores (an unknown
        # attribute is an AttributeError: these classes have no instance __dict__).
        type.__setattr__(cls, "__setattr__", object.__setattr__)
        type.__setattr__(cls, "__delattr__", object.__delattr__)
        engine_class._derive_flags(schema, cls)
        return
    engine_class._derive_flags(schema, _blank_for(cls))
    for f in schema.fields:
        current = cls.__dict__.get(f.name)
        if f.kind in (FieldKind.TENSOR, FieldKind.NESTED):
            # Tensor fields read straight from the instance dict; an absent field finds this
            # class-level None (no __getattr__: it would slow every attribute read).
            type.__setattr__(cls, f.name, None)
        elif not isinstance(current, _NonTensorField):
            type.__setattr__(cls, f.name, _NonTensorField(f.name))


def _dict_setter(cls: type) -> Any:
    """The setter of the instance ``__dict__`` of ``cls`` (the nearest class in its MRO
    that has one), or ``object.__setattr__``-based when there is none."""
    for klass in cls.__mro__:
        descriptor = vars(klass).get("__dict__")
        if descriptor is not None and hasattr(descriptor, "__set__"):
            return descriptor.__set__
    return lambda obj, data: _set(obj, "__dict__", data)


def _make_init(cls: type, schema: Schema) -> Any:
    """Generate ``__init__``: per field, an inline fast path for plain tensors, else the
    field's converter (bound once)."""
    namespace: dict[str, Any] = {
        "_FACTORY": _FACTORY,
        "_Tensor": Tensor,
        "_Size": torch.Size,
        "_as_batch_size": as_batch_size,
        "_as_device": as_device,
        "_check_names": check_names,
        "_compiling": _is_dynamo_compiling,
        "_set_slots": _set_slots,
        "_set_data": _set_data,
        "_set_dict": _dict_setter(cls),
        "_set_batch_size": _set_batch_size,
        "_set_device": _set_device,
        "_set_names": _set_names,
        "_set_locked": _set_locked,
    }
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, f in enumerate(schema.fields):
        name = f.name
        namespace[f"_convert_{index}"] = f.convert
        if f.default is not MISSING:
            namespace[f"_default_{index}"] = f.default
            param = f"{name}=_default_{index}"
        elif f.default_factory is not MISSING:
            namespace[f"_factory_{index}"] = f.default_factory
            param = f"{name}=_FACTORY"
            body.append(f"    if {name} is _FACTORY: {name} = _factory_{index}()")
        else:
            param = name
        (keyword if f.kw_only else positional).append(param)
        if f.holds_tensors:
            # One batch dim: compare one int (_first is -1 when this fast path is off);
            # else the shape prefix; anything else goes through the field's converter.
            body.append(
                f"    if {name}.__class__ is _Tensor and {name}.ndim and"
                f" {name}.shape[0] == _first: _data[{name!r}] = {name}"
            )
            body.append(
                f"    elif {name}.__class__ is _Tensor and _device is None"
                f" and {name}.shape[:_n] == _size: _data[{name!r}] = {name}"
            )
            body.append(
                f"    elif {name} is not None: _data[{name!r}] = _convert_{index}(_tc_self_, {name})"
            )
        else:
            body.append(
                f"    if {name} is not None: _data[{name!r}] = _convert_{index}(_tc_self_, {name})"
            )
    params = ", ".join(
        ["_tc_self_", *positional, "*", *keyword, "batch_size=None", "device=None", "names=None"]
    )
    lines = [
        f"def __init__({params}):",
        "    _size = batch_size if batch_size.__class__ is _Size else _as_batch_size(batch_size)",
        "    _device = None if device is None else _as_device(device)",
        "    _n = len(_size)",
        "    _cls = _tc_self_.__class__",
        "    if not _cls.__tensorclass_schema__.resolved: _cls.__tensorclass_schema__.resolve()",
        # The state is set before the fields are converted (converters read it). A fresh
        # dict keeps attribute reads fast; under torch.compile the instance's own dict is
        # used, since Dynamo does not follow a replaced __dict__ of a new object.
        "    if _compiling():",
        "        _data = _tc_self_.__dict__",
        "        _set_slots(_tc_self_, _data, _size, _device, None, False)",
        "    else:",
        "        _data = {}",
        "        _set_data(_tc_self_, _data)",
        "        _set_dict(_tc_self_, _data)",
        "        _set_batch_size(_tc_self_, _size)",
        "        _set_device(_tc_self_, _device)",
        "        _set_names(_tc_self_, None)",
        "        _set_locked(_tc_self_, False)",
        "    _first = _size[0] if _n == 1 and _device is None else -1",
        *body,
        "    if names is not None: _set_names(_tc_self_, _check_names(names, _n))",
        "    if _cls._frozen: _tc_self_.lock_()",
    ]
    if schema.validate:  # only validating classes pay for the check
        lines = _validating(lines, schema, namespace)
    if hasattr(cls, "__post_init__"):
        lines.append("    _tc_self_.__post_init__()")
    exec("\n".join(lines), namespace)  # generated once per class, like dataclasses
    init = namespace["__init__"]
    init.__tensorclass_generated__ = True  # rebuilt classes (@tensorclass(...)) make a new one
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = (
        f"Create a {cls.__name__}: fields ({', '.join(schema.names)}), batch_size, device, names."
    )
    return init


def _validating(lines: list[str], schema: Schema, namespace: dict[str, Any]) -> list[str]:
    """The ``__init__`` of a ``validate=True`` class: the same body, then the check.

    A value the body cannot store (it stops at the first) is reported with every other
    problem of the arguments, as one ``ValidationError`` (``check_construction``).
    """
    # Validation (and pydantic) is imported by the classes that validate, not by every user.
    from pydantic import ValidationError

    from .validation.run import check_construction, check_instance

    namespace["_check"] = check_instance
    namespace["_report"] = check_construction
    namespace["_Refused"] = (TensorClassError, ValidationError)
    given = ", ".join(f"{name!r}: {name}" for name in schema.names)
    return [
        lines[0],
        "    try:",
        *("    " + line for line in lines[1:]),
        "    except _Refused as _err:",
        f"        _given = {{{given}}}",
        "        _report(_tc_self_, {k: v for k, v in _given.items() if v is not _FACTORY},"
        " batch_size, device, _err)",
        "    _check(_tc_self_)",
    ]


def regenerate_init(cls: type, schema: Schema) -> None:
    """Replace a generated ``__init__`` after the schema changed (forward refs resolved)."""
    if getattr(cls.__dict__.get("__init__"), "__tensorclass_generated__", False):
        type.__setattr__(cls, "__init__", _make_init(cls, schema))


def _set_slots(
    self: Any,
    data: dict[str, Any],
    batch_size: torch.Size,
    device: torch.device | None,
    names: Any,
    locked: bool,
) -> None:
    """Set the slots and the storage dict with ``object.__setattr__``.

    Slower than the slot descriptors ``_new`` uses, but torch.compile can trace it (it
    cannot trace a descriptor's ``__set__``).
    """
    _set(self, "_data", data)
    _set(self, "__dict__", data)
    _set(self, "_batch_size", batch_size)
    _set(self, "_device", device)
    _set(self, "_names", names)
    _set(self, "_locked", locked)


def _module_namespace(cls: type) -> dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    return dict(vars(module)) if module is not None else {}


def _defining_namespace() -> dict[str, Any]:
    """The names visible where the class statement runs (outside this package's frames).

    String annotations (``from __future__ import annotations``) of classes defined inside
    functions name things that only that scope knows, as pydantic also finds.
    """
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back
    if frame is None:
        return {}
    return {**frame.f_globals, **frame.f_locals}


def _build_class(
    cls: type,
    frozen: bool | None,
    validate: bool | None,
    namespace: dict[str, Any],
    dynamic: bool = False,
) -> None:
    inherited: dict[str, Field] = {}
    if dynamic or getattr(cls, "__tensorclass_schema__", DYNAMIC).dynamic:
        # Any string key (TensorDict and its subclasses): annotations are not fields.
        if frozen or validate:
            raise SchemaError(f"{cls.__name__}: a class with a dynamic schema has no fields to "
                              f"freeze or validate")
        install_schema(cls, DYNAMIC)
        return
    parent_frozen = parent_validate = False
    for base in reversed(cls.__mro__[1:]):
        schema = vars(base).get("__tensorclass_schema__")
        if schema is not None:
            inherited.update(schema.by_name)
            parent_frozen = parent_frozen or schema.frozen
            parent_validate = parent_validate or schema.validate
    if "__slots__" in cls.__dict__:
        raise SchemaError(f"{cls.__name__}: tensor classes store their fields; drop __slots__")
    fields = dict(inherited)
    globalns = _module_namespace(cls)
    localns = {**namespace, cls.__name__: cls}
    unresolved = False
    for name, raw in _own_annotations(cls).items():
        if _is_classvar(raw):
            continue
        try:
            annotation = _evaluate(raw, globalns, localns)
        except NameError:
            annotation = raw if isinstance(raw, str) else repr(raw)
            unresolved = True
        if _is_classvar(annotation):
            continue
        _check_field_name(cls, name, inherited)
        fields[name] = _make_field(cls, name, annotation)
    if unresolved:  # keep the defining scope for resolving forward references later
        type.__setattr__(cls, "__tensorclass_namespace__", namespace)
    ordered = tuple(fields.values())
    _check_order(cls, ordered)
    schema = Schema(
        cls.__name__,
        ordered,
        parent_frozen if frozen is None else frozen,
        cls,
        validate=parent_validate if validate is None else validate,
    )
    install_schema(cls, schema)
    if "__init__" not in cls.__dict__:
        type.__setattr__(cls, "__init__", _make_init(cls, schema))
    type.__setattr__(cls, "__match_args__", tuple(f.name for f in ordered if not f.kw_only))


# eq_default=False: ``==`` is the engine's elementwise comparison, not a synthesized one
@dataclass_transform(eq_default=False, field_specifiers=(field,))
class TensorClassMeta(type):
    """Compiles the schema and ``__init__`` of each tensor class when it is defined."""

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        *,
        frozen: bool | None = None,
        validate: bool | None = None,
        dynamic: bool = False,
        **kwargs: Any,
    ) -> TensorClassMeta:
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if any(isinstance(base, TensorClassMeta) for base in bases):
            _build_class(cls, frozen, validate, _defining_namespace(), dynamic)
        return cls

    def __init__(
        cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> None:
        super().__init__(name, bases, namespace)


class TensorClass(StorageMethods, TensorDictBase, metaclass=TensorClassMeta):
    """Base class of typed tensor classes: declared fields, one batch shape.

    >>> import torch
    >>> from tensorclass import TensorClass
    >>> class Batch(TensorClass):
    ...     images: torch.Tensor
    ...     labels: torch.Tensor
    >>> batch = Batch(torch.zeros(8, 3, 4, 4), torch.arange(8), batch_size=[8])
    >>> batch[:2]
    Batch(images=float32[2, 3, 4, 4], labels=int64[2], batch_size=[2])
    >>> batch.reshape(2, 4).labels.shape
    torch.Size([2, 4])

    ``class X(TensorClass, frozen=True)`` forbids reassigning fields;
    ``class X(TensorClass, validate=True)`` checks specs and annotations on construction.
    """

    __slots__ = ()  # TensorDict has no instance __dict__; typed subclasses get one
    __tensorclass_schema__: ClassVar[Schema]

    if TYPE_CHECKING:
        # For type checkers only (dataclass_transform): keyword-only ``__init__`` arguments
        # of every tensor class, read back with their engine types. At run time these are
        # the engine's properties and the generated ``__init__``'s keyword-only parameters,
        # never fields (this block does not run, so the metaclass never sees them).
        batch_size: InitAttr[torch.Size, BatchSizeLike] = field(  # type: ignore[override]
            default=_NO_DEFAULT, kw_only=True
        )
        device: ReadOnlyAfterInit[torch.device | None, DeviceLike] = field(  # pyright: ignore[reportIncompatibleMethodOverride]
            default=_NO_DEFAULT, kw_only=True
        )
        names: InitAttr[list[str | None], Sequence[str | None] | None] = field(  # type: ignore[override]
            default=_NO_DEFAULT, kw_only=True
        )

    @classmethod
    def _from_mapping(
        cls, mapping: Mapping[Any, Any], batch_size: torch.Size, device: torch.device | None
    ) -> Self:
        kwargs: dict[str, Any] = {}
        for key, value in mapping.items():
            if type(key) is tuple and len(key) > 1:
                kwargs.setdefault(key[0], {})[key[1:]] = value
            else:
                kwargs[key if type(key) is str else key[0]] = value
        schema = cls.__tensorclass_schema__
        fields = ", ".join(repr(n) for n in schema.names) or "(none)"
        for name in kwargs:
            if name not in schema.by_name:
                raise KeyNotFoundError(
                    f"key {name!r}: {cls.__name__} has no field {name!r}; its fields are {fields}",
                    key=name,
                )
        for f in schema.fields:
            if f.required and f.name not in kwargs:
                raise FieldTypeError(
                    f"key {f.name!r}: the field {f.name!r} of {cls.__name__} is required; the "
                    f"mapping has {', '.join(repr(k) for k in kwargs) or 'no keys'}",
                    key=f.name,
                )
        return cls(**kwargs, batch_size=batch_size, device=device)

    @classmethod
    def _field_names(cls) -> tuple[str, ...]:
        return cls.__tensorclass_schema__.names

    @classmethod
    def fields(cls) -> tuple[Field, ...]:
        """The declared fields, in constructor order."""
        return cls.__tensorclass_schema__.fields

    def _set_field(self, name: str, value: Any) -> None:
        if type(self)._frozen:
            raise FrozenInstanceError(
                f"cannot assign field {name!r}: {type(self).__name__} is frozen"
            )
        self._set_str(name, value)

    def _field(self, key: str) -> Field:
        return type(self).__tensorclass_schema__.field(self, key)

    if not TYPE_CHECKING:
        # Hidden from type checkers: a __getattr__/__setattr__ would make every unknown
        # attribute of a tensor class type-check (as Any). Fields are declared instead.

        def __setattr__(self, name: str, value: Any) -> None:
            # Fast path: a plain tensor into a tensor field of an unlocked instance with no
            # device; the only check left is the batch-size prefix (one int for one dim).
            if (
                value.__class__ is Tensor
                and name in self._tensor_fields
                and not self._locked
                and self._device is None
            ):
                batch_size = self._batch_size
                shape = value.shape
                if len(batch_size) == 1:
                    if shape and shape[0] == batch_size[0]:
                        self._data[name] = value
                        return
                elif shape[: len(batch_size)] == batch_size:
                    self._data[name] = value
                    return
            if name in type(self).__tensorclass_schema__.by_name:
                self._set_field(name, value)
            elif name in _SLOT_NAMES or hasattr(getattr(type(self), name, None), "__set__"):
                object.__setattr__(self, name, value)
            else:
                raise AttributeError(
                    f"{type(self).__name__} has no field {name!r}; tensor classes store only "
                    f"their declared fields ({', '.join(self._field_names()) or 'none'}); "
                    f"declare it as a field or a ClassVar"
                )

        def __delattr__(self, name: str) -> None:
            if name in type(self).__tensorclass_schema__.by_name:
                self._set_field(name, None)
            else:
                object.__delattr__(self, name)

    def unlock_(self) -> Self:
        """Undo :meth:`lock_` (instances of frozen classes stay locked)."""
        if type(self)._frozen:
            raise FrozenInstanceError(f"{type(self).__name__} is frozen: it cannot be unlocked")
        return super().unlock_()

    def to_tensordict(self) -> TensorDict:
        """A :class:`TensorDict` with the same leaves (shared, not copied)."""
        return self._as_dynamic()

    @classmethod
    def load_memmap(
        cls,
        prefix: PathLike,
        *,
        classes: ClassPolicy | None = None,
        device: Any = None,
        num_threads: int = 0,
        validate: bool = True,
    ) -> Self:
        """Load a save made by :meth:`memmap` as this class (see ``tensorclass.load_memmap``).

        ``TensorDict.load_memmap`` gives plain TensorDicts at every level (``classes`` defaults
        to ``"tensordict"``); a typed class gives itself, with its declared nested classes,
        checked against their specs and annotations unless ``validate`` is false (problems
        raise ``pydantic.ValidationError``).
        """
        target: type[TensorCore] | None = None if cls is TensorClass else cls
        if classes is None:
            dynamic = target is not None and cls.__tensorclass_schema__.dynamic
            classes = "tensordict" if dynamic else "imported"
        return load_memmap(  # type: ignore[no-any-return]
            prefix,
            target,
            classes=classes,
            device=device,
            num_threads=num_threads,
            validate=validate,
        )

    # -- validation (tensorclass.validation) -------------------------------------------------

    @classmethod
    def validate(cls, data: Any, *, batch_size: Any = None) -> Self:
        """Check ``data`` against this class and return it as an instance (tensors shared).

        ``data`` is an instance of any tensor class, a ``TensorDict`` or a nested mapping;
        the batch size defaults to the instance's, or to what the ``*B`` dims imply.
        Raises ``pydantic.ValidationError`` listing every problem with its location.
        """
        from .validation import validate  # pydantic is imported on first use only

        return validate(data, cls, batch_size=batch_size)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of this class: fields, nested classes, tensor dtypes and shapes."""
        from .validation.pydantic_schema import json_schema  # on first use only

        return json_schema(cls)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """As a pydantic field: validated with :meth:`validate`; JSON dumps are refused."""
        from .validation.pydantic_schema import class_core_schema  # on first use only

        return class_core_schema(cls, handler)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> Any:
        """The class's JSON Schema inside pydantic models (see :meth:`json_schema`)."""
        from .validation.pydantic_schema import class_json_schema  # on first use only

        return class_json_schema(cls, schema, handler)


class _Blank(StorageMethods, TensorDictBase):
    """The memory layout of every tensor class, without its checking ``__setattr__``.

    ``TensorClass._new`` fills a ``_Blank`` with plain attribute stores and then assigns
    its ``__class__`` (CPython allows it between classes of the same layout).
    """


def _blank_for(cls: type) -> type | None:
    """``_Blank`` if its instances can become instances of ``cls`` (else None: a base with
    slots of its own changes the layout)."""
    probe = _object_new(_Blank)
    try:
        probe.__class__ = cls
    except TypeError:
        return None
    return _Blank


# Frames of these files are skipped when looking for the scope that defines a class.
_OWN_FILES = frozenset({__file__, os.path.join(os.path.dirname(__file__), "decorator.py")})
TensorClass.__tensorclass_schema__ = Schema("TensorClass", (), False, TensorClass)
_RESERVED = _reserved_names() | {"batch_size", "device", "names", "shape"}
