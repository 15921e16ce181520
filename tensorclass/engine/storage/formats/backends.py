"""The two hierarchical backends of :class:`~tensorclass.PersistentTensorDict`: HDF5 (``h5py``)
and Zarr (``zarr`` 3). Each leaf tensor is a dataset (array) at its key path; each nested level
a group; the JSON layout (:mod:`.layout`) is the ``"tensordict"`` attribute of the root group.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from ....errors import FileFormatError, UnsafePathError
from ...core.untrusted import check_regular, json_value, shown
from ..memmap.info import shape_problem
from .extras import require
from .layout import LAYOUT_KEY

__all__ = [
    "DECLARED_FLOOR",
    "EXPANSION",
    "Backend",
    "BackendName",
    "backend",
    "numpy_of",
    "torch_dtype_of",
]

BackendName = Literal["h5", "zarr"]

DECLARED_FLOOR = 64 * 2**20
"""A dataset declaring at most this many bytes (64 MiB) is read whatever it stores."""
EXPANSION = 1024
"""A larger dataset must store at least ``1/EXPANSION`` of the bytes it declares."""

#: torch dtypes numpy has no type for, stored as the unsigned int of their size
_STORED_AS = {
    torch.bfloat16: torch.int16,
    torch.float8_e4m3fn: torch.uint8,
    torch.float8_e5m2: torch.uint8,
}


def numpy_of(tensor: Tensor) -> tuple[np.ndarray, str | None]:
    """The array stored for ``tensor``, and its torch dtype name when numpy cannot hold it."""
    plain = tensor.detach().to("cpu").contiguous().as_subclass(Tensor)
    stored = _STORED_AS.get(plain.dtype)
    if stored is None:
        return plain.numpy(), None
    return plain.view(stored).numpy(), str(plain.dtype).removeprefix("torch.")


def torch_dtype_of(dtype: np.dtype[Any]) -> torch.dtype | None:
    """The torch dtype of a numeric numpy dtype, or ``None`` (strings, objects...)."""
    if dtype.kind not in "biufc":
        return None
    return torch.from_numpy(np.empty((0,), dtype=dtype)).dtype


class Backend:
    """What :class:`PersistentTensorDict` asks of a file format."""

    def __init__(self, name: BackendName) -> None:
        self.name = name
        self.module = require("h5py" if name == "h5" else "zarr", f"the {name} backend")

    def open(self, filename: object, mode: str) -> Any:
        """The root group of the file or store ``filename``, checked to hold nothing outside
        it (:meth:`refuse_outside`): a FIFO or a device is refused before it is opened."""
        if isinstance(filename, (str, os.PathLike)) and os.path.lexists(filename):
            if self.name == "h5":
                check_regular(filename, "HDF5 file")
            elif not os.path.isdir(filename) or os.path.islink(filename):
                raise UnsafePathError(filename, "a Zarr store must be a directory (not a link)")
        try:
            if self.name == "h5":
                extra = {"libver": "latest"} if mode in ("w", "w-", "x") else {}
                root = self.module.File(filename, mode, **extra)
            else:
                root = self.module.open_group(filename, mode=mode)
        except FileNotFoundError:
            raise FileNotFoundError(f"{filename}: no such {self.name} file") from None
        except Exception as err:  # h5py's and zarr's own errors: ours, naming the file
            raise FileFormatError(
                f"{filename}: cannot open as {self.name}: {type(err).__name__}: {shown(err, 200)}"
            ) from None
        try:
            self.refuse_outside(root, filename)
        except BaseException:
            self.close(root)
            raise
        return root

    def refuse_outside(self, root: Any, filename: object) -> None:
        """Raise :class:`~tensorclass.UnsafePathError` if anything in the file or store
        leads outside it, for reads and writes alike: in HDF5, soft and external links,
        datasets with external storage and virtual datasets; in a Zarr directory store,
        symbolic links and files that are not regular files (FIFOs, devices)."""
        if self.name == "h5":
            found: list[str] = []

            def visit(name: str, link: Any) -> Any:
                if not isinstance(link, self.module.HardLink):
                    found.append(f"{name!r} is a {type(link).__name__}")
                    return True
                node = root.get(name)
                if isinstance(node, self.module.Dataset) and (node.external or node.is_virtual):
                    found.append(f"{name!r} is a dataset stored outside the file")
                    return True
                return None

            root.visititems_links(visit)
            if found:
                raise UnsafePathError(filename, f"{found[0]}; the file is not opened")
            return
        if not isinstance(filename, (str, os.PathLike)):
            return  # a store object the caller made
        for top, dirs, files in os.walk(os.fspath(filename), followlinks=False):
            for name in (*dirs, *files):
                path = os.path.join(top, name)
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode):
                    raise UnsafePathError(path, "a symbolic link in the Zarr store; not followed")
                if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                    raise UnsafePathError(path, "not a regular file; the store is not opened")

    def is_group(self, node: Any) -> bool:
        return isinstance(node, self.module.Group)

    def inside(self, group: Any, name: str) -> str | None:
        """Why the member ``name`` of ``group`` may lead outside the file (``None``: it
        does not): HDF5 soft and external links, external raw storage, virtual datasets."""
        if self.name != "h5":
            return None  # a zarr store has no links
        link = group.get(name, getlink=True)
        if link is not None and not isinstance(link, self.module.HardLink):
            return f"a {type(link).__name__}"
        node = group.get(name)
        if isinstance(node, self.module.Dataset) and (node.external or node.is_virtual):
            return "a dataset stored outside the file"
        return None

    def members(self, group: Any) -> list[str]:
        return sorted(str(name) for name in group.keys())

    def child(self, group: Any, path: str, create: bool = False) -> Any:
        """The group at ``path`` below ``group`` (made if ``create``)."""
        node = group
        for part in filter(None, path.split("/")):
            if part not in node and create:
                node = node.create_group(part)
            else:
                node = node[part]
        return node

    def write(self, group: Any, path: str, array: np.ndarray, options: dict[str, Any]) -> None:
        """Store ``array`` at ``path`` below ``group`` (replacing what is there)."""
        head, _, name = path.rpartition("/")
        parent = self.child(group, head, create=True)
        if name in parent:
            del parent[name]
        if self.name == "h5":
            parent.create_dataset(name, data=array, **options)
            return
        options = dict(options)
        chunks = options.pop("chunks", None)
        shape = array.shape
        if chunks is None:
            chunks = tuple(max(size, 1) for size in shape)  # one uncompressed chunk
            options.setdefault("compressors", None)
        else:
            chunks = tuple(chunks) + tuple(max(size, 1) for size in shape[len(chunks) :])
        parent.create_array(name, data=array, chunks=chunks[: len(shape)], **options)

    def layout(self, root: Any, filename: object) -> Any:
        """The JSON layout stored in the file (``None`` if it has none), checked as JSON."""
        text = root.attrs.get(LAYOUT_KEY)
        if text is None:
            return None
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        if type(text) is not str:
            raise FileFormatError(f"{filename}: the {LAYOUT_KEY!r} attribute is not a JSON string")
        return json_value(text, filename, FileFormatError, f"the {LAYOUT_KEY!r} attribute")

    def declared_problem(self, node: Any, itemsize: int) -> str | None:
        """Why the dataset ``node`` may not be read (``None``: it may): a shape torch
        cannot hold, or more than :data:`DECLARED_FLOOR` bytes declared and more than
        :data:`EXPANSION` times the bytes it stores (compression included). Asked before
        anything is allocated: an array declared at 80 GB in a file of a few KB is refused."""
        shape = tuple(int(size) for size in node.shape)
        problem = shape_problem(shape, max(itemsize, 1))
        if problem is not None:
            return problem
        declared = math.prod(shape) * max(itemsize, 1)
        if declared <= DECLARED_FLOOR:
            return None
        stored = int(node.id.get_storage_size()) if self.name == "h5" else node.nbytes_stored()
        if declared <= int(stored) * EXPANSION:
            return None
        return (
            f"declares {declared} bytes (shape {list(shape)}) but stores {stored}: a dataset "
            f"declaring more than {EXPANSION} times the bytes it holds is refused"
        )

    def set_layout(self, root: Any, layout: dict[str, object]) -> None:
        root.attrs[LAYOUT_KEY] = json.dumps(layout)

    def close(self, root: Any) -> None:
        if self.name == "h5":
            root.close()


def backend(name: str) -> Backend:
    """The backend called ``name`` (``"h5"`` or ``"zarr"``)."""
    if name not in ("h5", "zarr"):
        raise ValueError(f"backend must be 'h5' or 'zarr'; got {name!r}")
    return Backend(name)  # type: ignore[arg-type]
