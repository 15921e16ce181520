"""``@tensorclass``: the decorator spelling of ``class X(TensorClass)``.

The decorator rebuilds the class with :class:`~tensorclass.TensorClass` among its bases, so
both spellings give the same kind of class at run time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar, overload

from typing_extensions import dataclass_transform

from .annotations import skip_frames_of
from .compiler import CAST, SHADOW, TENSOR_ONLY, cast_option
from .errors import SchemaError
from .fields import FieldSpec, field
from .typed import TensorClass, TensorClassMeta

__all__ = ["tensorclass"]

C = TypeVar("C", bound=type)


def _retarget_class_cells(namespace: dict[str, object], old: type, new: type) -> None:
    """Point the ``__class__`` cells of methods (zero-argument ``super()``) at ``new``."""
    for value in namespace.values():
        functions: list[Any] = [value]
        if isinstance(value, (classmethod, staticmethod)):
            functions = [value.__func__]
        elif isinstance(value, property):
            functions = [value.fget, value.fset, value.fdel]
        for function in functions:
            code = getattr(function, "__code__", None)
            if code is None or "__class__" not in code.co_freevars:
                continue
            cell = function.__closure__[code.co_freevars.index("__class__")]
            if cell.cell_contents is old:
                cell.cell_contents = new


def _generated(key: str, value: object) -> bool:
    """Whether a class attribute was made for the old class (schema, caches, ``__init__``)."""
    if key.startswith("__tensorclass_"):
        return True
    return key == "__init__" and getattr(value, "__tensorclass_generated__", False)


def _rebuild(
    cls: type,
    frozen: bool | None,
    validate: bool | None = None,
    kw_only: bool | None = None,
    tensor_only: bool | None = None,
    shadow: bool | None = None,
    cast: str | None = None,
) -> type:
    if isinstance(cls, TensorClassMeta):
        schema = cls.__tensorclass_schema__  # type: ignore[attr-defined]
        if (
            (frozen is None or frozen == schema.frozen)
            and (validate is None or validate == schema.validate)
            and kw_only is None
            and (tensor_only is None or tensor_only == getattr(cls, TENSOR_ONLY, False))
            and (shadow is None or shadow == getattr(cls, SHADOW, False))
            and (cast is None or cast == getattr(cls, CAST, "annotation"))
        ):
            return cls
    if "__slots__" in cls.__dict__:
        raise SchemaError(f"{cls.__name__}: tensor classes store their fields; drop __slots__")
    namespace = {
        key: value
        for key, value in cls.__dict__.items()
        if key not in ("__dict__", "__weakref__") and not _generated(key, value)
    }
    if isinstance(cls, TensorClassMeta):  # its defaults live in its schema: put them back
        own = inspect.get_annotations(cls)
        for f in cls.__tensorclass_schema__.fields:  # type: ignore[attr-defined]
            if f.name in own:
                namespace[f.name] = FieldSpec(f.default, f.default_factory, f.kw_only, f.metadata)
    bases = tuple(base for base in cls.__bases__ if base is not object)
    if not any(issubclass(base, TensorClass) for base in bases):
        bases = (*bases, TensorClass)
    options: dict[str, bool] = {} if kw_only is None else {"kw_only": kw_only}
    if tensor_only is not None:
        options["tensor_only"] = tensor_only
    if shadow is not None:
        options["shadow"] = shadow
    new = TensorClassMeta(
        cls.__name__, bases, namespace, frozen=frozen, validate=validate, cast=cast, **options
    )
    new.__qualname__ = cls.__qualname__
    _retarget_class_cells(namespace, cls, new)
    return new


@overload
def tensorclass(cls: C, /) -> C: ...


@overload
def tensorclass(
    *,
    frozen: bool = False,
    validate: bool = False,
    kw_only: bool = False,
    tensor_only: bool = False,
    shadow: bool = False,
    autocast: bool = False,
    nocast: bool = False,
) -> Callable[[C], C]: ...


# eq_default=False: ``==`` is the engine's elementwise comparison, not a synthesized one
@dataclass_transform(eq_default=False, field_specifiers=(field,))
def tensorclass(
    cls: Any = None,
    /,
    *,
    frozen: bool | None = None,
    validate: bool | None = None,
    kw_only: bool | None = None,
    tensor_only: bool | None = None,
    shadow: bool | None = None,
    autocast: bool | None = None,
    nocast: bool | None = None,
) -> Any:
    """Turn a class with annotated fields into a tensor class.

    >>> import torch
    >>> from tensorclass import tensorclass
    >>> @tensorclass
    ... class Pair:
    ...     left: torch.Tensor
    ...     right: torch.Tensor
    >>> pair = Pair(torch.zeros(4, 2), torch.ones(4), batch_size=[4])
    >>> torch.stack([pair, pair]).batch_size
    torch.Size([2, 4])

    ``@tensorclass(frozen=True)`` forbids reassigning fields; ``@tensorclass(validate=True)``
    checks specs and annotations on construction; ``@tensorclass(kw_only=True)`` makes
    every field keyword-only in ``__init__``; ``@tensorclass(tensor_only=True)`` (as
    ``TensorClass["tensor_only"]``) requires every field to be a tensor or a nested tensor
    class (a ``TypeError`` at definition otherwise); ``@tensorclass(shadow=True)`` (as
    ``TensorClass["shadow"]``) lets a field take the name of a tensor-class method;
    ``nocast=True`` keeps numbers and text written to tensor fields as they are and
    ``autocast=True`` converts values to their field's type (``TensorClass["nocast"]``,
    ``TensorClass["autocast"]``; they exclude each other and ``tensor_only``). Applied to a class that already derives
    from :class:`TensorClass`, the decorator changes nothing unless an option differs.
    """
    cast = cast_option(autocast, nocast, tensor_only)
    if cls is None:
        return lambda klass: _rebuild(klass, frozen, validate, kw_only, tensor_only, shadow, cast)
    if not isinstance(cls, type):
        raise TypeError(f"@tensorclass decorates classes; got {type(cls).__name__}")
    return _rebuild(cls, frozen, validate, kw_only, tensor_only, shadow, cast)


skip_frames_of(__file__)  # classes rebuilt here take the names of the decorated scope
