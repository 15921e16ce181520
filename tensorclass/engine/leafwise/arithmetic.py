"""Elementwise arithmetic, comparisons and reductions, leaf by leaf.

The other operand is a number, a tensor (lined up with the batch dims if its shape
broadcasts to the batch shape, else broadcast to every leaf: see elementwise.py) or a
tensor class with the same keys. Fused ``torch._foreach_*`` kernels run the common
operators over all the tensors of a level in one call.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar, overload

import numpy as np
import torch
from torch import Tensor

from ...errors import OperandError, StructureMismatchError
from ...keys import shown_key
from ...non_tensor import NonTensorData, NonTensorStack, object_array, same_value
from ..core.self_types import E, Node, typed_as
from ..core.state import Names, TensorCore
from ..shape.batch_dims import batch_dim
from ..shape.inplace import holds_lazy, through_lazy
from . import functions as leaf_functions
from .apply import paired_tensor_leaves, tensor_leaf_keys, tensor_leaves
from .elementwise import align, batch_aligned, with_default
from .elementwise_kinds import Default
from .functions import Operator
from .reduction_kinds import single_dim
from .reductions import reduced_level

_NO_DIMS = torch.Size(())

C = TypeVar("C", bound=TensorCore)

__all__ = [
    "__abs__",
    "__add__",
    "__and__",
    "__floordiv__",
    "__ge__",
    "__gt__",
    "__iadd__",
    "__iand__",
    "__ifloordiv__",
    "__imod__",
    "__imul__",
    "__invert__",
    "__ior__",
    "__ipow__",
    "__isub__",
    "__itruediv__",
    "__ixor__",
    "__le__",
    "__lt__",
    "__mod__",
    "__mul__",
    "__neg__",
    "__or__",
    "__pos__",
    "__pow__",
    "__radd__",
    "__rand__",
    "__rfloordiv__",
    "__rmod__",
    "__rmul__",
    "__ror__",
    "__rpow__",
    "__rsub__",
    "__rtruediv__",
    "__rxor__",
    "__sub__",
    "__truediv__",
    "__xor__",
    "all",
    "any",
    "lerp_",
]

_SCALARS = (int, float, bool, complex)
#: what a fused in-place kernel takes: one number for every leaf, or one tensor per leaf
_FUSED_OPERANDS = (list, *_SCALARS)
# torch.func transforms (vmap) have no batching rules for the fused kernels: fall back to
# one op per tensor while one is active (a ~30 ns check).
_transforms_active = torch._C._are_functorch_transforms_active
_FOREACH: dict[Operator, Callable[..., Sequence[Tensor]]] = {
    operator.add: torch._foreach_add,
    operator.sub: torch._foreach_sub,
    operator.mul: torch._foreach_mul,
    operator.truediv: torch._foreach_div,
    operator.pow: torch._foreach_pow,
    leaf_functions.maximum: torch._foreach_maximum,
    leaf_functions.minimum: torch._foreach_minimum,
    torch.clamp_min: torch._foreach_clamp_min,
    torch.clamp_max: torch._foreach_clamp_max,
}
_FOREACH_INPLACE: dict[Operator, Callable[..., object]] = {
    operator.add: torch._foreach_add_,
    operator.sub: torch._foreach_sub_,
    operator.mul: torch._foreach_mul_,
    operator.truediv: torch._foreach_div_,
    operator.pow: torch._foreach_pow_,
    leaf_functions.maximum: torch._foreach_maximum_,
    leaf_functions.minimum: torch._foreach_minimum_,
    torch.clamp_min: torch._foreach_clamp_min_,
    torch.clamp_max: torch._foreach_clamp_max_,
}
_SYMBOLS: dict[Operator, str] = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.pow: "**",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
}
_INPLACE_OPS: dict[Operator, Operator] = {
    operator.add: operator.iadd,
    operator.sub: operator.isub,
    operator.mul: operator.imul,
    operator.truediv: operator.itruediv,
    operator.pow: operator.ipow,
    operator.floordiv: operator.ifloordiv,
    operator.mod: operator.imod,
    operator.and_: operator.iand,
    operator.or_: operator.ior,
    operator.xor: operator.ixor,
    **leaf_functions.INPLACE,
}


def _non_tensor_equal(
    a: NonTensorData | NonTensorStack, b: NonTensorData | NonTensorStack, shape: torch.Size
) -> Tensor:
    """Elementwise equality of two non-tensor leaves, as a bool tensor of ``shape``."""
    if type(a) is NonTensorData and type(b) is NonTensorData:
        return torch.full(shape, same_value(a.data, b.data))
    left = a.array if type(a) is NonTensorStack else object_array(shape, a.data)
    right = b.array if type(b) is NonTensorStack else object_array(shape, b.data)
    return torch.from_numpy(np.vectorize(same_value, otypes=[bool])(left, right))


#: what the leaves take as the other operand of an operator
Operand = Tensor | int | float | bool | complex


def _operand(other: object) -> Operand | None:
    """``other`` as an operand for the leaves, or ``None`` (Python tries the reflected
    operator, or raises).

    Numbers and tensors pass as they are; NumPy scalars become Python numbers (the fused
    kernels take only those) and NumPy arrays become tensors (sharing their memory)."""
    if isinstance(other, np.generic):
        number: Operand = other.item()  # (a Python number)
        return number
    if isinstance(other, (Tensor, *_SCALARS)):
        return other
    if isinstance(other, np.ndarray):
        return torch.from_numpy(other)
    return None


def _inplace_refusal(
    op: Operator, leaves: list[Tensor], operands: Operand | list[Tensor]
) -> tuple[int, str] | None:
    """The first leaf that ``leaf op= operand`` cannot write, with the reason, or ``None``;
    ``operands`` is one operand for every leaf or a list, one per leaf.

    Checked before any leaf is written, so an in-place operator writes every leaf or none:
    a leaf that requires grad, an operand on another device, a shape that does not
    broadcast to the leaf's, a result dtype the leaf cannot hold. A quick test over whole
    lists clears the common cases; only a refusal scans the leaves one by one."""
    grad = torch.is_grad_enabled() and builtins.any(leaf.requires_grad for leaf in leaves)
    if not grad:
        if isinstance(operands, list):
            if [leaf.shape for leaf in leaves] == [o.shape for o in operands] and (
                [leaf.dtype for leaf in leaves] == [o.dtype for o in operands]
            ):
                return None  # same shapes and dtypes: the other operand cannot be refused
        elif not isinstance(operands, Tensor):
            dtypes = {leaf.dtype for leaf in leaves}
            if type(operands) in _REAL and dtypes <= _FLOATS and op not in _BITWISE:
                return None
            if builtins.all(_cast_problem(op, dtype, operands) is None for dtype in dtypes):
                return None
        else:
            shape, device = operands.shape, operands.device
            if (
                builtins.all(_broadcasts_to(shape, s) for s in {leaf.shape for leaf in leaves})
                and builtins.all(
                    _cast_problem(op, d, operands) is None for d in {leaf.dtype for leaf in leaves}
                )
                and (not shape or builtins.all(leaf.device == device for leaf in leaves))
            ):
                return None
    per_leaf = operands if isinstance(operands, list) else [operands] * len(leaves)
    for i, (leaf, operand) in enumerate(zip(leaves, per_leaf)):
        problem = _leaf_refusal(op, leaf, operand)
        if problem is not None:
            return i, problem
    return None


def fused_scalar_inplace(op: Operator, leaves: list[Tensor], other: object) -> bool:
    """``leaf op= other`` for every leaf with one fused kernel, when ``other`` is a number,
    the kernel exists and no leaf would refuse it; ``False`` (nothing written) otherwise: the
    caller takes the per-leaf path, which names the key a refusal is about."""
    fused = _FOREACH_INPLACE.get(op)
    if (
        fused is None
        or not leaves
        or not isinstance(other, _SCALARS)
        or _transforms_active()
        or _inplace_refusal(op, leaves, other) is not None
    ):
        return False
    fused(leaves, other)
    return True


def fused_paired_inplace(op: Operator, pairs: list[tuple[TensorCore, TensorCore]]) -> bool:
    """``node op= other`` for every ``(node, other)`` pair (leaves paired by key) with one
    fused kernel, when the kernel exists, every node is dense (no lazy stack in it) and no
    leaf would refuse its operand; ``False`` (nothing written) otherwise: the caller takes
    the per-node path, which names the key a refusal is about."""
    fused = _FOREACH_INPLACE.get(op)
    if fused is None or _transforms_active():
        return False
    leaves: list[Tensor] = []
    others: list[Tensor] = []
    for node, other in pairs:
        if type(node._data) is not dict or not isinstance(other, Node) or holds_lazy(node):
            return False
        node_leaves, other_leaves = paired_tensor_leaves(node, other, "in-place operator")
        leaves += node_leaves
        others += other_leaves
    if not leaves or _inplace_refusal(op, leaves, others) is not None:
        return False
    fused(leaves, others)
    return True


def refuse_first(op: Operator, pairs: list[tuple[TensorCore, object]]) -> None:
    """Raise the error of the first ``(node, operand)`` pair whose ``node op= operand``
    would be refused (nothing written), so that writing node after node is every node or
    none. Nodes holding lazy stacks are left to their own checks."""
    for node, other in pairs:
        if type(node._data) is not dict or holds_lazy(node) or not isinstance(node, Node):
            continue
        operands: Operand | list[Tensor]
        if isinstance(other, TensorCore):
            if not isinstance(other, Node):
                continue
            leaves, operands = paired_tensor_leaves(node, other, "in-place operator")
        else:
            operand = _operand(other)
            if operand is None or (isinstance(operand, Tensor) and operand.ndim):
                continue
            leaves, operands = tensor_leaves(node), operand
        refused = _inplace_refusal(op, leaves, operands)
        if refused is not None:
            _refuse_inplace(node, op, operands, *refused)


def _leaf_refusal(op: Operator, leaf: Tensor, operand: Operand) -> str | None:
    """Why ``leaf op= operand`` would fail, or ``None``."""
    if torch.is_grad_enabled() and leaf.requires_grad and leaf.is_leaf:
        return "it is a leaf that requires grad (write it under torch.no_grad())"
    if isinstance(operand, Tensor):
        if not _broadcasts_to(operand.shape, leaf.shape):
            return f"shape {tuple(operand.shape)} does not broadcast to {tuple(leaf.shape)}"
        if operand.dim() and operand.device != leaf.device:
            return f"the operand is on {operand.device}, the leaf on {leaf.device}"
    return _cast_problem(op, leaf.dtype, operand)


def _broadcasts_to(shape: torch.Size, target: torch.Size) -> bool:
    if len(shape) > len(target):
        return False
    return builtins.all(a == 1 or a == b for a, b in zip(reversed(shape), reversed(target)))


_BITWISE = (
    operator.and_,
    operator.or_,
    operator.xor,
    torch.bitwise_and,
    torch.bitwise_or,
    torch.bitwise_xor,
)
_REAL = (int, float, bool)  # a real Python number fits any floating leaf
_FLOATS = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})


_PROBES: dict[torch.dtype, Tensor] = {}


def _probe(dtype: torch.dtype) -> Tensor:
    """A zero-dim tensor of ``dtype`` for type promotion (read, never written)."""
    probe = _PROBES.get(dtype)
    if probe is None:
        probe = _PROBES[dtype] = torch.zeros((), dtype=dtype)
    return probe


def _cast_problem(op: Operator, dtype: torch.dtype, operand: Operand) -> str | None:
    """Why the result of ``leaf op operand`` cannot be written into a ``dtype`` leaf."""
    if isinstance(operand, Tensor):
        result = (
            torch.promote_types(dtype, operand.dtype)
            if operand.dim()
            else torch.result_type(_probe(dtype), operand)
        )
    else:
        result = torch.result_type(_probe(dtype), operand)
    if op is operator.truediv and not (result.is_floating_point or result.is_complex):
        result = torch.get_default_dtype()  # true division of integers gives floats
    if op in _BITWISE and (result.is_floating_point or result.is_complex):
        return f"{_SYMBOLS.get(op, op.__name__)} needs integer or bool tensors, not {result}"
    if not torch.can_cast(result, dtype):
        return f"the result, {result}, cannot be stored in a {dtype} leaf"
    return None


__array_ufunc__ = None

# -- binary operators ------------------------------------------------------------------


def _binary(
    self: E,
    op: Operator,
    other: object,
    reflected: bool = False,
    default: Default = None,
) -> E:
    result: E
    if isinstance(other, TensorCore):
        if default is not None:
            result = with_default(self, op, other, default, reflected)
        else:
            result = _paired_like(self, _binary_pairs(self, op, other, reflected, ()), other)
        return result
    operand = _operand(other)
    if operand is None:
        result = NotImplemented  # Python then tries the reflected operator
        return result
    if (
        isinstance(operand, Tensor)
        and operand.ndim
        and batch_aligned(operand.shape, self._batch_size)
    ):
        aligned = len(self._batch_size)
        return self._like(_binary_broadcast(self, op, operand, reflected, aligned))
    return self._like(_binary_broadcast(self, op, operand, reflected))


def _binary_broadcast(
    self: E, op: Operator, other: Operand, reflected: bool, aligned: int = -1
) -> dict[str, object]:
    """``op`` of every tensor leaf and ``other``; ``aligned`` (the batch dims of the
    receiver the operation started from), if not -1: ``other`` lines up with the batch
    dims (see elementwise.py)."""
    out: dict[str, object] = dict.fromkeys(self._data)
    keys, tensors = [], []
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            keys.append(key)
            tensors.append(leaf)
        elif isinstance(leaf, Node):
            out[key] = leaf._like(_binary_broadcast(leaf, op, other, reflected, aligned))
        else:
            out[key] = leaf
    fused = _FOREACH.get(op)
    results: Sequence[Tensor]
    if aligned >= 0 and isinstance(other, Tensor):  # (only a tensor is ever aligned)
        others = [align(other, t.ndim, aligned) for t in tensors]
        pairs = zip(others, tensors) if reflected else zip(tensors, others)
        results = [op(a, b) for a, b in pairs]
    elif reflected:
        results = [op(other, t) for t in tensors]
    elif fused is not None and isinstance(other, _SCALARS) and tensors and not _transforms_active():
        results = fused(tensors, other)
    else:
        results = [op(t, other) for t in tensors]
    out.update(zip(keys, results))
    return out


def _binary_pairs(
    self: E,
    op: Operator,
    other: TensorCore,
    reflected: bool,
    path: tuple[str, ...],
) -> dict[str, object]:
    data, other_data = self._data, other._data
    if len(data) != len(other_data) or builtins.any(key not in other_data for key in data):
        raise StructureMismatchError(
            f"operands have different keys at {path or 'the top level'}: "
            f"{sorted(data)} and {sorted(other_data)}"
        )
    out: dict[str, object] = dict.fromkeys(data)
    keys, lefts, rights = [], [], []
    for key, leaf in data.items():
        right = other_data[key]
        if isinstance(leaf, Tensor):
            keys.append(key)
            lefts.append(leaf)
            rights.append(right)
        elif isinstance(leaf, Node):
            out[key] = _paired_like(
                leaf, _binary_pairs(leaf, op, right, reflected, (*path, key)), right
            )
        elif op is operator.eq or op is operator.ne:
            equal = _non_tensor_equal(leaf, right, self._batch_size)
            out[key] = equal if op is operator.eq else ~equal
        else:
            out[key] = leaf
    if reflected:
        lefts, rights = rights, lefts
    fused = _FOREACH.get(op)
    results: Sequence[Tensor]
    if (
        fused is not None
        and lefts
        and builtins.all(isinstance(r, Tensor) for r in rights)
        and not _transforms_active()
    ):
        results = fused(lefts, rights)
    else:
        results = [op(a, b) for a, b in zip(lefts, rights)]
    out.update(zip(keys, results))
    return out


@through_lazy
def _inplace(self: E, op: Operator, other: object) -> E:
    operands: Operand | list[Tensor]  # one for every leaf, or one per leaf
    deferred: E = NotImplemented  # the result that makes Python try the plain operator
    if isinstance(other, TensorCore):
        if not isinstance(other, Node):
            return deferred
        leaves, operands = paired_tensor_leaves(self, other, "in-place operator")
    else:
        operand = _operand(other)
        if operand is None:
            return deferred
        leaves, operands = tensor_leaves(self), operand
        if (
            isinstance(operand, Tensor)
            and operand.ndim
            and batch_aligned(operand.shape, self._batch_size)
        ):
            n = len(self._batch_size)
            operands = [align(operand, leaf.ndim, n) for leaf in leaves]
    refused = _inplace_refusal(op, leaves, operands)
    if refused is not None:
        _refuse_inplace(self, op, operands, *refused)
    fused = _FOREACH_INPLACE.get(op)
    if (
        fused is not None
        and leaves
        and isinstance(operands, _FUSED_OPERANDS)
        and not _transforms_active()
    ):
        fused(leaves, operands)
        return self
    # an operator's augmented form, or a torch function's in-place method (atan2 -> atan2_)
    inplace_op = _INPLACE_OPS.get(op) or getattr(Tensor, f"{op.__name__}_")
    if isinstance(operands, list):
        for leaf, operand in zip(leaves, operands):
            inplace_op(leaf, operand)
    else:
        for leaf in leaves:
            inplace_op(leaf, operands)
    return self


def _refuse_inplace(
    self: E, op: Operator, operands: Operand | list[Tensor], position: int, reason: str
) -> None:
    """Raise the error of ``leaf op= operand`` for the tensor leaf at ``position``, naming
    its key (no leaf has been written)."""
    other = operands[position] if isinstance(operands, list) else operands
    key = tensor_leaf_keys(self)[position]
    leaf = tensor_leaves(self)[position]
    name = shown_key(key)
    symbol = f"{_SYMBOLS[op]}=" if op in _SYMBOLS else f"{op.__name__}_"
    operand = (
        f"a {other.dtype} tensor of shape {tuple(other.shape)}"
        if isinstance(other, Tensor)
        else repr(other)
    )
    raise OperandError(
        f"in-place {symbol}: key {name!r} (a {leaf.dtype} tensor of shape "
        f"{tuple(leaf.shape)}) cannot take {operand}: {reason}; no leaf was changed"
    )


def __add__(self: E, other: object) -> E:
    return self._binary(operator.add, other)


def __radd__(self: E, other: object) -> E:
    return self._binary(operator.add, other, True)


def __iadd__(self: E, other: object) -> E:
    return self._inplace(operator.add, other)


def __sub__(self: E, other: object) -> E:
    return self._binary(operator.sub, other)


def __rsub__(self: E, other: object) -> E:
    return self._binary(operator.sub, other, True)


def __isub__(self: E, other: object) -> E:
    return self._inplace(operator.sub, other)


def __mul__(self: E, other: object) -> E:
    return self._binary(operator.mul, other)


def __rmul__(self: E, other: object) -> E:
    return self._binary(operator.mul, other, True)


def __imul__(self: E, other: object) -> E:
    return self._inplace(operator.mul, other)


def __truediv__(self: E, other: object) -> E:
    return self._binary(operator.truediv, other)


def __rtruediv__(self: E, other: object) -> E:
    return self._binary(operator.truediv, other, True)


def __itruediv__(self: E, other: object) -> E:
    return self._inplace(operator.truediv, other)


def __floordiv__(self: E, other: object) -> E:
    return self._binary(operator.floordiv, other)


def __rfloordiv__(self: E, other: object) -> E:
    return self._binary(operator.floordiv, other, True)


def __ifloordiv__(self: E, other: object) -> E:
    return self._inplace(operator.floordiv, other)


def __mod__(self: E, other: object) -> E:
    return self._binary(operator.mod, other)


def __rmod__(self: E, other: object) -> E:
    return self._binary(operator.mod, other, True)


def __imod__(self: E, other: object) -> E:
    return self._inplace(operator.mod, other)


def __pow__(self: E, other: object) -> E:
    return self._binary(operator.pow, other)


def __rpow__(self: E, other: object) -> E:
    return self._binary(operator.pow, other, True)


def __ipow__(self: E, other: object) -> E:
    return self._inplace(operator.pow, other)


def __and__(self: E, other: object) -> E:
    return self._binary(operator.and_, other)


def __rand__(self: E, other: object) -> E:
    return self._binary(operator.and_, other, True)


def __iand__(self: E, other: object) -> E:
    return self._inplace(operator.and_, other)


def __or__(self: E, other: object) -> E:
    return self._binary(operator.or_, other)


def __ror__(self: E, other: object) -> E:
    return self._binary(operator.or_, other, True)


def __ior__(self: E, other: object) -> E:
    return self._inplace(operator.or_, other)


def __xor__(self: E, other: object) -> E:
    return self._binary(operator.xor, other)


def __rxor__(self: E, other: object) -> E:
    return self._binary(operator.xor, other, True)


def __ixor__(self: E, other: object) -> E:
    return self._inplace(operator.xor, other)


# -- comparisons (results hold bool tensors) ---------------------------------------------


def __lt__(self: E, other: object) -> E:
    return self._binary(operator.lt, other)


def __le__(self: E, other: object) -> E:
    return self._binary(operator.le, other)


def __gt__(self: E, other: object) -> E:
    return self._binary(operator.gt, other)


def __ge__(self: E, other: object) -> E:
    return self._binary(operator.ge, other)


# -- unary -------------------------------------------------------------------------------


def __neg__(self: E) -> E:
    return self._map_tensors(torch.neg)


def __pos__(self: E) -> E:
    return self


def __abs__(self: E) -> E:
    return self._map_tensors(torch.abs)


def __invert__(self: E) -> E:
    return self._map_tensors(torch.bitwise_not)


@through_lazy
def lerp_(self: E, end: object, weight: object) -> E:
    """Move every tensor towards ``end`` by ``weight``, in place.

    ``end`` and ``weight`` are each a number, a tensor or an instance (paired by key)."""
    if not isinstance(weight, _SCALARS) or not (
        isinstance(end, TensorCore)
        or (isinstance(end, Tensor) and not batch_aligned(end.shape, self._batch_size))
    ):
        return self._nary_inplace(leaf_functions.lerp, (end, weight), {})
    if isinstance(end, TensorCore):
        leaves, ends = paired_tensor_leaves(self, end, "lerp_")
    else:
        leaves = tensor_leaves(self)
        ends = [end] * len(leaves)
    if _transforms_active():
        for leaf, target in zip(leaves, ends):
            leaf.lerp_(target, weight)
    else:
        torch._foreach_lerp_(leaves, ends, weight)
    return self


# -- reductions ----------------------------------------------------------------------------


def _reduce(
    self: E,
    fn: Callable[..., Tensor],
    dim: int | Sequence[int] | None,
    keepdim: bool,
    **kwargs: object,
) -> E:
    """Reduce every tensor over all its dims (``dim=None``) or over batch ``dim``."""
    # the leaves are walked as reductions.py walks them: a shared non-tensor value survives
    # (per-element values cannot reduce); the result has no dim names
    if dim is None:

        def leaf_fn(t: Tensor, n: int) -> Tensor:
            return fn(t, **kwargs)

        def size_fn(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
            return _NO_DIMS, None

    else:
        n = len(self._batch_size)
        dims = tuple(sorted({batch_dim(d, n) for d in ([dim] if isinstance(dim, int) else dim)}))

        def leaf_fn(t: Tensor, n: int) -> Tensor:
            return fn(t, dim=dims, keepdim=keepdim, **kwargs)

        def size_fn(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
            kept = (1 if d in dims else s for d, s in enumerate(size) if keepdim or d not in dims)
            return torch.Size(kept), None

    result: E = reduced_level(self, leaf_fn, size_fn, False)
    return result


@overload
def _truth(self: E, dim: None = None) -> bool: ...


@overload
def _truth(self: E, dim: int) -> E: ...


def _truth(self: object, dim: int | None = None) -> object:
    """The one typed signature of :func:`all` and :func:`any` (a stub): a ``bool`` over
    every element, an instance per batch ``dim``."""


def _truth_test(
    every: Callable[[Iterable[bool]], bool], leaf_test: Callable[..., Tensor], doc: str
) -> Callable[..., object]:
    """A truth test over the leaves (``all`` / ``any``): ``every`` of ``leaf_test`` of each
    tensor, or ``leaf_test`` along batch ``dim`` (see :func:`_truth`)."""
    name = every.__name__

    def test(self: E, dim: int | None = None) -> bool | E:
        if dim is None:
            return every(bool(leaf_test(leaf)) for leaf in tensor_leaves(self))
        return self._reduce(single_dim(leaf_test), dim, False)

    test.__name__ = test.__qualname__ = name
    test.__doc__ = doc
    return test


all = typed_as(
    _truth,
    _truth_test(
        builtins.all,
        torch.all,
        "``True`` if every element of every tensor is true; with ``dim``, per batch dim.",
    ),
)
any = typed_as(
    _truth,
    _truth_test(
        builtins.any,
        torch.any,
        "``True`` if any element of any tensor is true; with ``dim``, per batch dim.",
    ),
)


def _paired_like(node: C, data: dict[str, object], other: TensorCore) -> C:
    """The result of an operator between ``node`` and ``other``: their batch sizes
    broadcast (as their leaves do) when they differ but have as many dims."""
    size, others = node._batch_size, other._batch_size
    if others == size or len(others) != len(size):
        return node._like(data)
    # (the leaves broadcast already: a dim of one size or another is of size 1)
    return node._like(data, torch.Size(b if a == 1 else a for a, b in zip(size, others)))
