"""The type of ``self`` in the engine's operations, which are functions attached to classes.

An operation is a module-level function in the folder of its concept, typed against the
class it is attached to::

    def permute(self: E, *dims: int) -> E: ...

and attached in one place (``engine/ops.py`` or ``engine/base.py``) as ``permute =
batch_dims.permute``. Type checkers bind ``E`` to the class of the instance, so
``Sub().permute(1, 0)`` is a ``Sub``, exactly as a method returning ``Self``.

The bound is the assembled class, named here for type checkers only (an annotation, not an
import at run time): an operation may call any other operation as a method
(``self.apply(...)``), so a class that overrides one (a lazy stack overrides writes and
indexing) is still honoured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

from typing_extensions import TypeIs

from .state import TensorCore

if TYPE_CHECKING:
    from ..base import TensorDictBase
    from ..ops import TensorOps

    #: What ``isinstance(leaf, Node)`` tests: a nested instance. At run time the state class
    #: every instance derives from; for type checkers the assembled class, so a nested leaf
    #: has every operation (``leaf.apply(...)``).
    Node = TensorOps
else:
    Node = TensorCore

__all__ = ["B", "E", "Node", "as_op", "is_op", "typed_as"]

#: ``self`` of an operation attached to ``TensorOps``: every class, lazy stacks included.
E = TypeVar("E", bound="TensorOps")
#: ``self`` of a storage or scale operation attached to ``TensorDictBase``.
B = TypeVar("B", bound="TensorDictBase")
_F = TypeVar("_F", bound="Callable[..., object]")


def is_op(value: object) -> TypeIs[TensorOps]:
    """Whether ``value`` is an instance of the engine (a nested level, say), typed as
    ``TensorOps`` so that its operations can be called as methods (every concrete class
    deriving from ``TensorCore`` is one)."""
    return isinstance(value, TensorCore)


def as_op(value: TensorCore) -> TensorOps:
    """``value`` typed as ``TensorOps``, so that its operations can be called as methods:
    for a value typed ``TensorCore`` (a frozen public signature's ``out=``, say) that is an
    instance, as every one is (``TensorOps`` is the one class deriving from ``TensorCore``).
    """
    return cast("TensorOps", value)


def typed_as(stub: _F, function: Callable[..., object]) -> _F:
    """``function`` typed as ``stub``: one overloaded stub typed ``self: E`` is the signature
    type checkers see of several operations built at run time by one factory (``all`` and
    ``any``); attached in a class, each binds as a method (the stub is a function)."""
    return cast(_F, function)
