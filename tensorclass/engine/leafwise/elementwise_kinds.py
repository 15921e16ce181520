"""The element-wise kinds of the leaf-wise table: one leaf in, one leaf out.

Each kind is a stub (the signature), a builder (the method, from the function an entry
names) and a default docstring (see ``kind.py``); the table (``table.py``) names
one per entry:

- :data:`unary` ``x.exp()``; :data:`unary_inplace` ``x.exp_()`` (returns ``x``; every leaf
  is checked before any is written); :data:`nan_replace` ``x.nan_to_num(nan=0.0,
  posinf=None, neginf=None)`` and :data:`nan_replace_inplace`;
- :data:`binary` ``x.mul(other, *, default=None)``, :data:`binary_alpha`
  ``x.add(other, *, alpha=None, default=None)`` and their in-place forms
  :data:`binary_inplace`, :data:`binary_alpha_inplace` (``other`` is a number, a tensor
  or an instance paired by key; elementwise.py says how a tensor lines up with the
  leaves; ``default`` fills keys only one instance has); :data:`reversed_alpha`
  ``x.rsub(other, *, alpha=None, default=None)``;
- :data:`ternary_value` ``x.addcmul(other1, other2, *, value=1)`` and
  :data:`ternary_value_inplace`; :data:`ternary` ``x.lerp(end, weight)``;
- :data:`cast` ``x.float(*, cast_filter=None)``; :data:`cast_to`
  ``x.type(dst_type, *, cast_filter=None)``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal, Protocol

import torch
from torch import Tensor
from typing_extensions import Self

from ...errors import OperandError
from ...keys import shown_key
from ..core.state import TensorCore
from .functions import Operator
from .kind import PlainKind

__all__ = [
    "QUANTIZED",
    "CastFilter",
    "Default",
    "binary",
    "binary_alpha",
    "binary_alpha_inplace",
    "binary_inplace",
    "cast",
    "cast_to",
    "nan_replace",
    "nan_replace_inplace",
    "reversed_alpha",
    "ternary",
    "ternary_value",
    "ternary_value_inplace",
    "unary",
    "unary_inplace",
]

_transforms_active = torch._C._are_functorch_transforms_active


class _Engine(Protocol):
    """What the generated methods call on their receiver (the engine's mixins provide it)."""

    def _map_tensors(self, fn: Callable[[Tensor], Tensor]) -> Self: ...
    def _binary(
        self,
        op: Operator,
        other: object,
        reflected: bool = False,
        default: Default = None,
    ) -> Self: ...
    def _inplace(self, op: Operator, other: object) -> Self: ...
    def _reduce(
        self,
        fn: Callable[..., Tensor],
        dim: int | Sequence[int] | None,
        keepdim: bool,
        **kwargs: object,
    ) -> Self: ...
    def _own_tensors(self) -> list[Tensor]: ...
    def to(self, dtype: torch.dtype, /) -> Self: ...
    def _nary(
        self, fn: Callable[..., Tensor], operands: tuple[object, ...], kwargs: dict[str, object]
    ) -> Self: ...
    def _nary_inplace(
        self, fn: Callable[..., Tensor], operands: tuple[object, ...], kwargs: dict[str, object]
    ) -> Self: ...
    def _cast_leaves(
        self,
        convert: Callable[[Tensor], Tensor] | None,
        dtype: torch.dtype | str,
        cast_filter: Callable[[tuple[str, ...], Tensor], bool] | None,
    ) -> Self: ...


#: the quantized dtypes: a cast to one is an error for a leaf not already of it (torch
#: quantizes with a scale and zero point, which a plain cast has not)
QUANTIZED = frozenset({torch.qint8, torch.qint32, torch.quint8, torch.quint4x2, torch.quint2x4})


# -- the kinds: a stub (the signature), a builder (the method), a default docstring ----------


def _unary(self: object) -> None:
    """``x.exp()``"""


def _build_unary(fn: Callable[[Tensor], Tensor]) -> Callable[..., _Engine]:
    def method(self: _Engine) -> _Engine:
        return self._map_tensors(fn)

    return method


unary = PlainKind(_unary, _build_unary, "Element-wise ``{fn}`` of every tensor leaf.")


def _unary_inplace(self: object) -> None:
    """``x.exp_()``"""


def _build_unary_inplace(fn: Callable[[Tensor], Tensor]) -> Callable[..., _Engine]:
    fused = getattr(torch, f"_foreach_{fn.__name__}", None)

    def method(self: _Engine) -> _Engine:
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


unary_inplace = PlainKind(
    _unary_inplace,
    _build_unary_inplace,
    "``{fn}`` on every tensor leaf, in place; returns ``self``. Every leaf is checked "
    "first: a leaf that cannot take the result is an error and no leaf is changed.",
)


#: ``default=`` of the binary methods: what stands in for a key only one operand has
Default = Literal["intersection"] | complex | Tensor | None


def _binary(self: object, other: object, *, default: Default = None) -> None:
    """``x.mul(other, *, default=None)``"""


def _build_binary(op: Operator) -> Callable[..., _Engine]:
    def method(self: _Engine, other: object, *, default: Default = None) -> _Engine:
        return self._binary(op, other, False, default)

    return method


binary = PlainKind(
    _binary,
    _build_binary,
    "``{fn}`` of every tensor leaf and ``other``: a number, a tensor (lined up with the batch "
    "dims if its shape broadcasts to the batch shape, else broadcast to every leaf) or an "
    "instance (leaves paired by key). ``default`` fills the keys only one instance has: "
    '``None`` (they are an error), ``"intersection"`` (they are dropped) or a value that '
    "stands in for the missing leaf.",
)


def _binary_inplace(self: object, other: object) -> None:
    """``x.mul_(other)``"""


def _build_binary_inplace(op: Operator) -> Callable[..., _Engine]:
    def method(self: _Engine, other: object) -> _Engine:
        return self._inplace(op, other)

    return method


binary_inplace = PlainKind(
    _binary_inplace,
    _build_binary_inplace,
    "``{fn}`` of every tensor leaf and ``other``, written into the leaves; returns ``self`` "
    "(every leaf is written or none).",
)


def _binary_alpha(
    self: object, other: object, *, alpha: float | None = None, default: Default = None
) -> None:
    """``x.add(other, *, alpha=None, default=None)``"""


def _build_binary_alpha(op: Operator) -> Callable[..., _Engine]:
    def method(
        self: _Engine, other: object, *, alpha: float | None = None, default: Default = None
    ) -> _Engine:
        if default is None:
            return self._binary(op, other if alpha is None else operator.mul(other, alpha))
        scaled = op if alpha is None else _scaled(op, alpha)
        return self._binary(scaled, other, False, default)

    return method


def _scaled(op: Operator, alpha: float) -> Operator:
    """``op(a, alpha * b)`` (with ``default=``, where either side may be the default)."""

    def scaled(a: object, b: object) -> Tensor:
        return op(a, operator.mul(b, alpha))

    return scaled


binary_alpha = PlainKind(
    _binary_alpha,
    _build_binary_alpha,
    "``{fn}`` of every tensor leaf and ``alpha * other`` (see :data:`binary`).",
)


def _binary_alpha_inplace(self: object, other: object, *, alpha: float | None = None) -> None:
    """``x.add_(other, *, alpha=None)``"""


def _build_binary_alpha_inplace(op: Operator) -> Callable[..., _Engine]:
    def method(self: _Engine, other: object, *, alpha: float | None = None) -> _Engine:
        return self._inplace(op, other if alpha is None else operator.mul(other, alpha))

    return method


binary_alpha_inplace = PlainKind(
    _binary_alpha_inplace,
    _build_binary_alpha_inplace,
    "``{fn}`` of every tensor leaf and ``alpha * other``, written into the leaves.",
)


def _reversed_alpha(
    self: object, other: object, *, alpha: float | None = None, default: Default = None
) -> None:
    """``x.rsub(other, *, alpha=None, default=None)``: ``other - alpha * x``"""


def _build_reversed_alpha(fn: Callable[..., Tensor]) -> Callable[..., _Engine]:
    def method(
        self: _Engine, other: object, *, alpha: float | None = None, default: Default = None
    ) -> _Engine:
        return self._binary(
            fn if alpha is None else partial(fn, alpha=alpha), other, False, default
        )

    return method


reversed_alpha = PlainKind(
    _reversed_alpha,
    _build_reversed_alpha,
    "``{fn}``: ``other - alpha * leaf`` for every tensor leaf (``other`` and ``default`` as "
    "for :meth:`add`).",
)


def _ternary_value(self: object, other1: object, other2: object, *, value: float = 1) -> None:
    """``x.addcmul(other1, other2, *, value=1)``, and in place ``x.addcmul_(...)``"""


def _ternary_value_builder(
    inplace: bool,
) -> Callable[[Callable[..., Tensor]], Callable[..., _Engine]]:
    """The builder of :data:`ternary_value` (``inplace``: of its in-place form)."""

    def build(fn: Callable[..., Tensor]) -> Callable[..., _Engine]:
        def method(self: _Engine, other1: object, other2: object, *, value: float = 1) -> _Engine:
            nary = self._nary_inplace if inplace else self._nary
            return nary(fn, (other1, other2), {"value": value})

        return method

    return build


ternary_value = PlainKind(
    _ternary_value,
    _ternary_value_builder(False),
    "``{fn}(leaf, other1, other2, value=value)`` for every tensor leaf; each operand is a "
    "number, a tensor or an instance (paired by key), as ``other`` of :meth:`mul`.",
)

ternary_value_inplace = PlainKind(
    _ternary_value,
    _ternary_value_builder(True),
    "``{fn}(leaf, other1, other2, value=value)`` written into every tensor leaf; returns "
    "``self``. Every leaf is checked first: every leaf is written or none.",
    "ternary_value_inplace",
)


def _ternary(self: object, end: object, weight: object) -> None:
    """``x.lerp(end, weight)``"""


def _build_ternary(fn: Callable[..., Tensor]) -> Callable[..., _Engine]:
    def method(self: _Engine, end: object, weight: object) -> _Engine:
        return self._nary(fn, (end, weight), {})

    return method


ternary = PlainKind(
    _ternary,
    _build_ternary,
    "``{fn}(leaf, end, weight)`` for every tensor leaf; ``end`` and ``weight`` are each a "
    "number, a tensor or an instance (paired by key), as ``other`` of :meth:`mul`.",
)


def _nan_replace(
    self: object, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> None:
    """``x.nan_to_num(nan=0.0, posinf=None, neginf=None)``, and in place ``x.nan_to_num_(...)``"""


def _nan_replace_builder(
    inplace: bool,
) -> Callable[[Callable[..., Tensor]], Callable[..., _Engine]]:
    """The builder of :data:`nan_replace` (``inplace``: of its in-place form)."""

    def build(fn: Callable[..., Tensor]) -> Callable[..., _Engine]:
        def method(
            self: _Engine,
            nan: float = 0.0,
            posinf: float | None = None,
            neginf: float | None = None,
        ) -> _Engine:
            if inplace:
                return self._nary_inplace(fn, (), {"nan": nan, "posinf": posinf, "neginf": neginf})
            return self._map_tensors(lambda t: fn(t, nan, posinf, neginf))

        return method

    return build


nan_replace = PlainKind(
    _nan_replace,
    _nan_replace_builder(False),
    "``{fn}`` of every tensor leaf: NaN, +inf and -inf replaced by ``nan``, ``posinf`` and "
    "``neginf`` (``None``: the largest and lowest finite values of the leaf's dtype).",
)

nan_replace_inplace = PlainKind(
    _nan_replace,
    _nan_replace_builder(True),
    "``{fn}`` written into every tensor leaf (see :meth:`nan_to_num`); returns ``self``.",
    "nan_replace_inplace",
)


#: ``cast_filter=`` of the casts: ``fn(key, tensor) -> bool`` picks the leaves to cast
CastFilter = Callable[[tuple[str, ...], Tensor], bool]


def _cast(self: object, *, cast_filter: CastFilter | None = None) -> None:
    """``x.float(*, cast_filter=None)``"""


def _build_cast(dtype: torch.dtype) -> Callable[..., _Engine]:
    quantized = dtype in QUANTIZED

    def convert(t: Tensor) -> Tensor:
        return t.to(dtype)

    def method(self: _Engine, *, cast_filter: CastFilter | None = None) -> _Engine:
        if quantized:
            return self._cast_leaves(None, dtype, cast_filter)
        if cast_filter is None:
            return self.to(dtype)
        return self._cast_leaves(convert, dtype, cast_filter)

    return method


cast = PlainKind(
    _cast,
    _build_cast,
    "Cast every tensor leaf to ``{fn}``; ``cast_filter(key, tensor)`` (``key`` a tuple of "
    "strings), if given, picks the leaves to cast and the others are kept as they are.",
)


def _cast_to(
    self: object, dst_type: torch.dtype | str, *, cast_filter: CastFilter | None = None
) -> None:
    """``x.type(dst_type, *, cast_filter=None)``"""


def _build_cast_to(fn: Callable[..., Tensor]) -> Callable[..., _Engine]:
    def method(
        self: _Engine, dst_type: torch.dtype | str, *, cast_filter: CastFilter | None = None
    ) -> _Engine:
        if isinstance(dst_type, torch.dtype) and dst_type in QUANTIZED:
            return self._cast_leaves(None, dst_type, cast_filter)
        return self._cast_leaves(lambda t: fn(t, dst_type), dst_type, cast_filter)

    return method


cast_to = PlainKind(
    _cast_to,
    _build_cast_to,
    "``{fn}(dst_type)`` of every tensor leaf: ``dst_type`` is a dtype or a tensor type's "
    'name (``"torch.IntTensor"``); ``cast_filter`` as for :meth:`float`.',
)


# -- in place, unary: every leaf is checked before any is written ----------------------------

_GRAD_REFUSAL = "it is a leaf that requires grad (write it under torch.no_grad())"
#: (function, dtype, device) -> why the function cannot run in place on such a leaf, or None
_UNARY_REFUSALS: dict[tuple[Callable[[Tensor], Tensor], torch.dtype, torch.device], str | None] = {}


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


def _key_of(node: object, tensor: Tensor, prefix: tuple[str, ...] = ()) -> tuple[str, ...] | None:
    """The key under which ``node`` stores ``tensor`` (for error messages)."""
    if not isinstance(node, TensorCore):  # (every receiver is one)
        return None
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
