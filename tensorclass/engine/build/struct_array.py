"""NumPy structured arrays as tensor classes, and back.

:func:`struct_entries` gives one entry per field of a structured array: numeric fields as
tensors that share the array's memory (``torch.from_numpy`` of the field's view), nested
structured fields as nested mappings, string and object fields as one value per element.
:func:`to_struct_array` copies an instance into a new structured array whose shape is the
batch size.

>>> import numpy as np
>>> records = np.zeros(3, dtype=[("age", "i4"), ("name", "U8")])
>>> found = struct_entries(records)
>>> found["age"].dtype, found["name"].value()
(torch.int32, ['', '', ''])
"""

from __future__ import annotations

from typing import TypeGuard

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import Tensor

from ...non_tensor import NonTensorData, NonTensorStack
from ..core.state import TensorCore

__all__ = ["is_struct_array", "struct_entries", "to_struct_array"]

#: the shortest ``"U"`` field made for a string (as tensordict does)
_MIN_CHARS = 10


def is_struct_array(value: object) -> TypeGuard[np.ndarray]:
    """Whether ``value`` is a NumPy array with named fields."""
    return isinstance(value, np.ndarray) and value.dtype.names is not None


def _column(column: np.ndarray) -> Tensor | NonTensorData | NonTensorStack:
    """One numeric field as a tensor sharing its memory (a copy when torch cannot view it:
    an item size that does not divide the record, or a non-native byte order)."""
    try:
        return torch.from_numpy(column)
    except (ValueError, TypeError):
        pass
    native = column.astype(column.dtype.newbyteorder("="))
    try:
        return torch.from_numpy(np.ascontiguousarray(native))
    except TypeError:  # a type torch has no tensor for (datetime64...): values
        return _per_element(column)


def _per_element(column: np.ndarray) -> NonTensorData | NonTensorStack:
    """A string or object field: one value per element (one shared value for a 0-dim
    array)."""
    values = column.astype(object)
    if values.ndim == 0:
        return NonTensorData(values.item())
    return NonTensorStack(values)


def struct_entries(array: np.ndarray) -> dict[str, object]:
    """The entries of a structured array, one per field (nested fields as mappings)."""
    names = array.dtype.names
    if names is None:
        raise TypeError(f"expected a NumPy structured array; got dtype {array.dtype}")
    found: dict[str, object] = {}
    for name in names:
        column = array[name]
        if column.dtype.names is not None:
            found[name] = struct_entries(column)
        elif column.dtype.kind in "USOMm":
            found[name] = _per_element(column)
        else:
            found[name] = _column(column)
    return found


def _string_size(values: list[object]) -> int:
    return max([_MIN_CHARS, *(len(str(v)) for v in values)])


def _flat(value: ArrayLike) -> list[object]:
    return list(np.asarray(value, dtype=object).reshape(-1)) if np.ndim(value) else [value]


def _dtype_of(node: TensorCore) -> list[tuple[object, ...]]:
    """The structured dtype of an instance's leaves (feature dims as subarray shapes)."""
    batch_dims = len(node._batch_size)
    fields: list[tuple[object, ...]] = []
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            dtype = _numpy(torch.empty((), dtype=leaf.dtype)).dtype
            fields.append((key, dtype, tuple(leaf.shape[batch_dims:])))
        elif isinstance(leaf, TensorCore):
            fields.append((key, _dtype_of(leaf), tuple(leaf._batch_size[batch_dims:])))
        else:
            values = leaf.value()
            flat = _flat(values) if type(leaf) is NonTensorStack else [values]
            if all(isinstance(v, str) for v in flat):
                fields.append((key, f"U{_string_size(flat)}"))
            else:
                fields.append((key, object))
    return fields


def _numpy(tensor: Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.dtype is torch.bfloat16:  # NumPy has no bfloat16
        tensor = tensor.float()
    result: np.ndarray = tensor.numpy()
    return result


def _fill(target: np.ndarray, node: TensorCore) -> None:
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            target[key] = _numpy(leaf)
        elif isinstance(leaf, TensorCore):
            _fill(target[key], leaf)
        elif type(leaf) is NonTensorStack:
            target[key] = leaf.array
        else:  # one value shared by every element
            column, value = target[key], leaf.value()
            for index in np.ndindex(column.shape):
                column[index] = value


def to_struct_array(node: TensorCore) -> np.ndarray:
    """A new structured array of the batch shape holding a copy of every leaf."""
    array = np.empty(tuple(node._batch_size), dtype=_dtype_of(node))
    _fill(array, node)
    return array
