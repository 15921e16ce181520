"""The type of ``self`` in the lazy-stack operations, functions attached to
``LazyStackedTensorDict`` (see :mod:`..core.self_types` for the engine's ``E``).

The bound is the lazy-stack class, named here for type checkers only (an annotation, not an
import at run time): a lazy-stack operation may call any other operation as a method,
the lazy stack's own (``self._lazy``, ``self._restack(...)``) included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .stack import LazyStackedTensorDict

__all__ = ["S"]

#: ``self`` of an operation attached to ``LazyStackedTensorDict``.
S = TypeVar("S", bound="LazyStackedTensorDict")
