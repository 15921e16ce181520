"""``UnbatchedTensor``: a tensor stored in an instance but exempt from its batch dims.

A lookup table, a mask or parameters shared by every element of a batch have a shape of
their own, unrelated to the batch size. Wrapped in :class:`UnbatchedTensor`, such a tensor
can be stored under any key: the instance keeps it as one value shared by the whole batch
(a :class:`~tensorclass.NonTensorData` holding it), so indexing, reshaping, permuting,
unsqueezing... the instance return it unchanged, and reading the key returns it.
"""

from __future__ import annotations

from typing import SupportsIndex

import torch
from torch import Tensor

__all__ = ["UnbatchedTensor"]


class UnbatchedTensor(Tensor):
    """A tensor that an instance keeps whole, whatever its batch operations.

    It is a ``torch.Tensor``: operations on it (``u + 1``, ``u.sum()``...) return
    ``UnbatchedTensor``. In an instance, batch shape operations and indexing leave it
    unchanged; stacking or concatenating instances keeps one value when the stacked
    payloads are equal, and gives a per-element stack of them otherwise. ``clone`` copies
    it; element-wise operations, ``apply`` and ``to`` of the instance apply to its batched
    tensors only and keep it as it is (it is not saved by ``memmap``).

    Args:
        data: the payload (converted with ``torch.as_tensor``).
        batch_size: accepted for compatibility with tensordict; informative only.

    >>> import torch
    >>> from tensorclass import TensorDict, UnbatchedTensor
    >>> td = TensorDict({"x": torch.zeros(3, 2)}, batch_size=[3])
    >>> td["table"] = UnbatchedTensor(torch.arange(5))
    >>> td[0]["table"].shape, td.reshape(3, 1)["table"].shape
    (torch.Size([5]), torch.Size([5]))
    >>> torch.stack([td, td])["table"]
    UnbatchedTensor([0, 1, 2, 3, 4])
    """

    @staticmethod
    def __new__(cls, data: object, batch_size: object = None) -> UnbatchedTensor:
        tensor = data if isinstance(data, Tensor) else torch.as_tensor(data)
        if isinstance(tensor, UnbatchedTensor):
            return tensor
        result: UnbatchedTensor = tensor.as_subclass(cls)
        return result

    def __init__(self, data: object, batch_size: object = None) -> None:
        pass  # everything happens in __new__ (torch.Tensor has no __init__ to call)

    def __deepcopy__(self, memo: dict[int, object]) -> UnbatchedTensor:
        return UnbatchedTensor(self.as_subclass(Tensor).clone())

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[object, ...]:
        return (UnbatchedTensor, (self.as_subclass(Tensor),))
