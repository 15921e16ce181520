"""The reduction and scan kinds of the leaf-wise table: what runs over dims.

Each kind is a stub (the signature), a builder (the method, from the function an entry
names) and a default docstring (see ``kind.py``); the builders call the helpers of
``reductions.py``. The stub of a typed kind (:class:`~.kind.TypedKind`: its result depends
on its arguments) is the one typed signature of its methods: its ``@overload`` s, typed
``self: T``, are what type checkers see of ``obj.sum(...)`` and ``Cls.sum(obj, ...)``, and
its implementation's parameters what users see at run time (the builder's method takes the
same, which ``tests/core/test_leaf_ops.py`` checks):

- :data:`reduction` ``x.amax(dim=None, keepdim=False, *, reduce=None, key_transform=None)``,
  :data:`reduction_dtype` (and ``dtype=None``), :data:`reduction_correction` (and
  ``correction=1``), :data:`quantiles` (``q`` first): over every element (``dim=None``),
  over batch dims or over each leaf's feature dims (``dim="feature"``); ``reduce=True``
  gives one tensor, ``key_transform`` renames the keys; :data:`reduction_one_dim` (``dim``
  is one int);
- :data:`reduction_indices` ``x.max(dim=None, keepdim=False, *, reduce=None,
  return_indices=True)`` and :data:`scan_indices` ``x.cummax(dim, ...)``: values and
  indices (:class:`~.reductions.ValuesIndices`) along a dim; :data:`scan` ``x.cumsum(dim,
  dtype=None)`` (the batch size kept); :data:`batch_reduction` ``x.logsumexp(dim=None,
  keepdim=False, *, out=None)`` (batch dims only); :data:`leaf_norm` ``x.norm(*, ...)``.

:func:`over_dims` and :func:`single_dim` adapt torch reductions that take one ``dim``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import torch
from torch import Tensor

from ..core.self_types import Node, as_op
from ..core.state import TensorCore
from .kind import PlainKind, TypedKind
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
    "batch_reduction",
    "leaf_norm",
    "over_dims",
    "quantiles",
    "reduction",
    "reduction_correction",
    "reduction_dtype",
    "reduction_indices",
    "reduction_one_dim",
    "scan",
    "scan_indices",
    "single_dim",
]

if TYPE_CHECKING:
    from ...tensordict import TensorDict

T = TypeVar("T")
_N = TypeVar("_N", bound=TensorCore)

_Dims = int | Sequence[int] | None
#: the dims of a reduction: every element (None), batch dims, or each leaf's feature dims
ReduceDims = int | Sequence[int] | Literal["feature"] | None
#: one batch dim, every element (None) or the feature dims
OneDim = int | Literal["feature"] | None
#: renames each key of the result, level by level
KeyTransform = Callable[[str], str] | None


def _finish(result: _N, key_transform: KeyTransform) -> _N | TensorDict:
    """``result``, its keys renamed by ``key_transform`` if given."""
    return result if key_transform is None else rename_keys(result, key_transform)


def _reduced(
    self: Node,
    fn: Callable[..., Tensor],
    name: str,
    dim: ReduceDims,
    keepdim: bool,
    kwargs: dict[str, object],
    reduce: bool | None,
    key_transform: KeyTransform,
) -> object:
    """What the reductions' methods return: ``fn`` (with ``kwargs``) over every leaf, all
    leaves together into one tensor when ``reduce``."""
    if reduce:
        return reduce_all(self, fn, dim, keepdim, kwargs, name)
    return _finish(reduce_leaves(self, fn, dim, keepdim, kwargs, name), key_transform)


@overload
def _reduction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    reduce: Literal[True],
    key_transform: KeyTransform = None,
) -> Tensor: ...


@overload
def _reduction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    reduce: Literal[False] | None = None,
    key_transform: None = None,
) -> T: ...


@overload
def _reduction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    reduce: Literal[False] | None = None,
    key_transform: Callable[[str], str],
) -> TensorDict: ...


@overload
def _reduction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    reduce: bool,
    key_transform: KeyTransform = None,
) -> T | Tensor | TensorDict: ...


def _reduction(
    self: object,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> object:
    """``x.amax(dim=None, keepdim=False, *, reduce=None, key_transform=None)``"""


def _build_reduction(fn: Callable[..., Tensor]) -> Callable[..., object]:
    name = fn.__name__

    def method(
        self: Node,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        key_transform: KeyTransform = None,
    ) -> object:
        return _reduced(self, fn, name, dim, keepdim, {}, reduce, key_transform)

    return method


_REDUCTION_DOC = (
    "``{fn}`` of every tensor leaf: over all its elements (``dim=None``), over batch ``dim`` "
    "(an int or ints; ``keepdim`` keeps them with size 1) or over its feature dims "
    "(``dim='feature'``). ``reduce=True`` reduces the leaves together into one tensor; "
    "``key_transform`` renames the keys of the result (a ``TensorDict``)."
)

reduction = TypedKind(_reduction, _build_reduction, _REDUCTION_DOC)


@overload
def _reduction_dtype(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: Literal[True],
    key_transform: KeyTransform = None,
) -> Tensor: ...


@overload
def _reduction_dtype(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: Literal[False] | None = None,
    key_transform: None = None,
) -> T: ...


@overload
def _reduction_dtype(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: Literal[False] | None = None,
    key_transform: Callable[[str], str],
) -> TensorDict: ...


@overload
def _reduction_dtype(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: bool,
    key_transform: KeyTransform = None,
) -> T | Tensor | TensorDict: ...


def _reduction_dtype(
    self: object,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> object:
    """``x.sum(dim=None, keepdim=False, *, dtype=None, reduce=None, key_transform=None)``"""


def _build_reduction_dtype(fn: Callable[..., Tensor]) -> Callable[..., object]:
    name = fn.__name__

    def method(
        self: Node,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool | None = None,
        key_transform: KeyTransform = None,
    ) -> object:
        kwargs: dict[str, object] = {"dtype": dtype} if dtype else {}
        return _reduced(self, fn, name, dim, keepdim, kwargs, reduce, key_transform)

    return method


reduction_dtype = TypedKind(
    _reduction_dtype,
    _build_reduction_dtype,
    _REDUCTION_DOC + " ``dtype`` casts each leaf first (against overflows).",
)


@overload
def _reduction_correction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: Literal[True],
    key_transform: KeyTransform = None,
) -> Tensor: ...


@overload
def _reduction_correction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: Literal[False] | None = None,
    key_transform: None = None,
) -> T: ...


@overload
def _reduction_correction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: Literal[False] | None = None,
    key_transform: Callable[[str], str],
) -> TensorDict: ...


@overload
def _reduction_correction(
    self: T,
    dim: ReduceDims = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: bool,
    key_transform: KeyTransform = None,
) -> T | Tensor | TensorDict: ...


def _reduction_correction(
    self: object,
    dim: int | Sequence[int] | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    correction: int = 1,
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> object:
    """``x.std(dim=None, keepdim=False, *, correction=1, reduce=None, key_transform=None)``"""


def _build_reduction_correction(fn: Callable[..., Tensor]) -> Callable[..., object]:
    name = fn.__name__

    def method(
        self: Node,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: bool | None = None,
        key_transform: KeyTransform = None,
    ) -> object:
        kwargs: dict[str, object] = {"correction": correction}
        return _reduced(self, fn, name, dim, keepdim, kwargs, reduce, key_transform)

    return method


reduction_correction = TypedKind(
    _reduction_correction,
    _build_reduction_correction,
    _REDUCTION_DOC + " ``correction`` is the difference between the sample size and the "
    "degrees of freedom (1: Bessel's).",
)


def _reduction_one_dim(self: object, dim: int | None = None, keepdim: bool = False) -> None:
    """``x.prod(dim=None, keepdim=False)``, ``dim`` one int"""


def single_dim(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Adapt a reduction that takes one ``dim`` to the ``dim=(d,)`` calling convention."""

    def reduce(tensor: Tensor, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            return fn(tensor)
        return fn(tensor, dim[0], keepdim=keepdim)

    return reduce


def _build_reduction_one_dim(fn: Callable[..., Tensor]) -> Callable[..., object]:
    one_dim = single_dim(fn)

    def method(self: Node, dim: int | None = None, keepdim: bool = False) -> object:
        return self._reduce(one_dim, dim, keepdim)

    return method


reduction_one_dim = PlainKind(
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
        **kwargs: object,
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


@overload
def _quantiles(
    self: T,
    q: float | Tensor,
    dim: OneDim = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: Literal[True],
    key_transform: KeyTransform = None,
) -> Tensor: ...


@overload
def _quantiles(
    self: T,
    q: float | Tensor,
    dim: OneDim = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: Literal[False] | None = None,
    key_transform: None = None,
) -> T: ...


@overload
def _quantiles(
    self: T,
    q: float | Tensor,
    dim: OneDim = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: Literal[False] | None = None,
    key_transform: Callable[[str], str],
) -> TensorDict: ...


@overload
def _quantiles(
    self: T,
    q: float | Tensor,
    dim: OneDim = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: bool,
    key_transform: KeyTransform = None,
) -> T | Tensor | TensorDict: ...


def _quantiles(
    self: object,
    q: float | Tensor,
    dim: int | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
    reduce: bool | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> object:
    """``x.quantile(q, dim=None, keepdim=False, *, interpolation="linear", reduce=None,
    key_transform=None)``"""


def _build_quantile(fn: Callable[..., Tensor]) -> Callable[..., object]:
    def method(
        self: Node,
        q: float | Tensor,
        dim: int | Literal["feature"] | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: bool | None = None,
        key_transform: KeyTransform = None,
    ) -> object:
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
)


@overload
def _reduction_indices(
    self: T,
    dim: None = None,
    keepdim: bool = False,
    *,
    reduce: Literal[False] | None = None,
    return_indices: bool = True,
) -> T: ...


@overload
def _reduction_indices(
    self: T,
    dim: int | Literal["feature"],
    keepdim: bool = False,
    *,
    reduce: Literal[False] | None = None,
    return_indices: Literal[True] = True,
) -> ValuesIndices[T]: ...


@overload
def _reduction_indices(
    self: T,
    dim: int | Literal["feature"],
    keepdim: bool = False,
    *,
    reduce: Literal[False] | None = None,
    return_indices: Literal[False],
) -> T: ...


@overload
def _reduction_indices(
    self: T,
    dim: None = None,
    keepdim: bool = False,
    *,
    reduce: Literal[True],
    return_indices: bool = True,
) -> Tensor: ...


@overload
def _reduction_indices(
    self: T,
    dim: int | Literal["feature"],
    keepdim: bool = False,
    *,
    reduce: Literal[True],
    return_indices: bool = True,
) -> ValuesIndices[Tensor]: ...


def _reduction_indices(
    self: object,
    dim: int | Literal["feature"] | None = None,
    keepdim: bool = False,
    *,
    reduce: bool | None = None,
    return_indices: bool = True,
) -> object:
    """``x.max(dim=None, keepdim=False, *, reduce=None, return_indices=True)``"""


def _build_reduction_indices(fn: Callable[..., Any]) -> Callable[..., object]:
    name = fn.__name__

    def every(t: Tensor) -> Tensor:
        result: Tensor = fn(t)
        return result

    def method(
        self: Node,
        dim: int | Literal["feature"] | None = None,
        keepdim: bool = False,
        *,
        reduce: bool | None = None,
        return_indices: bool = True,
    ) -> object:
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
)


def _scan(self: object, dim: int, dtype: torch.dtype | None = None) -> None:
    """``x.cumsum(dim, dtype=None)``"""


def _build_scan(fn: Callable[..., Tensor]) -> Callable[..., object]:
    def method(self: Node, dim: int, dtype: torch.dtype | None = None) -> object:
        d = one_dim(dim, len(self.batch_size), fn.__name__)

        def leaf_fn(t: Tensor, n: int) -> Tensor:
            return fn(t, d, dtype=dtype)

        return scan_leaves(self, leaf_fn, False)

    return method


scan = PlainKind(
    _scan,
    _build_scan,
    "``{fn}`` of every tensor leaf along batch ``dim`` (shapes and batch size kept); "
    "``dtype`` casts each leaf first.",
)


@overload
def _scan_indices(
    self: T,
    dim: int,
    *,
    reduce: Literal[False] | None = None,
    return_indices: Literal[True] = True,
) -> ValuesIndices[T]: ...


@overload
def _scan_indices(
    self: T, dim: int, *, reduce: Literal[False] | None = None, return_indices: Literal[False]
) -> T: ...


@overload
def _scan_indices(
    self: T, dim: int, *, reduce: Literal[True], return_indices: bool = True
) -> ValuesIndices[Tensor]: ...


def _scan_indices(
    self: object, dim: int, *, reduce: bool | None = None, return_indices: bool = True
) -> object:
    """``x.cummax(dim, *, reduce=None, return_indices=True)``"""


def _build_scan_indices(fn: Callable[..., Any]) -> Callable[..., object]:
    name = fn.__name__

    def method(
        self: Node, dim: int, *, reduce: bool | None = None, return_indices: bool = True
    ) -> object:
        d = one_dim(dim, len(self.batch_size), name)
        if reduce:
            joined = reduce_all(self, lambda t, dim, keepdim: t, d, False, {}, name)
            return ValuesIndices(*fn(joined, d))

        def leaf_fn(t: Tensor, n: int) -> object:
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
)


def _batch_reduction(
    self: object,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    out: object = None,
) -> None:
    """``x.logsumexp(dim=None, keepdim=False, *, out=None)``"""


def _build_batch_reduction(fn: Callable[..., Tensor]) -> Callable[..., object]:
    name = fn.__name__

    def method(
        self: Node, dim: _Dims = None, keepdim: bool = False, *, out: TensorCore | None = None
    ) -> object:
        dims = every_dim(dim, len(self.batch_size))
        if not dims:  # no batch dims: nothing to reduce
            result = self._map_tensors(lambda t: t)
        else:
            result = reduce_leaves(self, fn, dims, keepdim, {}, name)
        return result if out is None else as_op(out).update_(result)

    return method


batch_reduction = PlainKind(
    _batch_reduction,
    _build_batch_reduction,
    "``{fn}`` of every tensor leaf over batch ``dim`` (every batch dim by default: feature "
    "dims are never reduced); ``out`` receives the result (in place) and is returned.",
)


@overload
def _leaf_norm(
    self: T, *, out: object = None, dtype: torch.dtype | None = None, key_transform: None = None
) -> T: ...


@overload
def _leaf_norm(
    self: T,
    *,
    out: object = None,
    dtype: torch.dtype | None = None,
    key_transform: Callable[[str], str],
) -> TensorDict: ...


def _leaf_norm(
    self: object,
    *,
    out: object = None,
    dtype: torch.dtype | None = None,
    key_transform: Callable[[str], str] | None = None,
) -> object:
    """``x.norm(*, out=None, dtype=None, key_transform=None)``"""


def _build_leaf_norm(fn: Callable[..., Tensor]) -> Callable[..., object]:
    def method(
        self: Node,
        *,
        out: TensorCore | None = None,
        dtype: torch.dtype | None = None,
        key_transform: KeyTransform = None,
    ) -> object:
        kwargs: dict[str, object] = {} if dtype is None else {"dtype": dtype}
        result = reduce_leaves(self, fn, None, False, kwargs, "norm")
        if out is not None:
            return as_op(out).update_(result)
        return _finish(result, key_transform)

    return method


leaf_norm = TypedKind(
    _leaf_norm,
    _build_leaf_norm,
    "The 2-norm (``{fn}``) of every tensor leaf over all its elements (batch size ``[]``); "
    "``dtype`` is the dtype of the norms, ``out`` receives them (in place) and "
    "``key_transform`` renames the keys of the result (a ``TensorDict``).",
)
