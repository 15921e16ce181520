"""Lazy stacks as the operations below them see them: recognise one, build one.

``LazyStackedTensorDict`` (``engine/lazy/``) builds on the assembled classes, so the
operations attached to them (saving, loading, consolidating, sending...) cannot import it.
They ask here instead: the lazy module registers its class and its ``lazy_stack`` in
:mod:`tensorclass.registry` when it is imported, which the package does before any
operation can run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import TypeIs

from ...registry import lazy_class, lazy_stack_function
from .state import TensorCore

if TYPE_CHECKING:
    from ..lazy.leaves import LazyLeaves
    from ..lazy.stack import LazyStackedTensorDict

__all__ = ["is_lazy", "is_lazy_stack", "is_lazy_stack_class", "stack_lazily", "stacked_leaves"]

T = TypeVar("T")


def is_lazy(node: TensorCore) -> TypeIs[LazyStackedTensorDict]:
    """Whether ``node`` is a lazy stack: its storage is its members' (a ``LazyLeaves``, where
    a dense level's ``_data`` is a ``dict``), the one test of the engine."""
    return type(node._data) is not dict and hasattr(node._data, "members")


def is_lazy_stack(value: object) -> TypeIs[LazyStackedTensorDict]:
    """Whether ``value`` (anything) is a lazy stack (see :func:`is_lazy`)."""
    return isinstance(value, TensorCore) and is_lazy(value)


def is_lazy_stack_class(cls: Any) -> TypeIs[type[LazyStackedTensorDict]]:
    """Whether ``cls`` is ``LazyStackedTensorDict`` or a class derived from it."""
    return isinstance(cls, type) and issubclass(cls, lazy_class())


def stack_lazily(members: Sequence[T], dim: int = 0) -> T:
    """``lazy_stack(members, dim)``: the members kept, stacked along the new dim ``dim``."""
    stacked: T = lazy_stack_function()(members, dim)
    return stacked


def stacked_leaves(node: TensorCore) -> LazyLeaves | None:
    """The ``_data`` of ``node`` if it is a lazy stack (its ``members`` and stack ``dim``), else
    ``None``: a dense level's ``_data`` is a ``dict``, a lazy stack's a ``LazyLeaves``."""
    return cast("LazyLeaves", node._data) if is_lazy(node) else None
