"""Collecting every problem of one validation run into one ``pydantic.ValidationError``.

A run walks the whole instance, records each problem with its location and goes on, so
the error lists them all. The run also holds the symbolic-dim bindings (``H=84 from
obs.pixels``) shared by every field of the instance, nested instances included.
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_core.core_schema import ErrorType
from torch import Tensor
from typing_extensions import LiteralString

__all__ = ["Loc", "Problems", "TensorInput", "describe", "where"]

Loc = tuple[str | int, ...]
_BUILTIN_TYPES = frozenset(typing.get_args(ErrorType))


def where(loc: Loc) -> str:
    """A location as users write it: ``obs.pixels``."""
    return ".".join(str(part) for part in loc) or "(root)"


def describe(value: object) -> str:
    """A short description of a value's type, for messages."""
    return type(value).__name__


class TensorInput:
    """Stands for a tensor as the ``input`` of an error: a one-line repr, not the values.

    The tensor itself is ``.tensor``.
    """

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __repr__(self) -> str:
        t = self.tensor
        dtype = str(t.dtype).removeprefix("torch.")
        return f"tensor({dtype}{list(t.shape)}, device={t.device})"


def _input(value: object) -> object:
    return TensorInput(value) if isinstance(value, Tensor) else value


class Problems:
    """The problems found so far, and the symbolic-dim bindings.

    Attributes:
        errors: the problems, as pydantic error details.
        bindings: symbolic dim name -> (size, or sizes for ``*name``; where it was bound).
    """

    __slots__ = ("bindings", "errors")

    def __init__(self) -> None:
        self.errors: list[InitErrorDetails] = []
        self.bindings: dict[str, tuple[int | list[int], Loc]] = {}

    def add(
        self, loc: Loc, kind: LiteralString, template: LiteralString, value: object, **ctx: object
    ) -> None:
        """Record a problem of type ``kind``; ``template`` is formatted with ``ctx``."""
        error = PydanticCustomError(kind, template, ctx)
        self.errors.append(InitErrorDetails(type=error, loc=loc, input=_input(value)))

    def missing(self, loc: Loc, value: object) -> None:
        """A required field is absent (pydantic's ``missing`` error)."""
        self.errors.append(InitErrorDetails(type="missing", loc=loc, input=value))

    def extra(self, loc: Loc, value: object) -> None:
        """A key the schema does not declare (pydantic's ``extra_forbidden`` error)."""
        self.errors.append(InitErrorDetails(type="extra_forbidden", loc=loc, input=_input(value)))

    def extend(self, loc: Loc, error: ValidationError) -> None:
        """Add the errors of a pydantic validation below ``loc``."""
        for item in error.errors():
            kind: Any = item["type"]
            if kind not in _BUILTIN_TYPES:  # a user's custom error: keep its message
                kind = PydanticCustomError(kind, item["msg"])
            details = InitErrorDetails(type=kind, loc=(*loc, *item["loc"]), input=item["input"])
            if "ctx" in item and isinstance(kind, str):
                details["ctx"] = item["ctx"]
            self.errors.append(details)

    def raise_if_any(self, title: str) -> None:
        """Raise one ``ValidationError`` listing every problem, if there is any."""
        if self.errors:
            raise ValidationError.from_exception_data(title, self.errors)
