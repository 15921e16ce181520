"""tensorclass: typed, batch-shaped tensor data for PyTorch.

Declare a tensor class with annotated fields; it behaves like one tensor along its batch
dims (index it, reshape it, stack it, move it), and ``TensorDict`` is the same engine with
any string key.
"""

from .decorator import is_tensorclass, tensorclass
from .errors import (
    BatchSizeError,
    FieldTypeError,
    FrozenInstanceError,
    InvalidKeyError,
    KeyNotFoundError,
    LockedError,
    SchemaError,
    StructureMismatchError,
    TensorClassError,
)
from .fields import field
from .schema import Field, FieldKind, Schema
from .specs import Spec
from .tensordict_core import (
    NestedKey,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    TensorDictBase,
    cat,
    from_modules,
    is_tensor_collection,
    stack,
    unravel_key,
    unravel_keys,
)
from .typed import TensorClass

__all__ = [
    "BatchSizeError",
    "Field",
    "FieldKind",
    "FieldTypeError",
    "FrozenInstanceError",
    "InvalidKeyError",
    "KeyNotFoundError",
    "LockedError",
    "NestedKey",
    "NonTensorData",
    "NonTensorStack",
    "Schema",
    "SchemaError",
    "Spec",
    "StructureMismatchError",
    "TensorClass",
    "TensorClassError",
    "TensorDict",
    "TensorDictBase",
    "cat",
    "field",
    "from_modules",
    "is_tensor_collection",
    "is_tensorclass",
    "stack",
    "tensorclass",
    "unravel_key",
    "unravel_keys",
]
__version__ = "0.1.0"
