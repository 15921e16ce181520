"""How an instance's fields and state are written and read, below class building.

``NonTensorField`` is the attribute reader of a non-tensor field. The slot setters are
the engine's slot descriptors, called directly (a tensor class's own ``__setattr__`` checks
fields, so ``obj._data = ...`` would go through it).
"""

from __future__ import annotations

from typing import Any

from .engine.core.state import TensorCore
from .non_tensor import NonTensorData, NonTensorStack

__all__ = [
    "NonTensorField",
    "SLOT_NAMES",
    "set_batch_size",
    "set_data",
    "set_device",
    "set_locked",
    "set_names",
]

set_data = TensorCore.__dict__["_data"].__set__
set_batch_size = TensorCore.__dict__["_batch_size"].__set__
set_device = TensorCore.__dict__["_device"].__set__
set_names = TensorCore.__dict__["_names"].__set__
set_locked = TensorCore.__dict__["_locked"].__set__
#: the attributes an instance stores outside its fields
SLOT_NAMES = frozenset((*TensorCore.__slots__, "__dict__"))


class NonTensorField(property):
    """Reads a non-tensor field: the stored wrapper gives back its value.

    A ``property`` (its ``__get__`` is C) around a closure: one Python frame per read, the
    least a stored ``NonTensorData`` needs to be unwrapped.
    """

    def __init__(self, name: str) -> None:
        def read(obj: Any) -> Any:
            try:
                leaf = obj._data[name]
            except KeyError:
                return None
            cls = leaf.__class__
            if cls is NonTensorData:
                return leaf.data
            if cls is NonTensorStack:
                return leaf.value()
            return leaf

        def write(obj: Any, value: Any) -> None:
            obj._set_field(name, value)

        super().__init__(read, write)
        self.name = name
