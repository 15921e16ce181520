"""Storage and scale methods of every tensor class: memmap, shared memory, map, distributed.

:class:`StorageMethods` only joins one mixin per concept, each of which forwards to the
modules that do the work: ``memmap_methods.py`` (``memmap``, ``memmap_``, ``memmap_like``,
``is_memmap``: ``memmap/``), ``parallel_methods.py`` (``share_memory_``, ``is_shared``,
``map``, ``map_iter``: ``parallel.py``) and ``distributed_methods.py`` (``send``/``recv``
and the collectives: ``distributed.py``, ``distributed_rooted.py``). It sits above those
modules (they build lazy stacks, which derive from ``TensorOps``); ``TensorDictBase``
joins it with the operations.
"""

from __future__ import annotations

from typing import Any

from .distributed.methods import DistributedMethods
from .memmap.load import register_defined
from .memmap.methods import MemmapMethods
from .parallel.methods import ParallelMethods

__all__ = ["StorageMethods"]


class StorageMethods(MemmapMethods, ParallelMethods, DistributedMethods):
    """``memmap``, ``share_memory_``, ``map``, ``send``/``recv`` and collectives."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_defined(cls)  # loading finds saved classes among these (see memmap/load.py)
