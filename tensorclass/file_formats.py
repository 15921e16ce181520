"""tensordict's function forms of the file formats: ``to_safetensors``, ``from_safetensors``,
``from_h5``, ``from_zarr`` (the methods are on every tensor class).

Their signatures are tensordict's (``data``, ``h5_file``, ``zarr_file``), so they are
functions of their own; each runs the code the method runs (``safetensors_file``'s
``to_safetensors``, ``formats/methods.py``'s ``from_safetensors``, ``open_persistent``).
"""

from __future__ import annotations

from typing import Any

import torch

from .engine.base import TensorDictBase
from .engine.storage.formats import methods as formats
from .engine.storage.formats import safetensors_file
from .engine.storage.formats.persistent import PersistentTensorDict, open_persistent
from .engine.storage.memmap.load import ClassPolicy
from .engine.storage.memmap.tensor import PathLike

__all__ = ["from_h5", "from_safetensors", "from_zarr", "to_safetensors"]


def to_safetensors(data: TensorDictBase, path: PathLike) -> None:
    """Save ``data`` to the safetensors file ``path``; the same as ``data.to_safetensors(path)``.

    >>> import os, tempfile, torch
    >>> from tensorclass import TensorDict, from_safetensors, to_safetensors
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     to_safetensors(TensorDict(a=torch.zeros(3), batch_size=[3]), os.path.join(tmp, "f"))
    ...     from_safetensors(os.path.join(tmp, "f"))["a"].shape
    torch.Size([3])
    """
    safetensors_file.to_safetensors(data, path)


def from_safetensors(
    path: PathLike,
    *,
    device: torch.device | str | int | None = None,
    classes: ClassPolicy = "imported",
) -> Any:
    """Load a safetensors file as the class it was saved from (tensors memory-mapped, no
    code run: the class must be imported or defined already); see
    :meth:`tensorclass.TensorDict.from_safetensors`."""
    return formats.from_safetensors(TensorDictBase, path, device=device, classes=classes)


def from_h5(
    h5_file: PathLike,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size: Any = None,
    non_tensor_as_stack: bool = False,
) -> PersistentTensorDict:
    """Open an HDF5 file as a :class:`~tensorclass.PersistentTensorDict` (needs ``h5py``)."""
    return open_persistent(
        h5_file, "h5", mode, batch_size, auto_batch_size, batch_dims, non_tensor_as_stack
    )


def from_zarr(
    zarr_file: object,
    *,
    mode: str = "r",
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    batch_size: Any = None,
    non_tensor_as_stack: bool = False,
    allow_pickle: bool | None = None,
) -> PersistentTensorDict:
    """Open a Zarr store as a :class:`~tensorclass.PersistentTensorDict` (needs ``zarr``);
    nothing is unpickled (``allow_pickle=True`` is refused)."""
    return open_persistent(
        zarr_file,
        "zarr",
        mode,
        batch_size,
        auto_batch_size,
        batch_dims,
        non_tensor_as_stack,
        allow_pickle,
    )
