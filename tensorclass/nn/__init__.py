"""Modules that read and write tensor classes by key.

``TensorDictModule`` wraps a module or callable so that it reads ``in_keys`` from a tensor
class and writes ``out_keys`` back; ``TensorDictSequential`` chains such modules; the
probabilistic modules sample from distributions built from keys; ``TensorDictParams``
registers the leaves of a tensor class as the parameters of a module.
"""

from ..constructors import make_tensordict
from .base import TensorDictModuleBase
from .cudagraphs import CudaGraphModule
from .dispatch import dispatch
from .distributions import NormalParamExtractor
from .ensemble import EnsembleModule
from .interaction import InteractionType, interaction_type, set_interaction_type
from .module import TensorDictModule
from .params import TensorDictParams
from .probabilistic import ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential
from .sequential import TensorDictSequential
from .skip import set_skip_existing, skip_existing
from .tensorclass_module import TensorClassModuleBase, TensorClassModuleWrapper
from .wrappers import TensorDictModuleWrapper, WrapModule, as_tensordict_module

__all__ = [
    "CudaGraphModule",
    "EnsembleModule",
    "InteractionType",
    "NormalParamExtractor",
    "ProbabilisticTensorDictModule",
    "ProbabilisticTensorDictSequential",
    "TensorDictModule",
    "TensorClassModuleBase",
    "TensorClassModuleWrapper",
    "TensorDictModuleBase",
    "TensorDictModuleWrapper",
    "TensorDictParams",
    "TensorDictSequential",
    "WrapModule",
    "as_tensordict_module",
    "dispatch",
    "interaction_type",
    "make_tensordict",
    "set_interaction_type",
    "set_skip_existing",
    "skip_existing",
]
