"""The distributions of :mod:`tensorclass.nn` and the modules that make their parameters, at
the paths of ``tensordict.nn.distributions``: ``continuous`` (:class:`NormalParamExtractor`,
:class:`AddStateIndependentNormalScale`, :class:`Delta`), ``discrete``
(:class:`OneHotCategorical`, :func:`rand_one_hot`), ``truncated_normal``
(:class:`TruncatedNormal`) and ``composite`` (:class:`CompositeDistribution`).

>>> import torch
>>> from tensorclass.nn.distributions import NormalParamExtractor
>>> loc, scale = NormalParamExtractor()(torch.zeros(3, 8))
>>> loc.shape, scale.shape, round(scale[0, 0].item(), 3)
(torch.Size([3, 4]), torch.Size([3, 4]), 1.0)
"""

from ..interaction import InteractionType, set_interaction_type
from ..mappings import add_custom_mapping, mappings
from . import continuous, discrete
from .composite import CompositeDistribution
from .continuous import AddStateIndependentNormalScale, Delta, NormalParamExtractor
from .discrete import OneHotCategorical, rand_one_hot
from .truncated_normal import TruncatedNormal

__all__ = [
    "AddStateIndependentNormalScale",
    "CompositeDistribution",
    "Delta",
    "InteractionType",
    "NormalParamExtractor",
    "OneHotCategorical",
    "TruncatedNormal",
    "add_custom_mapping",
    "continuous",
    "discrete",
    "mappings",
    "rand_one_hot",
    "set_interaction_type",
]
