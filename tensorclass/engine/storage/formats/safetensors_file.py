"""safetensors files: ``to_safetensors`` (written by the ``safetensors`` package) and
``from_safetensors`` (read here, memory-mapped).

Each tensor is stored under its nested key joined with ``"."`` (a lazy stack's members add
their index: ``"0.x"``), the names a model's ``state_dict`` uses; the structure is the JSON
layout of :mod:`.layout` under the ``"tensordict"`` key of the header metadata, as tensordict
0.15.3 writes it, so each library reads the other's files.

Loading parses the header itself (8 bytes of length, then JSON), checks every entry against
the file's size, and maps the file once (``torch.UntypedStorage.from_file``, copy-on-write):
every tensor is a view of that mapping, nothing is read until used, writes stay in memory.
Nothing is unpickled and no code runs. A file without that metadata (a model checkpoint)
loads as a nested ``TensorDict`` with an empty batch size, each name split on ``"."``.
"""

from __future__ import annotations

import json
import math
import os
import struct
import uuid
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ....errors import FileFormatError
from ...core.self_types import B
from ...core.state import TensorCore
from ...core.untrusted import MAX_DIMS, MAX_SIZE, json_value, key_problem, open_regular, shown
from ..memmap.load import ClassPolicy
from ..memmap.tensor import PathLike, map_file
from .extras import require
from .layout import LAYOUT_KEY, VERSION, Layout, build, describe

__all__ = ["DTYPES", "read_safetensors", "to_safetensors"]

#: safetensors dtype names
DTYPES: dict[str, torch.dtype] = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "U16": torch.uint16,
    "U32": torch.uint32,
    "U64": torch.uint64,
    "BOOL": torch.bool,
    "F8_E4M3": torch.float8_e4m3fn,
    "F8_E5M2": torch.float8_e5m2,
    "C64": torch.complex64,
}
_MAX_HEADER = 100 * 1024 * 1024


def to_safetensors(self: B, path: PathLike) -> None:
    """Save to the safetensors file ``path`` (needs the ``safetensors`` package).

    Tensors are stored under their nested keys joined with ``"."`` (lazy stacks add the
    member index); batch sizes, dim names, classes, lazy stacks and non-tensor (JSON)
    values are in the header metadata. :meth:`from_safetensors` memory-maps it back.

    >>> import os, tempfile, torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict(x=torch.ones(2, 3), sub={"y": torch.zeros(2)}, batch_size=[2])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     td.to_safetensors(os.path.join(tmp, "td.safetensors"))
    ...     back = TensorDict.from_safetensors(os.path.join(tmp, "td.safetensors"))
    ...     print(back.batch_size, back["sub", "y"].tolist())
    torch.Size([2]) [0.0, 0.0]
    """
    st = require("safetensors.torch", "to_safetensors")
    layout = Layout(".")
    root = describe(self, layout)  # checks every key and value before writing
    seen: set[int] = set()
    tensors: dict[str, Tensor] = {}
    for name, tensor in layout.tensors.items():
        plain = tensor.detach().to("cpu").contiguous().as_subclass(Tensor)
        pointer = plain.untyped_storage().data_ptr()
        if pointer in seen and plain.numel():
            plain = plain.clone()  # safetensors stores no shared memory
        seen.add(pointer)
        tensors[name] = plain
    metadata = {LAYOUT_KEY: json.dumps({"version": VERSION, "root": root})}
    target = Path(os.path.abspath(os.fspath(path)))
    temporary = target.with_name(f".{target.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        st.save_file(tensors, os.fspath(temporary), metadata=metadata)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _header(file: Path) -> tuple[dict[str, Any], int, int]:
    """The parsed header, the offset of the data and the file's size (a FIFO or a device is
    refused before it is opened)."""
    fd = open_regular(file, "safetensors file")
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(8)
        if len(head) < 8:
            raise FileFormatError(f"{file}: not a safetensors file (shorter than 8 bytes)")
        (length,) = struct.unpack("<Q", head)
        if length > min(size - 8, _MAX_HEADER):
            raise FileFormatError(
                f"{file}: not a safetensors file (a header of {length} bytes in a file of {size})"
            )
        raw = handle.read(length)
    header = json_value(raw, file, FileFormatError, "the header")
    if type(header) is not dict:
        raise FileFormatError(f"{file}: the header is not a JSON object")
    return header, 8 + length, size


def _entries(
    file: Path, header: dict[str, Any], start: int, size: int
) -> dict[str, tuple[torch.dtype, tuple[int, ...], int]]:
    """Every tensor's dtype, shape and byte offset in the file, checked against its size."""
    found = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if type(info) is not dict:
            raise FileFormatError(f"{file}: the header entry {shown(name)} is not an object")
        wrong_key = key_problem(name)
        if wrong_key is not None:
            raise FileFormatError(f"{file}: {wrong_key}")
        dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if type(dtype) is not str or dtype not in DTYPES:
            raise FileFormatError(
                f"{file}: the tensor {shown(name)} has an unknown dtype {shown(dtype, 40)}"
            )
        if (
            type(shape) is not list
            or len(shape) > MAX_DIMS
            or not all(type(s) is int and 0 <= s <= MAX_SIZE for s in shape)
            or math.prod(shape) * DTYPES[dtype].itemsize > MAX_SIZE
        ):
            raise FileFormatError(
                f"{file}: the tensor {shown(name)} has an invalid shape {shown(shape, 60)}"
            )
        if (
            type(offsets) is not list
            or len(offsets) != 2
            or not all(type(o) is int for o in offsets)
            or not 0 <= offsets[0] <= offsets[1] <= size - start
        ):
            raise FileFormatError(
                f"{file}: the tensor {name!r} has data offsets {offsets!r:.60} outside the file"
            )
        nbytes = math.prod(shape) * DTYPES[dtype].itemsize
        if offsets[1] - offsets[0] != nbytes:
            raise FileFormatError(
                f"{file}: the tensor {name!r} ({dtype} {shape}) needs {nbytes} bytes; its "
                f"offsets hold {offsets[1] - offsets[0]}"
            )
        found[name] = (DTYPES[dtype], tuple(shape), start + offsets[0])
    return found


def _view(
    storage: torch.UntypedStorage | None, dtype: torch.dtype, shape: tuple[int, ...], offset: int
) -> Tensor:
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    assert storage is not None  # a file holding tensor bytes is mapped
    if offset % dtype.itemsize:  # unaligned: one copy
        raw = torch.empty((0,), dtype=torch.uint8).set_(storage, offset, (nbytes,), (1,))
        return raw.clone().view(dtype).reshape(shape)
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    view = torch.empty((0,), dtype=dtype)
    return view.set_(storage, offset // dtype.itemsize, shape, tuple(reversed(strides)))


def read_safetensors(
    path: PathLike,
    cls: type[TensorCore] | None = None,
    classes: ClassPolicy = "imported",
) -> TensorCore:
    """The tree saved in the safetensors file ``path``, its tensors mapped from the file."""
    file = Path(os.path.abspath(os.fspath(path)))
    header, start, size = _header(file)
    entries = _entries(file, header, start, size)
    metadata = header.get("__metadata__") or {}
    if type(metadata) is not dict:
        raise FileFormatError(f"{file}: __metadata__ is not an object")
    storage: torch.UntypedStorage | None = None
    if size > start and entries:
        storage = map_file(os.fspath(file), False, size)

    def read(name: str, entry: dict[str, Any]) -> Tensor:
        if name not in entries:
            raise FileFormatError(f"{file}: the layout names the tensor {name!r}, not in the file")
        return _view(storage, *entries[name])

    text = metadata.get(LAYOUT_KEY)
    if text is None:
        return build({"batch_size": [], "names": None, "keys": _nest(file, entries)}, read, file)
    if type(text) is not str:
        raise FileFormatError(f"{file}: the {LAYOUT_KEY!r} metadata is not a string")
    layout = json_value(text, file, FileFormatError, f"the {LAYOUT_KEY!r} metadata")
    if type(layout) is not dict or layout.get("version") != VERSION or "root" not in layout:
        raise FileFormatError(f"{file}: the {LAYOUT_KEY!r} metadata is not a version-1 layout")
    return build(layout["root"], read, file, cls, classes)


def _nest(file: Path, entries: dict[str, Any]) -> dict[str, Any]:
    """The layout keys of a file without a layout: names split on ``"."``."""
    keys: dict[str, Any] = {}
    for name in entries:
        parts = name.split(".")
        level = keys
        for part in parts[:-1]:
            entry = level.setdefault(part, {"td": {"batch_size": [], "names": None, "keys": {}}})
            if "td" not in entry:
                raise FileFormatError(f"{file}: {name!r} is under the tensor {part!r}")
            level = entry["td"]["keys"]
        if parts[-1] in level:
            raise FileFormatError(f"{file}: the name {name!r} is both a tensor and a prefix")
        level[parts[-1]] = {"tensor": name}
    return keys
