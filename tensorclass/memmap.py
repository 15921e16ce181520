"""Memory-mapped tensors at the path of ``tensordict.memmap``: :class:`MemoryMappedTensor`.

>>> import torch
>>> from tensorclass.memmap import MemoryMappedTensor
>>> MemoryMappedTensor.from_tensor(torch.arange(3)).tolist()
[0, 1, 2]
"""

from .engine.storage.memmap import MemoryMappedTensor

__all__ = ["MemoryMappedTensor"]
