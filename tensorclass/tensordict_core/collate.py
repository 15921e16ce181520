"""``DataLoader`` batching: a batch of tensor classes is stacked into one tensor class.

``torch.utils.data.default_collate`` looks up element types in
``default_collate_fn_map``; registering the engine's base class there makes every tensor
class (``TensorDict`` and typed classes) collate with ``torch.stack``:

>>> import torch
>>> from torch.utils.data import DataLoader
>>> from tensorclass import TensorDict
>>> items = [TensorDict({"x": torch.full((3,), float(i))}) for i in range(10)]
>>> batch = next(iter(DataLoader(items, batch_size=4)))
>>> type(batch).__name__, batch.batch_size, batch["x"].shape
('TensorDict', torch.Size([4]), torch.Size([4, 3]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.utils.data._utils.collate import default_collate_fn_map

from ._core import TensorCore
from .torch_functions import stack

__all__ = ["collate_tensor_classes"]


def collate_tensor_classes(
    batch: Sequence[TensorCore],
    *,
    collate_fn_map: dict[type | tuple[type, ...], Callable[..., Any]] | None = None,
) -> Any:
    """Stack a batch of instances of one tensor class along a new first batch dim."""
    return stack(batch)


default_collate_fn_map[TensorCore] = collate_tensor_classes
