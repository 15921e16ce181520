"""Pytrees (nested lists, tuples, named tuples and dicts) as tensor classes, and back.

Each container of the pytree becomes a nested level that records its type under
``"_pytree_type"`` (a non-tensor value), so :func:`rebuild` gives the pytree back. A list or
tuple's elements are under ``"0"``, ``"1"``, ...; a dict key that is not a string is kept
next to its value, in a level ``"<key N>"`` holding ``"key"`` and ``"value"``. Leaves are
tensors, tensor classes, Python numbers and NumPy arrays (numbers and arrays become
tensors).

>>> import torch
>>> tree = {"obs": torch.zeros(2), "pair": (torch.ones(2), 3)}
>>> found = pytree_entries(tree)
>>> sorted(found["pair"])
['0', '1', '_pytree_type']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ...non_tensor import NonTensorData, NonTensorStack
from ..core.state import TensorCore
from .entries import is_namedtuple, namedtuple_fields

__all__ = ["PYTREE_TYPE", "pytree_entries", "rebuild"]

#: the key under which a level records the type of the container it came from
PYTREE_TYPE = "_pytree_type"
_KEY_PREFIX = "<key "


def pytree_entries(tree: object) -> Any:
    """A pytree as nested entries (a leaf as a tensor, or a tensor class as it is)."""
    if isinstance(tree, (Tensor, TensorCore)):
        return tree
    if isinstance(tree, (bool, int, float, complex, np.ndarray, np.generic)):
        return torch.as_tensor(tree)
    found: dict[str, object] = {}
    if isinstance(tree, Mapping):
        for index, (key, value) in enumerate(tree.items()):
            if type(key) is str:
                found[key] = pytree_entries(value)
            else:  # kept with its value: a level key must be a string
                name = f"{_KEY_PREFIX}{index}>"
                found[name] = {"key": NonTensorData(key), "value": pytree_entries(value)}
    elif is_namedtuple(tree):
        for name, value in zip(namedtuple_fields(tree), tree):
            found[name] = pytree_entries(value)
    elif isinstance(tree, (list, tuple)):
        for index, value in enumerate(tree):
            found[str(index)] = pytree_entries(value)
    else:
        raise TypeError(
            f"from_pytree: a {type(tree).__name__} is not a pytree node or leaf (lists, tuples, "
            f"named tuples and dicts of tensors, tensor classes, numbers and NumPy arrays)"
        )
    if PYTREE_TYPE in found:
        raise ValueError(f"from_pytree: the key {PYTREE_TYPE!r} is reserved for the node type")
    found[PYTREE_TYPE] = NonTensorData(type(tree))
    return found


def _value(leaf: object) -> object:
    if isinstance(leaf, TensorCore):
        return rebuild(leaf)
    if type(leaf) is NonTensorData or type(leaf) is NonTensorStack:
        return leaf.value()
    return leaf


def rebuild(node: TensorCore) -> Any:
    """The pytree a level made by :func:`pytree_entries` came from (a level without a
    recorded type is returned as it is)."""
    data = node._data
    recorded = data.get(PYTREE_TYPE)
    if type(recorded) is not NonTensorData:
        return node
    kind: Any = recorded.data
    items = [(key, leaf) for key, leaf in data.items() if key != PYTREE_TYPE]
    if issubclass(kind, Mapping):
        pairs = []
        for key, leaf in items:
            if key.startswith(_KEY_PREFIX) and isinstance(leaf, TensorCore):
                pairs.append((_value(leaf._data["key"]), _value(leaf._data["value"])))
            else:
                pairs.append((key, _value(leaf)))
        if issubclass(kind, defaultdict):
            return kind(None, pairs)  # rebuilt without its default factory
        return kind(pairs)
    values = [_value(leaf) for _, leaf in items]
    if is_namedtuple_class(kind):
        if hasattr(kind, "_fields"):
            return kind(*values)
        return kind(values)  # a torch.return_types result takes one sequence
    return kind(values)


def is_namedtuple_class(kind: type) -> bool:
    """Whether ``kind`` is a named-tuple class (``torch.return_types`` included)."""
    return issubclass(kind, tuple) and (hasattr(kind, "_fields") or hasattr(kind, "n_fields"))
