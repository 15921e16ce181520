"""Memory-mapped tensors and tensor classes saved as directories of raw files.

- :mod:`.tensor`: :class:`MemoryMappedTensor`, a tensor backed by a file.
- :mod:`.metadata`: the on-disk format and :func:`read_metadata`.
- :mod:`.save`: ``memmap``, ``memmap_``, ``memmap_like`` (atomic saves).
- :mod:`.load`: :func:`load_memmap` and the class-loading rules.
"""

from .load import ClassPolicy, load_memmap, resolve_class
from .metadata import EntryInfo, MemmapInfo, read_metadata
from .save import memmap
from .tensor import MemoryMappedTensor

__all__ = [
    "ClassPolicy",
    "EntryInfo",
    "MemmapInfo",
    "MemoryMappedTensor",
    "load_memmap",
    "memmap",
    "read_metadata",
    "resolve_class",
]
