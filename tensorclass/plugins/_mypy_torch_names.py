"""The ``torch`` and ``torch.nn.functional`` functions that accept tensor classes: a static
copy of the run-time table for the mypy plugin, which imports neither torch nor the library.

GENERATED, do not edit: written by ``python -m tensorclass.engine.torch_api.generate_names``
(what and why: that module's docstring).
"""

from __future__ import annotations

__all__ = ["C_NN_NAMES", "FUNCTIONAL_NAMES", "TORCH_FUNCTIONS", "TORCH_NAMES"]

TORCH_NAMES = frozenset(
    """
    abs abs_ acos acos_ add addcdiv addcmul all allclose amax amin any asin asin_ atan atan_
    atleast_1d atleast_2d atleast_3d bitwise_and bitwise_not bitwise_or bitwise_xor
    broadcast_to cat ceil ceil_ chunk clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_
    clip clip_ clone concat concatenate cos cos_ cosh cosh_ cummax cummin cumprod cumsum div
    divide empty_like erf erf_ erfc erfc_ exp exp_ expm1 expm1_ flatten flip fliplr flipud
    floor floor_ frac frac_ full_like gather hardshrink isfinite isnan isneginf isposinf isreal
    lerp lgamma log log10 log10_ log1p log1p_ log2 log2_ log_ log_softmax logical_and
    logical_not logical_or logical_xor logsumexp masked_fill masked_select max maximum mean min
    minimum moveaxis movedim mul multiply nan_to_num nan_to_num_ nanmean nansum narrow neg neg_
    norm ones_like permute pow prod quantile rand_like randn_like reciprocal reciprocal_
    remainder repeat_interleave reshape roll rot90 round round_ rsqrt rsqrt_ rsub sigmoid
    sigmoid_ sign sin sin_ sinh sinh_ softmax split sqrt sqrt_ squeeze stack std sub subtract
    sum swapaxes swapdims tan tan_ tanh tanh_ tensor_split tile transpose true_divide trunc
    trunc_ unbind unflatten unsqueeze var where zeros_like
    """.split()
)
"""The supported functions named ``torch.<name>``."""

FUNCTIONAL_NAMES = frozenset(
    """
    celu dropout elu gelu hardshrink hardsigmoid hardswish hardtanh huber_loss l1_loss
    leaky_relu log_softmax logsigmoid mish mse_loss relu relu6 selu silu smooth_l1_loss softmax
    softplus softshrink softsign tanhshrink threshold
    """.split()
)
"""The supported functions named ``torch.nn.functional.<name>``."""

C_NN_NAMES = {
    "gelu": "gelu",
    "logsigmoid": "log_sigmoid",
    "softplus": "softplus",
    "softshrink": "softshrink",
}
"""``torch.nn.functional`` functions that torch's stubs declare in ``torch._C._nn``, by
their public name (the value: their name there)."""

TORCH_FUNCTIONS: dict[str, str] = {
    **{
        f"{module}.{name}": name
        for module in ("torch", "torch._C._VariableFunctions", "torch.functional")
        for name in TORCH_NAMES
    },
    **{f"torch.nn.functional.{name}": name for name in FUNCTIONAL_NAMES},
    **{f"torch._C._nn.{stub}": name for name, stub in C_NN_NAMES.items()},
}
"""mypy's fullnames of the supported functions (every stub module spelling) -> the public
name (``torch.X`` or ``torch.nn.functional.X``)."""
