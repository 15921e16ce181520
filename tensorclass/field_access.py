"""How an instance's fields and state are written and read, below class building.

``_NonTensorField`` is the attribute reader of a non-tensor field; ``set_slots`` writes an
instance's state with ``object.__setattr__`` (torch.compile traces it). The slot setters are
the engine's slot descriptors, called directly (a tensor class's own ``__setattr__`` checks
fields, so ``obj._data = ...`` would go through it).
"""

from __future__ import annotations

from typing import Any

import torch

from .non_tensor import NonTensorData, NonTensorStack
from .tensordict_core._core import TensorCore

__all__ = [
    "NonTensorField",
    "SLOT_NAMES",
    "set_batch_size",
    "set_data",
    "set_device",
    "set_locked",
    "set_names",
    "set_slots",
]

set_data = TensorCore.__dict__["_data"].__set__
set_batch_size = TensorCore.__dict__["_batch_size"].__set__
set_device = TensorCore.__dict__["_device"].__set__
set_names = TensorCore.__dict__["_names"].__set__
set_locked = TensorCore.__dict__["_locked"].__set__
_set = object.__setattr__
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


def set_slots(
    self: Any,
    data: dict[str, Any],
    batch_size: torch.Size,
    device: torch.device | None,
    names: Any,
    locked: bool,
) -> None:
    """Set the slots and the storage dict with ``object.__setattr__``.

    Slower than the slot descriptors ``_new`` uses, but torch.compile can trace it (it
    cannot trace a descriptor's ``__set__``).
    """
    _set(self, "_data", data)
    _set(self, "__dict__", data)
    _set(self, "_batch_size", batch_size)
    _set(self, "_device", device)
    _set(self, "_names", names)
    _set(self, "_locked", locked)
