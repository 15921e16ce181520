"""The table of leaf-wise methods: one line each, ``name = kind(function)``.

A leaf-wise method runs one torch function over every tensor leaf (at every depth) and
returns an instance of the receiver's class; non-tensor leaves are kept. What varies from
one method to the next is only the function and the call signature, so the methods are
entries of the :class:`LeafOps` table, each naming its *kind*:

- :data:`unary` ``x.exp()``; :data:`unary_inplace` ``x.exp_()`` (returns ``x``);
  :data:`nan_replace` ``x.nan_to_num(nan=0.0, posinf=None, neginf=None)`` and
  :data:`nan_replace_inplace`;
- :data:`binary` ``x.mul(other, *, default=None)``, :data:`binary_alpha`
  ``x.add(other, *, alpha=None, default=None)`` and their in-place forms
  :data:`binary_inplace`, :data:`binary_alpha_inplace` (``other`` is a number, a tensor
  or an instance paired by key; elementwise.py says how a tensor lines up with the
  leaves; ``default`` fills keys only one instance has); :data:`reversed_alpha`
  ``x.rsub(other, *, alpha=None, default=None)``;
- :data:`ternary_value` ``x.addcmul(other1, other2, *, value=1)`` and
  :data:`ternary_value_inplace`; :data:`ternary` ``x.lerp(end, weight)``;
- :data:`cast` ``x.float(*, cast_filter=None)``; :data:`cast_to`
  ``x.type(dst_type, *, cast_filter=None)``;
- :data:`reduction` ``x.amax(dim=None, keepdim=False, *, reduce=None, key_transform=None)``,
  :data:`reduction_dtype` (and ``dtype=None``), :data:`reduction_correction` (and
  ``correction=1``), :data:`quantiles` (``q`` first): over every element (``dim=None``),
  over batch dims or over each leaf's feature dims (``dim="feature"``); ``reduce=True``
  gives one tensor, ``key_transform`` renames the keys (see ``reductions.py``);
  :data:`reduction_one_dim` (``dim`` is one int);
- :data:`reduction_indices` ``x.max(dim=None, keepdim=False, *, reduce=None,
  return_indices=True)`` and :data:`scan_indices` ``x.cummax(dim, ...)``: values and
  indices (:class:`~.reductions.ValuesIndices`) along a dim; :data:`scan` ``x.cumsum(dim,
  dtype=None)`` (the batch size kept); :data:`batch_reduction` ``x.logsumexp(dim=None,
  keepdim=False, *, out=None)`` (batch dims only); :data:`leaf_norm` ``x.norm(*, ...)``.

The reductions whose result depends on their arguments (a tensor for ``reduce=True``...)
are :class:`TypedKind` s: their entries give type checkers the overloads of a protocol of
``reduction_calls.py``.

A kind is a typed signature (a stub), a builder that makes the method from the function,
and a default docstring. Type checkers see each entry as a :class:`LeafOp` descriptor whose
``__get__`` returns a callable of the kind's signature returning the receiver's own class.
At run time no descriptor is left: when the table's class is created each entry puts a
plain function in its place, so a call costs what a hand-written method costs.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(2, 3)}}, [2])
>>> td.exp()["a"]
tensor([1., 1.])
>>> td.sum(0)["b", "c"]
tensor([2., 2., 2.])
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Concatenate, Generic, Literal, ParamSpec, Protocol, TypeVar, overload

import torch
from torch import Tensor
from typing_extensions import Self

from ..errors import OperandError
from . import leaf_functions
from ._core import TensorCore
from .functional import Functional
from .keys import shown_key
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
from .reductions import (
    ValuesIndices,
    every_dim,
    leaf_pairs,
    one_dim,
    reduce_all,
    reduce_all_pairs,
    reduce_leaves,
    rename_keys,
    scan_leaves,
)

__all__ = [
    "QUANTIZED",
    "TABLE",
    "CastFilter",
    "Default",
    "Kind",
    "LeafOp",
    "LeafOps",
    "binary",
    "binary_alpha",
    "binary_alpha_inplace",
    "binary_inplace",
    "TypedKind",
    "batch_reduction",
    "cast",
    "cast_to",
    "nan_replace",
    "nan_replace_inplace",
    "leaf_norm",
    "over_dims",
    "quantiles",
    "reduction",
    "reduction_correction",
    "reduction_dtype",
    "reduction_indices",
    "reduction_one_dim",
    "reversed_alpha",
    "ternary",
    "ternary_value",
    "ternary_value_inplace",
    "scan",
    "scan_indices",
    "unary",
    "unary_inplace",
]

P = ParamSpec("P")
F = TypeVar("F")
T = TypeVar("T")

_transforms_active = torch._C._are_functorch_transforms_active


class _Engine(Protocol):
    """What the generated methods call on their receiver (the engine's mixins provide it)."""

    def _map_tensors(self, fn: Callable[[Tensor], Tensor]) -> Any: ...
    def _binary(
        self,
        op: Callable[[Any, Any], Any],
        other: Any,
        reflected: bool = False,
        default: Any = None,
    ) -> Any: ...
    def _inplace(self, op: Callable[[Any, Any], Any], other: Any) -> Any: ...
    def _reduce(self, fn: Callable[..., Tensor], dim: Any, keepdim: bool, **kwargs: Any) -> Any: ...
    def _own_tensors(self) -> list[Tensor]: ...
    def to(self, dtype: torch.dtype, /) -> Any: ...
    def _nary(
        self, fn: Callable[..., Tensor], operands: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any: ...
    def _nary_inplace(
        self, fn: Callable[..., Tensor], operands: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any: ...
    def _cast_leaves(
        self,
        convert: Callable[[Tensor], Tensor] | None,
        dtype: torch.dtype | str,
        cast_filter: Callable[[tuple[str, ...], Tensor], bool] | None,
    ) -> Any: ...


#: every entry, by method name (tests/core/test_leaf_ops.py checks each one)
TABLE: dict[str, LeafOp[...]] = {}
#: the quantized dtypes: a cast to one is an error for a leaf not already of it (torch
#: quantizes with a scale and zero point, which a plain cast has not)
QUANTIZED = frozenset({torch.qint8, torch.qint32, torch.quint8, torch.quint4x2, torch.quint2x4})


def _shown(fn: Any) -> str:
    """How a docstring names ``fn``: ``torch.exp``, ``Tensor.exp_``, ``torch.float32``."""
    if isinstance(fn, torch.dtype):
        return str(fn)
    name = getattr(fn, "__name__", repr(fn))
    for prefix, namespace in (("torch", torch), ("Tensor", Tensor), ("operator", operator)):
        if getattr(namespace, name, None) is fn:
            return f"{prefix}.{name}"
    return str(name)


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
    def __get__(self, obj: None, owner: type[T]) -> Callable[Concatenate[T, P], T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> Callable[P, T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        # Only reached for an entry set on a class after its creation (no __set_name__).
        return self.function if obj is None else self.function.__get__(obj, owner)

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
    def __get__(self, obj: None, owner: type[T]) -> DimsReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> DimsReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class DtypeReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.DtypeReductionCall`."""

    __slots__ = ()

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
    def __get__(self, obj: None, owner: type[T]) -> CorrectionReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> CorrectionReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class QuantileReductionOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.QuantileReductionCall`."""

    __slots__ = ()

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
    def __get__(self, obj: None, owner: type[T]) -> ExtremumReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> ExtremumReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


class PairScanOp(LeafOp[...]):
    """A table entry typed as :class:`~.reduction_calls.PairScanCall`."""

    __slots__ = ()

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
    def __get__(self, obj: None, owner: type[T]) -> NormReductionUnbound[T]: ...

    @overload
    def __get__(self, obj: T, owner: type[Any] | None = None) -> NormReductionCall[T]: ...

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        return LeafOp.__get__(self, obj, owner)


# -- the kinds: a stub (the signature), a builder (the method), a default docstring ----------


def _unary(self: Any) -> None:
    """``x.exp()``"""


def _build_unary(fn: Callable[[Tensor], Tensor]) -> Callable[..., Any]:
    def method(self: _Engine) -> Any:
        return self._map_tensors(fn)

    return method


unary = Kind(_unary, _build_unary, "Element-wise ``{fn}`` of every tensor leaf.")


def _unary_inplace(self: Any) -> None:
    """``x.exp_()``"""


def _build_unary_inplace(fn: Callable[[Tensor], Tensor]) -> Callable[..., Any]:
    fused = getattr(torch, f"_foreach_{fn.__name__}", None)

    def method(self: _Engine) -> Any:
        # The stored tensors (a lazy stack's are its members'), each once.
        leaves = list({id(t): t for t in self._own_tensors()}.values())
        _check_unary_inplace(self, fn, leaves)
        if fused is not None and leaves and not _transforms_active():
            fused(leaves)
        else:
            for leaf in leaves:
                fn(leaf)
        return self

    return method


unary_inplace = Kind(
    _unary_inplace,
    _build_unary_inplace,
    "``{fn}`` on every tensor leaf, in place; returns ``self``. Every leaf is checked "
    "first: a leaf that cannot take the result is an error and no leaf is changed.",
)


#: ``default=`` of the binary methods: what stands in for a key only one operand has
Default = Literal["intersection"] | complex | Tensor | None


def _binary(self: Any, other: Any, *, default: Default = None) -> None:
    """``x.mul(other, *, default=None)``"""


def _build_binary(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def method(self: _Engine, other: Any, *, default: Default = None) -> Any:
        if default is None:
            return self._binary(op, other)
        return self._binary(op, other, False, default)

    return method


binary = Kind(
    _binary,
    _build_binary,
    "``{fn}`` of every tensor leaf and ``other``: a number, a tensor (lined up with the batch "
    "dims if its shape broadcasts to the batch shape, else broadcast to every leaf) or an "
    "instance (leaves paired by key). ``default`` fills the keys only one instance has: "
    '``None`` (they are an error), ``"intersection"`` (they are dropped) or a value that '
    "stands in for the missing leaf.",
)


def _binary_inplace(self: Any, other: Any) -> None:
    """``x.mul_(other)``"""


def _build_binary_inplace(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def method(self: _Engine, other: Any) -> Any:
        return self._inplace(op, other)

    return method


binary_inplace = Kind(
    _binary_inplace,
    _build_binary_inplace,
    "``{fn}`` of every tensor leaf and ``other``, written into the leaves; returns ``self`` "
    "(every leaf is written or none).",
)


def _binary_alpha(
    self: Any, other: Any, *, alpha: float | None = None, default: Default = None
) -> None:
    """``x.add(other, *, alpha=None, default=None)``"""


def _build_binary_alpha(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def method(
        self: _Engine, other: Any, *, alpha: float | None = None, default: Default = None
    ) -> Any:
        if default is None:
            return self._binary(op, other if alpha is None else other * alpha)
        scaled = op if alpha is None else _scaled(op, alpha)
        return self._binary(scaled, other, False, default)

    return method


def _scaled(op: Callable[[Any, Any], Any], alpha: float) -> Callable[[Any, Any], Any]:
    """``op(a, alpha * b)`` (with ``default=``, where either side may be the default)."""

    def scaled(a: Any, b: Any) -> Any:
        return op(a, b * alpha)

    return scaled


binary_alpha = Kind(
    _binary_alpha,
    _build_binary_alpha,
    "``{fn}`` of every tensor leaf and ``alpha * other`` (see :data:`binary`).",
)


def _binary_alpha_inplace(self: Any, other: Any, *, alpha: float | None = None) -> None:
    """``x.add_(other, *, alpha=None)``"""


def _build_binary_alpha_inplace(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def method(self: _Engine, other: Any, *, alpha: float | None = None) -> Any:
        return self._inplace(op, other if alpha is None else other * alpha)

    return method


binary_alpha_inplace = Kind(
    _binary_alpha_inplace,
    _build_binary_alpha_inplace,
    "``{fn}`` of every tensor leaf and ``alpha * other``, written into the leaves.",
)


def _reversed_alpha(
    self: Any, other: Any, *, alpha: float | None = None, default: Default = None
) -> None:
    """``x.rsub(other, *, alpha=None, default=None)``: ``other - alpha * x``"""


def _build_reversed_alpha(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(
        self: _Engine, other: Any, *, alpha: float | None = None, default: Default = None
    ) -> Any:
        op = fn if alpha is None else partial(fn, alpha=alpha)
        if default is None:
            return self._binary(op, other)
        return self._binary(op, other, False, default)

    return method


reversed_alpha = Kind(
    _reversed_alpha,
    _build_reversed_alpha,
    "``{fn}``: ``other - alpha * leaf`` for every tensor leaf (``other`` and ``default`` as "
    "for :meth:`add`).",
)


def _ternary_value(self: Any, other1: Any, other2: Any, *, value: float = 1) -> None:
    """``x.addcmul(other1, other2, *, value=1)``"""


def _build_ternary_value(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(self: _Engine, other1: Any, other2: Any, *, value: float = 1) -> Any:
        return self._nary(fn, (other1, other2), {"value": value})

    return method


ternary_value = Kind(
    _ternary_value,
    _build_ternary_value,
    "``{fn}(leaf, other1, other2, value=value)`` for every tensor leaf; each operand is a "
    "number, a tensor or an instance (paired by key), as ``other`` of :meth:`mul`.",
)


def _ternary_value_inplace(self: Any, other1: Any, other2: Any, *, value: float = 1) -> None:
    """``x.addcmul_(other1, other2, *, value=1)``"""


def _build_ternary_value_inplace(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(self: _Engine, other1: Any, other2: Any, *, value: float = 1) -> Any:
        return self._nary_inplace(fn, (other1, other2), {"value": value})

    return method


ternary_value_inplace = Kind(
    _ternary_value_inplace,
    _build_ternary_value_inplace,
    "``{fn}(leaf, other1, other2, value=value)`` written into every tensor leaf; returns "
    "``self``. Every leaf is checked first: every leaf is written or none.",
)


def _ternary(self: Any, end: Any, weight: Any) -> None:
    """``x.lerp(end, weight)``"""


def _build_ternary(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(self: _Engine, end: Any, weight: Any) -> Any:
        return self._nary(fn, (end, weight), {})

    return method


ternary = Kind(
    _ternary,
    _build_ternary,
    "``{fn}(leaf, end, weight)`` for every tensor leaf; ``end`` and ``weight`` are each a "
    "number, a tensor or an instance (paired by key), as ``other`` of :meth:`mul`.",
)


def _nan_replace(
    self: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> None:
    """``x.nan_to_num(nan=0.0, posinf=None, neginf=None)``"""


def _build_nan_replace(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(
        self: _Engine, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Any:
        return self._map_tensors(lambda t: fn(t, nan, posinf, neginf))

    return method


nan_replace = Kind(
    _nan_replace,
    _build_nan_replace,
    "``{fn}`` of every tensor leaf: NaN, +inf and -inf replaced by ``nan``, ``posinf`` and "
    "``neginf`` (``None``: the largest and lowest finite values of the leaf's dtype).",
)


def _nan_replace_inplace(
    self: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> None:
    """``x.nan_to_num_(nan=0.0, posinf=None, neginf=None)``"""


def _build_nan_replace_inplace(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(
        self: _Engine, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ) -> Any:
        return self._nary_inplace(fn, (), {"nan": nan, "posinf": posinf, "neginf": neginf})

    return method


nan_replace_inplace = Kind(
    _nan_replace_inplace,
    _build_nan_replace_inplace,
    "``{fn}`` written into every tensor leaf (see :meth:`nan_to_num`); returns ``self``.",
)


#: ``cast_filter=`` of the casts: ``fn(key, tensor) -> bool`` picks the leaves to cast
CastFilter = Callable[[tuple[str, ...], Tensor], bool]


def _cast(self: Any, *, cast_filter: CastFilter | None = None) -> None:
    """``x.float(*, cast_filter=None)``"""


def _build_cast(dtype: torch.dtype) -> Callable[..., Any]:
    quantized = dtype in QUANTIZED

    def convert(t: Tensor) -> Tensor:
        return t.to(dtype)

    def method(self: _Engine, *, cast_filter: CastFilter | None = None) -> Any:
        if quantized:
            return self._cast_leaves(None, dtype, cast_filter)
        if cast_filter is None:
            return self.to(dtype)
        return self._cast_leaves(convert, dtype, cast_filter)

    return method


cast = Kind(
    _cast,
    _build_cast,
    "Cast every tensor leaf to ``{fn}``; ``cast_filter(key, tensor)`` (``key`` a tuple of "
    "strings), if given, picks the leaves to cast and the others are kept as they are.",
)


def _cast_to(
    self: Any, dst_type: torch.dtype | str, *, cast_filter: CastFilter | None = None
) -> None:
    """``x.type(dst_type, *, cast_filter=None)``"""


def _build_cast_to(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(
        self: _Engine, dst_type: torch.dtype | str, *, cast_filter: CastFilter | None = None
    ) -> Any:
        if isinstance(dst_type, torch.dtype) and dst_type in QUANTIZED:
            return self._cast_leaves(None, dst_type, cast_filter)
        return self._cast_leaves(lambda t: fn(t, dst_type), dst_type, cast_filter)

    return method


cast_to = Kind(
    _cast_to,
    _build_cast_to,
    "``{fn}(dst_type)`` of every tensor leaf: ``dst_type`` is a dtype or a tensor type's "
    'name (``"torch.IntTensor"``); ``cast_filter`` as for :meth:`float`.',
)

_Dims = int | Sequence[int] | None
_ReduceDims = int | Sequence[int] | Literal["feature"] | None
_KeyTransform = Callable[[str], str] | None


def _finish(result: Any, key_transform: _KeyTransform) -> Any:
    """``result``, its keys renamed by ``key_transform`` if given."""
    return result if key_transform is None else rename_keys(result, key_transform)


def _reduction(
    self: Any,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> None:
    """``x.amax(dim=None, keepdim=False, *, reduce=None, key_transform=None)``"""


def _build_reduction(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    name = fn.__name__

    def method(
        self: Any,
        dim: _ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        key_transform: _KeyTransform = None,
    ) -> Any:
        if reduce:
            return reduce_all(self, fn, dim, keepdim, {}, name)
        return _finish(reduce_leaves(self, fn, dim, keepdim, {}, name), key_transform)

    return method


_REDUCTION_DOC = (
    "``{fn}`` of every tensor leaf: over all its elements (``dim=None``), over batch ``dim`` "
    "(an int or ints; ``keepdim`` keeps them with size 1) or over its feature dims "
    "(``dim='feature'``). ``reduce=True`` reduces the leaves together into one tensor; "
    "``key_transform`` renames the keys of the result (a ``TensorDict``)."
)

reduction = TypedKind(_reduction, _build_reduction, _REDUCTION_DOC, DimsReductionOp)


def _reduction_dtype(
    self: Any,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> None:
    """``x.sum(dim=None, keepdim=False, *, dtype=None, reduce=None, key_transform=None)``"""


def _build_reduction_dtype(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    name = fn.__name__

    def method(
        self: Any,
        dim: _ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
        key_transform: _KeyTransform = None,
    ) -> Any:
        kwargs = {"dtype": dtype} if dtype else {}
        if reduce:
            return reduce_all(self, fn, dim, keepdim, kwargs, name)
        return _finish(reduce_leaves(self, fn, dim, keepdim, kwargs, name), key_transform)

    return method


reduction_dtype = TypedKind(
    _reduction_dtype,
    _build_reduction_dtype,
    _REDUCTION_DOC + " ``dtype`` casts each leaf first (against overflows).",
    DtypeReductionOp,
)


def _reduction_correction(
    self: Any,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> None:
    """``x.std(dim=None, keepdim=False, *, correction=1, reduce=None, key_transform=None)``"""


def _build_reduction_correction(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    name = fn.__name__

    def method(
        self: Any,
        dim: _ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: bool | None = None,
        key_transform: _KeyTransform = None,
    ) -> Any:
        kwargs = {"correction": correction}
        if reduce:
            return reduce_all(self, fn, dim, keepdim, kwargs, name)
        return _finish(reduce_leaves(self, fn, dim, keepdim, kwargs, name), key_transform)

    return method


reduction_correction = TypedKind(
    _reduction_correction,
    _build_reduction_correction,
    _REDUCTION_DOC + " ``correction`` is the difference between the sample size and the "
    "degrees of freedom (1: Bessel's).",
    CorrectionReductionOp,
)


def _reduction_one_dim(self: Any, dim: int | None = None, keepdim: bool = False) -> None:
    """``x.prod(dim=None, keepdim=False)``, ``dim`` one int"""


def single_dim(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Adapt a reduction that takes one ``dim`` to the ``dim=(d,)`` calling convention."""

    def reduce(tensor: Tensor, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            return fn(tensor)
        return fn(tensor, dim[0], keepdim=keepdim)

    return reduce


def _build_reduction_one_dim(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    one_dim = single_dim(fn)

    def method(self: Any, dim: int | None = None, keepdim: bool = False) -> Any:
        return self._reduce(one_dim, dim, keepdim)

    return method


reduction_one_dim = Kind(
    _reduction_one_dim,
    _build_reduction_one_dim,
    "``{fn}`` of every tensor: over all its elements (``dim=None``) or over one batch ``dim``.",
)


def over_dims(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Adapt a reduction that takes one ``dim`` (``torch.prod``) to several: one dim at a
    time, the last first (the same result as one reduction over all of them)."""

    def reduce(
        tensor: Tensor,
        dim: int | tuple[int, ...] | None = None,
        keepdim: bool = False,
        **kwargs: Any,
    ) -> Tensor:
        if dim is None:
            return fn(tensor, **kwargs)
        if isinstance(dim, int):
            return fn(tensor, dim, keepdim=keepdim, **kwargs)
        for d in sorted(dim, reverse=True):
            tensor = fn(tensor, d, keepdim=keepdim, **kwargs)
        return tensor

    reduce.__name__ = fn.__name__
    return reduce


def _quantiles(
    self: Any,
    q: float | Tensor,
    dim: int | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> None:
    """``x.quantile(q, dim=None, keepdim=False, *, interpolation="linear", reduce=None,
    key_transform=None)``"""


def _build_quantile(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(
        self: Any,
        q: float | Tensor,
        dim: int | Literal["feature"] | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: bool | None = None,
        key_transform: _KeyTransform = None,
    ) -> Any:
        def at_q(t: Tensor, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
            d = None if dim is None else dim[0]
            at = q.to(t.dtype) if isinstance(q, Tensor) and q.dtype != t.dtype else q
            return fn(t, at, dim=d, keepdim=keepdim, interpolation=interpolation)

        if dim is not None and dim != "feature":
            dim = one_dim(dim, len(self.batch_size), "quantile")
        if reduce:
            return reduce_all(self, at_q, dim, keepdim, {}, "quantile")
        lead = q.shape if isinstance(q, Tensor) else torch.Size(())
        result = reduce_leaves(self, at_q, dim, keepdim, {}, "quantile", lead)
        return _finish(result, key_transform)

    return method


quantiles = TypedKind(
    _quantiles,
    _build_quantile,
    "The ``q``-th quantiles (``{fn}``) of every tensor leaf: over all its elements "
    "(``dim=None``), along one batch ``dim`` or over its feature dims (``'feature'``). A "
    "1-d tensor ``q`` puts a leading dim of its size in every leaf and in the batch size. "
    "``reduce=True`` and ``key_transform`` as for ``sum``.",
    QuantileReductionOp,
)


def _reduction_indices(
    self: Any,
    dim: int | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    reduce: bool | None = None,
    return_indices: bool = True,
) -> None:
    """``x.max(dim=None, keepdim=False, *, reduce=None, return_indices=True)``"""


def _build_reduction_indices(fn: Callable[..., Any]) -> Callable[..., Any]:
    name = fn.__name__

    def every(t: Tensor) -> Tensor:
        result: Tensor = fn(t)
        return result

    def method(
        self: Any,
        dim: int | Literal["feature"] | None = None,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> Any:
        if reduce:
            return reduce_all_pairs(self, fn, dim, keepdim, name)
        if dim is None:
            return reduce_leaves(self, every, None, keepdim, {}, name)
        pair = leaf_pairs(self, fn, dim, keepdim, name)
        return pair if return_indices else pair.values

    return method


reduction_indices = TypedKind(
    _reduction_indices,
    _build_reduction_indices,
    "``{fn}`` of every tensor leaf. Without ``dim``, over all its elements (an instance of "
    "the maxima); along one batch ``dim`` (or ``'feature'``), like ``{fn}(t, dim)``: "
    "``ValuesIndices`` of two instances, ``values`` and ``indices`` (only ``values`` with "
    "``return_indices=False``). ``reduce=True`` reduces the leaves together (tensors).",
    ExtremumReductionOp,
)


def _scan(self: Any, dim: int, dtype: torch.dtype | None = None) -> None:
    """``x.cumsum(dim, dtype=None)``"""


def _build_scan(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(self: Any, dim: int, dtype: torch.dtype | None = None) -> Any:
        d = one_dim(dim, len(self.batch_size), fn.__name__)

        def leaf_fn(t: Tensor, n: int) -> Tensor:
            return fn(t, d, dtype=dtype)

        return scan_leaves(self, leaf_fn, False)

    return method


scan = Kind(
    _scan,
    _build_scan,
    "``{fn}`` of every tensor leaf along batch ``dim`` (shapes and batch size kept); "
    "``dtype`` casts each leaf first.",
)


def _scan_indices(
    self: Any, dim: int, *, reduce: bool | None = None, return_indices: bool = True
) -> None:
    """``x.cummax(dim, *, reduce=None, return_indices=True)``"""


def _build_scan_indices(fn: Callable[..., Any]) -> Callable[..., Any]:
    name = fn.__name__

    def method(
        self: Any, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> Any:
        d = one_dim(dim, len(self.batch_size), name)
        if reduce:
            joined = reduce_all(self, lambda t, dim, keepdim: t, d, False, {}, name)
            return ValuesIndices(*fn(joined, d))

        def leaf_fn(t: Tensor, n: int) -> Any:
            return fn(t, d)

        pair = scan_leaves(self, leaf_fn, True)
        return pair if return_indices else pair.values

    return method


scan_indices = TypedKind(
    _scan_indices,
    _build_scan_indices,
    "``{fn}`` of every tensor leaf along batch ``dim``: ``ValuesIndices`` of two instances "
    "with the batch size kept (``values`` only with ``return_indices=False``); "
    "``reduce=True`` joins the leaves along ``dim`` first (tensors).",
    PairScanOp,
)


def _batch_reduction(
    self: Any, dim: int | Sequence[int] | None = None, keepdim: bool = False, *, out: Any = None
) -> None:
    """``x.logsumexp(dim=None, keepdim=False, *, out=None)``"""


def _build_batch_reduction(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    name = fn.__name__

    def method(self: Any, dim: _Dims = None, keepdim: bool = False, *, out: Any = None) -> Any:
        dims = every_dim(dim, len(self.batch_size))
        if not dims:  # no batch dims: nothing to reduce
            result = self._map_tensors(lambda t: t)
        else:
            result = reduce_leaves(self, fn, dims, keepdim, {}, name)
        return result if out is None else out.update_(result)

    return method


batch_reduction = Kind(
    _batch_reduction,
    _build_batch_reduction,
    "``{fn}`` of every tensor leaf over batch ``dim`` (every batch dim by default: feature "
    "dims are never reduced); ``out`` receives the result (in place) and is returned.",
)


def _leaf_norm(
    self: Any,
    *,
    out: Any = None,
    dtype: torch.dtype | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> None:
    """``x.norm(*, out=None, dtype=None, key_transform=None)``"""


def _build_leaf_norm(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    def method(
        self: Any,
        *,
        out: Any = None,
        dtype: torch.dtype | None = None,
        key_transform: _KeyTransform = None,
    ) -> Any:
        kwargs = {} if dtype is None else {"dtype": dtype}
        result = reduce_leaves(self, fn, None, False, kwargs, "norm")
        if out is not None:
            return out.update_(result)
        return _finish(result, key_transform)

    return method


leaf_norm = TypedKind(
    _leaf_norm,
    _build_leaf_norm,
    "The 2-norm (``{fn}``) of every tensor leaf over all its elements (batch size ``[]``); "
    "``dtype`` is the dtype of the norms, ``out`` receives them (in place) and "
    "``key_transform`` renames the keys of the result (a ``TensorDict``).",
    NormReductionOp,
)


# -- in place, unary: every leaf is checked before any is written ----------------------------

_GRAD_REFUSAL = "it is a leaf that requires grad (write it under torch.no_grad())"
#: (function, dtype, device) -> why the function cannot run in place on such a leaf, or None
_UNARY_REFUSALS: dict[tuple[Any, torch.dtype, torch.device], str | None] = {}


def _unary_refusal(
    fn: Callable[[Tensor], Tensor], dtype: torch.dtype, device: torch.device
) -> str | None:
    """Why ``fn`` (in place) fails on a ``dtype`` leaf on ``device``, tried once on a
    zero-dim tensor and remembered."""
    key = (fn, dtype, device)
    try:
        return _UNARY_REFUSALS[key]
    except KeyError:
        pass
    try:
        fn(torch.zeros((), dtype=dtype, device=device))
        problem = None
    except (RuntimeError, TypeError, NotImplementedError) as err:
        problem = str(err).strip().splitlines()[0]
    _UNARY_REFUSALS[key] = problem
    return problem


def _check_unary_inplace(
    node: _Engine, fn: Callable[[Tensor], Tensor], leaves: list[Tensor]
) -> None:
    grad = torch.is_grad_enabled() and any(leaf.requires_grad for leaf in leaves)
    kinds = {(leaf.dtype, leaf.device) for leaf in leaves}
    if not grad and all(_unary_refusal(fn, dtype, device) is None for dtype, device in kinds):
        return
    for leaf in leaves:
        if grad and leaf.requires_grad and leaf.is_leaf:
            problem: str | None = _GRAD_REFUSAL
        else:
            problem = _unary_refusal(fn, leaf.dtype, leaf.device)
        if problem is not None:
            key = _key_of(node, leaf)
            name = "?" if key is None else repr(shown_key(key))
            raise OperandError(
                f"in-place {fn.__name__}: key {name} (a {leaf.dtype} tensor of shape "
                f"{tuple(leaf.shape)}) cannot be written: {problem}; no leaf was changed"
            )


def _key_of(node: Any, tensor: Tensor, prefix: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The key under which ``node`` stores ``tensor`` (for error messages)."""
    members = getattr(node._data, "members", None)
    if members is not None:  # a lazy stack: the tensor is in one of its members
        for member in members:
            found = _key_of(member, tensor, prefix)
            if found is not None:
                return found
        return None
    for key, leaf in node._data.items():
        if leaf is tensor:
            return (*prefix, key)
        if isinstance(leaf, TensorCore):
            found = _key_of(leaf, tensor, (*prefix, key))
            if found is not None:
                return found
    return None


# -- the table ---------------------------------------------------------------------------------


class LeafOps(Functional):
    """The leaf-wise methods: one line each (the names ``float``, ``int``, ``bool`` shadow
    builtins in this class body, so nothing else is written here)."""

    __slots__ = ()

    abs = unary(torch.abs, "Elementwise absolute value.")
    neg = unary(torch.neg, "Elementwise negation.")
    exp = unary(torch.exp, "Elementwise exponential.")
    log = unary(torch.log, "Elementwise natural logarithm.")
    sqrt = unary(torch.sqrt, "Elementwise square root.")
    sigmoid = unary(torch.sigmoid, "Elementwise logistic sigmoid.")
    tanh = unary(torch.tanh, "Elementwise hyperbolic tangent.")

    expm1 = unary(torch.expm1)
    log1p = unary(torch.log1p)
    log2 = unary(torch.log2)
    log10 = unary(torch.log10)
    rsqrt = unary(torch.rsqrt)
    sin = unary(torch.sin)
    cos = unary(torch.cos)
    tan = unary(torch.tan)
    sinh = unary(torch.sinh)
    cosh = unary(torch.cosh)
    asin = unary(torch.asin)
    acos = unary(torch.acos)
    atan = unary(torch.atan)
    erf = unary(torch.erf)
    erfc = unary(torch.erfc)
    lgamma = unary(torch.lgamma)
    floor = unary(torch.floor)
    ceil = unary(torch.ceil)
    round = unary(torch.round)
    trunc = unary(torch.trunc)
    frac = unary(torch.frac)
    sign = unary(torch.sign)
    reciprocal = unary(torch.reciprocal)
    logical_not = unary(torch.logical_not)
    bitwise_not = unary(torch.bitwise_not)
    isnan = unary(torch.isnan)
    isfinite = unary(torch.isfinite)
    isposinf = unary(torch.isposinf)
    isneginf = unary(torch.isneginf)
    isreal = unary(torch.isreal)
    nan_to_num = nan_replace(torch.nan_to_num)

    abs_ = unary_inplace(Tensor.abs_)
    neg_ = unary_inplace(Tensor.neg_)
    exp_ = unary_inplace(Tensor.exp_)
    log_ = unary_inplace(Tensor.log_)
    sqrt_ = unary_inplace(Tensor.sqrt_)
    sigmoid_ = unary_inplace(Tensor.sigmoid_)
    tanh_ = unary_inplace(Tensor.tanh_)

    expm1_ = unary_inplace(Tensor.expm1_)
    log1p_ = unary_inplace(Tensor.log1p_)
    log2_ = unary_inplace(Tensor.log2_)
    log10_ = unary_inplace(Tensor.log10_)
    rsqrt_ = unary_inplace(Tensor.rsqrt_)
    sin_ = unary_inplace(Tensor.sin_)
    cos_ = unary_inplace(Tensor.cos_)
    tan_ = unary_inplace(Tensor.tan_)
    sinh_ = unary_inplace(Tensor.sinh_)
    cosh_ = unary_inplace(Tensor.cosh_)
    asin_ = unary_inplace(Tensor.asin_)
    acos_ = unary_inplace(Tensor.acos_)
    atan_ = unary_inplace(Tensor.atan_)
    erf_ = unary_inplace(Tensor.erf_)
    erfc_ = unary_inplace(Tensor.erfc_)
    lgamma_ = unary_inplace(Tensor.lgamma_)
    floor_ = unary_inplace(Tensor.floor_)
    ceil_ = unary_inplace(Tensor.ceil_)
    round_ = unary_inplace(Tensor.round_)
    trunc_ = unary_inplace(Tensor.trunc_)
    frac_ = unary_inplace(Tensor.frac_)
    sign_ = unary_inplace(Tensor.sign_)
    reciprocal_ = unary_inplace(Tensor.reciprocal_)
    logical_not_ = unary_inplace(Tensor.logical_not_)
    bitwise_not_ = unary_inplace(Tensor.bitwise_not_)
    nan_to_num_ = nan_replace_inplace(torch.nan_to_num)

    add = binary_alpha(operator.add, "``self + alpha * other``.")
    add_ = binary_alpha_inplace(operator.add, "``self += alpha * other``, in place.")
    sub = binary_alpha(operator.sub, "``self - alpha * other``.")
    sub_ = binary_alpha_inplace(operator.sub, "``self -= alpha * other``, in place.")
    mul = binary(operator.mul, "``self * other``.")
    mul_ = binary_inplace(operator.mul, "``self *= other``, in place.")
    div = binary(operator.truediv, "``self / other``.")
    div_ = binary_inplace(operator.truediv, "``self /= other``, in place.")
    pow = binary(operator.pow, "``self ** other``.")
    pow_ = binary_inplace(operator.pow, "``self **= other``, in place.")

    rsub = reversed_alpha(torch.rsub)
    mod = binary(operator.mod, "``self % other`` (the remainder has the sign of ``other``).")
    maximum = binary(leaf_functions.maximum)
    maximum_ = binary_inplace(leaf_functions.maximum)
    minimum = binary(leaf_functions.minimum)
    minimum_ = binary_inplace(leaf_functions.minimum)
    clamp_min = binary(torch.clamp_min)
    clamp_min_ = binary_inplace(torch.clamp_min)
    clamp_max = binary(torch.clamp_max)
    clamp_max_ = binary_inplace(torch.clamp_max)
    logical_and = binary(leaf_functions.logical_and)
    logical_and_ = binary_inplace(leaf_functions.logical_and)
    logical_or = binary(leaf_functions.logical_or)
    logical_or_ = binary_inplace(leaf_functions.logical_or)
    logical_xor = binary(leaf_functions.logical_xor)
    logical_xor_ = binary_inplace(leaf_functions.logical_xor)
    bitwise_and = binary(torch.bitwise_and)
    bitwise_and_ = binary_inplace(torch.bitwise_and)
    bitwise_or = binary(torch.bitwise_or)
    bitwise_or_ = binary_inplace(torch.bitwise_or)
    bitwise_xor = binary(torch.bitwise_xor)
    bitwise_xor_ = binary_inplace(torch.bitwise_xor)
    addcmul = ternary_value(leaf_functions.addcmul)
    addcmul_ = ternary_value_inplace(leaf_functions.addcmul)
    addcdiv = ternary_value(leaf_functions.addcdiv)
    addcdiv_ = ternary_value_inplace(leaf_functions.addcdiv)
    lerp = ternary(leaf_functions.lerp)

    sum = reduction_dtype(torch.sum)
    mean = reduction_dtype(torch.mean)
    prod = reduction_dtype(over_dims(torch.prod))
    std = reduction_correction(torch.std)
    var = reduction_correction(torch.var)
    amax = reduction(torch.amax)
    amin = reduction(torch.amin)
    nansum = reduction_dtype(torch.nansum)
    nanmean = reduction_dtype(torch.nanmean)
    max = reduction_indices(torch.max)
    min = reduction_indices(torch.min)
    quantile = quantiles(torch.quantile)
    logsumexp = batch_reduction(torch.logsumexp)
    norm = leaf_norm(torch.linalg.vector_norm)
    cumsum = scan(torch.cumsum)
    cumprod = scan(torch.cumprod)
    softmax = scan(torch.softmax)
    log_softmax = scan(torch.log_softmax)
    cummax = scan_indices(torch.cummax)
    cummin = scan_indices(torch.cummin)

    float = cast(torch.float32)
    double = cast(torch.float64)
    half = cast(torch.float16)
    bfloat16 = cast(torch.bfloat16)
    int = cast(torch.int32)
    long = cast(torch.int64)
    bool = cast(torch.bool)

    float16 = cast(torch.float16)
    float32 = cast(torch.float32)
    float64 = cast(torch.float64)
    int8 = cast(torch.int8)
    int16 = cast(torch.int16)
    int32 = cast(torch.int32)
    int64 = cast(torch.int64)
    uint8 = cast(torch.uint8)
    uint16 = cast(torch.uint16)
    uint32 = cast(torch.uint32)
    uint64 = cast(torch.uint64)
    complex32 = cast(torch.complex32)
    complex64 = cast(torch.complex64)
    complex128 = cast(torch.complex128)
    qint8 = cast(torch.qint8)
    qint32 = cast(torch.qint32)
    quint8 = cast(torch.quint8)
    quint4x2 = cast(torch.quint4x2)
    type = cast_to(Tensor.type)
