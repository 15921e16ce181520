"""The engine: storage, keys, shapes, indexing, torch functions and TensorDict."""

from . import collate as _collate  # noqa: F401  (registers DataLoader collation)
from .base import TensorDictBase, is_tensor_collection
from .keys import NestedKey, unravel_key, unravel_keys
from .module_params import from_modules
from .non_tensor import NonTensorData, NonTensorStack
from .tensordict import TensorDict
from .torch_functions import cat, stack

__all__ = [
    "NestedKey",
    "NonTensorData",
    "NonTensorStack",
    "TensorDict",
    "TensorDictBase",
    "cat",
    "from_modules",
    "is_tensor_collection",
    "stack",
    "unravel_key",
    "unravel_keys",
]
