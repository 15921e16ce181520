"""Modules that read and write tensor classes by key.

``TensorDictModule`` wraps a module or callable so that it reads ``in_keys`` from a tensor
class and writes ``out_keys`` back; ``TensorDictSequential`` chains such modules; the
probabilistic modules sample from distributions built from keys; ``TensorDictParams``
registers the leaves of a tensor class as the parameters of a module.
"""

from ..tensordict import make_tensordict
from .base import TensorDictModuleBase
from .cudagraphs import CudaGraphModule
from .dispatch import dispatch
from .distributions import (
    AddStateIndependentNormalScale,
    CompositeDistribution,
    NormalParamExtractor,
    OneHotCategorical,
    TruncatedNormal,
    rand_one_hot,
)
from .ensemble import EnsembleModule
from .interaction import InteractionType, interaction_type, set_interaction_type
from .lp_aggregate import composite_lp_aggregate, set_composite_lp_aggregate
from .mappings import add_custom_mapping, biased_softplus, inv_softplus, mappings
from .module import TensorDictModule
from .params import TensorDictParams
from .probabilistic import ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential
from .sequential import TensorDictSequential
from .skip import set_skip_existing, skip_existing
from .tensorclass_module import TensorClassModuleBase, TensorClassModuleWrapper
from .wrappers import TensorDictModuleWrapper, WrapModule, as_tensordict_module

__all__ = [
    "AddStateIndependentNormalScale",
    "CompositeDistribution",
    "CudaGraphModule",
    "EnsembleModule",
    "InteractionType",
    "NormalParamExtractor",
    "OneHotCategorical",
    "ProbabilisticTensorDictModule",
    "ProbabilisticTensorDictSequential",
    "TensorClassModuleBase",
    "TensorClassModuleWrapper",
    "TensorDictModule",
    "TensorDictModuleBase",
    "TensorDictModuleWrapper",
    "TensorDictParams",
    "TensorDictSequential",
    "TruncatedNormal",
    "WrapModule",
    "add_custom_mapping",
    "as_tensordict_module",
    "biased_softplus",
    "composite_lp_aggregate",
    "dispatch",
    "interaction_type",
    "inv_softplus",
    "make_tensordict",
    "mappings",
    "rand_one_hot",
    "set_composite_lp_aggregate",
    "set_interaction_type",
    "set_skip_existing",
    "skip_existing",
]
