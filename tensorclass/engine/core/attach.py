"""Attaching class methods and properties written as functions, typed as the class they are on.

An instance operation is attached as a plain function (``permute = batch_dims.permute``).
Class methods and properties need a wrapper, and type checkers read ``classmethod(f)`` and
``property(f)`` assigned in a class body as ``Any``. These two wrappers are the same objects
at run time (subclasses of ``classmethod`` and ``property``) with signatures checkers follow:

- ``from_dict = class_op(instances.from_dict)``: ``Sub.from_dict(...)`` is a ``Sub``;
- ``dtype = op_property(elementwise.dtype)``: ``x.dtype`` has the function's return type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, Generic, TypeVar, overload

from typing_extensions import ParamSpec, Self

__all__ = ["class_op", "op_property"]

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")

if TYPE_CHECKING:
    _ClassMethod = classmethod
else:  # classmethod takes no type arguments at run time: subscripting gives it back

    class _ClassMethod(classmethod):
        def __class_getitem__(cls, item: object) -> type:
            return cls


class class_op(_ClassMethod[Any, P, Any], Generic[P]):
    """A class method from a function ``f(cls: type[E], ...) -> E``: called on a class, it
    returns an instance of that class.

    >>> class A:
    ...     make = class_op(lambda cls, n: cls())
    >>> type(A.make(1)).__name__
    'A'
    """

    def __init__(self, f: Callable[Concatenate[Any, P], Any]) -> None:
        super().__init__(f)

    def __get__(self, obj: object, owner: type[T] | None = None) -> Callable[P, T]:
        bound: Callable[P, T] = super().__get__(obj, owner)
        return bound


class op_property(property, Generic[R]):
    """A property from a getter function (and an optional setter), typed by the getter.

    >>> class A:
    ...     size = op_property(lambda self: 3)
    >>> A().size
    3
    """

    def __init__(
        self, fget: Callable[[Any], R], fset: Callable[[Any, Any], None] | None = None
    ) -> None:
        super().__init__(fget, fset)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> R: ...
    def __get__(self, obj: object, owner: type | None = None) -> Self | R:
        value: Self | R = super().__get__(obj, owner)
        return value
