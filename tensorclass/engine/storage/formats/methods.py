"""File-format methods of every tensor class: safetensors, HDF5 and Zarr.

The formats live in :mod:`.formats` (each needs an optional extra, imported when used:
``pip install 'tensorclass[formats]'``); these functions, attached to ``TensorDictBase`` in
``engine/base.py``, are the public signatures of :mod:`.persistent` and
:mod:`.safetensors_file` (``to_safetensors`` is :mod:`.safetensors_file`'s own). The
``from_*`` return what the file holds (a class of its own, a ``PersistentTensorDict``), so
they are plain class methods there; ``tensorclass.from_*`` run the same code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ....schema import is_typed
from ...core.self_types import B, as_op
from ..memmap.load import ClassPolicy
from ..memmap.tensor import PathLike
from .persistent import PersistentTensorDict, open_persistent, refuse_pickle, write_persistent
from .safetensors_file import read_safetensors

if TYPE_CHECKING:
    from ...base import TensorDictBase

__all__ = ["from_h5", "from_safetensors", "from_zarr", "to_h5", "to_zarr"]


def from_safetensors(
    cls: type[TensorDictBase],
    path: PathLike,
    *,
    device: torch.device | str | int | None = None,
    classes: ClassPolicy = "imported",
) -> Any:
    """Load a safetensors file, its tensors memory-mapped (copy-on-write: writes stay in
    memory). Nothing is unpickled and no code runs: a recorded class must already be
    imported or defined (``classes="tensordict"`` loads plain ``TensorDict`` levels).
    Called on a typed class, that class is the top level; a file without structure
    metadata (a model checkpoint) loads as a nested ``TensorDict`` (names split on ``"."``).
    Errors name the file (:class:`~tensorclass.FileFormatError`)."""
    target = cls._dense_class()  # a lazy-stack class: its members' class
    result = read_safetensors(path, target if is_typed(target) else None, classes)
    return result if device is None else as_op(result).to(device)


def to_h5(self: B, filename: PathLike, **kwargs: object) -> PersistentTensorDict:
    """Write to a new HDF5 file (needs ``h5py``; an existing file is replaced) and return
    the :class:`~tensorclass.PersistentTensorDict` reading it (``mode="r+"``). Each tensor
    is a dataset at its key path; ``kwargs`` go to ``h5py.Group.create_dataset``
    (``compression="gzip"``...). Batch sizes, classes and non-tensor values are kept."""
    return write_persistent(self, filename, "h5", kwargs)


def from_h5(
    cls: type[TensorDictBase],
    filename: PathLike,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size: Any = None,
    non_tensor_as_stack: bool = False,
) -> PersistentTensorDict:
    """Open an HDF5 file as a :class:`~tensorclass.PersistentTensorDict` (reads lazily;
    ``to_tensordict()`` reads it all). See that class for the keywords."""
    del cls  # a file holds its own structure
    return open_persistent(
        filename, "h5", mode, batch_size, auto_batch_size, batch_dims, non_tensor_as_stack
    )


def to_zarr(
    self: B, filename: object, *, allow_pickle: bool | None = None, **kwargs: object
) -> PersistentTensorDict:
    """Write to a new Zarr store (needs ``zarr`` 3; an existing store is replaced) and
    return the :class:`~tensorclass.PersistentTensorDict` reading it. Each tensor is one
    uncompressed chunk unless ``chunks=``/``compressors=`` say otherwise (``chunks``
    applies to the leading dims). Nothing is pickled (``allow_pickle=True`` is refused)."""
    refuse_pickle(allow_pickle, "to_zarr")
    return write_persistent(self, filename, "zarr", kwargs)


def from_zarr(
    cls: type[TensorDictBase],
    filename: object,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size: Any = None,
    non_tensor_as_stack: bool = False,
    allow_pickle: bool | None = None,
) -> PersistentTensorDict:
    """Open a Zarr store as a :class:`~tensorclass.PersistentTensorDict` (reads lazily).
    Nothing is unpickled (``allow_pickle=True`` is refused)."""
    del cls  # a store holds its own structure
    return open_persistent(
        filename,
        "zarr",
        mode,
        batch_size,
        auto_batch_size,
        batch_dims,
        non_tensor_as_stack,
        allow_pickle,
    )
