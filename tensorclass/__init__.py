"""tensorclass: typed, batch-shaped tensor data for PyTorch.

Declare a tensor class with annotated fields; it behaves like one tensor along its batch
dims (index it, reshape it, stack it, move it), and ``TensorDict`` is the same engine with
any string key.

The public names are loaded on first use (``from tensorclass import TensorDict`` loads the
library, torch included): importing the package alone, as mypy does when it loads
``tensorclass.plugins.mypy``, imports neither torch nor the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "BatchSizeError",
    "EntryInfo",
    "Field",
    "FieldKind",
    "FieldTypeError",
    "FrozenInstanceError",
    "InvalidKeyError",
    "KeyNotFoundError",
    "LazyStackedTensorDict",
    "LockedError",
    "MemmapFormatError",
    "MemmapInfo",
    "MemoryMappedTensor",
    "NestedKey",
    "NonTensorData",
    "NonTensorStack",
    "NotSerializableError",
    "OperandError",
    "RecordedClassError",
    "Schema",
    "SchemaError",
    "Spec",
    "StructureMismatchError",
    "TensorClass",
    "TensorClassError",
    "TensorDict",
    "TensorDictBase",
    "TypedTensorDict",
    "cat",
    "dense_stack_tds",
    "field",
    "from_any",
    "from_dataclass",
    "from_dict",
    "from_module",
    "from_modules",
    "from_namedtuple",
    "from_pytree",
    "from_struct_array",
    "from_tuple",
    "fromkeys",
    "is_tensor_collection",
    "is_tensorclass",
    "lazy_stack",
    "load_memmap",
    "make_tensordict",
    "maybe_dense_stack",
    "read_metadata",
    "stack",
    "tensorclass",
    "unravel_key",
    "unravel_keys",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import nn as nn
    from ._api import (
        BatchSizeError,
        EntryInfo,
        Field,
        FieldKind,
        FieldTypeError,
        FrozenInstanceError,
        InvalidKeyError,
        KeyNotFoundError,
        LazyStackedTensorDict,
        LockedError,
        MemmapFormatError,
        MemmapInfo,
        MemoryMappedTensor,
        NestedKey,
        NonTensorData,
        NonTensorStack,
        NotSerializableError,
        OperandError,
        RecordedClassError,
        Schema,
        SchemaError,
        Spec,
        StructureMismatchError,
        TensorClass,
        TensorClassError,
        TensorDict,
        TensorDictBase,
        TypedTensorDict,
        cat,
        dense_stack_tds,
        field,
        from_any,
        from_dataclass,
        from_dict,
        from_module,
        from_modules,
        from_namedtuple,
        from_pytree,
        from_struct_array,
        from_tuple,
        fromkeys,
        is_tensor_collection,
        is_tensorclass,
        lazy_stack,
        load_memmap,
        make_tensordict,
        maybe_dense_stack,
        read_metadata,
        stack,
        tensorclass,
        unravel_key,
        unravel_keys,
    )


def __getattr__(name: str) -> Any:
    if name in __all__ or name == "nn":
        api = importlib.import_module("tensorclass._api")
        globals().update({export: getattr(api, export) for export in __all__})
        return importlib.import_module("tensorclass.nn") if name == "nn" else globals()[name]
    raise AttributeError(f"module 'tensorclass' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
