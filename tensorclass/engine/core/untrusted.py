"""Checks of what a file or a pickle says, shared by every loader.

A save is data written by someone else: every loader (memmap metadata, tensordict's saves,
safetensors, HDF5, Zarr, consolidated files, ``torch.load``) reads its description through
these checks before it allocates, maps or builds anything:

- JSON is parsed by :func:`json_value`: invalid text, an object naming a key twice (JSON
  would keep the last silently), integers of thousands of digits and nesting beyond
  :data:`MAX_JSON_DEPTH` are a format error, never a raw ``ValueError`` or
  ``RecursionError``;
- batch sizes (:func:`batch_problem`): a list of at most :data:`MAX_DIMS` ints, each in
  ``[0, MAX_BATCH]``; dim names (:func:`names_problem`): one per dim, strings or ``None``,
  no name twice; keys (:func:`key_problem`): strings that encode as UTF-8;
- dtypes come from :data:`DTYPES`, a fixed table of names;
- a class is built only if it is a tensor class a save may build (:func:`loadable`): one
  with its own compiled schema and a public name, never an engine part (``TensorCore``,
  ``TensorDictBase``, mixins, ``_Blank``);
- the keys of a typed class are its fields (:func:`fields_problem`), and each value is
  checked as the constructor checks it (:func:`typed_problem`);
- a file is opened only if it is a regular file (:func:`open_regular`): a FIFO, a device
  or a socket is refused before ``open`` could block on it.

Each ``*_problem`` function returns ``None`` or a sentence; the loader puts it in its own
error (naming the file and the entry).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from ...errors import FormatError, TensorClassError, UnsafePathError
from ...non_tensor import NonTensorData, NonTensorStack
from ...schema import resolved_schema
from .lazy_stacks import is_lazy_stack
from .state import TensorCore

__all__ = [
    "DTYPES",
    "MAX_BATCH",
    "MAX_DEPTH",
    "MAX_DIMS",
    "MAX_JSON_DEPTH",
    "MAX_SIZE",
    "batch_problem",
    "check_regular",
    "fields_problem",
    "json_value",
    "key_problem",
    "leaf_problem",
    "loadable",
    "names_problem",
    "open_regular",
    "read_no_follow",
    "rebuild_problem",
    "shown",
    "tree_problem",
    "typed_problem",
]

MAX_SIZE = 2**63 - 1
"""The largest size, stride or byte count torch holds (int64)."""
MAX_BATCH = 2**40
"""The largest size of one batch dim a save may declare."""
MAX_DIMS = 64
"""The most batch dims (and tensor dims) a save may declare."""
MAX_DEPTH = 128
"""The most nested levels a saved tree may have."""
MAX_JSON_DEPTH = 512
"""The deepest nesting of JSON arrays and objects a description may hold."""

_DTYPE_NAMES = (
    "bool",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex32",
    "complex64",
    "complex128",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn_x2",
    "qint8",
    "quint8",
    "qint32",
    "quint4x2",
    "quint2x4",
    "bits8",
    "bits16",
    "bits1x8",
    "bits2x4",
    "bits4x2",
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "uint5",
    "uint6",
    "uint7",
    "int1",
    "int2",
    "int3",
    "int4",
    "int5",
    "int6",
    "int7",
)
DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name)
    for name in _DTYPE_NAMES
    if isinstance(getattr(torch, name, None), torch.dtype)
}
"""The dtypes a save may name, by name (``"float32"``): a fixed table, never a lookup of
whatever attribute of ``torch`` a file names."""


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (with the full length said), for messages
    about data that may be huge."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def json_value(
    raw: bytes | str,
    where: object,
    error: type[FormatError] = FormatError,
    what: str = "the metadata",
    unique: bool = True,
) -> Any:
    """``raw`` (``what``, in the file ``where``) parsed as JSON; anything that is not JSON,
    an object naming a key twice (unless ``unique`` is false: for formats whose objects
    hold fixed fields, where the check would only cost time), an integer beyond Python's
    digit limit, or nesting deeper than :data:`MAX_JSON_DEPTH` raises ``error`` naming
    ``where``."""
    try:
        value = json.loads(raw, object_pairs_hook=_unique) if unique else json.loads(raw)
    except _Duplicate as err:
        raise error(f"{where}: {what} holds the key {shown(err.args[0])} twice") from None
    except (ValueError, RecursionError, UnicodeDecodeError) as err:
        why = "nested too deeply" if isinstance(err, RecursionError) else str(err)[:200]
        raise error(f"{where}: {what} is not valid JSON ({why})") from None
    if isinstance(raw, bytes):
        brackets = raw.count(b"[") + raw.count(b"{")
    else:
        brackets = raw.count("[") + raw.count("{")
    if brackets > MAX_JSON_DEPTH and _too_deep(value):  # fewer brackets: cannot be deeper
        raise error(f"{where}: {what} nests deeper than {MAX_JSON_DEPTH} levels")
    return value


class _Duplicate(Exception):
    """A JSON object names one key twice (raised inside ``json.loads``)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, unless it names a key twice (JSON keeps the last silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return out


def _too_deep(value: object) -> bool:
    """Whether ``value`` nests lists and dicts deeper than :data:`MAX_JSON_DEPTH` (no
    recursion: a walk with an explicit stack)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        if type(item) is list:
            stack.extend((child, depth + 1) for child in item if type(child) in (list, dict))
        elif type(item) is dict:
            stack.extend(
                (child, depth + 1) for child in item.values() if type(child) in (list, dict)
            )
    return False


def batch_problem(value: object, what: str = "batch_size") -> str | None:
    """Why ``value`` is not a batch size a save may declare (``None``: it is one)."""
    if (
        type(value) is not list
        or len(value) > MAX_DIMS
        or not all(type(v) is int and 0 <= v <= MAX_BATCH for v in value)
    ):
        return f"{what} must be a list of at most {MAX_DIMS} ints in [0, 2**40]; got {shown(value)}"
    return None


def names_problem(value: object, ndim: int) -> str | None:
    """Why ``value`` is not a list of dim names for ``ndim`` batch dims (``None`` is)."""
    if value is None:
        return None
    if (
        type(value) is not list
        or len(value) != ndim
        or not all(n is None or (type(n) is str and not key_problem(n)) for n in value)
    ):
        return f"invalid names {shown(value)} (one string or null per batch dim)"
    given = [n for n in value if n is not None]
    if len(set(given)) != len(given):
        return f"the dim names {shown(value)} name one dim twice"
    return None


def key_problem(key: object) -> str | None:
    """Why ``key`` is not a key a save may hold (``None``: it is one)."""
    if type(key) is not str:
        return f"a key must be a string; got {shown(key)}"
    if key.isascii():  # the common case, without encoding
        return None
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return f"the key {shown(key)} is not valid Unicode (a lone surrogate)"
    return None


def loadable(cls: object) -> bool:
    """Whether a save may build ``cls``: a tensor class with its own compiled schema and a
    public name (``TensorDict``, every user class), not an engine part such as
    ``TensorCore``, ``TensorDictBase``, a mixin or an internal layout (``_Blank``)."""
    return (
        isinstance(cls, type)
        and issubclass(cls, TensorCore)
        and cls is not TensorCore
        and "__tensorclass_schema__" in cls.__dict__
        and not cls.__name__.startswith("_")
    )


def fields_problem(cls: type[TensorCore], keys: Any) -> str | None:
    """Why the saved ``keys`` cannot be a level of ``cls`` (``None``: they can): a typed
    class holds its fields only (unless it takes extra keys, which may not hide one of its
    attributes)."""
    schema = resolved_schema(cls)
    if schema is None:
        return None
    for key in keys:
        if key in schema.by_name:
            continue
        if not schema.extra_keys:
            return f"the saved key {shown(key)} is not a field of {cls.__name__}"
        if hasattr(cls, key):
            return f"the saved key {shown(key)} would hide the attribute {cls.__name__}.{key}"
    return None


def leaf_problem(value: object, batch: tuple[int, ...]) -> str | None:
    """Why ``value`` cannot be a leaf of a level of batch size ``batch``."""
    if isinstance(value, Tensor):
        if tuple(value.shape[: len(batch)]) != batch:
            return f"a tensor of shape {list(value.shape)} under the batch size {list(batch)}"
        return None
    if isinstance(value, TensorCore):
        inner = getattr(value, "_batch_size", None)
        if type(inner) is not torch.Size:
            return f"an uninitialised {type(value).__name__}"
        if tuple(inner[: len(batch)]) != batch:
            return (
                f"a nested level of batch size {list(value._batch_size)} under the batch size "
                f"{list(batch)}"
            )
        return None
    if type(value) is NonTensorStack:
        if tuple(value.batch_size[: len(batch)]) != batch:
            return f"a non-tensor stack of batch size {list(value.batch_size)} under {list(batch)}"
        return None
    if type(value) is NonTensorData:
        return None
    return f"a leaf of type {type(value).__name__}"


def typed_problem(node: TensorCore) -> str | None:
    """Why the values of a typed level do not fit its fields, checked as the constructor
    checks them (``None`` for a ``TensorDict`` level, or when they fit)."""
    schema = resolved_schema(type(node))
    if schema is None:
        return None
    for key, value in node._data.items():
        try:
            schema.convert(node, key, value, key)
        except (TensorClassError, TypeError, ValueError) as err:
            return f"{shown(key)}: {err}"
    return None


def rebuild_problem(
    cls: object, data: object, batch_size: object, device: object, names: object, locked: object
) -> str | None:
    """Why the arguments a pickle gives a tensor class's rebuild function do not make a
    valid instance (``None``: they do). ``torch.load`` (``weights_only=True``) may call that
    function with anything a crafted file holds: the class must be :func:`loadable`, the
    batch size, names and keys pass the checks above, and every leaf fits the batch size.
    A leaf spec of a consolidated pickle (a 4-tuple, or two of them for a nested jagged
    tensor's values and offsets) is checked when the buffer fills it."""
    if not loadable(cls):
        return f"{shown(cls)} is not a tensor class a file may build"
    assert isinstance(cls, type) and issubclass(cls, TensorCore)  # loadable says so
    if type(batch_size) is not torch.Size:
        return f"the batch size {shown(batch_size)} is not a torch.Size"
    batch = tuple(batch_size)
    wrong = batch_problem(list(batch)) or names_problem(
        None if names is None else list(names) if type(names) is tuple else names, len(batch)
    )
    if wrong is not None:
        return wrong
    if device is not None and type(device) is not torch.device:
        return f"the device {shown(device)} is not a torch.device"
    if type(locked) is not bool:
        return f"locked must be a bool; got {shown(locked)}"
    if type(data) is not dict:
        return f"the data must be a dict; got {type(data).__name__}"
    for key, value in data.items():
        wrong = key_problem(key)
        if wrong is None and not _is_leaf_spec(value):
            wrong = leaf_problem(value, batch)
        if wrong is not None:
            return f"{shown(key)}: {wrong}" if type(key) is str else wrong
    return fields_problem(cls, data)


def _is_leaf_spec(value: object) -> bool:
    """Whether a pickled leaf is a consolidated pickle's spec: ``(offset, dtype, shape,
    stride)``, or a pair of them (a nested jagged tensor)."""
    if type(value) is not tuple:
        return False
    return len(value) == 4 or (
        len(value) == 2 and all(type(part) is tuple and len(part) == 4 for part in value)
    )


def tree_problem(node: TensorCore) -> str | None:
    """Why an instance rebuilt from a file is not valid at some depth (``None``: it is):
    each leaf fits its level's batch size, and each typed level's values fit its fields."""
    if is_lazy_stack(node):  # its members are the levels
        return next((p for p in map(tree_problem, node.members) if p is not None), None)
    batch = tuple(node._batch_size)
    for key, value in node._data.items():
        wrong = leaf_problem(value, batch)
        if wrong is None and isinstance(value, TensorCore):
            wrong = tree_problem(value)
        if wrong is not None:
            return f"{shown(key)}: {wrong}"
    return typed_problem(node)


def check_regular(path: str | os.PathLike[str], what: str = "file") -> os.stat_result:
    """The status of ``path`` (links followed), if it is a regular file; a FIFO, a device,
    a socket or a directory raises :class:`~tensorclass.UnsafePathError` (before anything
    opens it: opening a FIFO blocks)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{os.fspath(path)}: no such {what}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePathError(path, f"not a regular file ({_kind(info.st_mode)}); not opened")
    return info


def open_regular(path: str | os.PathLike[str], what: str = "file") -> int:
    """A read-only descriptor of ``path`` if it is a regular file, opened without blocking
    (a FIFO opens at once, then is refused); the caller closes it."""
    check_regular(path, what)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # replaced between the check and the open
        os.close(fd)
        raise UnsafePathError(path, f"not a regular file ({_kind(info.st_mode)}); not read")
    return fd


def read_no_follow(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file ``path``, never read through a symbolic link (nor
    from a FIFO or a device): those raise :class:`~tensorclass.UnsafePathError`; a missing
    file raises ``FileNotFoundError``."""
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if isinstance(err, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise UnsafePathError(path, "a symbolic link; not followed") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePathError(path, f"not a regular file ({_kind(info.st_mode)}); not read")
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read()
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    kinds: Mapping[Callable[[int], bool], str] = {
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
        stat.S_ISDIR: "a directory",
        stat.S_ISLNK: "a symbolic link",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")
