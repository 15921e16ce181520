"""Helpers that turn network outputs into distribution parameters (and, as in
``tensordict.nn.distributions``, the distributions of :mod:`tensorclass.nn`).

>>> import torch
>>> from tensorclass.nn.distributions import NormalParamExtractor
>>> loc, scale = NormalParamExtractor()(torch.zeros(3, 8))
>>> loc.shape, scale.shape, round(scale[0, 0].item(), 3)
(torch.Size([3, 4]), torch.Size([3, 4]), 1.0)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .composite import CompositeDistribution
from .mappings import add_custom_mapping, mappings
from .normal_scale import AddStateIndependentNormalScale
from .one_hot import OneHotCategorical, rand_one_hot
from .truncated_normal import TruncatedNormal

# tensordict.nn.distributions's names, importable from here too
__all__ = [
    "AddStateIndependentNormalScale",
    "CompositeDistribution",
    "NormalParamExtractor",
    "OneHotCategorical",
    "TruncatedNormal",
    "add_custom_mapping",
    "mappings",
    "positive_mapping",
    "rand_one_hot",
]


def positive_mapping(name: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """A mapping by name (see :func:`~tensorclass.nn.mappings`), or the callable itself."""
    if callable(name):
        return name
    return mappings(name)


class NormalParamExtractor(nn.Module):
    """Split the last dim in two halves: a location and a positive scale.

    Args:
        scale_mapping: how the second half becomes positive: a name for
            :func:`~tensorclass.nn.mappings` (default ``"biased_softplus_1.0"``: 0 maps to 1)
            or a callable.
        scale_lb: the smallest scale returned (default ``1e-4``).
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
