"""``TensorDictBase``: the one engine behind ``TensorDict``, every tensor class and lazy stacks.

It is :class:`~tensorclass.engine.ops.TensorOps` (the state and every operation)
with the storage and scale methods (``memmap``, ``map``, ``share_memory_``, ``send``/``recv``
and collectives). Those live in modules that build lazy stacks, which derive from
``TensorOps``; so the storage methods join here, above them, and every class that users
meet (``TensorClass``, ``TensorDict``, the lazy stack of either) derives from this class.
"""

from __future__ import annotations

from .lazy.restack import Restacking
from .ops import TensorOps
from .storage.consolidate import Consolidation
from .storage.formats.methods import FormatMethods
from .storage.methods import StorageMethods
from .storage.save_load import SaveSpellings
from .storage.tables.methods import TableMethods

__all__ = ["TensorDictBase"]


class TensorDictBase(
    Restacking,
    Consolidation,
    SaveSpellings,
    StorageMethods,
    FormatMethods,
    TableMethods,
    TensorOps,
):
    """The engine shared by :class:`TensorDict` and every tensor class.

    An instance is a dict of leaves (tensors, nested instances, non-tensor values) whose
    leading dims all equal :attr:`batch_size`; it behaves like one tensor of that shape.
    """

    __slots__ = ()

    # The storage and scale operations, attached by folder, one line each
    # (``name = module.function``).

    # storage/
    # (storage/ operations go here)

    # lazy/restack.py
    # (restack operations go here)
