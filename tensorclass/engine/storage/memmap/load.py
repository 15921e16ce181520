"""Loading memory-mapped saves: the tree of a save (``load_tree``), and which classes come back.

This module builds what was saved; checking typed levels against their classes (validation
on load) happens above the engine, in :func:`tensorclass.load_memmap`.

Loading reads JSON and maps raw files; it never unpickles anything and never runs code from
the save. The only code it may reach is a tensor class, and only by the rules below.

Which class each level comes back as
------------------------------------
- ``cls`` given: the top level is ``cls`` (for a saved lazy stack: each member). A typed
  ``cls`` must declare every saved key; its declared nested fields give the classes of the
  nested levels. The recorded class name does not have to match (classes may move).
- Otherwise a level comes back as the class recorded in its ``meta.json``, looked up by
  ``classes=``:

  - ``"imported"`` (the default): the class must already exist in this process: found by
    name in its module if that module is imported (``sys.modules``), or among the tensor
    classes defined so far (classes defined in a function, a notebook or ``exec``). Nothing
    is imported. Otherwise :class:`~tensorclass.RecordedClassError` says what to do.
  - ``"import"``: the recorded module may be imported (only that module), and the name
    must be a tensor class. Use it for saves you trust: importing a module runs its code.
  - ``"tensordict"``: no class is looked up; such levels come back as ``TensorDict``.

  A level of a save written by tensordict (:mod:`.foreign`) that tensordict recorded as a
  tensorclass comes back as the tensor class of that name defined in this process, else as
  ``TensorDict`` with a warning; nothing is imported, whatever ``classes`` says.

Checks on loading (``tensorclass.load_memmap``)
----------------------------------------------
Every level that comes back as a tensor class with declared fields (given by ``cls`` or
recorded) is checked against its class, as ``X.validate`` would: specs, non-tensor values
(converted by pydantic, as on validation). Problems raise one ``pydantic.ValidationError``
listing them all; a save whose keys do not fit a typed ``cls`` (extra keys, a tensor where
the class declares a nested level...) is reported the same way, with the problems of the
keys that do fit. ``validate=False`` skips the checks (e.g. to load data saved before a
spec changed, and fix it). Plain ``TensorDict`` levels have nothing to check and cost nothing.

``TensorDict`` itself is always available. ``tensorclass.load_memmap(path)`` and
``TensorDict.load_memmap(path)`` give back the recorded classes (as tensordict's
``TensorDict.load_memmap`` does); ``TensorDict.load_memmap(path, classes="tensordict")``
uses ``cls=TensorDict, classes="tensordict"`` (plain data, whatever was saved);
``MyClass.load_memmap(path)`` uses ``cls=MyClass``.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import warnings
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import Literal, TypeVar

import torch

from ....errors import MemmapFormatError, RecordedClassError, SaveReplacedError
from ....json_values import non_tensor_from_json, rebuilder_in
from ....non_tensor import NonTensorData
from ....registry import dynamic_class
from ....schema import Field, FieldKind, resolved_schema
from ...core.lazy_stacks import is_lazy_stack_class, stack_lazily
from ...core.state import TensorCore
from ...core.untrusted import loadable
from .foreign import match_class
from .metadata import DTYPES, TENSORDICT_PATH, EntryInfo, MemmapInfo, read_metadata
from .tensor import (
    FileSizeError,
    MemoryMappedTensor,
    PathLike,
    contiguous_strides,
    map_checked,
)

__all__ = [
    "ClassPolicy",
    "POLICIES",
    "defined_classes",
    "MODES",
    "load_tree",
    "read_checked",
    "read_one_save",
    "register_defined",
    "resolve_class",
    "subtree",
]

ClassPolicy = Literal["imported", "import", "tensordict"]
MODES = (None, "r", "r+")
POLICIES = ("imported", "import", "tensordict")

_DEFINED: weakref.WeakSet[type] = weakref.WeakSet()


def register_defined(cls: type) -> None:
    """Remember a tensor class defined in this process (loading finds saved classes there)."""
    _DEFINED.add(cls)


def defined_classes() -> list[type]:
    """Every tensor class defined in this process so far (those still alive)."""
    return list(_DEFINED)


def resolve_class(recorded: str, classes: ClassPolicy, where: object = None) -> type[TensorCore]:
    """The tensor class recorded as ``"module:qualname"``, by the ``classes`` rule above."""
    if recorded == TENSORDICT_PATH or classes == "tensordict":
        return dynamic_class()
    module_name, _, qualname = recorded.partition(":")
    prefix = f"{where}: " if where is not None else ""
    module = sys.modules.get(module_name)
    if module is None:
        for defined in defined_classes():  # defined in this process, outside a module
            if defined.__module__ == module_name and defined.__qualname__ == qualname:
                return _loadable(defined, prefix)
        if classes != "import":
            raise RecordedClassError(
                f"{prefix}the data was saved from the class {qualname!r} of module "
                f"{module_name!r}, which is not imported. Import it first, pass cls=..., "
                f"pass classes='import' to let tensorclass import {module_name!r} (runs its "
                f"code: only for trusted saves), or classes='tensordict' to load plain data"
            )
        try:
            module = importlib.import_module(module_name)
        except Exception as err:
            raise RecordedClassError(
                f"{prefix}cannot import module {module_name!r} recorded for class "
                f"{qualname!r}: {type(err).__name__}: {err}"
            ) from err
    found: object = module
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        found = namespace.get(part) if namespace is not None else None
        if found is None:
            break
    if found is None:
        for defined in defined_classes():  # e.g. a class defined inside a function
            if defined.__module__ == module_name and defined.__qualname__ == qualname:
                return _loadable(defined, prefix)
        raise RecordedClassError(
            f"{prefix}module {module_name!r} has no class {qualname!r}, and no tensor class of "
            f"that name is defined in this process (pass cls=...)"
        )
    if not (isinstance(found, type) and issubclass(found, TensorCore)):
        raise RecordedClassError(
            f"{prefix}{module_name}:{qualname} is a {type(found).__name__}, not a tensor class"
        )
    return _loadable(found, prefix)


def _loadable(found: type[TensorCore], prefix: str) -> type[TensorCore]:
    """``found`` if a save may build it: a tensor class (one with its own compiled schema,
    as ``TensorDict`` and every user class have), not an engine part such as
    ``TensorCore``, a mixin or an internal layout (``_Blank``)."""
    if loadable(found):
        return found
    raise RecordedClassError(
        f"{prefix}{found.__module__}:{found.__qualname__} is a part of tensorclass's engine, "
        f"not a tensor class a save may build"
    )


def _tensordict_class(recorded: str, classes: ClassPolicy, where: object) -> type[TensorCore]:
    """The tensor class for a tensorclass recorded by tensordict (see :mod:`.foreign`): one
    of that name defined in this process (nothing is imported, whatever ``classes`` says),
    else ``TensorDict``, with a warning that says so."""
    if classes == "tensordict":
        return dynamic_class()
    found, why = match_class(recorded, defined_classes())
    if found is None:
        warnings.warn(
            f"{where}: tensordict saved this level from its tensorclass {recorded!r}, and "
            f"{why}: it loads as TensorDict (define or import the class before loading to get "
            f"it back, or pass cls=...)",
            UserWarning,
            stacklevel=2,
        )
        return dynamic_class()
    return found


def read_checked(path: PathLike, classes: ClassPolicy) -> MemmapInfo:
    """The metadata of a save, with every format problem raised at once."""
    if classes not in POLICIES:
        raise ValueError(f"classes must be one of {POLICIES}; got {classes!r}")
    info = read_metadata(path)
    problems = info.problems()
    if problems:
        raise MemmapFormatError(
            f"cannot load {info.path}: "
            + "; ".join(problems[:20])
            + (f"; and {len(problems) - 20} more" if len(problems) > 20 else "")
        )
    return info


#: how many times a load reads a save again when the save is replaced while it reads
ATTEMPTS = 8

T = TypeVar("T")
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _identity(path: PathLike) -> tuple[int, int] | None:
    """The directory at ``path`` now (device, inode), or ``None`` if there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def read_one_save(prefix: PathLike, read: Callable[[], T]) -> T:
    """``read()`` (which reads the save at ``prefix`` by path: metadata, then data files),
    made to see one save while other processes replace it.

    A save is replaced by renaming a new directory into place (see :mod:`.save`); a
    directory, once in place, is never written again, and one that was moved away never
    comes back. So ``read`` saw one save whole when the directory at ``prefix`` is the
    same one before and after it ran: it is held open meanwhile (its inode cannot be
    reused), and compared by inode. If it was replaced, what ``read`` built (or the error
    it met: files of the old save vanish as it is deleted) is dropped and ``read`` runs
    again, up to :data:`ATTEMPTS` times; then :class:`~tensorclass.SaveReplacedError`.
    A path that is not a directory (an archive, nothing) is read once as it is.
    """
    failure: BaseException | None = None
    for _ in range(ATTEMPTS):
        try:
            fd = os.open(prefix, _DIRECTORY)
        except OSError:
            return read()  # not a directory: read() reports it
        try:
            info = os.fstat(fd)
            pinned = info.st_dev, info.st_ino
            try:
                result = read()
            except Exception as err:
                if _identity(prefix) == pinned:
                    raise  # the save did not change: a real error
                failure = err
                continue
            if _identity(prefix) == pinned:
                return result
        finally:
            os.close(fd)
    raise SaveReplacedError(
        f"cannot load {os.fspath(prefix)}: the save was replaced while it was being read, "
        f"{ATTEMPTS} times in a row (another process keeps saving there); nothing was "
        f"loaded and no file was changed. Load again, or wait for the saves to stop"
    ) from failure


def load_tree(
    info: MemmapInfo,
    cls: type[TensorCore] | None,
    classes: ClassPolicy = "imported",
    mode: str | None = None,
) -> TensorCore:
    """Build the saved tree (tensors mapped from their files, every level locked), as the
    class rules above say. Nothing is validated here; a save whose keys do not fit a typed
    ``cls`` raises :class:`~tensorclass.MemmapFormatError`.

    ``mode`` says how files are mapped: ``"r+"`` shared (writes reach the files), ``"r"``
    copy-on-write (writes stay in this process's memory), ``None`` shared where the file
    is writable by this process and copy-on-write otherwise."""
    if mode not in MODES:
        raise ValueError(f"load_memmap: mode must be one of {MODES}; got {mode!r}")
    return _build(info, cls, classes, mode)


def subtree(info: MemmapInfo, subpath: str | tuple[str, ...]) -> MemmapInfo:
    """The saved level at ``subpath``: a nested key (``("a", "b")``) or a ``"a/b"`` path;
    in a lazy stack, a part is a member index (``"0"``)."""
    parts = tuple(subpath.split("/")) if isinstance(subpath, str) else tuple(subpath)
    node = info
    for depth, part in enumerate(parts):
        found: MemmapInfo | None = None
        if node.kind == "lazy_stack":
            if part.isdigit() and int(part) < len(node.members):
                found = node.members[int(part)]
        else:
            entry = next((e for e in node.entries if e.key == part), None)
            found = None if entry is None else entry.child
        if found is None:
            here = "/".join(parts[:depth]) or "the top level"
            raise ValueError(
                f"load_memmap: subpath {subpath!r} names no saved level: {here} has no nested "
                f"level {part!r}"
            )
        node = found
    return node


def _build(
    info: MemmapInfo, cls: type[TensorCore] | None, classes: ClassPolicy, mode: str | None
) -> TensorCore:
    if cls is not None and is_lazy_stack_class(cls):
        if info.kind != "lazy_stack":
            raise MemmapFormatError(f"{info.path} holds an instance, not a lazy stack")
        cls = cls.member_class_of()
    if info.kind == "lazy_stack":
        assert info.stack_dim is not None
        members = [_build(member, cls, classes, mode) for member in info.members]
        return stack_lazily(members, info.stack_dim).lock_()
    if cls is None:
        recorded = info.tensordict_class
        if recorded is None:
            cls = resolve_class(info.class_path, classes, info.path)
        else:
            cls = _tensordict_class(recorded, classes, info.path)
    fields = _fields(cls)
    data: dict[str, object] = {}
    for entry in info.entries:
        data[entry.key] = _leaf(info, entry, cls, fields, classes, mode)
    device = None if info.device is None else torch.device("cpu")
    return cls._new(data, torch.Size(info.batch_size), device, info.names).lock_()


#: how leaf files are opened while it is set (``opener(filename, dtype, shape, mode)``):
#: for a save that is not a directory (an archive, see :mod:`.archive`)
OPENER: ContextVar[Callable[..., MemoryMappedTensor] | None] = ContextVar(
    "tensorclass_memmap_opener", default=None
)


def _open(
    filename: str, dtype: torch.dtype, shape: tuple[int, ...], mode: str | None
) -> MemoryMappedTensor:
    opener = OPENER.get()
    if opener is not None:
        return opener(filename, dtype, shape, mode)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0:  # nothing to map (tensordict may write no file for it)
        return MemoryMappedTensor._wrap(torch.empty(shape, dtype=dtype), filename)
    try:  # the size is checked on the file that is mapped: never extended (see map_checked)
        storage, _ = map_checked(filename, None if mode is None else mode == "r+", nbytes)
    except FileSizeError as err:
        raise MemmapFormatError(
            f"cannot load {filename}: "
            + ("it is not a regular file" if err.actual is None else f"it holds {err.actual} bytes")
            + f", the metadata says {nbytes} (it changed after the metadata was read)"
        ) from None
    except PermissionError:
        raise
    except OSError as err:  # gone, or a symbolic link put in its place
        raise MemmapFormatError(f"cannot load {filename}: {err.strerror or err}") from None
    plain = torch.empty((0,), dtype=dtype).set_(storage, 0, shape, contiguous_strides(shape))
    return MemoryMappedTensor._wrap(plain, filename)


def _fields(cls: type[TensorCore]) -> dict[str, Field] | None:
    schema = resolved_schema(cls)
    return None if schema is None else dict(schema.by_name)


def _leaf(
    info: MemmapInfo,
    entry: EntryInfo,
    cls: type[TensorCore],
    fields: dict[str, Field] | None,
    classes: ClassPolicy,
    mode: str | None,
) -> object:
    child_cls: type[TensorCore] | None = None
    rebuild = None
    found = None if fields is None else fields.get(entry.key)
    if fields is not None and found is None and not cls.__tensorclass_schema__.extra_keys:
        raise MemmapFormatError(
            f"{info.path}: the saved key {entry.key!r} is not a field of {cls.__name__} "
            f"(fields: {', '.join(fields) or 'none'})"
        )
    if found is not None:  # a field: its kind says what the saved value may be
        allowed = {
            FieldKind.TENSOR: ("tensor",),
            FieldKind.NESTED: ("nested",),
            FieldKind.NON_TENSOR: ("non_tensor", "non_tensor_stack"),
        }.get(found.kind)
        if allowed is not None and entry.type not in allowed:
            raise MemmapFormatError(
                f"{info.path}: the saved key {entry.key!r} holds a {entry.type.replace('_', '-')}"
                f" value, but {cls.__name__}.{entry.key} is a {found.kind.value} field"
            )
        if found.kind is FieldKind.NESTED:
            child_cls = found.nested_class
        elif found.kind is FieldKind.NON_TENSOR:
            rebuild = rebuilder_in(found.annotation)
    if entry.type == "tensor":
        assert entry.file is not None and entry.dtype is not None and entry.shape is not None
        mapped = _open(os.fspath(entry.file), DTYPES[entry.dtype], entry.shape, mode)
        return mapped.mark_parameter() if entry.parameter else mapped
    if entry.type == "nested":
        assert entry.child is not None
        return _build(entry.child, child_cls, classes, mode)
    assert entry.shape is not None or entry.type == "non_tensor"
    leaf = non_tensor_from_json(entry.type, entry.value, entry.shape or (), rebuild)
    if entry.meta and type(leaf) is NonTensorData:
        leaf.meta = True  # a MetaData
    return leaf
