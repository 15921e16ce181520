"""``TensorDictBase``: the one engine behind ``TensorDict``, every tensor class and lazy stacks.

It is :class:`~tensorclass.engine.ops.TensorOps` (the state and every operation) with the
storage and scale operations attached (``memmap``, ``map``, ``share_memory_``,
``send``/``recv`` and collectives, consolidation, file formats, tables, ``to_lazystack``):
functions of ``storage/``, which reach lazy stacks through ``core/lazy_stacks.py``. Every
class users meet (``TensorClass``, ``TensorDict``, ``LazyStackedTensorDict``) derives from
this class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from typing_extensions import Self

from .core.attach import class_op, op_property
from .ops import TensorOps
from .storage import consolidate as consolidation
from .storage import restack, save_load
from .storage.distributed import methods as distributed
from .storage.distributed import point_to_point, rooted
from .storage.formats import methods as formats
from .storage.formats import safetensors_file
from .storage.memmap import methods as memmap_methods
from .storage.memmap.load import register_defined
from .storage.parallel import map as parallel_map
from .storage.parallel import methods as parallel
from .storage.tables import arrow, frames
from .storage.tables import methods as tables

__all__ = ["TensorDictBase"]


class TensorDictBase(TensorOps):
    """The engine shared by :class:`TensorDict` and every tensor class.

    An instance is a dict of leaves (tensors, nested instances, non-tensor values) whose
    leading dims all equal :attr:`batch_size`; it behaves like one tensor of that shape.
    """

    __slots__ = ()

    # The storage and scale operations, attached by folder, one line each
    # (``name = module.function``).

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        register_defined(cls)  # loading finds saved classes among these (see memmap/load.py)

    # storage/

    # storage/memmap/methods.py
    # (with ``save`` below, typed by their signature kind: ``return_early=True`` gives a future)
    if TYPE_CHECKING:
        memmap: ClassVar[memmap_methods.Memmap[Self]]
        memmap_: ClassVar[memmap_methods.MemmapInPlace[Self]]
        memmap_like: ClassVar[memmap_methods.MemmapLike[Self]]
        save: ClassVar[memmap_methods.Save[Self]]
        dumps: ClassVar[memmap_methods.Save[Self]]
    else:
        memmap = memmap_methods.memmap
        memmap_ = memmap_methods.memmap_
        memmap_like = memmap_methods.memmap_like
        save = save_load.save
        dumps = save_load.save
    is_memmap = memmap_methods.is_memmap

    # storage/parallel/methods.py (``share_memory_``: storage/consolidate.py's, below)
    is_shared = parallel.is_shared

    # storage/parallel/map.py
    map = parallel_map.map
    map_iter = parallel_map.map_iter

    # storage/distributed/point_to_point.py
    send = point_to_point.send
    recv = point_to_point.recv
    isend = point_to_point.isend
    irecv = point_to_point.irecv
    broadcast = point_to_point.broadcast
    all_reduce = point_to_point.all_reduce
    all_gather = point_to_point.all_gather

    # storage/distributed/rooted.py
    reduce = rooted.reduce
    gather_and_stack = rooted.gather_and_stack
    scatter = rooted.scatter

    # storage/distributed/methods.py
    asend = distributed.asend
    arecv = distributed.arecv

    # storage/save_load.py
    # (``save`` and ``dumps``: above, with ``memmap``)
    load = class_op(save_load.load)
    load_memmap_ = save_load.load_memmap_
    load_ = save_load.load_
    memmap_refresh_ = save_load.memmap_refresh_
    saved_path = op_property(save_load.saved_path)
    make_memmap = save_load.make_memmap
    make_memmap_from_tensor = save_load.make_memmap_from_tensor
    make_memmap_from_storage = save_load.make_memmap_from_storage

    # storage/consolidate.py (the one-buffer forms of pickling, ``to`` and ``share_memory_``)
    is_consolidated = consolidation.is_consolidated
    consolidate = consolidation.consolidate
    from_consolidated = class_op(consolidation.from_consolidated_as)
    _consolidated_reduce = consolidation._consolidated_reduce
    _consolidated_to = consolidation._consolidated_to
    share_memory_ = consolidation.share_memory_

    # storage/formats/safetensors_file.py
    to_safetensors = safetensors_file.to_safetensors

    # storage/formats/methods.py (the from_* return what the file holds, not the class
    # they are called on: plain class methods)
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
    from_parquet = class_op(tables.from_parquet)
    from_csv = class_op(tables.from_csv)
    from_json = class_op(tables.from_json)

    # storage/tables/arrow.py
    to_parquet = arrow.to_parquet

    # storage/tables/frames.py
    to_csv = frames.to_csv
    to_json = frames.to_json

    # storage/restack.py
    to_lazystack = restack.to_lazystack

    densify = restack.densify
