"""The table of leaf-wise methods: one line each, ``name = kind(function)``.

A leaf-wise method runs one torch function over every tensor leaf (at every depth) and
returns an instance of the receiver's class; non-tensor leaves are kept. What varies from
one method to the next is only the function and the call signature, so the methods are
entries of the :class:`LeafOps` table, each naming its *kind*. What a kind and an entry
are is in ``kind.py`` (every entry is recorded in its ``TABLE``); the kinds are in
``elementwise_kinds.py`` (``unary``, ``unary_inplace``, ``binary``, ``binary_alpha`` and
their in-place forms, ``reversed_alpha``, ``ternary``, ``ternary_value``, ``nan_replace``,
``cast``, ``cast_to``) and ``reduction_kinds.py`` (``reduction``, ``reduction_dtype``,
``reduction_correction``, ``quantiles``, ``reduction_indices``, ``scan``,
``scan_indices``, ``batch_reduction``, ``leaf_norm``), each with its signature.

Type checkers see each entry as a descriptor whose ``__get__`` returns a callable of the
kind's signature returning the receiver's own class. At run time no descriptor is left:
when the table's class is created each entry puts a plain function in its place, so a call
costs what a hand-written method costs. ``LeafOps`` is a namespace, not a base class:
``TensorOps`` (``engine/ops.py``) attaches each entry (``cos = LeafOps.cos``).

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

import torch
from torch import Tensor

from . import functions as leaf_functions
from .elementwise_kinds import (
    binary,
    binary_alpha,
    binary_alpha_inplace,
    binary_inplace,
    cast,
    cast_to,
    nan_replace,
    nan_replace_inplace,
    reversed_alpha,
    ternary,
    ternary_value,
    ternary_value_inplace,
    unary,
    unary_inplace,
)
from .kind import Table
from .reduction_kinds import (
    batch_reduction,
    leaf_norm,
    over_dims,
    quantiles,
    reduction,
    reduction_correction,
    reduction_dtype,
    reduction_indices,
    scan,
    scan_indices,
)

__all__ = ["LeafOps"]


class LeafOps(Table):
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
