"""The engine: the core, one folder per concept, and the classes assembled from them.

``TensorDict`` and typed classes are built on top of it (``tensorclass.typed``,
``tensorclass.tensordict``); the engine never imports them.
"""

from ..collection import is_tensor_collection
from ..keys import NestedKey, unravel_key, unravel_keys
from ..non_tensor import NonTensorData, NonTensorStack
from .base import TensorDictBase
from .lazy import collate as _collate  # noqa: F401  (registers DataLoader collation)
from .lazy import views as _views  # noqa: F401  (registers the legacy lazy views)
from .params.extract import from_module, from_modules
from .torch_api.functions import cat, stack

__all__ = [
    "NestedKey",
    "NonTensorData",
    "NonTensorStack",
    "TensorDictBase",
    "cat",
    "from_module",
    "from_modules",
    "is_tensor_collection",
    "stack",
    "unravel_key",
    "unravel_keys",
]
