"""The file of ``consolidate(filename=...)`` and its reader, ``from_consolidated``.

Layout: the consolidated byte buffer (``data_bytes`` long), then a UTF-8 JSON description
of the tree, then the JSON's length (8 bytes, little-endian) and the magic ``TCCONS01``.
The description records, per level, the class (``"module:qualname"``), batch size,
device, dim names and entries: tensors as dtype, shape and byte offset into the buffer,
nested levels, nested jagged tensors as their values and offsets (two tensors of the
buffer), and non-tensor values as JSON (lazy stacks: their stack dim and members).

Reading never unpickles and imports nothing: classes must be imported already (or be
``TensorDict``), every dtype, shape and offset is checked against the buffer, and any
problem raises :class:`~tensorclass.MemmapFormatError` naming the file. Only the given
file is opened.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ...errors import MemmapFormatError, RecordedClassError, UnsafePathError
from ...json_values import non_tensor_from_json, non_tensor_to_json
from ...non_tensor import NonTensorData, NonTensorStack
from ..core.lazy_stacks import is_lazy_stack, stack_lazily
from ..core.state import TensorCore, fits_batch
from ..core.untrusted import (
    MAX_DEPTH,
    MAX_DIMS,
    batch_problem,
    fields_problem,
    json_value,
    key_problem,
    names_problem,
    open_regular,
    shown,
    typed_problem,
)
from ..shape.jagged import as_jagged, is_jagged, jagged_parts
from .flat_buffer import byte_layout
from .memmap.info import is_sizes
from .memmap.load import resolve_class
from .memmap.metadata import DTYPES, dtype_name
from .memmap.save import class_path
from .memmap.tensor import PathLike, map_file

__all__ = ["read_file", "tensors_of", "write_file"]

MAGIC = b"TCCONS01"
FORMAT = "tensorclass-consolidated"
VERSION = 1
_TAIL = 16
_MAX_JSON = 1 << 30


def _describe(node: TensorCore, offsets: list[int], where: tuple[str, ...]) -> dict[str, object]:
    if is_lazy_stack(node):
        return {
            "kind": "lazy_stack",
            "class": class_path(node.member_class),
            "stack_dim": node.stack_dim,
            "members": [_describe(m, offsets, where) for m in node.members],
        }
    entries: list[dict[str, object]] = []
    for key, leaf in node._data.items():
        if is_jagged(leaf):
            values, ends = jagged_parts(leaf)
            entries.append(
                {
                    "key": key,
                    "type": "jagged",
                    "values": _tensor_entry(values, offsets.pop(0)),
                    "offsets": _tensor_entry(ends, offsets.pop(0)),
                }
            )
        elif isinstance(leaf, Tensor):
            entries.append({"key": key, "type": "tensor", **_tensor_entry(leaf, offsets.pop(0))})
        elif isinstance(leaf, TensorCore):
            child = _describe(leaf, offsets, (*where, key))
            entries.append({"key": key, "type": "nested", "node": child})
        elif type(leaf) in (NonTensorData, NonTensorStack):
            path = (*where, key)
            kind, value = non_tensor_to_json(leaf, path if len(path) > 1 else key)
            entries.append({"key": key, "type": kind, "value": value})
        else:
            raise MemmapFormatError(
                f"consolidate(filename=...): cannot write {(*where, key)!r}: unknown leaf "
                f"{type(leaf).__name__}"
            )
    return {
        "kind": "instance",
        "class": class_path(type(node)),
        "batch_size": list(node._batch_size),
        "device": None if node._device is None else "cpu",
        "names": None if node._names is None else list(node._names),
        "entries": entries,
    }


def _tensor_entry(tensor: Tensor, offset: int) -> dict[str, object]:
    return {"dtype": dtype_name(tensor.dtype), "shape": list(tensor.shape), "offset": offset}


def tensors_of(node: TensorCore) -> list[Tensor]:
    """The tensors of ``node`` at every depth, in the order the buffer lays them out (a
    nested jagged tensor: its values, then its offsets)."""
    if is_lazy_stack(node):
        return [t for m in node.members for t in tensors_of(m)]
    out: list[Tensor] = []
    for leaf in node._data.values():
        if leaf.__class__ is Tensor:
            out.append(leaf)
        elif isinstance(leaf, Tensor):  # a tensor subclass: an NJT is its values and offsets
            out.extend(jagged_parts(leaf) if is_jagged(leaf) else (leaf,))
        elif isinstance(leaf, TensorCore):
            out.extend(tensors_of(leaf))
    return out


def write_file(node: TensorCore, filename: PathLike, total: int) -> Tensor:
    """Write the file for ``node`` (data still zeros) and return the ``uint8`` buffer
    mapping its data (shared: writes into it reach the file)."""
    offsets, _ = byte_layout(tensors_of(node))
    description = {
        "format": FORMAT,
        "version": VERSION,
        "data_bytes": total,
        "root": _describe(node, list(offsets), ()),
    }
    text = json.dumps(description, allow_nan=True).encode("utf-8")
    target = os.path.abspath(os.fspath(filename))
    temporary = f"{target}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with open(temporary, "xb") as file:
            file.truncate(total)
            file.seek(total)
            file.write(text + len(text).to_bytes(8, "little") + MAGIC)
        if total:
            buffer = torch.from_file(temporary, shared=True, size=total, dtype=torch.uint8)
        else:
            buffer = torch.empty(0, dtype=torch.uint8)
        os.replace(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return buffer


def read_file(filename: PathLike) -> tuple[Tensor, Callable[[Tensor], TensorCore]]:
    """The buffer of a consolidated file (a copy-on-write mapping) and a function building
    the tree of views into it; every problem raises ``MemmapFormatError``."""
    path = os.fspath(filename)
    try:
        with os.fdopen(open_regular(path, "consolidated file"), "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < _TAIL:
                raise _bad(path, f"it is {size} bytes long, too short for the format")
            file.seek(size - _TAIL)
            tail = file.read(_TAIL)
            length = int.from_bytes(tail[:8], "little")
            if tail[8:] != MAGIC:
                raise _bad(path, "it does not end with the consolidated-file marker")
            if length > min(size - _TAIL, _MAX_JSON):
                raise _bad(path, f"its description length {length} exceeds the file")
            data_bytes = size - _TAIL - length
            file.seek(data_bytes)
            raw = file.read(length)
    except UnsafePathError:
        raise
    except OSError as err:
        raise MemmapFormatError(f"cannot read consolidated file {path}: {err}") from err
    try:
        description = json_value(raw, path, MemmapFormatError, "the description")
    except MemmapFormatError as err:
        raise _bad(path, str(err).removeprefix(f"{path}: ")) from None
    if not isinstance(description, dict) or description.get("format") != FORMAT:
        raise _bad(path, f"its description does not say format={FORMAT!r}")
    if description.get("version") != VERSION:
        raise _bad(path, f"format version {description.get('version')!r} is not supported")
    if description.get("data_bytes") != data_bytes:
        raise _bad(path, "the recorded data size disagrees with the file size")
    reader = _Reader(path, data_bytes)
    root = description.get("root")
    reader.check(root, None)  # every problem is found before anything is built
    assert isinstance(root, dict)  # checked: a level is an object
    if data_bytes:
        storage = map_file(os.fspath(path), False, data_bytes)
        buffer = torch.empty((0,), dtype=torch.uint8).set_(storage)
    else:
        buffer = torch.empty(0, dtype=torch.uint8)
    return buffer, lambda data: reader.build(root, data, None)


def _bad(path: str, why: str) -> MemmapFormatError:
    return MemmapFormatError(f"{path} is not a valid consolidated file: {why}")


class _Reader:
    """Checks and builds the described tree (``check`` first, then ``build``)."""

    def __init__(self, path: str, data_bytes: int) -> None:
        self.path = path
        self.data_bytes = data_bytes

    def fail(self, why: str) -> MemmapFormatError:
        return _bad(self.path, why)

    def cls(self, node: dict[str, Any]) -> type[TensorCore]:
        recorded = node.get("class")
        if not isinstance(recorded, str):
            raise self.fail("a level has no recorded class")
        try:
            return resolve_class(recorded, "imported", self.path)
        except RecordedClassError as err:
            raise MemmapFormatError(str(err)) from None

    def check(self, node: object, batch: tuple[int, ...] | None, depth: int = 0) -> None:
        if not isinstance(node, dict):
            raise self.fail("a level is not a JSON object")
        if depth > MAX_DEPTH:
            raise self.fail(f"the tree nests more than {MAX_DEPTH} levels")
        cls = self.cls(node)
        if node.get("kind") == "lazy_stack":
            members = node.get("members")
            if not isinstance(members, list) or not members:
                raise self.fail("a lazy stack has no members")
            stack_dim = node.get("stack_dim")
            if type(stack_dim) is not int or not 0 <= stack_dim <= MAX_DIMS:
                raise self.fail("a lazy stack has no valid integer stack_dim")
            for member in members:
                self.check(member, None, depth + 1)
            return
        if node.get("kind") != "instance":
            raise self.fail(f"unknown level kind {shown(node.get('kind'))}")
        size = node.get("batch_size")
        wrong = batch_problem(size)
        if wrong is not None:
            raise self.fail(wrong)
        assert isinstance(size, list)  # checked
        if batch is not None and not fits_batch(size, batch):
            raise self.fail(f"a nested batch size {size} does not start with {list(batch)}")
        wrong = names_problem(node.get("names"), len(size))
        if wrong is not None:
            raise self.fail(wrong)
        entries = node.get("entries")
        if not isinstance(entries, list):
            raise self.fail("a level has no entry list")
        seen: set[str] = set()
        for entry in entries:
            self.check_entry(entry, tuple(size), depth)
            key = entry["key"]
            if key in seen:
                raise self.fail(f"the key {shown(key)} appears twice in one level")
            seen.add(key)
        wrong = fields_problem(cls, seen)
        if wrong is not None:
            raise self.fail(wrong)

    def check_entry(
        self,
        entry: object,
        batch: tuple[int, ...],
        depth: int,
    ) -> None:
        if not isinstance(entry, dict) or key_problem(entry.get("key")) is not None:
            raise self.fail(f"bad entry {shown(entry)}")
        key = entry["key"]
        kind = entry.get("type")
        if kind == "tensor":
            shape = self.check_tensor(entry, key)
            if not fits_batch(shape, batch):
                raise self.fail(f"the tensor {key!r} of shape {shape} misses the batch {batch}")
        elif kind == "jagged":
            values, ends = entry.get("values"), entry.get("offsets")
            if not (isinstance(values, dict) and isinstance(ends, dict)):
                raise self.fail(f"the nested jagged tensor {key!r} has no values or offsets")
            rows = self.check_tensor(values, key)
            shape = self.check_tensor(ends, key)
            if (
                DTYPES[ends["dtype"]] not in (torch.int32, torch.int64)
                or len(shape) != 1
                or not rows
                or not batch
                or shape[0] != batch[0] + 1
            ):
                raise self.fail(
                    f"the nested jagged tensor {key!r}: its offsets must be {batch[0] + 1 if batch else 'n + 1'} "
                    f"integers for a batch {list(batch)}, its values at least 1-D"
                )
        elif kind == "nested":
            self.check(entry.get("node"), batch, depth + 1)
        elif kind not in ("non_tensor", "non_tensor_stack"):
            raise self.fail(f"the entry {shown(key)} has an unknown type {shown(kind)}")

    def check_tensor(self, entry: dict[str, Any], key: str) -> list[int]:
        """Check a tensor's dtype, shape and place in the data; its shape."""
        name = entry.get("dtype")
        dtype = DTYPES.get(name) if type(name) is str else None
        shape = entry.get("shape")
        offset = entry.get("offset")
        if dtype is None or not is_sizes(shape) or len(shape) > MAX_DIMS or type(offset) is not int:
            raise self.fail(f"the tensor {shown(key)} has a bad dtype, shape or offset")
        nbytes = dtype.itemsize
        for dim in shape:
            nbytes *= dim
        if offset < 0 or offset % dtype.itemsize or offset + nbytes > self.data_bytes:
            raise self.fail(f"the tensor {key!r} lies outside the data ({offset=})")
        return list(shape)

    def jagged(self, entry: dict[str, Any], buffer: Tensor) -> Tensor:
        """A nested jagged tensor on its values and offsets in the buffer (the offsets
        checked: from 0, non-decreasing, up to the number of rows of the values)."""
        values = _view(buffer, entry["values"])
        ends = _view(buffer, entry["offsets"])
        if (
            int(ends[0]) != 0
            or bool((ends[1:] < ends[:-1]).any())
            or int(ends[-1]) != values.shape[0]
        ):
            raise self.fail(f"the offsets of the nested jagged tensor {entry['key']!r} are bad")
        return as_jagged(values, ends)

    def build(
        self, node: dict[str, Any], buffer: Tensor, batch: tuple[int, ...] | None
    ) -> TensorCore:
        cls = self.cls(node)
        if node["kind"] == "lazy_stack":
            members = [self.build(m, buffer, None) for m in node["members"]]
            try:
                return stack_lazily(members, node["stack_dim"])
            except (ValueError, RuntimeError, IndexError) as err:
                raise self.fail(f"its lazy stack cannot be rebuilt: {err}") from None
        size = tuple(node["batch_size"])
        data: dict[str, object] = {}
        for entry in node["entries"]:
            kind = entry["type"]
            if kind == "tensor":
                data[entry["key"]] = _view(buffer, entry)
            elif kind == "jagged":
                data[entry["key"]] = self.jagged(entry, buffer)
            elif kind == "nested":
                data[entry["key"]] = self.build(entry["node"], buffer, size)
            else:
                try:
                    data[entry["key"]] = non_tensor_from_json(kind, entry.get("value"), size)
                except (TypeError, ValueError, IndexError, KeyError) as err:
                    raise self.fail(f"the value of {entry['key']!r} is malformed: {err}") from None
        device = None if node.get("device") is None else torch.device("cpu")
        names = node.get("names")
        built = cls._new(data, torch.Size(size), device, None if names is None else tuple(names))
        wrong = typed_problem(built)
        if wrong is not None:
            raise self.fail(f"the values do not fit {cls.__name__}: {wrong}")
        return built


def _view(buffer: Tensor, entry: dict[str, Any]) -> Tensor:
    """The tensor an entry describes (checked), a view of the buffer."""
    dtype = DTYPES[entry["dtype"]]
    offset, shape = entry["offset"], tuple(entry["shape"])
    count = 1
    for dim in shape:
        count *= dim
    flat = buffer[offset:].view(-1)[: count * dtype.itemsize]
    return flat.view(dtype).view(shape)
