"""The on-disk format of memory-mapped tensor classes, and reading it back as a tree.

Layout
------
A save is a directory per nested level. Each directory holds ``meta.json`` (its level) and
one raw file per tensor leaf; each nested instance is a sub-directory with its own
``meta.json``, so any sub-directory is itself a complete save of that branch::

    dataset/
      meta.json            this level: class, batch size, entries
      images.memmap        raw bytes of the tensor under "images" (C order, no header)
      info/                the nested instance under "info"
        meta.json
        step.memmap

A lazy stack is a directory whose members are the sub-directories ``0``, ``1``, ...

File and directory names are derived from the keys: letters, digits, ``- _ . + = , @`` and
spaces are kept, every other character is written ``%XX`` (its UTF-8 bytes), a leading ``.``
too; leaf files end with ``.memmap``. The empty key is written ``%``.

``meta.json``
-------------
A JSON object::

    {
      "format": "tensorclass-memmap",     always this string
      "version": 1,                       the format version (newer versions are refused)
      "kind": "instance",                 or "lazy_stack"
      "class": "tensorclass:TensorDict",  "module:qualname" of the class saved
      "typed": false,                     whether the class declares fields
      "schema": null,                     typed classes: [{"name", "kind", "annotation",
                                          "nested"}] (informative; loading checks fields)
      "batch_size": [1000000],
      "device": null,                     the device at save time, or null
      "names": null,                      the batch dim names, or null
      "entries": [                        in key order
        {"key": "images", "type": "tensor", "file": "images.memmap",
         "dtype": "uint8", "shape": [1000000, 8], "nbytes": 8000000},
        {"key": "info", "type": "nested", "dir": "info"},
        {"key": "name", "type": "non_tensor", "value": "run-1"},
        {"key": "tags", "type": "non_tensor_stack", "values": ["a", "b", ...]}
      ]
    }

A lazy stack has ``"kind": "lazy_stack"``, ``"stack_dim"``, ``"members": ["0", "1", ...]``
and no entries; its ``class`` is the members' class. ``dtype`` is the name of a
``torch.dtype`` (``float32``, ``bfloat16``...). Non-tensor values are JSON values (``null``,
booleans, numbers, strings, lists, objects with string keys); ``values`` nests lists as
deep as the batch dims. A tensor entry saved from an ``nn.Parameter`` also has
``"parameter": true``: it loads as a memory-mapped tensor that ``isinstance(x, nn.Parameter)``
recognises (so ``torch.testing.assert_close`` compares it with the parameter). A
``non_tensor`` entry saved from a :class:`~tensorclass.MetaData` has ``"meta": true``.

:func:`read_metadata` reads a save into a :class:`MemmapInfo` tree without mapping any data;
``MemmapInfo.problems()`` lists missing, truncated or oversized files.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import torch

from ....json_values import has_shape
from ...core.state import fits_batch
from ...core.untrusted import DTYPES as CHECKED_DTYPES
from ...core.untrusted import MAX_BATCH, MAX_DEPTH, MAX_DIMS, key_problem, names_problem, shown
from .foreign import is_tensordict_meta, read_tensordict
from .info import (
    META_NAME,
    SOURCE,
    EntryInfo,
    MemmapInfo,
    fail,
    load_json,
    ragged_sizes,
    regular_size,
    shape_problem,
    shared_batch,
    sizes,
)

__all__ = [
    "DTYPES",
    "FORMAT",
    "LEAF_SUFFIX",
    "META_NAME",
    "SOURCE",
    "TENSORDICT_PATH",
    "VERSION",
    "EntryInfo",
    "MemmapInfo",
    "dir_name",
    "dtype_name",
    "leaf_file_name",
    "read_metadata",
]

FORMAT = "tensorclass-memmap"
VERSION = 1
LEAF_SUFFIX = ".memmap"
TENSORDICT_PATH = "tensorclass:TensorDict"
ENTRY_TYPES = ("tensor", "nested", "non_tensor", "non_tensor_stack")

DTYPES: dict[str, torch.dtype] = CHECKED_DTYPES
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+=,@ ")


def dtype_name(dtype: torch.dtype) -> str:
    """The name a dtype is recorded under (``torch.float32`` is ``"float32"``)."""
    return str(dtype).removeprefix("torch.")


#: keys written as they are (every character kept, no leading "."): most keys
_PLAIN = re.compile(r"[A-Za-z0-9\-_+=,@ ][A-Za-z0-9\-_.+=,@ ]*")


def _encode(key: str) -> str:
    if _PLAIN.fullmatch(key):
        return key
    if not key:
        return "%"
    out = []
    for position, char in enumerate(key):
        if char in _SAFE and not (position == 0 and char == "."):
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def leaf_file_name(key: str) -> str:
    """The file name of the tensor leaf under ``key``."""
    return _encode(key) + LEAF_SUFFIX


def dir_name(key: str) -> str:
    """The directory name of the nested instance under ``key``."""
    name = _encode(key)
    if name == META_NAME or name.endswith(LEAF_SUFFIX):
        head, _, tail = name.rpartition(".")
        name = f"{head}%2E{tail}"  # never collides with a leaf file or the metadata
    return name


def read_metadata(path: str | os.PathLike[str]) -> MemmapInfo:
    """Read a saved tensor class (or one of its sub-directories) as a :class:`MemmapInfo`.

    Only JSON is read; no data is mapped and no class is looked up. Malformed metadata
    raises :class:`~tensorclass.MemmapFormatError`; missing or truncated data files are
    reported by :meth:`MemmapInfo.problems` (and refused by ``load_memmap``). A save
    written by tensordict's ``memmap`` (recognised by its ``meta.json``) is read by
    :mod:`.foreign` into the same tree.
    """
    root = Path(os.path.abspath(os.fspath(path)))
    meta = load_json(root)
    try:
        if isinstance(meta, dict) and meta.get("format") != FORMAT and is_tensordict_meta(meta):
            return read_tensordict(root, meta)
        return _read_level(root, None, meta)
    except RecursionError:  # tensordict's saves: one directory per level, as deep as they go
        raise _fail(root, f"the save nests more than {MAX_DEPTH} levels") from None


_fail = fail


def _check_format(path: Path, meta: object) -> dict[str, Any]:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _fail(path, f"not a {FORMAT!r} metadata file")
    version = meta.get("version")
    if type(version) is not int or version < 1:
        raise _fail(path, f"invalid format version {shown(version)}")
    if version > VERSION:
        raise _fail(
            path, f"written in format version {version}; this tensorclass reads up to {VERSION}"
        )
    return meta


def _read_level(
    path: Path, parent_batch: tuple[int, ...] | None, loaded: object = None, depth: int = 0
) -> MemmapInfo:
    if depth > MAX_DEPTH:
        raise _fail(path, f"the save nests more than {MAX_DEPTH} levels")
    meta = _check_format(path, load_json(path) if loaded is None else loaded)
    kind = meta.get("kind")
    class_path = meta.get("class")
    if kind not in ("instance", "lazy_stack"):
        raise _fail(path, f"unknown kind {shown(kind)}")
    if type(class_path) is not str or ":" not in class_path:
        raise _fail(path, f"invalid class {shown(class_path)} (expected 'module:qualname')")
    if kind == "lazy_stack":
        batch_size = ragged_sizes(path, meta.get("batch_size"), "batch_size", meta.get("stack_dim"))
    else:
        batch_size = sizes(path, meta.get("batch_size"), "batch_size")
    if len(batch_size) > MAX_DIMS or max(batch_size, default=0) > MAX_BATCH:
        raise _fail(
            path,
            f"batch_size {shown(list(batch_size))} has more than {MAX_DIMS} dims or a dim "
            f"beyond 2**40",
        )
    if parent_batch is not None and batch_size[: len(parent_batch)] != parent_batch:
        raise _fail(
            path,
            f"batch_size {list(batch_size)} does not start with the parent's {list(parent_batch)}",
        )
    device = meta.get("device")
    names = meta.get("names")
    if device is not None and type(device) is not str:
        raise _fail(path, f"invalid device {shown(device)}")
    wrong_names = None if names is None else names_problem(names, len(batch_size))
    if wrong_names is not None:
        raise _fail(path, wrong_names)
    schema = meta.get("schema")
    if schema is not None and (
        type(schema) is not list or not all(type(f) is dict for f in schema)
    ):
        raise _fail(path, "schema must be null or a list of objects")
    common: dict[str, Any] = {
        "path": path,
        "kind": kind,
        "class_path": class_path,
        "typed": bool(meta.get("typed", False)),
        "batch_size": batch_size,
        "device": device,
        "names": None if names is None else tuple(names),
        "schema": None if schema is None else tuple(schema),
    }
    if kind == "lazy_stack":
        stack_dim, members = _read_members(path, meta, batch_size, depth)
        return MemmapInfo(**common, stack_dim=stack_dim, members=members)
    entries = meta.get("entries")
    if type(entries) is not list:
        raise _fail(path, "entries must be a list")
    seen: set[str] = set()
    parsed = []
    for raw in entries:
        entry = _read_entry(path, raw, batch_size, depth)
        if entry.key in seen:
            raise _fail(path, f"the key {shown(entry.key)} appears twice")
        seen.add(entry.key)
        parsed.append(entry)
    return MemmapInfo(**common, entries=tuple(parsed))


def _read_members(
    path: Path, meta: dict[str, Any], batch_size: tuple[int, ...], depth: int
) -> tuple[int, tuple[MemmapInfo, ...]]:
    stack_dim = meta.get("stack_dim")
    members = meta.get("members")
    if type(stack_dim) is not int or not 0 <= stack_dim < len(batch_size):
        raise _fail(path, f"invalid stack_dim {shown(stack_dim)} for batch_size {list(batch_size)}")
    count = batch_size[stack_dim]
    if members != [str(i) for i in range(count)]:
        raise _fail(path, f"members must be ['0', ..., '{count - 1}']; got {shown(members)}")
    member_batch = batch_size[:stack_dim] + batch_size[stack_dim + 1 :]
    read = []
    for name in members:
        if (path / name).is_symlink():  # a save never holds links: it would reach outside
            raise _fail(path, f"member {name}: {path / name} is a symbolic link")
        member = _read_level(path / name, None, depth=depth + 1)
        if len(member.batch_size) != len(member_batch) or any(
            want not in (-1, size) for want, size in zip(member_batch, member.batch_size)
        ):
            raise _fail(
                path,
                f"member {name} has batch_size {list(member.batch_size)}; the stack needs "
                f"{list(member_batch)} (-1: any size)",
            )
        read.append(member)
    found = shared_batch([member.batch_size for member in read])
    if found != member_batch:  # a -1 only where the members' sizes do differ
        raise _fail(
            path,
            f"the members' batch sizes {[list(m.batch_size) for m in read]} do not give the "
            f"stack's batch_size {list(batch_size)}",
        )
    return stack_dim, tuple(read)


def _read_entry(path: Path, raw: object, batch_size: tuple[int, ...], depth: int) -> EntryInfo:
    if type(raw) is not dict or type(raw.get("key")) is not str:
        raise _fail(path, f"invalid entry {shown(raw)}")
    key, kind = raw["key"], raw.get("type")
    wrong_key = None if key.isascii() else key_problem(key)  # ASCII: valid, not encoded
    if wrong_key is not None:
        raise _fail(path, wrong_key)
    if type(kind) is not str or kind not in ENTRY_TYPES:
        raise _fail(path, f"entry {shown(key)} has unknown type {shown(kind)}")
    if kind == "tensor":
        dtype = raw.get("dtype")
        if type(dtype) is not str or dtype not in DTYPES:
            raise _fail(path, f"entry {shown(key)} has unknown dtype {shown(dtype)}")
        shape = sizes(path, raw.get("shape"), f"the shape of {shown(key)}")
        if not fits_batch(shape, batch_size):
            raise _fail(
                path,
                f"entry {shown(key)} has shape {list(shape)}, which does not start with the "
                f"batch size {list(batch_size)}",
            )
        too_large = shape_problem(shape, DTYPES[dtype].itemsize)
        if too_large is not None:
            raise _fail(path, f"entry {shown(key)}: {too_large}")
        nbytes = math.prod(shape) * DTYPES[dtype].itemsize
        if raw.get("nbytes") != nbytes:
            raise _fail(
                path, f"entry {shown(key)}: nbytes {shown(raw.get('nbytes'))}, expected {nbytes}"
            )
        name = leaf_file_name(key)
        if raw.get("file") != name:
            raise _fail(path, f"entry {shown(key)}: file must be {name!r}")
        file = path / name
        parameter = raw.get("parameter", False) is True
        size = regular_size(file)
        return EntryInfo(key, kind, dtype, shape, nbytes, file, size, parameter=parameter)
    if kind == "nested":
        if raw.get("dir") != dir_name(key):
            raise _fail(path, f"entry {shown(key)}: dir must be {dir_name(key)!r}")
        sub = path / dir_name(key)
        if SOURCE.get() is None and sub.is_symlink():
            raise _fail(path, f"entry {shown(key)}: {sub} is a symbolic link")
        return EntryInfo(key, kind, child=_read_level(sub, batch_size, depth=depth + 1))
    if kind == "non_tensor":
        if "value" not in raw:
            raise _fail(path, f"entry {shown(key)} has no value")
        return EntryInfo(key, kind, value=raw["value"], meta=raw.get("meta", False) is True)
    values = raw.get("values")
    if not has_shape(values, batch_size):
        raise _fail(
            path, f"entry {shown(key)}: values are not nested lists of shape {list(batch_size)}"
        )
    return EntryInfo(key, kind, shape=batch_size, value=values)
