"""Non-tensor leaves as JSON values (for memmap metadata and distributed exchanges).

Only values that come back exactly from JSON are accepted: ``None``, ``bool``, ``int``,
``float``, ``str``, and lists and dicts (with string keys) of those. A per-element
``NonTensorStack`` becomes nested lists as deep as the batch dims.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NotSerializableError
from .non_tensor import NonTensorData, NonTensorStack, object_array

__all__ = ["check_json_value", "non_tensor_from_json", "non_tensor_to_json"]


def check_json_value(value: Any, where: object) -> None:
    """Raise :class:`NotSerializableError` unless ``value`` survives a JSON round trip."""
    cls = type(value)
    if value is None or cls in (bool, int, float, str):
        return
    if cls is list:
        for item in value:
            check_json_value(item, where)
        return
    if cls is dict and all(type(key) is str for key in value):
        for item in value.values():
            check_json_value(item, where)
        return
    raise NotSerializableError(
        f"the non-tensor value under {where!r} is a {type(value).__name__} ({value!r:.60}), "
        f"which JSON cannot store exactly; only null, bool, int, float, str, list and dict "
        f"with str keys can be saved or sent (convert it, or drop the key first)",
        key=where if isinstance(where, (str, tuple)) else None,
    )


def non_tensor_to_json(leaf: NonTensorData | NonTensorStack, where: object) -> tuple[str, Any]:
    """``("non_tensor", value)`` or ``("non_tensor_stack", nested lists)``, checked."""
    if type(leaf) is NonTensorData:
        check_json_value(leaf.data, where)
        return "non_tensor", leaf.data
    values = leaf.value()
    check_json_value(values, where)
    return "non_tensor_stack", values


def non_tensor_from_json(kind: str, payload: Any, shape: tuple[int, ...]) -> Any:
    """The leaf for a JSON payload made by :func:`non_tensor_to_json`."""
    if kind == "non_tensor":
        return NonTensorData(payload)
    array = object_array(shape, None)
    for index in np.ndindex(*shape):
        value: Any = payload
        for position in index:
            value = value[position]
        array[index] = value
    return NonTensorStack(array)
