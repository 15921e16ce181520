"""Element-wise maths of lazy stacks, member by member: the results are lazy stacks.

An element-wise function of a stack is the stack of the function of its members, so a lazy
stack runs the leaf-wise table's element-wise entries (``exp``, ``abs``...), the operators
and comparisons (``+``, ``*``, ``==``...), ``clamp``, ``masked_fill`` and ``where`` on each
member and stacks the results lazily again. Members whose leaves have different shapes
(which cannot be stacked densely) therefore keep working:

>>> import torch
>>> from tensorclass import TensorDict, lazy_stack
>>> stack = lazy_stack([TensorDict(obs=torch.zeros(3)), TensorDict(obs=torch.zeros(5))])
>>> (stack + 1).members[1]["obs"]
tensor([1., 1., 1., 1., 1.])

The other operand is split along the stack dim when it is an instance with the stack's
batch size (a lazy stack gives its members); a number or a 0-dim tensor goes to every
member. Any other operand (a tensor broadcast to every leaf) uses the dense stack.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from torch import Tensor
from typing_extensions import Self

from ..core.masks import check_mask
from ..core.state import TensorCore
from ..leafwise.elementwise_kinds import nan_replace, unary
from ..leafwise.kind import TABLE
from .shape import LazyShapeOps, _restack

__all__ = ["LazyMaths"]


def _scalar(other: Any) -> bool:
    return isinstance(other, (int, float, bool, complex)) or (
        isinstance(other, Tensor) and other.ndim == 0
    )


class LazyMaths(LazyShapeOps):
    """Member-by-member element-wise maths (see the module documentation)."""

    __slots__ = ()

    def _parts(self, other: Any) -> list[Any] | None:
        """One part of ``other`` per member, or None when it cannot be split."""
        members = self._lazy.members
        if isinstance(other, np.generic):
            other = other.item()
        if _scalar(other):
            return [other] * len(members)
        if isinstance(other, TensorCore):
            n = len(self._batch_size)
            if other._batch_size[:n] != self._batch_size:
                return None
            parts: list[Any] = list(other.unbind(self._lazy.dim))  # type: ignore[attr-defined]
            return parts
        return None

    def _each_member(self, fn: Callable[[Any], Any]) -> Self:
        return _restack([fn(m) for m in self._lazy.members], self._lazy.dim, self)

    def _binary(
        self,
        op: Callable[[Any, Any], Any],
        other: Any,
        reflected: bool = False,
        default: Any = None,
    ) -> Any:
        parts = None if default is not None else self._parts(other)
        if parts is None:
            return super()._binary(op, other, reflected, default)
        results = [m._binary(op, part, reflected) for m, part in zip(self._lazy.members, parts)]
        if any(r is NotImplemented for r in results):
            return NotImplemented
        return _restack(results, self._lazy.dim, self)

    def as_tensor(self) -> Self:
        """See ``TensorDict.as_tensor``: member by member (a lazy stack)."""
        result = self._each_member(lambda m: m.as_tensor())
        return result.lock_() if self._locked else result

    def __neg__(self) -> Self:
        return self._each_member(operator.neg)

    def __abs__(self) -> Self:
        return self._each_member(operator.abs)

    def __invert__(self) -> Self:
        return self._each_member(operator.invert)

    def clamp(self, min: Any = None, max: Any = None, *, out: TensorCore | None = None) -> Self:
        """Clamp every tensor of every member to ``[min, max]`` (a lazy stack) when the
        bounds are numbers; see ``TensorDict.clamp`` for the other forms (dense)."""
        if out is None and all(b is None or _scalar(b) for b in (min, max)):
            return self._each_member(lambda m: m.clamp(min, max))
        return super().clamp(min, max, out=out)

    def _split_mask(self, mask: Tensor) -> list[Tensor] | None:
        """A batch mask split along the stack dim (None unless it spans the batch dims)."""
        if mask.ndim != len(self._batch_size):
            return None
        try:
            full = mask.expand(self._batch_size)
        except RuntimeError:
            return None
        return list(full.unbind(self._lazy.dim))

    def masked_fill(self, mask: Tensor, value: float | bool | Tensor) -> Self:
        """See ``TensorDict.masked_fill``; the mask is split between the members."""
        check_mask(self, mask, "masked_fill")
        masks = self._split_mask(mask)
        if masks is None:
            return super().masked_fill(mask, value)
        results = [m.masked_fill(part, value) for m, part in zip(self._lazy.members, masks)]
        return _restack(results, self._lazy.dim, self)

    def where(
        self,
        condition: Tensor,
        other: Any,
        *,
        out: TensorCore | None = None,
        pad: float | bool | None = None,
        update_batch_size: bool = False,
    ) -> Any:
        """See ``TensorDict.where``: member by member when ``condition`` spans the batch
        dims and ``other`` can be split between the members, else on the dense stack."""
        check_mask(self, condition, "where")
        masks = None if out is not None or pad is not None else self._split_mask(condition)
        parts = None if masks is None else self._parts(other)
        if masks is None or parts is None:
            return self.contiguous().where(
                condition, other, out=out, pad=pad, update_batch_size=update_batch_size
            )
        members = self._lazy.members
        results = [m.where(c, o) for m, c, o in zip(members, masks, parts)]
        return _restack(results, self._lazy.dim, self)

    def all(self, dim: int | None = None) -> Any:
        """``True`` if every element of every member is true; with ``dim``, see
        ``TensorDict.all`` (on the dense stack)."""
        if dim is not None:
            return super().all(dim)
        return all(bool(m.select(*self._lazy).all()) for m in self._lazy.distinct())

    def any(self, dim: int | None = None) -> Any:
        """``True`` if any element of any member is true; with ``dim``, see
        ``TensorDict.any`` (on the dense stack)."""
        if dim is not None:
            return super().any(dim)
        return any(bool(m.select(*self._lazy).any()) for m in self._lazy.distinct())


def _operator(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[..., Any]:
    def method(self: LazyMaths, other: Any) -> Any:
        return self._binary(op, other, reflected)

    return method


# Redefined here (not inherited) so that Python asks a lazy stack first when it is the right
# operand of a dense instance of its members' class: ``dense + stack`` stays lazy too.
for _name, _op in {
    "__radd__": operator.add,
    "__rsub__": operator.sub,
    "__rmul__": operator.mul,
    "__rtruediv__": operator.truediv,
    "__rfloordiv__": operator.floordiv,
    "__rmod__": operator.mod,
    "__rpow__": operator.pow,
    "__rand__": operator.and_,
    "__ror__": operator.or_,
    "__rxor__": operator.xor,
}.items():
    setattr(LazyMaths, _name, _operator(_op, reflected=True))
for _name, _op in {
    "__eq__": operator.eq,
    "__ne__": operator.ne,
    "__lt__": operator.lt,
    "__le__": operator.le,
    "__gt__": operator.gt,
    "__ge__": operator.ge,
}.items():
    setattr(LazyMaths, _name, _operator(_op))


def _member_wise(name: str, doc: str) -> Callable[..., Any]:
    def method(self: LazyMaths, *args: Any, **kwargs: Any) -> Any:
        return self._each_member(lambda m: getattr(m, name)(*args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{doc} Member by member: a lazy stack."
    return method


# Every element-wise entry of the leaf-wise table without an operand runs member by member.
for _name, _entry in TABLE.items():
    if _entry.kind in (unary, nan_replace) and _name not in LazyMaths.__dict__:
        setattr(LazyMaths, _name, _member_wise(_name, _entry.doc))
