"""The description of a save read from its metadata: :class:`MemmapInfo` and :class:`EntryInfo`.

Both on-disk formats are read into these (tensorclass's own, :mod:`.metadata`, and
tensordict's, :mod:`.foreign`); the loader and the command-line tools only see them. This
module also holds the low-level checks both readers share: reading a ``meta.json`` (a regular
file holding a JSON object), the size of a data file (symbolic links are not regular files)
and shapes that torch can represent.
"""

from __future__ import annotations

import math
import os
import stat
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from typing_extensions import TypeIs

from ....errors import MemmapFormatError, MemmapNotFoundError, UnsafePathError
from ...core.untrusted import json_value, read_no_follow

__all__ = [
    "MAX_SIZE",
    "META_NAME",
    "EntryInfo",
    "MemmapInfo",
    "MetaSource",
    "SOURCE",
    "fail",
    "is_sizes",
    "load_json",
    "regular_size",
    "shape_problem",
    "sizes",
]

META_NAME = "meta.json"
MAX_SIZE = 2**63 - 1  # torch sizes, strides and byte counts are int64


def fail(path: Path, message: str) -> MemmapFormatError:
    """A format error about the ``meta.json`` of the level at ``path``."""
    return MemmapFormatError(f"{path / META_NAME}: {message}")


#: where a save is read from while it is set: an object with ``read_meta(path) -> bytes``
#: (raising :class:`MemmapFormatError` if the level has no metadata) and
#: ``size(file) -> int | None``, for a save that is not a directory (an archive, see
#: :mod:`.archive`); ``None`` reads the file system.
class MetaSource(Protocol):
    """Where a save that is not a directory is read from (an archive, see :mod:`.archive`)."""

    def read_meta(self, path: Path) -> bytes:
        """The bytes of the ``meta.json`` of the level at ``path``."""

    def size(self, file: Path) -> int | None:
        """The size of ``file``, or ``None`` if it is missing."""


SOURCE: ContextVar[MetaSource | None] = ContextVar("tensorclass_memmap_source", default=None)


def load_json(path: Path, what: str = "a tensorclass save") -> object:
    """The parsed ``meta.json`` of the level directory ``path`` (any JSON value)."""
    raw = _meta_bytes(path, what)
    # tensorclass's levels hold fixed fields and a list of entries (checked for repeated
    # keys by the reader); tensordict's map each key to its entry: a key twice is refused
    where = _MetaFile(path)
    value = json_value(raw, where, MemmapFormatError, unique=False)
    if type(value) is dict and "_type" in value:
        value = json_value(raw, where, MemmapFormatError)
    return value


class _MetaFile:
    """The ``meta.json`` of a level, as errors name it (the path is joined only then)."""

    __slots__ = ("level",)

    def __init__(self, level: Path) -> None:
        self.level = level

    def __str__(self) -> str:
        return str(self.level / META_NAME)


def _meta_bytes(path: Path, what: str) -> bytes:
    source = SOURCE.get()
    if source is not None:
        return source.read_meta(path)
    meta_file = path / META_NAME
    if not path.is_dir():
        if not path.exists():
            raise MemmapNotFoundError(path, what)
        raise MemmapFormatError(f"{path} is not a directory holding {what}")
    try:
        return read_no_follow(meta_file)
    except FileNotFoundError:
        raise MemmapFormatError(
            f"{path} holds no {META_NAME}: it is not {what} (or the save is incomplete)"
        ) from None
    except UnsafePathError:
        raise fail(path, "the metadata is not a regular file") from None


def regular_size(file: Path) -> int | None:
    """The size of ``file``, or ``None`` if it is missing or not a regular file."""
    source = SOURCE.get()
    if source is not None:
        return source.size(file)
    try:
        info = os.lstat(file)
    except FileNotFoundError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def is_sizes(value: object) -> TypeIs[list[int]]:
    """Whether a JSON value is a list of non-negative ints (a shape, a batch size)."""
    return type(value) is list and all(type(v) is int and v >= 0 for v in value)


def sizes(path: Path, value: object, what: str) -> tuple[int, ...]:
    """``value`` read as a shape: a list of non-negative ints below 2**63 (else an error
    about the ``meta.json`` at ``path`` naming ``what``)."""
    if type(value) is not list or not all(type(v) is int and 0 <= v <= MAX_SIZE for v in value):
        raise fail(
            path, f"{what} must be a list of non-negative ints below 2**63; got {value!r:.200}"
        )
    return tuple(value)


def ragged_sizes(path: Path, value: object, what: str, stack_dim: object) -> tuple[int, ...]:
    """A lazy stack's batch size read from JSON: as :func:`sizes`, except that a dim
    other than the stack dim may be ``-1`` (the members' sizes differ there: a ragged
    stack)."""
    if type(value) is not list or type(stack_dim) is not int or not 0 <= stack_dim < len(value):
        return sizes(path, value, what)
    cleaned = [
        0 if v == -1 and type(v) is int and d != stack_dim else v for d, v in enumerate(value)
    ]
    sizes(path, cleaned, what)
    return tuple(value)


def shared_batch(batches: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The batch size the members of a lazy stack share, ``-1`` at each dim where they
    differ; ``None`` when they have different numbers of dims."""
    first = batches[0]
    if any(len(batch) != len(first) for batch in batches):
        return None
    return tuple(
        size if all(batch[d] == size for batch in batches) else -1 for d, size in enumerate(first)
    )


def shape_problem(shape: tuple[int, ...], itemsize: int) -> str | None:
    """Why torch cannot hold a tensor of ``shape`` (sizes, strides or bytes beyond int64)."""
    if any(size > MAX_SIZE for size in shape):
        return f"a size of {list(shape)} is larger than 2**63 - 1"
    stride = 1  # row-major strides: the product of the sizes after each dim
    for size in reversed(shape[1:]):
        stride *= max(size, 1)
        if stride > MAX_SIZE:
            return f"a tensor of shape {list(shape)} has a stride beyond 2**63 - 1"
    if math.prod(shape) * itemsize > MAX_SIZE:
        return f"a tensor of shape {list(shape)} would need more than 2**63 - 1 bytes"
    return None


@dataclass(frozen=True)
class EntryInfo:
    """One entry of a saved level (see the module documentation for the fields)."""

    key: str
    type: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    nbytes: int | None = None
    file: Path | None = None
    bytes_on_disk: int | None = None
    value: Any = None
    child: MemmapInfo | None = None
    parameter: bool = False
    meta: bool = False

    def problem(self) -> str | None:
        """What is wrong with this entry's file, or ``None``."""
        if self.type != "tensor":
            return None
        if self.bytes_on_disk is None:
            return f"file {self.file} is missing or not a regular file"
        if self.bytes_on_disk != self.nbytes:
            state = "truncated" if self.bytes_on_disk < (self.nbytes or 0) else "too long"
            return (
                f"file {self.file} holds {self.bytes_on_disk} bytes, the metadata says "
                f"{self.nbytes} ({self.dtype}{list(self.shape or ())}): {state}"
            )
        return None


@dataclass(frozen=True)
class MemmapInfo:
    """A saved level, read from its ``meta.json`` (no data is mapped).

    ``origin`` is ``"tensordict"`` for a level read from a save of tensordict's ``memmap``;
    ``tensordict_class`` is then the tensorclass tensordict recorded for it
    (``"module.Qualname"``), if any, which loading maps to a tensor class of that name
    defined in this process, else to ``TensorDict``.
    """

    path: Path
    kind: str
    class_path: str
    typed: bool
    batch_size: tuple[int, ...]
    device: str | None = None
    names: tuple[str | None, ...] | None = None
    schema: tuple[dict[str, Any], ...] | None = None
    entries: tuple[EntryInfo, ...] = ()
    stack_dim: int | None = None
    members: tuple[MemmapInfo, ...] = field(default=())
    origin: str = "tensorclass"
    tensordict_class: str | None = None

    def problems(self) -> list[str]:
        """Every missing, truncated or oversized file, with its key path (all at once)."""
        found: list[str] = []
        self._collect(found, ())
        return found

    def _collect(self, found: list[str], prefix: tuple[str, ...]) -> None:
        for index, member in enumerate(self.members):
            member._collect(found, (*prefix, f"<member {index}>"))
        for entry in self.entries:
            problem = entry.problem()
            if problem is not None:
                path = (*prefix, entry.key)
                found.append(f"{path[0] if len(path) == 1 else path!r}: {problem}")
            if entry.child is not None:
                entry.child._collect(found, (*prefix, entry.key))

    @property
    def total_bytes(self) -> int:
        """The bytes the tensors of this level and its nested levels take on disk."""
        own = sum(entry.bytes_on_disk or 0 for entry in self.entries if entry.type == "tensor")
        nested = sum(e.child.total_bytes for e in self.entries if e.child is not None)
        return own + nested + sum(member.total_bytes for member in self.members)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the tree (for tools such as ``inspect``)."""
        out: dict[str, Any] = {
            "path": str(self.path),
            "kind": self.kind,
            "class": self.class_path,
            "typed": self.typed,
            "batch_size": list(self.batch_size),
            "device": self.device,
            "names": None if self.names is None else list(self.names),
        }
        if self.origin != "tensorclass":
            out["origin"] = self.origin
        if self.tensordict_class is not None:
            out["tensordict_class"] = self.tensordict_class
        if self.kind == "lazy_stack":
            out["stack_dim"] = self.stack_dim
            out["members"] = [member.to_dict() for member in self.members]
            return out
        entries = []
        for entry in self.entries:
            item: dict[str, Any] = {"key": entry.key, "type": entry.type}
            if entry.type == "tensor":
                item.update(
                    dtype=entry.dtype,
                    shape=list(entry.shape or ()),
                    nbytes=entry.nbytes,
                    file=str(entry.file),
                    bytes_on_disk=entry.bytes_on_disk,
                )
            elif entry.child is not None:
                item["child"] = entry.child.to_dict()
            else:
                item["value"] = entry.value
            entries.append(item)
        out["entries"] = entries
        return out
