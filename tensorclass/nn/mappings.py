"""Elementwise mappings by name, mostly to positive values (for distribution scales).

:func:`mappings` turns a name into a function; :func:`add_custom_mapping` registers more
names; :class:`biased_softplus` is the softplus shifted so that 0 maps to a chosen value.

>>> import torch
>>> from tensorclass.nn import mappings
>>> mappings("exp")(torch.zeros(2))
tensor([1., 1.])
>>> mappings("biased_softplus_2.0_0.1")(torch.zeros(2))
tensor([2., 2.])
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.nn import functional as F

__all__ = ["add_custom_mapping", "biased_softplus", "expln", "inv_softplus", "mappings"]

Mapping = Callable[[Tensor], Tensor]


def inv_softplus(bias: float | Tensor) -> float | Tensor:
    """The input that ``softplus`` maps to ``bias``: ``log(exp(bias) - 1)``.

    ``exp(bias) - 1`` is clamped to at least ``1e-6``, so the result stays finite for
    ``bias <= 0``. A float gives a float, a tensor a tensor.

    >>> import torch
    >>> from tensorclass.nn import inv_softplus
    >>> torch.nn.functional.softplus(inv_softplus(torch.tensor([1.0, 2.0])))
    tensor([1., 2.])
    >>> round(inv_softplus(1.0), 4)
    0.5413
    """
    if isinstance(bias, Tensor):
        return bias.expm1().clamp_min(1e-6).log()
    return math.log(max(math.expm1(bias), 1e-6))


class biased_softplus(nn.Module):
    """``softplus(x + inv_softplus(bias - min_val)) + min_val``: 0 maps to ``bias``, and
    the output stays above ``min_val``.

    Args:
        bias: the output for an input of 0.
        min_val: the lower bound of the output (default ``0.01``).

    >>> import torch
    >>> from tensorclass.nn import biased_softplus
    >>> biased_softplus(2.0, min_val=0.5)(torch.tensor([0.0, -50.0]))
    tensor([2.0000, 0.5000])
    """

    def __init__(self, bias: float, min_val: float = 0.01) -> None:
        super().__init__()
        self.bias = float(inv_softplus(bias - min_val))
        self.min_val = min_val

    def forward(self, x: Tensor) -> Tensor:
        """The mapped tensor."""
        return F.softplus(x + self.bias) + self.min_val


def expln(x: Tensor) -> Tensor:
    """``exp(x)`` for ``x <= 0`` and ``log1p(x) + 1`` above: positive, and growing only
    logarithmically for large inputs.

    >>> import torch
    >>> from tensorclass.nn.mappings import expln
    >>> expln(torch.tensor([0.0, 1.0]))
    tensor([1.0000, 1.6931])
    """
    return torch.where(x <= 0, x.clamp_max(0).exp(), x.clamp_min(0).log1p() + 1)


def _identity(x: Tensor) -> Tensor:
    return x


_MAPPINGS: dict[str, Mapping] = {
    "softplus": F.softplus,
    "exp": torch.exp,
    "relu": torch.relu,
    "expln": expln,
    "none": _identity,
}


def add_custom_mapping(name: str, mapping: Mapping) -> None:
    """Register ``mapping`` under ``name`` for :func:`mappings` (and so for the
    ``scale_mapping`` of :class:`NormalParamExtractor`); an existing name is replaced.

    >>> import torch
    >>> from tensorclass.nn import add_custom_mapping, mappings
    >>> add_custom_mapping("square", torch.square)
    >>> mappings("square")(torch.tensor([3.0]))
    tensor([9.])
    """
    if not callable(mapping):
        raise TypeError(f"add_custom_mapping({name!r}): expected a callable; got {mapping!r}")
    _MAPPINGS[name] = mapping


def mappings(key: str) -> Mapping:
    """The elementwise function named ``key``.

    ``"softplus"``, ``"exp"``, ``"relu"``, ``"expln"`` (:func:`expln`), ``"none"`` (the
    identity), ``"biased_softplus"`` (a :class:`biased_softplus` with ``bias=1.0``),
    ``"biased_softplus_<bias>"`` or ``"biased_softplus_<bias>_<min_val>"``, or a name
    registered with :func:`add_custom_mapping`. An unknown name is a
    ``NotImplementedError``; a malformed ``"biased_softplus_..."`` a ``ValueError``.

    >>> import torch
    >>> from tensorclass.nn import mappings
    >>> mappings("relu")(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    if key in _MAPPINGS:
        return _MAPPINGS[key]
    if key == "biased_softplus" or key.startswith("biased_softplus_"):
        parts = key.split("_")[2:]
        if len(parts) > 2:
            raise ValueError(
                f"mapping {key!r}: expected 'biased_softplus_<bias>' or "
                f"'biased_softplus_<bias>_<min_val>'"
            )
        try:
            numbers = [float(part) for part in parts]
        except ValueError:
            raise ValueError(
                f"mapping {key!r}: expected 'biased_softplus_<bias>' or "
                f"'biased_softplus_<bias>_<min_val>' with numbers; got {parts!r}"
            ) from None
        return biased_softplus(*(numbers or [1.0]))
    raise NotImplementedError(
        f"unknown mapping {key!r}; the names are {', '.join(map(repr, _MAPPINGS))}, "
        f"'biased_softplus[_<bias>[_<min_val>]]' (add more with add_custom_mapping)"
    )
