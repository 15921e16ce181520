"""Helpers that turn network outputs into distribution parameters.

>>> import torch
>>> from tensorclass.nn.distributions import NormalParamExtractor
>>> loc, scale = NormalParamExtractor()(torch.zeros(3, 8))
>>> loc.shape, scale.shape, round(scale[0, 0].item(), 3)
(torch.Size([3, 4]), torch.Size([3, 4]), 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.nn import functional as F

__all__ = ["NormalParamExtractor", "positive_mapping"]


def _biased_softplus(value: float, lower: float) -> Callable[[Tensor], Tensor]:
    """``softplus`` shifted so that an input of 0 maps to ``value`` (never below ``lower``)."""
    target = value - lower
    bias = target + math.log(-math.expm1(-target))  # the inverse of softplus at target
    return lambda x: F.softplus(x + bias) + lower


def positive_mapping(name: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """A positive mapping by name: ``"biased_softplus_<v>"`` (0 maps to ``v``; optional
    ``_<lower bound>``), ``"softplus"``, ``"exp"``, ``"relu"``, ``"none"``; or a callable."""
    if callable(name):
        return name
    if name.startswith("biased_softplus"):
        parts = name.split("_")[2:]
        value = float(parts[0]) if parts else 1.0
        lower = float(parts[1]) if len(parts) > 1 else 0.0
        return _biased_softplus(value, lower)
    simple: dict[str, Callable[[Tensor], Tensor]] = {
        "softplus": F.softplus,
        "exp": torch.exp,
        "relu": torch.relu,
        "none": lambda x: x,
        "identity": lambda x: x,
    }
    try:
        return simple[name]
    except KeyError:
        raise ValueError(
            f"unknown scale mapping {name!r}; use 'biased_softplus_<v>', "
            f"{', '.join(map(repr, simple))} or a callable"
        ) from None


class NormalParamExtractor(nn.Module):
    """Split the last dim in two halves: a location and a positive scale.

    Args:
        scale_mapping: how the second half becomes positive (see :func:`positive_mapping`).
        scale_lb: the smallest scale returned.
    """

    def __init__(
        self,
        scale_mapping: str | Callable[[Tensor], Tensor] = "biased_softplus_1.0",
        scale_lb: float = 1e-4,
    ) -> None:
        super().__init__()
        self.scale_mapping = positive_mapping(scale_mapping)
        self.scale_lb = scale_lb

    def forward(self, *tensors: Tensor) -> tuple[Tensor, Tensor]:
        """``(loc, scale)`` from one tensor (or several, concatenated on the last dim)."""
        tensor = tensors[0] if len(tensors) == 1 else torch.cat(tensors, -1)
        loc, scale = tensor.chunk(2, -1)
        return loc, self.scale_mapping(scale).clamp_min(self.scale_lb)
