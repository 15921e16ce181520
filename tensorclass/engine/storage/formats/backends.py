"""The two hierarchical backends of :class:`~tensorclass.PersistentTensorDict`: HDF5 (``h5py``)
and Zarr (``zarr`` 3). Each leaf tensor is a dataset (array) at its key path; each nested level
a group; the JSON layout (:mod:`.layout`) is the ``"tensordict"`` attribute of the root group.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from ....errors import FileFormatError
from .extras import require
from .layout import LAYOUT_KEY

__all__ = ["Backend", "BackendName", "backend", "numpy_of", "torch_dtype_of"]

BackendName = Literal["h5", "zarr"]

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
        """The root group of the file or store ``filename``."""
        try:
            if self.name == "h5":
                extra = {"libver": "latest"} if mode in ("w", "w-", "x") else {}
                return self.module.File(filename, mode, **extra)
            return self.module.open_group(filename, mode=mode)
        except FileNotFoundError:
            raise FileNotFoundError(f"{filename}: no such {self.name} file") from None
        except OSError as err:
            raise FileFormatError(f"{filename}: cannot open as {self.name}: {err}") from None

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

    def layout(self, root: Any) -> Any:
        text = root.attrs.get(LAYOUT_KEY)
        if text is None:
            return None
        try:
            return json.loads(text)
        except (TypeError, json.JSONDecodeError) as err:
            raise FileFormatError(f"the {LAYOUT_KEY!r} attribute is not JSON ({err})") from None

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
