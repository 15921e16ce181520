"""Memory-mapped tensors and tensor classes saved as directories of raw files.

- :mod:`.tensor`: :class:`MemoryMappedTensor`, a tensor backed by a file.
- :mod:`.info`: :class:`MemmapInfo`/:class:`EntryInfo`, what a save holds (either format).
- :mod:`.metadata`: the on-disk format and :func:`read_metadata`.
- :mod:`.foreign`: reading saves written by tensordict's ``memmap`` into the same tree.
- :mod:`.save`: ``memmap``, ``memmap_``, ``memmap_like`` (atomic saves).
- :mod:`.load`: building a saved tree (``load_tree``) and the class-loading rules
  (:func:`tensorclass.load_memmap` adds validation on load).
"""

from .load import ClassPolicy, load_tree, resolve_class
from .metadata import EntryInfo, MemmapInfo, read_metadata
from .save import memmap
from .tensor import MemoryMappedTensor

__all__ = [
    "ClassPolicy",
    "EntryInfo",
    "MemmapInfo",
    "MemoryMappedTensor",
    "load_tree",
    "memmap",
    "read_metadata",
    "resolve_class",
]
