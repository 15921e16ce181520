"""Descriptor types that tell type checkers about ``batch_size``, ``device`` and ``names``.

``TensorClass`` declares these three as keyword-only fields, for type checkers only (the
declarations sit under ``TYPE_CHECKING``; at run time they are properties of the engine and
keyword-only parameters of the generated ``__init__``). Under ``dataclass_transform``, a
field whose type is a descriptor takes the type of ``__set__``'s value as its ``__init__``
parameter, and reads give the type of ``__get__``. So one declaration says both "the
constructor accepts ``batch_size=[8]``" and "``x.batch_size`` is a ``torch.Size``".
"""

from __future__ import annotations

from typing import Generic, NoReturn, TypeVar, overload

from typing_extensions import Self

__all__ = ["InitAttr", "ReadOnlyAfterInit"]

Get = TypeVar("Get")
Set = TypeVar("Set")


class InitAttr(Generic[Get, Set]):
    """An attribute read as ``Get`` and assigned (or passed to ``__init__``) as ``Set``."""

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Get: ...

    def __get__(self, obj: object, owner: type | None = None) -> Self | Get:
        raise NotImplementedError  # never instantiated: type checkers read the signature

    def __set__(self, obj: object, value: Set) -> None:
        raise NotImplementedError


class ReadOnlyAfterInit(Generic[Get, Set]):
    """An attribute read as ``Get``, passed to ``__init__`` as ``Set``, never assigned.

    Assigning it is a type error: ``__set__`` accepts no instance (its ``obj`` is ``Never``).
    """

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Get: ...

    def __get__(self, obj: object, owner: type | None = None) -> Self | Get:
        raise NotImplementedError

    def __set__(self, obj: NoReturn, value: Set) -> None:
        raise NotImplementedError
