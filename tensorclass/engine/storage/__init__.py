"""Storage and scale: memory-mapped saves, file formats, tables, consolidation, processes.

Subpackages: :mod:`.memmap` (``MemoryMappedTensor``, ``memmap``, ``load_memmap``),
:mod:`.formats` (safetensors, HDF5, Zarr), :mod:`.tables` (pandas, Arrow, Parquet, CSV, JSON),
:mod:`.distributed` (``torch.distributed`` point to point and collectives) and
:mod:`.parallel` (``map`` over worker processes, shared memory).
Modules: :mod:`.consolidate` (every tensor a view into one buffer), :mod:`.flat_buffer`,
:mod:`.save_load` (tensordict's ``save``/``load`` spellings) and :mod:`.restack` (``to_lazystack``,
``densify``). The storage methods are
functions of these modules, attached to ``TensorDictBase`` in ``engine/base.py``. Distributed work reuses the memmap metadata and the
flat buffer, so scale lives beside storage here rather than above it. Builds on :mod:`..ops` and below; reaches lazy stacks through :mod:`..core.lazy_stacks`.
"""
