"""The call signatures of the reduction entries of the leaf-wise table, for type checkers.

Their result depends on their arguments: ``reduce=True`` gives a tensor,
``key_transform=`` a ``TensorDict`` (renamed keys are no fields of a typed class), ``max``
along a dim values and indices. Each protocol spells one family's overloads, once for a
method of an instance (``...Call``, generic in the receiver's class) and once for the
function read off the class (``...Unbound``, which takes the instance first). Nothing here
runs: the table (``leaf_ops.py``) puts plain functions on the class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, overload

import torch
from torch import Tensor

from .reductions import ValuesIndices

if TYPE_CHECKING:
    from ...tensordict import TensorDict

__all__ = [
    "DimsReductionCall",
    "DimsReductionUnbound",
    "DtypeReductionCall",
    "DtypeReductionUnbound",
    "CorrectionReductionCall",
    "CorrectionReductionUnbound",
    "QuantileReductionCall",
    "QuantileReductionUnbound",
    "ExtremumReductionCall",
    "ExtremumReductionUnbound",
    "PairScanCall",
    "PairScanUnbound",
    "NormReductionCall",
    "NormReductionUnbound",
    "KeyTransform",
    "OneDim",
    "ReduceDims",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: the dims of a reduction: every element (None), batch dims, or each leaf's feature dims
ReduceDims = int | Sequence[int] | Literal["feature"] | None
#: one batch dim, every element (None) or the feature dims
OneDim = int | Literal["feature"] | None
#: renames each key of the result, level by level
KeyTransform = Callable[[str], str] | None


class DimsReductionCall(Protocol[T_co]):
    """``amax``/``amin``, as a method of an instance."""

    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T_co | Tensor | TensorDict: ...


class DimsReductionUnbound(Protocol[T]):
    """``amax``/``amin``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T | Tensor | TensorDict: ...


class DtypeReductionCall(Protocol[T_co]):
    """``sum``/``mean``/``nansum``/``nanmean``/``prod``, as a method of an instance."""

    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T_co | Tensor | TensorDict: ...


class DtypeReductionUnbound(Protocol[T]):
    """``sum``/``mean``/``nansum``/``nanmean``/``prod``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        dtype: torch.dtype | None = None,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T | Tensor | TensorDict: ...


class CorrectionReductionCall(Protocol[T_co]):
    """``std``/``var``, as a method of an instance."""

    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T_co | Tensor | TensorDict: ...


class CorrectionReductionUnbound(Protocol[T]):
    """``std``/``var``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: ReduceDims = None,
        keepdim: bool = False,
        *,
        correction: int = 1,
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T | Tensor | TensorDict: ...


class QuantileReductionCall(Protocol[T_co]):
    """``quantile``, as a method of an instance."""

    @overload
    def __call__(
        self,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T_co | Tensor | TensorDict: ...


class QuantileReductionUnbound(Protocol[T]):
    """``quantile``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[True],
        key_transform: KeyTransform = None,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        obj: T,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[False] | None = None,
        key_transform: None = None,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: Literal[False] | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
    @overload
    def __call__(
        self,
        obj: T,
        q: float | Tensor,
        dim: OneDim = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
        reduce: bool,
        key_transform: KeyTransform = None,
    ) -> T | Tensor | TensorDict: ...


class ExtremumReductionCall(Protocol[T_co]):
    """``max``/``min``, as a method of an instance."""

    @overload
    def __call__(
        self,
        dim: None = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: bool = True,
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[True] = True,
    ) -> ValuesIndices[T_co]: ...
    @overload
    def __call__(
        self,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[False],
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        dim: None = None,
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        return_indices: bool = True,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        return_indices: bool = True,
    ) -> ValuesIndices[Tensor]: ...


class ExtremumReductionUnbound(Protocol[T]):
    """``max``/``min``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        dim: None = None,
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: bool = True,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[True] = True,
    ) -> ValuesIndices[T]: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[False],
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: None = None,
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        return_indices: bool = True,
    ) -> Tensor: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: int | Literal["feature"],
        keepdim: bool = False,
        *,
        reduce: Literal[True],
        return_indices: bool = True,
    ) -> ValuesIndices[Tensor]: ...


class PairScanCall(Protocol[T_co]):
    """``cummax``/``cummin``, as a method of an instance."""

    @overload
    def __call__(
        self,
        dim: int,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[True] = True,
    ) -> ValuesIndices[T_co]: ...
    @overload
    def __call__(
        self, dim: int, *, reduce: Literal[False] | None = None, return_indices: Literal[False]
    ) -> T_co: ...
    @overload
    def __call__(
        self, dim: int, *, reduce: Literal[True], return_indices: bool = True
    ) -> ValuesIndices[Tensor]: ...


class PairScanUnbound(Protocol[T]):
    """``cummax``/``cummin``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        dim: int,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[True] = True,
    ) -> ValuesIndices[T]: ...
    @overload
    def __call__(
        self,
        obj: T,
        dim: int,
        *,
        reduce: Literal[False] | None = None,
        return_indices: Literal[False],
    ) -> T: ...
    @overload
    def __call__(
        self, obj: T, dim: int, *, reduce: Literal[True], return_indices: bool = True
    ) -> ValuesIndices[Tensor]: ...


class NormReductionCall(Protocol[T_co]):
    """``norm``, as a method of an instance."""

    @overload
    def __call__(
        self, *, out: object = None, dtype: torch.dtype | None = None, key_transform: None = None
    ) -> T_co: ...
    @overload
    def __call__(
        self,
        *,
        out: object = None,
        dtype: torch.dtype | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...


class NormReductionUnbound(Protocol[T]):
    """``norm``, read off the class."""

    @overload
    def __call__(
        self,
        obj: T,
        *,
        out: object = None,
        dtype: torch.dtype | None = None,
        key_transform: None = None,
    ) -> T: ...
    @overload
    def __call__(
        self,
        obj: T,
        *,
        out: object = None,
        dtype: torch.dtype | None = None,
        key_transform: Callable[[str], str],
    ) -> TensorDict: ...
