"""Reductions and scans over the batch dims, leaf by leaf: what the reduction entries of the
leaf-wise table (``leaf_ops.py``) run.

A reduction runs one torch function over every tensor leaf (at every depth) and builds one
instance (or two: ``max(dim)`` gives values and indices) of the receiver's class:

- ``dim=None`` (or ``()``) reduces every element of each leaf (batch size ``[]``; with
  ``keepdim=True`` each leaf keeps its dims with size 1);
- ``dim`` an int or a sequence of batch dims (negative ones count from the end of the batch
  dims) reduces those dims of every leaf, feature dims untouched;
- ``dim="feature"`` reduces the feature dims of each leaf instead (a leaf without feature
  dims is its own result), and the batch size is kept;
- ``reduce=True`` reduces all the leaves together into one tensor: without ``dim``, every
  element of every leaf; with ``dim``, the leaves joined along the (first) reduced dim;
  with ``"feature"``, the feature elements of every leaf, per batch element;
- ``key_transform`` renames every key of the result, level by level (a typed class's fields
  cannot be renamed, so the result is then a ``TensorDict``).

A scan (``cumsum``, ``softmax``...) runs along one batch dim and keeps the batch size.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.ones(2, 3), "b": {"c": torch.ones(2)}}, [2])
>>> td.sum(reduce=True)
tensor(8.)
>>> td.sum("feature")["a"]
tensor([3., 3.])
>>> td.max(0).indices["b", "c"]
tensor(0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import torch
import torch.utils._pytree as pytree
from torch import Tensor

from ...errors import InvalidKeyError, StructureMismatchError
from ...non_tensor import NonTensorData, NonTensorStack
from ...registry import dynamic_class
from ..core.state import Names, TensorCore
from ..shape.batch_dims import batch_dim
from .apply import tensor_leaves

if TYPE_CHECKING:
    from ...tensordict import TensorDict

__all__ = [
    "reduced_level",
    "ValuesIndices",
    "leaf_pairs",
    "reduce_all",
    "reduce_leaves",
    "rename_keys",
    "scan_leaves",
    "shape_mismatch",
]

T_co = TypeVar("T_co", covariant=True)
C = TypeVar("C", bound=TensorCore)
_C = TypeVar("_C")  # what a join failure's message names
_NO_LEAD = torch.Size(())

#: a leaf function: (tensor, the batch dims of its level) -> one tensor, or two (a pair)
LeafFn = Callable[[Tensor, int], Any]


class ValuesIndices(tuple[T_co, T_co], Generic[T_co]):
    """What ``max``/``min``/``cummax``/``cummin`` give along a dim, as torch's named tuples:
    ``values`` and ``indices`` (each an instance of the receiver's class, or tensors with
    ``reduce=True``); it unpacks as ``values, indices = td.max(0)``."""

    __slots__ = ()

    def __new__(cls, values: T_co, indices: T_co) -> ValuesIndices[T_co]:
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> T_co:
        """The maxima (minima...)."""
        return self[0]

    @property
    def indices(self) -> T_co:
        """Where they are along the dim."""
        return self[1]

    def __repr__(self) -> str:
        return f"ValuesIndices(values={self[0]!r}, indices={self[1]!r})"

    def __getnewargs__(self) -> tuple[T_co, T_co]:
        return (self[0], self[1])


pytree.register_pytree_node(
    ValuesIndices,
    lambda pair: (list(pair), None),
    lambda children, _: ValuesIndices(*children),
)


# -- dims --------------------------------------------------------------------------------------


def batch_dims(
    dim: int | Sequence[int] | str | None, ndim: int, what: str
) -> tuple[int, ...] | None:
    """``dim`` (an int or a sequence of batch dims) as sorted non-negative dims; ``None`` for
    every element (``None`` or ``()``)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (batch_dim(dim, ndim),)
    if isinstance(dim, str):
        raise ValueError(f"{what}: dim={dim!r} is not a dim; pass an int, ints or 'feature'")
    dims = tuple(sorted({batch_dim(d, ndim) for d in dim}))
    return dims or None


def one_dim(dim: object, ndim: int, what: str) -> int:
    """One batch dim, normalised (for the functions that take exactly one)."""
    if not isinstance(dim, int):
        raise TypeError(f"{what} takes one batch dim (an int), got {dim!r}")
    return batch_dim(dim, ndim)


def _reduced_size(
    size: torch.Size, names: Names, dims: tuple[int, ...] | None, keepdim: bool
) -> tuple[torch.Size, Names]:
    """The batch size (and names) of a level reduced over ``dims`` (of the root's)."""
    if dims is None:
        if keepdim:
            return torch.Size([1] * len(size)), names
        return torch.Size(()), None
    if keepdim:
        return torch.Size(1 if d in dims else s for d, s in enumerate(size)), names
    new = torch.Size(s for d, s in enumerate(size) if d not in dims)
    if names is not None:
        names = tuple(n for d, n in enumerate(names) if d not in dims)
        if all(n is None for n in names):
            names = None
    return new, names


# -- walking the leaves ------------------------------------------------------------------------


def _walk(
    node: TensorCore,
    leaf_fn: LeafFn,
    size_fn: Callable[[torch.Size, Names], tuple[torch.Size, Names]],
    keeps_batch: bool,
) -> dict[str, Any]:
    """The new leaves of one level: tensors through ``leaf_fn``, nested levels recursively,
    a shared non-tensor value kept (per-element values only if the batch size is kept)."""
    n = len(node._batch_size)
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = leaf_fn(leaf, n)
        elif isinstance(leaf, TensorCore):
            data[key] = reduced_level(leaf, leaf_fn, size_fn, keeps_batch)
        elif type(leaf) is NonTensorData or (keeps_batch and type(leaf) is NonTensorStack):
            data[key] = leaf
    return data


def reduced_level(
    node: C,
    leaf_fn: LeafFn,
    size_fn: Callable[[torch.Size, Names], tuple[torch.Size, Names]],
    keeps_batch: bool,
) -> C:
    data = _walk(node, leaf_fn, size_fn, keeps_batch)
    size, names = size_fn(node._batch_size, node._names)
    return type(node)._new(data, size, node._device, names)


def reduce_leaves(
    node: TensorCore,
    fn: Callable[..., Tensor],
    dim: int | Sequence[int] | str | None,
    keepdim: bool,
    kwargs: dict[str, object],
    what: str,
    lead: torch.Size = _NO_LEAD,
) -> Any:
    """``fn`` over every leaf: every element (``dim=None``), batch ``dim`` or ``"feature"``.

    ``fn`` follows ``torch.sum``'s convention: ``fn(t, **kwargs)`` over every element,
    ``fn(t, dim=dims, keepdim=keepdim, **kwargs)`` over ``dims`` (a tuple). ``lead``: the
    dims ``fn`` puts in front of every result (``quantile`` with several ``q``)."""
    if dim == "feature":
        if keepdim:
            raise ValueError(f"{what}: dim='feature' cannot keep dims (keepdim=True)")
        feature_size = _leading(_same_size, lead)
        return reduced_level(node, _feature_fn(fn, kwargs), feature_size, True)
    dims = batch_dims(dim, len(node._batch_size), what)
    if dims is None:
        if keepdim:

            def leaf_fn(t: Tensor, n: int) -> Tensor:
                return fn(t, **kwargs).reshape((1,) * t.ndim)

        else:

            def leaf_fn(t: Tensor, n: int) -> Tensor:
                return fn(t, **kwargs)

    else:

        def leaf_fn(t: Tensor, n: int) -> Tensor:
            return fn(t, dim=dims, keepdim=keepdim, **kwargs)

    def size_fn(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
        return _reduced_size(size, names, dims, keepdim)

    return reduced_level(node, leaf_fn, _leading(size_fn, lead), False)


SizeFn = Callable[[torch.Size, Names], tuple[torch.Size, Names]]


def _leading(size_fn: SizeFn, lead: torch.Size) -> SizeFn:
    """``size_fn`` with the dims ``lead`` in front of the batch size."""
    if not lead:
        return size_fn

    def with_lead(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
        new, new_names = size_fn(size, names)
        if new_names is not None:
            new_names = (None,) * len(lead) + tuple(new_names)
        return lead + new, new_names

    return with_lead


def _same_size(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
    return size, names


def _feature_fn(fn: Callable[..., Any], kwargs: dict[str, object]) -> LeafFn:
    def leaf_fn(t: Tensor, n: int) -> Any:
        flat = t.flatten(n) if t.ndim > n else t.unsqueeze(-1)
        return fn(flat, dim=(flat.ndim - 1,), keepdim=False, **kwargs)

    return leaf_fn


def leaf_pairs(
    node: TensorCore,
    fn: Callable[..., Any],
    dim: int | Sequence[int] | str | None,
    keepdim: bool,
    what: str,
) -> ValuesIndices[Any]:
    """Two instances from a function giving values and indices (``torch.max(t, dim)``):
    along one batch ``dim`` or over the flattened feature dims (``"feature"``)."""
    if dim == "feature":
        if keepdim:
            raise ValueError(f"{what}: dim='feature' cannot keep dims (keepdim=True)")

        def feature_fn(t: Tensor, n: int) -> Any:
            flat = t.flatten(n) if t.ndim > n else t.unsqueeze(-1)
            return fn(flat, flat.ndim - 1)

        return _pair_level(node, feature_fn, _same_size)
    d = one_dim(dim, len(node._batch_size), what)

    def leaf_fn(t: Tensor, n: int) -> Any:
        return fn(t, d, keepdim=keepdim)

    def size_fn(size: torch.Size, names: Names) -> tuple[torch.Size, Names]:
        return _reduced_size(size, names, (d,), keepdim)

    return _pair_level(node, leaf_fn, size_fn)


def scan_leaves(node: TensorCore, leaf_fn: LeafFn, pairs: bool) -> Any:
    """A function along one batch dim that keeps every shape (``cumsum``, ``softmax``,
    ``cummax``); ``pairs``: it gives values and indices."""
    if pairs:
        return _pair_level(node, leaf_fn, _same_size)
    return reduced_level(node, leaf_fn, _same_size, True)


def _pair_level(
    node: TensorCore,
    leaf_fn: LeafFn,
    size_fn: Callable[[torch.Size, Names], tuple[torch.Size, Names]],
) -> ValuesIndices[Any]:
    n = len(node._batch_size)
    values: dict[str, object] = {}
    indices: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            values[key], indices[key] = leaf_fn(leaf, n)
        elif isinstance(leaf, TensorCore):
            values[key], indices[key] = _pair_level(leaf, leaf_fn, size_fn)
        elif type(leaf) is NonTensorData:
            values[key] = indices[key] = leaf
    size, names = size_fn(node._batch_size, node._names)
    cls, device = type(node), node._device
    return ValuesIndices(
        cls._new(values, size, device, names), cls._new(indices, size, device, names)
    )


# -- every leaf into one tensor (reduce=True) --------------------------------------------------


def reduce_all(
    node: TensorCore,
    fn: Callable[..., Any],
    dim: int | Sequence[int] | str | None,
    keepdim: bool,
    kwargs: dict[str, object],
    what: str,
) -> Any:
    """``reduce=True``: ``fn`` over the tensor leaves taken together (see the module doc).

    ``fn`` follows ``torch.sum``'s convention (``dim`` a tuple)."""
    leaves = tensor_leaves(node)
    if not leaves:
        raise StructureMismatchError(
            f"{what}(reduce=True) reduces the tensor leaves together, and this "
            f"{type(node).__name__} has none"
        )
    n = len(node._batch_size)
    if dim == "feature":
        flat = [t.flatten(n) if t.ndim > n else t.unsqueeze(-1) for t in leaves]
        return fn(_join(flat, -1, what), dim=(n,), keepdim=False, **kwargs)
    dims = batch_dims(dim, n, what)
    if dims is None:
        joined = _join([t.reshape(-1) for t in leaves], 0, what)
        result = fn(joined, **kwargs)
        return result.reshape((1,) * n) if keepdim else result  # the batch dims, kept
    return fn(_join(leaves, dims[0], what), dim=dims, keepdim=keepdim, **kwargs)


def _join(tensors: list[Tensor], dim: int, what: str) -> Tensor:
    if len(tensors) == 1:
        return tensors[0]
    try:
        return torch.cat(tensors, dim)
    except RuntimeError as err:
        raise shape_mismatch(tensors, _unjoinable, (what, dim), err) from None


def _unjoinable(at: tuple[str, int], shapes: list[list[int]], err: RuntimeError) -> str:
    what, dim = at
    return (
        f"{what}(reduce=True) joins the leaves along dim {dim}, but their shapes "
        f"{shapes} differ in another dim ({err})"
    )


def shape_mismatch(
    tensors: list[Tensor],
    problem: Callable[[_C, list[list[int]], RuntimeError], str],
    context: _C,
    err: RuntimeError,
) -> StructureMismatchError:
    """The error for ``tensors`` that ``torch.cat`` or ``torch.stack`` refused (``err``):
    ``problem(context, shapes, err)`` words it from their shapes."""
    return StructureMismatchError(problem(context, [list(t.shape) for t in tensors], err))


def reduce_all_pairs(
    node: TensorCore, fn: Callable[..., Any], dim: Any, keepdim: bool, what: str
) -> Any:
    """``reduce=True`` for ``max``/``min``: a tensor, or values and indices along ``dim``."""
    if dim is None:
        return reduce_all(node, lambda t: fn(t), None, keepdim, {}, what)

    def pair(t: Tensor, dim: tuple[int, ...], keepdim: bool) -> ValuesIndices[Tensor]:
        values, indices = fn(t, dim[0], keepdim=keepdim)
        return ValuesIndices(values, indices)

    if dim != "feature":
        dim = one_dim(dim, len(node._batch_size), what)
    return reduce_all(node, pair, dim, keepdim, {}, what)


# -- renaming ----------------------------------------------------------------------------------


def rename_keys(node: TensorCore, key_transform: Callable[[str], str]) -> TensorDict:
    """A ``TensorDict`` with every key of ``node`` renamed by ``key_transform``, level by level
    (``("a", "b")`` becomes ``(key_transform("a"), key_transform("b"))``)."""
    cls: type[TensorDict] = dynamic_class()
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        new = key_transform(key)
        if not isinstance(new, str):
            raise InvalidKeyError(
                f"key_transform must return a str: it turned {key!r} into {new!r}"
            )
        if new in data:
            raise StructureMismatchError(
                f"key_transform gives the key {new!r} to two entries (one of them {key!r})"
            )
        data[new] = rename_keys(leaf, key_transform) if isinstance(leaf, TensorCore) else leaf
    return cls._new(data, node._batch_size, node._device, node._names)


def every_dim(dims: Sequence[int] | int | None, ndim: int) -> tuple[int, ...]:
    """Batch ``dims`` normalised, every batch dim for ``None`` (``logsumexp``'s default)."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        return (batch_dim(dims, ndim),)
    return tuple(sorted({batch_dim(d, ndim) for d in dims}))
