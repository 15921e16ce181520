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

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..core.self_types import Node, is_op
from ..core.state import TensorCore
from ..leafwise import apply as applying
from ..leafwise import arithmetic, elementwise
from ..leafwise.elementwise_kinds import Default, nan_replace, unary
from ..leafwise.kind import TABLE
from ..leafwise.masks import check_mask
from .self_type import S
from .shape import _restack

__all__ = [
    "MEMBER_WISE",
    "all",
    "any",
    "as_tensor",
    "clamp",
    "masked_fill",
    "split_mask",
    "where",
]


def _scalar(other: object) -> bool:
    return isinstance(other, (int, float, bool, complex)) or (
        isinstance(other, Tensor) and other.ndim == 0
    )


def _parts(self: S, other: object) -> list[object] | None:
    """One part of ``other`` per member, or None when it cannot be split."""
    members = self._lazy.members
    if isinstance(other, np.generic):
        other = other.item()
    if _scalar(other):
        return [other] * len(members)
    if is_op(other):  # an instance (isinstance TensorCore), typed with its operations
        n = len(self._batch_size)
        if other._batch_size[:n] != self._batch_size:
            return None
        parts: list[object] = list(other.unbind(self._lazy.dim))
        return parts
    return None


def _each_member(self: S, fn: Callable[[Node], object]) -> S:
    """A lazy stack of ``fn`` of each member."""
    return _restack([fn(m) for m in self._lazy.members], self._lazy.dim, self)


def _binary(
    self: S,
    op: Callable[[Any, Any], Any],
    other: object,
    reflected: bool = False,
    default: Default = None,
) -> Any:
    parts = None if default is not None else _parts(self, other)
    if parts is None:
        return arithmetic._binary(self, op, other, reflected, default)
    results = [m._binary(op, part, reflected) for m, part in zip(self._lazy.members, parts)]
    if builtins.any(r is NotImplemented for r in results):
        return NotImplemented
    return _restack(results, self._lazy.dim, self)


def as_tensor(self: S) -> S:
    """See ``TensorDict.as_tensor``: member by member (a lazy stack)."""
    result = _each_member(self, lambda m: m.as_tensor())
    return result.lock_() if self._locked else result


def __neg__(self: S) -> S:
    return _each_member(self, operator.neg)


def __abs__(self: S) -> S:
    return _each_member(self, operator.abs)


def __invert__(self: S) -> S:
    return _each_member(self, operator.invert)


def clamp(self: S, min: object = None, max: object = None, *, out: TensorCore | None = None) -> S:
    """Clamp every tensor of every member to ``[min, max]`` (a lazy stack) when the
    bounds are numbers; see ``TensorDict.clamp`` for the other forms (dense)."""
    if out is None and builtins.all(b is None or _scalar(b) for b in (min, max)):
        return _each_member(self, lambda m: m.clamp(min, max))
    return elementwise.clamp(self, min, max, out=out)


def split_mask(self: S, mask: Tensor) -> list[Tensor] | None:
    """A batch mask split along the stack dim (None unless it spans the batch dims)."""
    stack = self._lazy.dim
    if -1 in self._batch_size and mask.ndim == 0:  # ragged: one value for every element
        return [mask.expand(m._batch_size) for m in self._lazy.members]
    if -1 in self._batch_size and stack < mask.ndim < len(self._batch_size):
        # ragged: a mask over the dims up to the stack dim; each member's part is
        # expanded over its own remaining dims (as tensordict masks a ragged stack)
        members = self._lazy.members
        if mask.shape[stack] != len(members):
            return None
        parts = mask.unbind(stack)
        return [_right_expanded(p, m._batch_size) for p, m in zip(parts, members)]
    if mask.ndim != len(self._batch_size):
        return None
    try:
        full = mask.expand(self._batch_size)
    except RuntimeError:
        return None
    return list(full.unbind(stack))


def _right_expanded(mask: Tensor, batch: torch.Size) -> Tensor:
    """``mask`` (over the leading dims of ``batch``) expanded over the trailing ones."""
    return mask.reshape(*mask.shape, *(1,) * (len(batch) - mask.ndim)).expand(batch)


def masked_fill(self: S, mask: Tensor, value: float | bool | Tensor) -> S:
    """See ``TensorDict.masked_fill``; the mask is split between the members."""
    check_mask(self, mask, "masked_fill")
    masks = split_mask(self, mask)
    if masks is None:
        return applying.masked_fill(self, mask, value)
    results = [m.masked_fill(part, value) for m, part in zip(self._lazy.members, masks)]
    return _restack(results, self._lazy.dim, self)


def where(
    self: S,
    condition: Tensor,
    other: object,
    *,
    out: TensorCore | None = None,
    pad: float | bool | None = None,
    update_batch_size: bool = False,
) -> Any:
    """See ``TensorDict.where``: member by member when ``condition`` spans the batch
    dims and ``other`` can be split between the members, else on the dense stack."""
    check_mask(self, condition, "where")
    masks = None if out is not None or pad is not None else split_mask(self, condition)
    parts = None if masks is None else _parts(self, other)
    if masks is None or parts is None:
        return self.contiguous().where(
            condition, other, out=out, pad=pad, update_batch_size=update_batch_size
        )
    members = self._lazy.members
    results = [m.where(c, o) for m, c, o in zip(members, masks, parts)]
    return _restack(results, self._lazy.dim, self)


def all(self: S, dim: int | None = None) -> Any:
    """``True`` if every element of every member is true; with ``dim``, see
    ``TensorDict.all`` (on the dense stack)."""
    if dim is not None:
        return arithmetic.all(self, dim)
    return builtins.all(bool(m.select(*self._lazy).all()) for m in self._lazy.distinct())


def any(self: S, dim: int | None = None) -> Any:
    """``True`` if any element of any member is true; with ``dim``, see
    ``TensorDict.any`` (on the dense stack)."""
    if dim is not None:
        return arithmetic.any(self, dim)
    return builtins.any(bool(m.select(*self._lazy).any()) for m in self._lazy.distinct())


# The reflected operators are attached to the lazy-stack class itself (not inherited) so that
# Python asks a lazy stack first when it is the right operand of a dense instance of its
# members' class: ``dense + stack`` stays lazy too.


def __radd__(self: S, other: object) -> S:
    result: S = self._binary(operator.add, other, True)
    return result


def __rsub__(self: S, other: object) -> S:
    result: S = self._binary(operator.sub, other, True)
    return result


def __rmul__(self: S, other: object) -> S:
    result: S = self._binary(operator.mul, other, True)
    return result


def __rtruediv__(self: S, other: object) -> S:
    result: S = self._binary(operator.truediv, other, True)
    return result


def __rfloordiv__(self: S, other: object) -> S:
    result: S = self._binary(operator.floordiv, other, True)
    return result


def __rmod__(self: S, other: object) -> S:
    result: S = self._binary(operator.mod, other, True)
    return result


def __rpow__(self: S, other: object) -> S:
    result: S = self._binary(operator.pow, other, True)
    return result


def __rand__(self: S, other: object) -> S:
    result: S = self._binary(operator.and_, other, True)
    return result


def __ror__(self: S, other: object) -> S:
    result: S = self._binary(operator.or_, other, True)
    return result


def __rxor__(self: S, other: object) -> S:
    result: S = self._binary(operator.xor, other, True)
    return result


# The comparisons, member by member too.


def __eq__(self: S, other: object) -> S:
    result: S = self._binary(operator.eq, other, False)
    return result


def __ne__(self: S, other: object) -> S:
    result: S = self._binary(operator.ne, other, False)
    return result


def __lt__(self: S, other: object) -> S:
    result: S = self._binary(operator.lt, other, False)
    return result


def __le__(self: S, other: object) -> S:
    result: S = self._binary(operator.le, other, False)
    return result


def __gt__(self: S, other: object) -> S:
    result: S = self._binary(operator.gt, other, False)
    return result


def __ge__(self: S, other: object) -> S:
    result: S = self._binary(operator.ge, other, False)
    return result


def _member_wise(name: str, doc: str) -> Callable[..., object]:
    def method(self: S, *args: object, **kwargs: object) -> Any:
        return _each_member(self, lambda m: getattr(m, name)(*args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"{doc} Member by member: a lazy stack."
    return method


#: Every element-wise entry of the leaf-wise table without an operand, member by member
#: (attached to the lazy-stack class after its body, under the table's names).
MEMBER_WISE: dict[str, Callable[..., object]] = {
    name: _member_wise(name, entry.doc)
    for name, entry in TABLE.items()
    if entry.kind in (unary, nan_replace)
}
