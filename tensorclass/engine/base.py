"""``TensorDictBase``: the one engine behind ``TensorDict``, every tensor class and lazy stacks.

It is :class:`~tensorclass.engine.ops.TensorOps` (the state and every operation)
with the storage and scale methods (``memmap``, ``map``, ``share_memory_``, ``send``/``recv``
and collectives). Those live in modules that build lazy stacks, which derive from
``TensorOps``; so the storage methods join here, above them, and every class that users
meet (``TensorClass``, ``TensorDict``, the lazy stack of either) derives from this class.
"""

from __future__ import annotations

import torch
from typing_extensions import Self

from .core.attach import class_op
from .lazy import restack
from .ops import TensorOps
from .storage.consolidate import Consolidation
from .storage.formats import methods as formats
from .storage.methods import StorageMethods
from .storage.save_load import SaveSpellings
from .storage.tables import methods as tables

__all__ = ["TensorDictBase"]


class TensorDictBase(
    Consolidation,
    SaveSpellings,
    StorageMethods,
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

    # storage/formats/methods.py (the from_* return what the file holds, not the class
    # they are called on: plain class methods)
    to_safetensors = formats.to_safetensors
    from_safetensors = classmethod(formats.from_safetensors)
    to_h5 = formats.to_h5
    from_h5 = classmethod(formats.from_h5)
    to_zarr = formats.to_zarr
    from_zarr = classmethod(formats.from_zarr)

    # storage/tables/methods.py
    to_pandas = tables.to_pandas
    from_pandas = class_op(tables.from_pandas)
    to_arrow = tables.to_arrow
    from_arrow = class_op(tables.from_arrow)
    to_parquet = tables.to_parquet
    from_parquet = class_op(tables.from_parquet)
    to_csv = tables.to_csv
    from_csv = class_op(tables.from_csv)
    to_json = tables.to_json
    from_json = class_op(tables.from_json)

    # lazy/restack.py
    to_lazystack = restack.to_lazystack

    def densify(self, layout: torch.layout = torch.strided) -> Self:
        # a method, not ``densify = restack.densify``: lazy stacks override it
        # (``lazy/ragged.py``) and mypy checks that override (``lazy/stack.py``) before it
        # has inferred an attached function's type in this module (an import cycle)
        return restack.densify(self, layout)

    densify.__doc__ = restack.densify.__doc__
