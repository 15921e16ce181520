"""``append_memmap``: grow a save along its first batch dimension, in place.

Everything is checked before the first byte is written: the rows must have the saved
classes, keys, dtypes and trailing shapes, and a batch size that differs from the saved
one in its first dimension only; a non-tensor entry stays as saved, so the rows' value
must equal it. Then each raw file grows by the rows' bytes and every level's new
``meta.json`` is written aside (``.meta.json.append.tmp``) and renamed over the old one,
the top level first. An error on the way truncates the files back and removes the new
metadata: the save is as it was. A process killed while the files grow leaves files
longer than their metadata says, which loading reports (truncate them to the recorded
``nbytes``, or save again). Use one writer at a time, and no reader during an append.
Readers that mapped the files before keep their rows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ....json_values import non_tensor_to_json
from ....non_tensor import NonTensorData, NonTensorStack
from ...core.lazy_stacks import is_lazy_stack
from ...core.state import TensorCore
from .load import read_checked
from .metadata import DTYPES, META_NAME, MemmapInfo, dtype_name
from .save import class_path
from .tensor import PathLike

__all__ = ["append_memmap"]

_TMP = ".meta.json.append.tmp"


def _where(path: tuple[str, ...]) -> str:
    return repr(path[0] if len(path) == 1 else path) if path else "the top level"


def _flat(values: object) -> list[object]:
    if isinstance(values, list):
        return [v for item in values for v in _flat(item)]
    return [values]


def _check(
    info: MemmapInfo,
    rows: object,
    path: tuple[str, ...],
    writes: list[tuple[Path, Tensor]],
    levels: list[MemmapInfo],
) -> None:
    where = _where(path)
    if info.kind == "lazy_stack" or is_lazy_stack(rows):
        raise ValueError(f"append_memmap: {where} is a lazy stack, which cannot grow")
    if not isinstance(rows, TensorCore):
        raise ValueError(
            f"append_memmap: {where} is a nested level in the save; the rows hold a "
            f"{type(rows).__name__}"
        )
    if class_path(type(rows)) != info.class_path:
        raise ValueError(
            f"append_memmap: {where} was saved as {info.class_path}; the rows are "
            f"{class_path(type(rows))}"
        )
    saved, given = info.batch_size, tuple(rows.batch_size)
    if not saved or len(given) != len(saved) or given[1:] != saved[1:]:
        raise ValueError(
            f"append_memmap: at {where} the rows have batch size {list(given)}; they must "
            f"differ from the saved {list(saved)} in the first dimension only"
            + ("" if saved else " (a save without batch dimensions cannot grow)")
        )
    levels.append(info)
    keys = [entry.key for entry in info.entries]
    if sorted(keys) != sorted(rows._data):
        raise ValueError(
            f"append_memmap: at {where} the saved keys are {sorted(keys)}; the rows have "
            f"{sorted(rows._data)}"
        )
    for entry in info.entries:
        leaf = rows._data[entry.key]
        here = (*path, entry.key)
        if entry.type == "tensor":
            assert entry.shape is not None and entry.dtype is not None and entry.file
            if not isinstance(leaf, Tensor) or leaf.is_nested:
                raise ValueError(
                    f"append_memmap: {_where(here)} is a tensor in the save; the rows hold a "
                    f"{type(leaf).__name__}"
                )
            if dtype_name(leaf.dtype) != entry.dtype or leaf.shape[1:] != entry.shape[1:]:
                raise ValueError(
                    f"append_memmap: {_where(here)} was saved as {entry.dtype}"
                    f"{list(entry.shape)}; the rows hold {dtype_name(leaf.dtype)}"
                    f"{list(leaf.shape)} (only the first dimension may differ)"
                )
            writes.append((entry.file, leaf))
        elif entry.type == "nested":
            assert entry.child is not None
            _check(entry.child, leaf, here, writes, levels)
        elif entry.type == "non_tensor_stack":
            raise ValueError(
                f"append_memmap: {_where(here)} is a saved stack of non-tensor values, which "
                "cannot grow"
            )
        else:
            _check_value(entry.value, leaf, here)


def _check_value(saved: object, leaf: object, path: tuple[str, ...]) -> None:
    if type(leaf) is not NonTensorData and type(leaf) is not NonTensorStack:
        raise ValueError(
            f"append_memmap: {_where(path)} is a non-tensor value in the save; the rows hold "
            f"a {type(leaf).__name__}"
        )
    assert isinstance(leaf, NonTensorData | NonTensorStack)  # the exact classes, just checked
    kind, value = non_tensor_to_json(leaf, path)
    values = _flat(value) if kind == "non_tensor_stack" else [value]
    if any(v != saved for v in values):
        raise ValueError(
            f"append_memmap: {_where(path)} is the non-tensor value {saved!r} in the save; "
            f"the rows' value {value!r:.80} differs (non-tensor values do not grow)"
        )


def _new_meta(info: MemmapInfo, added: int) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((info.path / META_NAME).read_bytes())
    meta["batch_size"][0] += added
    for entry in meta["entries"]:
        if entry["type"] == "tensor":
            entry["shape"][0] += added
            shape = entry["shape"]
            count = 1
            for size in shape:
                count *= size
            entry["nbytes"] = count * DTYPES[entry["dtype"]].itemsize
    return meta


def append_memmap(prefix: PathLike, rows: object, *, allow_pickle: bool | None = None) -> None:
    """Append ``rows`` (a tensor class instance) to the save in directory ``prefix``, along
    its first batch dimension (see the module documentation for what is checked and what
    a failure leaves).

    ``allow_pickle=True`` raises: a save holds JSON, nothing to unpickle.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, append_memmap, load_memmap
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = TensorDict(a=torch.zeros(3, 2), batch_size=[3]).memmap(tmp)
    ...     append_memmap(tmp, TensorDict(a=torch.ones(2, 2), batch_size=[2]))
    ...     load_memmap(tmp)["a"].sum(-1).tolist()
    [0.0, 0.0, 0.0, 2.0, 2.0]
    """
    if allow_pickle:
        raise ValueError("append_memmap(allow_pickle=True): a save is JSON; nothing is unpickled")
    root = os.fspath(prefix)
    if not os.path.isdir(root):
        raise ValueError(f"append_memmap: {root} is not a directory holding a save")
    info = read_checked(root, "tensordict")
    writes: list[tuple[Path, Tensor]] = []
    levels: list[MemmapInfo] = []
    _check(info, rows, (), writes, levels)
    assert isinstance(rows, TensorCore)  # _check raised otherwise
    added = int(rows._batch_size[0])
    metas = [(level.path, _new_meta(level, added)) for level in levels]
    sizes = [(file, os.path.getsize(file)) for file, _ in writes]
    temporaries: list[Path] = []
    try:
        for file, tensor in writes:
            data = tensor.detach().cpu().contiguous()
            with open(file, "ab") as out:
                out.write(_bytes(data))
        for path, meta in metas:
            temporary = path / _TMP
            temporary.write_text(json.dumps(meta, allow_nan=True), encoding="utf-8")
            temporaries.append(temporary)
    except BaseException:
        for file, size in sizes:
            os.truncate(file, size)
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
        raise
    for path, _ in metas:  # the top level first
        os.replace(path / _TMP, path / META_NAME)


def _bytes(tensor: Tensor) -> bytes:
    flat = tensor.reshape(-1)
    return bytes(flat.view(torch.uint8).numpy().tobytes()) if flat.numel() else b""
