"""``TensorClass``: tensor classes with declared, typed fields.

A class body with annotations declares the fields (dataclass rules: defaults,
``field(default_factory=...)``, ``ClassVar`` excluded, ``__post_init__``). At class creation
the metaclass compiles a :class:`~tensorclass.schema.Schema` and generates ``__init__``.

Instances store their leaves in the instance ``__dict__``, so reading a tensor field is a
plain attribute read; writes go through ``__setattr__``, which checks the value.
"""

from __future__ import annotations

import dataclasses
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from typing_extensions import Self, Unpack

from .compiler import (
    TensorClassMeta,
    cast_option,
    install_schema,
    option_base,
    regenerate_init,
    resolve_annotations,
)
from .engine.base import TensorDictBase
from .engine.build.from_containers import _Options
from .engine.core.state import FAST_WRITE, TensorCore, fast_write
from .engine.storage.memmap.load import ClassPolicy
from .engine.storage.memmap.tensor import PathLike
from .errors import FieldTypeError, FrozenInstanceError, KeyNotFoundError
from .field_access import SLOT_NAMES
from .fields import field
from .loading import load_memmap
from .registry import register_typed_class
from .schema import Field, Schema, is_typed

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema, SchemaSerializer

    from ._typing import InitAttr, ReadOnlyAfterInit
    from .engine.core.state import BatchSizeLike, DeviceLike
    from .tensordict import TensorDict

__all__ = [
    "TensorClass",
    "TensorClassMeta",
    "install_schema",
    "is_tensorclass",
    "regenerate_init",
    "resolve_annotations",
    "tensor_class_of",
]

_NO_DEFAULT: Any = None  # the declared default of batch_size/device/names (typing only)


def _retain_none(source: TensorCore, target: TensorCore) -> None:
    """Write ``None`` into ``target`` for every unset field of ``source`` (recursively)."""
    for key, leaf in source._data.items():
        if isinstance(leaf, TensorCore):
            nested = leaf._as_dynamic()
            _retain_none(leaf, nested)
            target._data[key] = nested
    for name in type(source).__tensorclass_schema__.names:
        if name not in target._data:
            target._set_str(name, None)


class _DataclassOptions(_Options, total=False):
    """The keywords of :meth:`TensorClass._from_dataclass`: the batch keywords of every
    ``from_*`` constructor, the class to build (``dest_cls``), the class options
    (``frozen``, ``autocast``, ``nocast``, ``shadow``, ``tensor_only``) and ``inplace``."""

    dest_cls: type | None
    frozen: bool
    autocast: bool
    nocast: bool
    shadow: bool
    tensor_only: bool
    inplace: bool


class _PydanticSerializer:
    """``__pydantic_serializer__``: pydantic's Python dumps keep tensor-class instances
    (built on first use: pydantic is imported by the programs that use it only)."""

    def __get__(self, obj: object, owner: type | None = None) -> SchemaSerializer:
        from .validation.pydantic_schema import kept_as_is  # pydantic, on first use only

        return kept_as_is()


#: the options of ``TensorClass[...]`` (see ``TensorClass.__class_getitem__``)
_CLASS_OPTIONS = ("autocast", "frozen", "nocast", "shadow", "tensor_only")
#: the base class made for each set of options, made once
_OPTION_BASES: dict[frozenset[str], type[TensorClass]] = {}


class TensorClass(TensorDictBase, metaclass=TensorClassMeta):
    """Base class of typed tensor classes: declared fields, one batch shape.

    >>> import torch
    >>> from tensorclass import TensorClass
    >>> class Batch(TensorClass):
    ...     images: torch.Tensor
    ...     labels: torch.Tensor
    >>> batch = Batch(torch.zeros(8, 3, 4, 4), torch.arange(8), batch_size=[8])
    >>> batch[:2]
    Batch(batch_size=[2], fields={images: f32[3,4,4], labels: i64[]})
    >>> batch.reshape(2, 4).labels.shape
    torch.Size([2, 4])

    ``class X(TensorClass, frozen=True)`` forbids reassigning fields;
    ``class X(TensorClass, validate=True)`` checks specs and annotations on construction.
    """

    __slots__ = ()  # TensorDict has no instance __dict__; typed subclasses get one
    __tensorclass_schema__: ClassVar[Schema]
    __pydantic_serializer__: ClassVar[_PydanticSerializer] = _PydanticSerializer()

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

    def __class_getitem__(cls, options: str | tuple[str, ...]) -> type[TensorClass]:
        """``class X(TensorClass["frozen"])``: tensordict's spelling of class options, a base
        class to derive from. ``"frozen"`` is ``frozen=True``; ``"tensor_only"`` makes
        every field a tensor or a nested tensor class (checked when a subclass is
        defined); ``"nocast"`` keeps numbers and text written to a tensor field as they
        are (``x: torch.Tensor`` holds ``1``); ``"autocast"`` converts a value to its
        field's type (``int(2.7)`` for an ``int`` field, ``str(3)`` for a ``str`` one;
        tensor fields convert as always); ``"shadow"`` lets a field take the name of a tensor-class method or
        attribute (``get``, ``data``, ``keys``...), hiding it on that class (the engine does
        not read it there); ``batch_size``, ``device``, ``names``, ``shape``, ``batch_dims``,
        ``ndim``, ``fields`` and names starting with ``_`` stay refused. Several options
        combine (``TensorClass["frozen", "tensor_only"]``), except ``"autocast"``,
        ``"nocast"`` and ``"tensor_only"``, which exclude each other."""
        return option_base(TensorClass, cls, options, _CLASS_OPTIONS, _OPTION_BASES, "tensorclass")

    @classmethod
    def _from_mapping(
        cls, mapping: Mapping[Any, Any], batch_size: torch.Size, device: torch.device | None
    ) -> Self:
        if cls.__tensorclass_schema__.extra_keys:  # its constructor takes the mapping itself
            build: Any = cls
            return build(mapping, batch_size=batch_size, device=device)  # type: ignore[no-any-return]
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
    def _from_dataclass(cls, obj: object, **options: Unpack[_DataclassOptions]) -> object:
        """A dataclass type as a tensor class, or a dataclass instance as an instance of one
        (``dest_cls``, or the class made for its type; the batch keywords go to its
        ``from_dataclass``): see ``tensorclass.from_dataclass``."""
        dest_cls = options.pop("dest_cls", None)
        frozen = options.pop("frozen", False)
        shadow = options.pop("shadow", False)
        tensor_only = options.pop("tensor_only", False)
        inplace = options.pop("inplace", False)
        cast = cast_option(
            options.pop("autocast", False), options.pop("nocast", False), tensor_only
        )
        cast = "annotation" if cast is None else cast
        if isinstance(obj, type):
            if inplace and not isinstance(obj, TensorClassMeta):
                raise TypeError(
                    f"from_dataclass({obj.__name__}, inplace=True): a dataclass cannot become a "
                    f"tensor class in place here (a tensor class has its own metaclass and "
                    f"storage); use the class it returns with inplace=False, or declare "
                    f"{obj.__name__} with @tensorclass"
                )
            return tensor_class_of(obj, frozen, cast, shadow=shadow, tensor_only=tensor_only)
        if not dataclasses.is_dataclass(obj):
            raise TypeError(
                f"from_dataclass expects a dataclass or an instance of one; got {obj!r}"
            )
        target: Any = dest_cls
        if target is None:
            target = tensor_class_of(
                type(obj), frozen, cast, shadow=shadow, tensor_only=tensor_only
            )
        return target.from_dataclass(obj, **options)

    @classmethod
    def _field_names(cls) -> tuple[str, ...]:
        return cls.__tensorclass_schema__.names

    @classmethod
    def fields(cls) -> tuple[Field, ...]:
        """The declared fields, in constructor order."""
        return cls.__tensorclass_schema__.fields

    def _set_field(self, name: str, value: object) -> None:
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

        @FAST_WRITE
        def __setattr__(self, name: str, value: object) -> None:
            # Fast path: a plain tensor into a tensor field of an unlocked instance with no
            # device; the only check left is the batch-size prefix (state.fast_write, inlined).
            if fast_write(self, name, value):
                self._data[name] = value
                return
            if name in type(self).__tensorclass_schema__.by_name:
                self._set_field(name, value)
            elif name in SLOT_NAMES or hasattr(getattr(type(self), name, None), "__set__"):
                object.__setattr__(self, name, value)
            elif type(self).__tensorclass_schema__.extra_keys:
                raise AttributeError(
                    f"{type(self).__name__} has no field {name!r}; write a key that is not a "
                    f"field by key: x[{name!r}] = value"
                )
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

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """A :class:`TensorDict` with the same leaves (shared, not copied).

        ``retain_none=True`` also lists the unset fields of a typed class, as ``None``
        (nested instances included); by default they are left out.
        """
        result = self._as_dynamic()
        if retain_none:
            _retain_none(self, result)
        return result

    @classmethod
    def load_memmap(
        cls,
        prefix: PathLike,
        device: Any = None,
        non_blocking: bool = False,
        *,
        classes: ClassPolicy | None = None,
        out: Any = None,
        robust_key: bool | None = None,
        subpath: str | tuple[str, ...] | None = None,
        mode: str | None = None,
        num_threads: int = 0,
        allow_pickle: bool | None = None,
        validate: bool = True,
    ) -> Self:
        """Load a save made by :meth:`memmap` as this class (see ``tensorclass.load_memmap``,
        which describes ``device``, ``non_blocking``, ``out``, ``subpath``, ``mode``,
        ``robust_key``, ``num_threads`` and ``allow_pickle``).

        A typed class gives itself (for the level at ``subpath`` if given), with its
        declared nested classes, checked against their specs and annotations unless
        ``validate`` is false (problems raise ``pydantic.ValidationError``).
        ``TensorDict.load_memmap`` gives back the recorded classes, as
        ``tensorclass.load_memmap`` does (``classes="tensordict"``: plain TensorDicts at
        every level).
        """
        dynamic = cls.__tensorclass_schema__.dynamic
        target: Any = cls  # a class, or None: the recorded classes
        if cls is TensorClass or (dynamic and classes != "tensordict"):
            target = None  # the recorded classes
        if classes is None:
            classes = "imported"
        return load_memmap(  # type: ignore[no-any-return]
            prefix,
            target,
            non_blocking,
            classes=classes,
            device=device,
            out=out,
            robust_key=robust_key,
            subpath=subpath,
            mode=mode,
            num_threads=num_threads,
            allow_pickle=allow_pickle,
            validate=validate,
        )

    # -- validation (tensorclass.validation) -------------------------------------------------

    @classmethod
    def validate(cls, data: object, *, batch_size: Any = None) -> Self:
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
    def __get_pydantic_core_schema__(
        cls, source: object, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        """As a pydantic field: validated with :meth:`validate`; JSON dumps are refused."""
        from .validation.pydantic_schema import class_core_schema  # on first use only

        return class_core_schema(cls, handler)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The class's JSON Schema inside pydantic models (see :meth:`json_schema`)."""
        from .validation.pydantic_schema import class_json_schema  # on first use only

        return class_json_schema(cls, schema, handler)


TensorClass.__tensorclass_schema__ = Schema("TensorClass", (), False, TensorClass)
register_typed_class(TensorClass)  # the engine makes tensor classes of dataclasses through it


#: the class options of a tensor class made from a dataclass: frozen, casting, shadow,
#: tensor_only
_Options4 = tuple[bool, str, bool, bool]

#: the tensor class made for each dataclass (and each set of class options), made once
_of_dataclass: weakref.WeakKeyDictionary[type, dict[_Options4, type]] = weakref.WeakKeyDictionary()


def _as_field_type(annotation: object, options: _Options4) -> object:
    """A dataclass annotation for the tensor class: a dataclass type (alone or in
    ``X | None``) becomes its tensor class (with the same class options), so nested
    dataclasses become nested levels."""
    frozen, cast, shadow, tensor_only = options
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return tensor_class_of(annotation, frozen, cast, shadow=shadow, tensor_only=tensor_only)
    args = typing.get_args(annotation)
    if len(args) == 2 and type(None) in args:
        inner = next(arg for arg in args if arg is not type(None))
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            nested = tensor_class_of(inner, frozen, cast, shadow=shadow, tensor_only=tensor_only)
            return typing.Optional[nested]  # noqa: UP045
    return annotation


def _returning(value: object) -> Callable[[], object]:
    """A default factory that gives ``value`` itself."""
    return lambda: value


def tensor_class_of(
    dataclass: type,
    frozen: bool = False,
    cast: str = "annotation",
    *,
    shadow: bool = False,
    tensor_only: bool = False,
) -> type:
    """The tensor class with the fields of a dataclass type (``<Name>_tc``), made once per
    dataclass and set of class options (``frozen``, ``cast``: ``"annotation"``,
    ``"nocast"`` or ``"autocast"``, ``shadow``, ``tensor_only``: as ``TensorClass[...]``);
    a tensor class is returned as it is.

    >>> import dataclasses, torch
    >>> @dataclasses.dataclass
    ... class Data:
    ...     obs: torch.Tensor
    ...     label: str = "a"
    >>> DataTC = tensor_class_of(Data)
    >>> DataTC.__name__, [f.name for f in DataTC.fields()]
    ('Data_tc', ['obs', 'label'])
    >>> tensor_class_of(Data) is DataTC
    True
    """
    if isinstance(dataclass, TensorClassMeta):
        return dataclass
    if not (isinstance(dataclass, type) and dataclasses.is_dataclass(dataclass)):
        raise TypeError(f"expected a dataclass type; got {dataclass!r}")
    made = _of_dataclass.setdefault(dataclass, {})
    options: _Options4 = (frozen, cast, shadow, tensor_only)
    if options in made:
        return made[options]
    try:
        hints = typing.get_type_hints(dataclass)
    except (NameError, TypeError):
        hints = {}
    annotations: dict[str, object] = {}
    namespace: dict[str, object] = {
        "__module__": dataclass.__module__,
        "__qualname__": f"{dataclass.__qualname__}_tc",
        "__doc__": dataclass.__doc__,
        "__annotations__": annotations,
    }
    for f in dataclasses.fields(dataclass):
        annotations[f.name] = _as_field_type(hints.get(f.name, f.type), options)
        kw_only = f.kw_only is True
        if f.default_factory is not dataclasses.MISSING:
            namespace[f.name] = field(default_factory=f.default_factory, kw_only=kw_only)
        elif f.default is not dataclasses.MISSING:
            default = f.default
            if isinstance(default, torch.Tensor):  # shared by every instance, as there
                namespace[f.name] = field(default_factory=_returning(default), kw_only=kw_only)
            else:
                namespace[f.name] = field(default=default, kw_only=kw_only)
        elif kw_only:
            namespace[f.name] = field(kw_only=True)
    name = f"{dataclass.__name__}_tc"
    made[options] = TensorClassMeta(
        name,
        (TensorClass,),
        namespace,
        frozen=frozen,
        cast=None if cast == "annotation" else cast,
        shadow=shadow or None,
        tensor_only=tensor_only or None,
    )
    return made[options]


def is_tensorclass(obj: object) -> bool:
    """Whether ``obj`` is a tensor class with declared fields (not ``TensorDict``) or an
    instance of one."""
    klass = obj if isinstance(obj, type) else type(obj)
    return is_typed(klass) and klass is not TensorClass
