"""``field()``: per-field options (defaults, factories, keyword-only) for tensor classes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

__all__ = ["MISSING", "FieldSpec", "field"]

T = TypeVar("T")


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _MissingType()
"""Marks an absent default."""


class FieldSpec:
    """What :func:`field` returns: the options of one field, read at class creation."""

    __slots__ = ("default", "default_factory", "kw_only", "metadata", "shown")

    def __init__(
        self,
        default: object,
        default_factory: Callable[[], object] | object,
        kw_only: bool,
        metadata: Mapping[str, object] | None,
        shown: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("a field cannot have both a default and a default_factory")
        self.default = default
        self.default_factory = default_factory
        self.kw_only = kw_only
        self.metadata = dict(metadata or {})
        #: whether the repr lists the field (``dataclasses.field(repr=False)`` hides it)
        self.shown = shown


@overload
def field(
    *, default: T, kw_only: bool = False, metadata: Mapping[str, object] | None = None
) -> T: ...


@overload
def field(
    *,
    default_factory: Callable[[], T],
    kw_only: bool = False,
    metadata: Mapping[str, object] | None = None,
) -> T: ...


@overload
def field(*, kw_only: bool = False, metadata: Mapping[str, object] | None = None) -> Any: ...


def field(
    *,
    default: object = MISSING,
    default_factory: Callable[[], object] | object = MISSING,
    kw_only: bool = False,
    metadata: Mapping[str, object] | None = None,
) -> Any:
    """Options for one field of a tensor class, like ``dataclasses.field``.

    >>> import torch
    >>> from tensorclass import TensorClass, field
    >>> class Episode(TensorClass):
    ...     reward: torch.Tensor
    ...     tags: list = field(default_factory=list)
    >>> Episode(reward=torch.zeros(3), batch_size=[3]).tags
    []

    Args:
        default: the value used when the argument is omitted.
        default_factory: a zero-argument callable giving a fresh default each time
            (use it for tensors and other mutable values).
        kw_only: the field can only be passed by keyword.
        metadata: free-form information kept on the field (read by validation and docs).
    """
    return FieldSpec(default, default_factory, kw_only, metadata)
