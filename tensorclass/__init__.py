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
    "KEY_SEPARATOR",
    "KeyNotFoundError",
    "LazyStackedTensorDict",
    "LockedError",
    "MemmapFormatError",
    "MemmapInfo",
    "MemoryMappedTensor",
    "MetaData",
    "NestedKey",
    "NonTensorData",
    "NonTensorDataBase",
    "NonTensorStack",
    "NotSerializableError",
    "OperandError",
    "PackLayout",
    "RecordedClassError",
    "Schema",
    "SchemaError",
    "Spec",
    "StructureMismatchError",
    "TensorClass",
    "TensorClassError",
    "TensorCollection",
    "TensorDict",
    "TensorDictBase",
    "UnbatchedTensor",
    "capture_non_tensor_stack",
    "ValuesIndices",
    "assert_allclose_td",
    "assert_close",
    "cat",
    "default_is_leaf",
    "field",
    "from_module",
    "from_modules",
    "get_defaults_to_none",
    "get_printoptions",
    "group_by",
    "is_bool",
    "is_floating",
    "is_inexact",
    "is_integer",
    "is_leaf_nontensor",
    "is_non_tensor",
    "is_tensor_collection",
    "is_tensorclass",
    "lazy_legacy",
    "lazy_stack",
    "list_to_stack",
    "load_memmap",
    "memmap",
    "pad",
    "pad_sequence",
    "merge_tensordicts",
    "parse_tensor_dict_string",
    "read_metadata",
    "set_capture_non_tensor_stack",
    "set_get_defaults_to_none",
    "set_lazy_legacy",
    "set_list_to_stack",
    "set_printoptions",
    "stack",
    "tensorclass",
    "unpad_sequence",
    "unravel_key",
    "unravel_key_list",
    "unravel_key_to_tuple",
    "unravel_keys",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from . import nn as nn
    from ._api import (
        KEY_SEPARATOR,
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
        MetaData,
        NestedKey,
        NonTensorData,
        NonTensorDataBase,
        NonTensorStack,
        NotSerializableError,
        OperandError,
        PackLayout,
        RecordedClassError,
        Schema,
        SchemaError,
        Spec,
        StructureMismatchError,
        TensorClass,
        TensorClassError,
        TensorCollection,
        TensorDict,
        TensorDictBase,
        UnbatchedTensor,
        ValuesIndices,
        assert_allclose_td,
        assert_close,
        capture_non_tensor_stack,
        cat,
        default_is_leaf,
        field,
        from_module,
        from_modules,
        get_defaults_to_none,
        get_printoptions,
        group_by,
        is_bool,
        is_floating,
        is_inexact,
        is_integer,
        is_leaf_nontensor,
        is_non_tensor,
        is_tensor_collection,
        is_tensorclass,
        lazy_legacy,
        lazy_stack,
        list_to_stack,
        load_memmap,
        memmap,
        merge_tensordicts,
        pad,
        pad_sequence,
        parse_tensor_dict_string,
        read_metadata,
        set_capture_non_tensor_stack,
        set_get_defaults_to_none,
        set_lazy_legacy,
        set_list_to_stack,
        set_printoptions,
        stack,
        tensorclass,
        unpad_sequence,
        unravel_key,
        unravel_key_list,
        unravel_key_to_tuple,
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
