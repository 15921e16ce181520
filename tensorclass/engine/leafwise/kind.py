"""What a leaf-wise method is: a *kind* (typed signature, builder, docstring) and its entries.

The table of leaf-wise methods (:class:`~.table.LeafOps`) is one line per method,
``name = kind(function)``. A :class:`Kind` holds a stub whose parameters are the method's
(the signature type checkers see), a builder that makes the method from the function, and
a default docstring; calling it makes a :class:`LeafOp`, the entry. Type checkers see an
entry as a descriptor whose ``__get__`` returns a callable of the kind's signature returning
the receiver's own class; at run time the entry puts the plain function it built in its
place when its class is created (``__set_name__``), so a call costs what a hand-written
method costs, and records itself in :data:`TABLE`. The table is a :class:`Table`, a
namespace: on it an entry reads, for type checkers, as the entry itself, which
``engine/ops.py`` attaches to ``TensorOps`` (``cos = LeafOps.cos``).

The reductions whose result depends on their arguments (a tensor for ``reduce=True``...)
are :class:`TypedKind` s: their entries are the descriptor classes below, whose ``__get__``
gives type checkers the overloads of a protocol of ``reduction_calls.py``. The kinds
themselves are in ``elementwise_kinds.py`` and ``reduction_kinds.py``.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

import torch
from torch import Tensor
from typing_extensions import Self

from .reduction_calls import (
    CorrectionReductionCall,
    CorrectionReductionUnbound,
    DimsReductionCall,
    DimsReductionUnbound,
    DtypeReductionCall,
    DtypeReductionUnbound,
    ExtremumReductionCall,
    ExtremumReductionUnbound,
    NormReductionCall,
    NormReductionUnbound,
    PairScanCall,
    PairScanUnbound,
    QuantileReductionCall,
    QuantileReductionUnbound,
)

__all__ = [
    "TABLE",
    "Table",
    "CorrectionReductionOp",
    "DimsReductionOp",
    "DtypeReductionOp",
    "ExtremumReductionOp",
    "Kind",
    "LeafOp",
    "NormReductionOp",
    "PairScanOp",
    "QuantileReductionOp",
    "TypedKind",
]

P = ParamSpec("P")
F = TypeVar("F")
T = TypeVar("T")

#: every entry, by method name (tests/core/test_leaf_ops.py checks each one)
TABLE: dict[str, LeafOp[...]] = {}


def _shown(fn: Any) -> str:
    """How a docstring names ``fn``: ``torch.exp``, ``Tensor.exp_``, ``torch.float32``."""
    if isinstance(fn, torch.dtype):
        return str(fn)
    name = getattr(fn, "__name__", repr(fn))
    for prefix, namespace in (("torch", torch), ("Tensor", Tensor), ("operator", operator)):
        if getattr(namespace, name, None) is fn:
            return f"{prefix}.{name}"
    return str(name)


class Table:
    """A namespace of entries (the table, :class:`~.table.LeafOps`): for type checkers an
    entry read on it is the entry itself, so an assembly attaches it as it is
    (``cos = LeafOps.cos``) and types it on its own class."""

    __slots__ = ()


class Kind(Generic[P, F]):
    """A signature kind: the call signature ``P`` of its methods, and how one is built.

    ``signature`` is a stub whose parameters after ``self`` are the method's; ``build``
    makes the method (a function with the same parameters) from the function the entry
    names; ``doc`` is the default docstring (``{fn}`` is replaced by the function's name).
    Calling the kind makes a table entry: ``exp = unary(torch.exp)``.
    """

    __slots__ = ("build", "doc", "signature")

    def __init__(
        self,
        signature: Callable[Concatenate[Any, P], None],
        build: Callable[[F], Callable[..., Any]],
        doc: str,
    ) -> None:
        self.signature = signature
        self.build = build
        self.doc = doc

    @property
    def name(self) -> str:
        """The kind's name (its stub's, without the leading underscore)."""
        return self.signature.__name__.lstrip("_")

    def __call__(self, fn: F, doc: str | None = None) -> LeafOp[P]:
        """A table entry running ``fn`` over the leaves; ``doc`` replaces the default."""
        return LeafOp(self, fn, self.build(fn), doc or self.doc.format(fn=_shown(fn)))

    def __repr__(self) -> str:
        return f"<leaf-op kind {self.name}>"


class LeafOp(Generic[P]):
    """One entry of the table: a method of signature ``P`` returning the receiver's class.

    Type checkers read the entry through ``__get__``: ``obj.exp`` is a ``Callable[P, T]``
    for an ``obj`` of type ``T`` (subclasses and ``Self`` included) and ``Cls.exp`` a
    ``Callable[Concatenate[T, P], T]``. At run time the entry replaces itself on its class
    by the plain function it built (see ``__set_name__``).
    """

    __slots__ = ("doc", "fn", "function", "kind", "owner")

    def __init__(self, kind: Kind[P, Any], fn: Any, function: Callable[..., Any], doc: str):
        self.kind = kind
        self.fn = fn
        self.function = function
        self.doc = doc
        self.owner: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        function = self.function
        qualname = f"{owner.__qualname__}.{name}"
        code = function.__code__.replace(co_name=name)  # tracebacks name the method
        if sys.version_info >= (3, 11):
            code = code.replace(co_qualname=qualname)
        function.__code__ = code
        function.__name__ = name
        function.__qualname__ = qualname
        function.__module__ = owner.__module__
        function.__doc__ = self.doc
        # what users see is the kind's signature (the builder's annotations are internal)
        annotations = dict(self.kind.signature.__annotations__)
        annotations.pop("self", None)
        function.__annotations__ = {**annotations, "return": Self}
        self.owner = owner
        TABLE[name] = self
        setattr(owner, name, function)  # a plain function: no descriptor left on each call

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> Callable[Concatenate[T, P], T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> Callable[P, T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        # Only reached for an entry set on a class after its creation (no __set_name__).
        if obj is None:
            return self if isinstance(owner, type) and issubclass(owner, Table) else self.function
        return self.function.__get__(obj, owner)

    def __repr__(self) -> str:
        return f"{self.kind.name}({_shown(self.fn)})"


# -- kinds whose result depends on the arguments (reduce=True, key_transform, max(dim)) ------

OpT = TypeVar("OpT", bound="LeafOp[Any]")


class TypedKind(Kind[P, F], Generic[P, F, OpT]):
    """A kind whose entries are the descriptor class ``op``: its ``__get__`` gives type
    checkers the overloads of a protocol (``reduction_calls.py``) instead of ``P``."""

    __slots__ = ("op",)

    def __init__(
        self,
        signature: Callable[Concatenate[Any, P], None],
        build: Callable[[F], Callable[..., Any]],
        doc: str,
        op: type[OpT],
    ) -> None:
        super().__init__(signature, build, doc)
        self.op = op

    def __call__(self, fn: F, doc: str | None = None) -> OpT:
        return self.op(self, fn, self.build(fn), doc or self.doc.format(fn=_shown(fn)))


class DimsReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.DimsReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> DimsReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> DimsReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class DtypeReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.DtypeReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> DtypeReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> DtypeReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class CorrectionReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.CorrectionReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> CorrectionReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> CorrectionReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class QuantileReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.QuantileReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> QuantileReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> QuantileReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class ExtremumReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.ExtremumReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> ExtremumReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> ExtremumReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class PairScanOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.PairScanCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> PairScanUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> PairScanCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class NormReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.NormReductionCall`."""

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> NormReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> NormReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)
