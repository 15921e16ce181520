"""Element-wise operations with several operands, casts with a filter, dtype and bytes.

The operands of an element-wise method are numbers, tensors or instances. An instance is
paired with the receiver key by key. A tensor follows one rule (:func:`batch_aligned`):

- if its shape broadcasts to the batch shape (aligned right, as torch broadcasts: the batch
  shape itself, a trailing part of it, or either with some dims of size 1), it lines up
  with the batch dims: each leaf sees it with one trailing singleton dim per feature dim,
  so ``td * torch.ones(td.batch_size)`` scales every leaf element by element;
- otherwise it broadcasts with each leaf as torch broadcasts two tensors (aligned with the
  leaf's trailing dims), so ``td * torch.tensor([1.0, 2.0, 3.0])`` scales the last dim of
  leaves of shape ``(*batch, 3)``.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.ones(2, 3)}, [2])
>>> (td * torch.tensor([1.0, 2.0]))["a"]
tensor([[1., 1., 1.],
        [2., 2., 2.]])
>>> (td * torch.tensor([1.0, 2.0, 3.0]))["a"]
tensor([[1., 2., 3.],
        [1., 2., 3.]])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import torch
from torch import Tensor

from ...errors import OperandError, StructureMismatchError
from ...keys import shown_key
from ...non_tensor import NonTensorData
from ..core.self_types import E, Node, as_op
from ..core.state import TensorCore
from ..shape.inplace import through_lazy
from . import functions as leaf_functions
from .apply import paired_tensor_leaves, tensor_leaf_keys, tensor_leaves
from .elementwise_kinds import Default
from .functions import Operator

C = TypeVar("C", bound=TensorCore)

__all__ = [
    "align",
    "batch_aligned",
    "bytes",
    "clamp",
    "clamp_",
    "dtype",
    "leafwise",
    "with_default",
]


def batch_aligned(shape: torch.Size, batch_size: torch.Size) -> bool:
    """Whether a tensor of ``shape`` (at least one dim) lines up with the batch dims: it
    broadcasts to ``batch_size`` without growing it (aligned right)."""
    if not shape or len(shape) > len(batch_size):
        return False
    return all(a == 1 or a == b for a, b in zip(reversed(shape), reversed(batch_size)))


def align(tensor: Tensor, leaf_ndim: int, batch_ndim: int) -> Tensor:
    """``tensor`` (batch-aligned) as a leaf of ``leaf_ndim`` dims sees it: one trailing
    singleton dim per feature dim."""
    extra = leaf_ndim - batch_ndim
    return tensor.reshape(tensor.shape + (1,) * extra) if extra > 0 else tensor


def _columns(
    node: TensorCore, leaves: list[Tensor], operands: tuple[object, ...], what: str
) -> list[object]:
    """For each operand, its value per leaf (a list) or one value for every leaf."""
    batch_size = node._batch_size
    n = len(batch_size)
    columns: list[object] = []
    for operand in operands:
        if isinstance(operand, TensorCore):
            columns.append(paired_tensor_leaves(node, operand, what)[1])
        elif isinstance(operand, Tensor) and batch_aligned(operand.shape, batch_size):
            columns.append([align(operand, leaf.ndim, n) for leaf in leaves])
        else:
            columns.append(operand)
    return columns


def _results(
    leaves: list[Tensor],
    columns: list[object],
    fn: Callable[..., Tensor],
    kwargs: dict[str, object],
) -> list[Tensor]:
    if all(not isinstance(c, list) for c in columns):
        return [fn(leaf, *columns, **kwargs) for leaf in leaves]
    return [
        fn(leaf, *[c[i] if isinstance(c, list) else c for c in columns], **kwargs)
        for i, leaf in enumerate(leaves)
    ]


def _rebuilt(node: C, results: Iterator[Tensor], batch_size: torch.Size | None = None) -> C:
    """``node`` with its tensor leaves replaced, in :func:`tensor_leaves` order, by the
    items of the iterator ``results``; with ``batch_size``, every level gets it (results
    reduced to that shape) and per-element non-tensor leaves are dropped."""
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = next(results)
        elif isinstance(leaf, TensorCore):
            data[key] = _rebuilt(leaf, results, batch_size)
        elif batch_size is None or type(leaf) is NonTensorData:
            data[key] = leaf
    if batch_size is None:
        return type(node)._new(data, node._batch_size, node._device, node._names)
    return type(node)._new(data, batch_size, node._device, None)


def leafwise(
    node: C,
    fn: Callable[..., Tensor],
    operands: tuple[object, ...],
    kwargs: dict[str, object],
    batch_size: torch.Size | None = None,
) -> C:
    """``fn(leaf, *operands, **kwargs)`` for every tensor leaf of ``node`` (operands paired
    or aligned per leaf); see :func:`_rebuilt` for ``batch_size``."""
    leaves = tensor_leaves(node)
    results = _results(leaves, _columns(node, leaves, operands, fn.__name__), fn, kwargs)
    return _rebuilt(node, iter(results), batch_size)


# -- default=: keys that only one operand has ---------------------------------------------


def with_default(node: C, op: Operator, other: TensorCore, default: Default, reflected: bool) -> C:
    """``op`` of ``node`` and the instance ``other``, paired by key, where a key only one of
    them has is dropped (``default="intersection"``) or meets ``default`` in place of the
    missing leaf (the result has the keys of both)."""
    if isinstance(default, str) and default != "intersection":
        raise ValueError(f'default= is "intersection", a number or a tensor, not {default!r}')
    return _default_level(node, other, op, default, reflected, len(node._batch_size), ())


def _takes_any_key(node: TensorCore) -> bool:
    """Whether the class of ``node``'s results takes keys it does not declare."""
    cls = getattr(type(node), "_member_cls", type(node))  # a lazy stack makes its members'
    return cls is None or bool(cls._fast_set)


def _one_sided(value: object, with_default: Callable[[Tensor], Tensor]) -> object:
    """An entry only one operand of a ``default=`` operation holds: each tensor of it
    combined with the default by ``with_default``; a non-tensor value as it is."""
    if isinstance(value, Tensor):
        return with_default(value)
    if isinstance(value, Node):
        return value._map_tensors(with_default)
    return value


def _default_level(
    left: C,
    right: TensorCore,
    op: Operator,
    default: Default,
    reflected: bool,
    n: int,
    path: tuple[str, ...],
) -> C:
    drop = isinstance(default, str)

    def pair(mine: object, theirs: object, leaf: Tensor) -> Tensor:
        if (
            isinstance(mine, Tensor)
            and mine is not leaf
            and batch_aligned(mine.shape, left._batch_size)
        ):
            mine = align(mine, leaf.ndim, n)
        if (
            isinstance(theirs, Tensor)
            and theirs is not leaf
            and batch_aligned(theirs.shape, left._batch_size)
        ):
            theirs = align(theirs, leaf.ndim, n)
        first, second = (theirs, mine) if reflected else (mine, theirs)
        if not isinstance(first, Tensor):  # a default first: torch functions want a tensor
            first = torch.as_tensor(first, device=leaf.device)
        return op(first, second)

    out: dict[str, object] = {}
    left_data, right_data = left._data, right._data
    if drop and not _takes_any_key(left):
        dropped = [
            key
            for key, leaf in left_data.items()
            if key not in right_data and isinstance(leaf, (Tensor, TensorCore))
        ]
        if dropped:
            raise StructureMismatchError(
                f'default="intersection" would drop {dropped} at '
                f"{shown_key(path) if path else 'the top level'}, which "
                f"{type(left).__name__} declares"
            )
    for key, leaf in left_data.items():
        if key in right_data:
            theirs = right_data[key]
            if isinstance(leaf, Tensor) and isinstance(theirs, Tensor):
                out[key] = pair(leaf, theirs, leaf)
            elif isinstance(leaf, TensorCore) and isinstance(theirs, TensorCore):
                out[key] = _default_level(leaf, theirs, op, default, reflected, n, (*path, key))
            elif isinstance(leaf, (Tensor, TensorCore)) or isinstance(theirs, (Tensor, TensorCore)):
                raise StructureMismatchError(
                    f"key {shown_key((*path, key))!r} holds a {type(leaf).__name__} in one "
                    f"operand and a {type(theirs).__name__} in the other"
                )
            else:
                out[key] = leaf
        elif not drop or not isinstance(leaf, (Tensor, TensorCore)):
            out[key] = _one_sided(leaf, lambda t: pair(t, default, t))
    if not drop:
        extra = [key for key in right_data if key not in left_data]
        if extra and not _takes_any_key(left):
            raise StructureMismatchError(
                f"default=: the other operand has {sorted(extra)} at "
                f"{shown_key(path) if path else 'the top level'}, which "
                f"{type(left).__name__} does not declare"
            )
        for key in extra:
            out[key] = _one_sided(right_data[key], lambda t: pair(default, t, t))
    return left._like(out)


def _nary(
    self: E, fn: Callable[..., Tensor], operands: tuple[object, ...], kwargs: dict[str, object]
) -> E:
    """A new instance: ``fn(leaf, *operands, **kwargs)`` for every tensor leaf."""
    result: E = leafwise(self, fn, operands, kwargs)
    return result


@through_lazy
def _nary_inplace(
    self: E, fn: Callable[..., Tensor], operands: tuple[object, ...], kwargs: dict[str, object]
) -> E:
    """``fn(leaf, *operands, **kwargs)`` written into every tensor leaf.

    Every result is computed and checked (its shape and dtype must fit the leaf, a leaf
    requiring grad is refused) before any leaf is written: every leaf or none."""
    leaves = tensor_leaves(self)
    name = f"{fn.__name__}_"
    results = _results(leaves, _columns(self, leaves, operands, name), fn, kwargs)
    grad = torch.is_grad_enabled()
    for i, (leaf, result) in enumerate(zip(leaves, results)):
        problem = None
        if grad and leaf.requires_grad and leaf.is_leaf:
            problem = "it is a leaf that requires grad (write it under torch.no_grad())"
        elif result.shape != leaf.shape:
            problem = f"the result has shape {tuple(result.shape)}"
        elif not torch.can_cast(result.dtype, leaf.dtype):
            problem = f"the result, {result.dtype}, cannot be stored in it"
        if problem is not None:
            key = shown_key(tensor_leaf_keys(self)[i])
            raise OperandError(
                f"in-place {name}: key {key!r} (a {leaf.dtype} tensor of shape "
                f"{tuple(leaf.shape)}) cannot be written: {problem}; no leaf was changed"
            )
    write_back = getattr(self, "_write_back", None)
    if write_back is not None:  # a lazy stack: its leaves are stacked copies
        write_back(_rebuilt(self, iter(results)), name)
        return self
    for leaf, result in zip(leaves, results):
        leaf.copy_(result)
    return self


# -- casts -----------------------------------------------------------------------------


def _cast_leaves(
    self: E,
    convert: Callable[[Tensor], Tensor] | None,
    dtype: torch.dtype | str,
    cast_filter: Callable[[tuple[str, ...], Tensor], bool] | None,
) -> E:
    """Every tensor leaf that ``cast_filter(key, leaf)`` picks (all without a filter)
    through ``convert``; ``convert=None`` is a cast to a quantized ``dtype``, which
    keeps a leaf already of it and refuses any other."""
    keys = tensor_leaf_keys(self)
    leaves = tensor_leaves(self)
    results = []
    for key, leaf in zip(keys, leaves):
        if cast_filter is not None and not cast_filter(key, leaf):
            results.append(leaf)
        elif convert is not None:
            results.append(convert(leaf))
        elif leaf.dtype == dtype:
            results.append(leaf)
        else:
            raise OperandError(
                f"cannot cast key {shown_key(key)!r} (a {leaf.dtype} tensor) to {dtype}: "
                f"a quantized tensor needs a scale and a zero point; quantize the leaf "
                f"with torch.quantize_per_tensor(leaf, scale, zero_point, {dtype}) "
                f"(td.apply(...) does it for every leaf), or pick the leaves with "
                f"cast_filter="
            )
    result: E = _rebuilt(self, iter(results))
    return result


def dtype(self: E) -> torch.dtype | None:
    """The dtype shared by every tensor leaf; ``None`` if they differ or there is none.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2]).dtype
    torch.float32
    """
    dtypes = {leaf.dtype for leaf in tensor_leaves(self)}
    return dtypes.pop() if len(dtypes) == 1 else None


def bytes(self: E, *, count_duplicates: bool = True) -> int:
    """The bytes of the tensor leaves: ``numel() * itemsize`` each, plus the bytes of
    a leaf's ``.grad``. ``count_duplicates=False`` counts a tensor stored under
    several keys once. Non-tensor leaves count nothing.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> x = torch.zeros(4)
    >>> TensorDict({"a": x, "b": x, "c": torch.zeros(4, dtype=torch.int8)}, [4]).bytes()
    36
    >>> TensorDict({"a": x, "b": x}, [4]).bytes(count_duplicates=False)
    16
    """
    leaves = tensor_leaves(self)
    if not count_duplicates:
        leaves = list({id(leaf): leaf for leaf in leaves}.values())
    total = 0
    for leaf in leaves:
        total += leaf.numel() * leaf.dtype.itemsize
        grad = leaf.grad if leaf.requires_grad else None
        if grad is not None:
            total += grad.numel() * grad.dtype.itemsize
    return total


# -- clamp -----------------------------------------------------------------------------


def clamp(self: E, min: object = None, max: object = None, *, out: TensorCore | None = None) -> E:
    """Clamp every tensor leaf to ``[min, max]`` (as ``torch.clamp``).

    ``min`` and ``max`` are each a number, a tensor (see the module documentation) or an
    instance paired by key; at least one is given. ``out``, an instance with the keys,
    shapes and dtypes of the result, receives it and is returned.
    """
    if min is None and max is None:
        raise ValueError("clamp: give min=, max= or both (both are None)")
    result = self._nary(leaf_functions.clamp, (min, max), {})
    if out is None:
        return result
    as_op(out).update_(result)
    returned: E = out  # type: ignore[assignment]
    return returned


def clamp_(self: E, min: object = None, max: object = None) -> E:
    """:meth:`clamp`, written into every tensor leaf (every leaf or none)."""
    if min is None and max is None:
        raise ValueError("clamp_: give min=, max= or both (both are None)")
    return self._nary_inplace(leaf_functions.clamp, (min, max), {})
