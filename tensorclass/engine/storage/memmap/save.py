"""Saving tensor classes as memory-mapped directories (``memmap``, ``memmap_``, ``memmap_like``).

A save is written in full into a hidden temporary directory next to the target, then moved
into place with one rename (an atomic exchange on Linux when a previous save exists), so an
interrupted save never leaves a half-written directory at the target path: the previous
save stays as it was. The format is described in :mod:`.metadata`.

Each tensor is written with a single ``write`` of its bytes (contiguous tensors are written
straight from their memory; others are copied once, into the mapped file); ``num_threads``
writes several files at once.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor
from torch.nn import Parameter

from ....errors import MemmapFormatError
from ....json_values import non_tensor_to_json
from ....non_tensor import NonTensorData, NonTensorStack
from ....registry import dynamic_class
from ....schema import is_typed, resolved_schema
from ...core.lazy_stacks import is_lazy_stack, stack_lazily
from ...core.state import TensorCore
from .metadata import (
    FORMAT,
    META_NAME,
    TENSORDICT_PATH,
    VERSION,
    dir_name,
    dtype_name,
    leaf_file_name,
)
from .tensor import MemoryMappedTensor, PathLike, write_tensor_file

__all__ = ["class_path", "map_anonymously", "memmap"]


def class_path(cls: type) -> str:
    """How a class is recorded: ``"module:qualname"`` (``TensorDict`` is ``tensorclass:TensorDict``;
    a lazy view's class, ``set_lazy_legacy``'s, records the class it views: a view is saved
    as the dense instance it shows)."""
    viewed: type | None = getattr(cls, "_source_cls", None)
    if viewed is not None:
        cls = viewed
    if cls is dynamic_class():
        return TENSORDICT_PATH
    return f"{cls.__module__}:{cls.__qualname__}"


def _annotation_text(annotation: object) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return f"{annotation.__module__}.{annotation.__qualname__}".removeprefix("builtins.")
    return repr(annotation)


def _schema(cls: type) -> list[dict[str, object]] | None:
    schema = resolved_schema(cls)
    if schema is None:
        return None
    return [
        {
            "name": f.name,
            "kind": f.kind.value,
            "annotation": _annotation_text(f.annotation),
            "nested": None if f.nested_class is None else class_path(f.nested_class),
        }
        for f in schema.fields
    ]


@dataclass
class _Plan:
    """What a save writes: directories, data files and metadata, relative to the root."""

    dirs: list[str] = field(default_factory=list)
    files: list[tuple[str, Tensor]] = field(default_factory=list)
    metas: list[tuple[str, dict[str, object]]] = field(default_factory=list)


def _level_meta(node: TensorCore, kind: str, cls: type) -> dict[str, object]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "class": class_path(cls),
        "typed": is_typed(cls),
        "schema": _schema(cls),
        "batch_size": list(node._batch_size),
        "device": None if node._device is None else str(node._device),
        "names": None if node._names is None else list(node._names),
    }


def _plan(node: TensorCore, rel: str, where: tuple[str, ...], plan: _Plan) -> None:
    """Collect what saving ``node`` writes (``rel``: its directory, ``""`` or ending in /)."""
    plan.dirs.append(rel)
    if is_lazy_stack(node):
        meta = _level_meta(node, "lazy_stack", node.member_class)
        meta["stack_dim"] = node.stack_dim
        meta["members"] = [str(i) for i in range(len(node.members))]
        plan.metas.append((rel, meta))
        for index, member in enumerate(node.members):
            _plan(member, f"{rel}{index}/", (*where, f"<member {index}>"), plan)
        return
    meta = _level_meta(node, "instance", type(node))
    entries: list[dict[str, object]] = []
    for key, leaf in node._data.items():
        path = (*where, key)
        if isinstance(leaf, Tensor):
            file = leaf_file_name(key)
            entries.append(
                {
                    "key": key,
                    "type": "tensor",
                    "file": file,
                    "dtype": dtype_name(leaf.dtype),
                    "shape": list(leaf.shape),
                    "nbytes": leaf.numel() * leaf.element_size(),
                    **({"parameter": True} if isinstance(leaf, Parameter) else {}),
                }
            )
            plan.files.append((rel + file, leaf))
        elif isinstance(leaf, TensorCore):
            entries.append({"key": key, "type": "nested", "dir": dir_name(key)})
            _plan(leaf, f"{rel}{dir_name(key)}/", path, plan)
        elif type(leaf) in (NonTensorData, NonTensorStack):
            kind, value = non_tensor_to_json(leaf, path if len(path) > 1 else key)
            entry = {
                "key": key,
                "type": kind,
                "values" if kind.endswith("stack") else "value": value,
            }
            if type(leaf) is NonTensorData and leaf.meta:
                entry["meta"] = True  # a MetaData
            entries.append(entry)
        else:
            raise MemmapFormatError(f"cannot save {path!r}: unknown leaf {type(leaf).__name__}")
    meta["entries"] = entries
    plan.metas.append((rel, meta))


def _sized_file(tensor: Tensor, path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.ftruncate(fd, tensor.numel() * tensor.element_size())  # sparse: reads as zeros
    finally:
        os.close(fd)


def _write(root: str, plan: _Plan, num_threads: int, like: bool) -> None:
    for rel in plan.dirs:
        if rel:  # the root exists already
            os.mkdir(root + rel)
    writer: Callable[[Tensor, str], None] = _sized_file if like else write_tensor_file

    def job(item: tuple[str, Tensor]) -> None:
        writer(item[1], root + item[0])

    if num_threads > 1 and len(plan.files) > 1:
        with ThreadPoolExecutor(min(num_threads, len(plan.files))) as pool:
            for _ in pool.map(job, plan.files):
                pass
    else:
        for item in plan.files:
            job(item)
    for rel, meta in plan.metas:
        with open(root + rel + META_NAME, "w", encoding="utf-8") as file:
            file.write(json.dumps(meta, allow_nan=True))


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return bool(result == 0)


def _check_target(target: Path, existsok: bool) -> bool:
    """Whether ``target`` holds a previous save to replace (errors if it may not be)."""
    if not os.path.lexists(target):
        return False
    if not target.is_symlink() and target.is_dir() and not any(target.iterdir()):
        return True  # an empty directory (say from mkdtemp) holds nothing to lose
    if not existsok:
        raise FileExistsError(f"{target} exists; pass existsok=True to replace the save there")
    if target.is_symlink() or not target.is_dir():
        raise FileExistsError(f"refusing to replace {target}: it is not a directory")
    if not (target / META_NAME).is_file():
        raise FileExistsError(
            f"refusing to replace {target}: it is a non-empty directory that does not hold "
            f"a tensorclass save ({META_NAME} is missing)"
        )
    return True


def _move_into_place(temporary: Path, target: Path, replace: bool) -> None:
    if not replace:
        try:
            os.rename(temporary, target)
        except OSError as err:  # ENOTEMPTY/EEXIST: another save took the path meanwhile
            if err.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not target.exists():
                raise
            raise FileExistsError(
                f"{target} was created by another save while this one was written (two "
                f"saves to the same new path at once?); this save was discarded. Pass "
                f"existsok=True to replace a save"
            ) from None
        return
    if _exchange(temporary, target):
        shutil.rmtree(temporary)  # it now holds the previous save
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:12]}")
    os.rename(target, old)
    os.rename(temporary, target)
    shutil.rmtree(old)


def _sync_path(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_tree(root: Path) -> None:
    """``fsync`` every file, then every directory (deepest first) of a finished save, so a
    power loss after ``memmap(..., fsync=True)`` returns cannot lose or truncate it."""
    for here, _, files in os.walk(root, topdown=False):
        for name in files:
            _sync_path(os.path.join(here, name))
        _sync_path(here)


def save(
    node: TensorCore,
    prefix: PathLike,
    *,
    existsok: bool,
    num_threads: int,
    like: bool,
    fsync: bool = False,
) -> tuple[str, list[str]]:
    """Write ``node`` under ``prefix`` atomically (durably with ``fsync``: see
    :func:`_sync_tree`).

    Returns the absolute target path (ending in ``/``) and the files written, relative to
    it, in the order :func:`_attach` visits the tensors.
    """
    target = Path(os.path.abspath(os.fspath(prefix)))
    plan = _Plan()
    _plan(node, "", (), plan)  # checks every value before anything is written
    replace = _check_target(target, existsok)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    os.mkdir(temporary)
    try:
        _write(f"{temporary}/", plan, num_threads, like)
        if fsync:
            _sync_tree(temporary)
        _move_into_place(temporary, target, replace)
        if fsync:
            _sync_path(target.parent)  # the rename itself reaches the disk
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return f"{target}/", [rel for rel, _ in plan.files]


def _attach(
    node: TensorCore, mapped: Callable[[Tensor], MemoryMappedTensor], inplace: bool
) -> TensorCore:
    """``node`` with each tensor replaced by ``mapped(tensor)`` (in the order of the save's
    walk), locked; ``inplace`` swaps the leaves of ``node`` itself."""
    if is_lazy_stack(node):
        members = [_attach(member, mapped, inplace) for member in node.members]
        if inplace:
            return node.lock_()
        return stack_lazily(members, node.stack_dim).lock_()
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            out = mapped(leaf)
            if isinstance(leaf, Parameter):
                out.mark_parameter()
            data[key] = out
        elif isinstance(leaf, TensorCore):
            data[key] = _attach(leaf, mapped, inplace)
        else:
            data[key] = leaf
    device = None if node._device is None else torch.device("cpu")
    if inplace:
        node._data.update(data)
        node._device = device
        return node.lock_()
    return type(node)._new(data, node._batch_size, device, node._names).lock_()


def map_anonymously(node: TensorCore, *, like: bool = False, inplace: bool = False) -> TensorCore:
    """``node`` with every tensor in anonymous shared memory: a :class:`MemoryMappedTensor`
    without a file (tensordict's ``memmap()`` without a prefix), locked.

    ``like=True`` gives zeros of the same shapes; ``inplace=True`` swaps the leaves of
    ``node`` itself (a leaf already in anonymous memory is kept as it is).
    """

    def mapped(leaf: Tensor) -> MemoryMappedTensor:
        if inplace and isinstance(leaf, MemoryMappedTensor) and leaf._filename is None:
            return leaf
        out = MemoryMappedTensor.empty(leaf.shape, dtype=leaf.dtype)  # zeros, shared
        if not like:
            source = leaf.as_tensor() if isinstance(leaf, MemoryMappedTensor) else leaf
            out.as_tensor().copy_(source.detach())
        return out

    return _attach(node, mapped, inplace)


def memmap(
    node: TensorCore,
    prefix: PathLike,
    *,
    existsok: bool = False,
    num_threads: int = 0,
    like: bool = False,
    inplace: bool = False,
    fsync: bool = False,
) -> TensorCore:
    """Save ``node`` under ``prefix`` and return it backed by the files (locked).

    ``like=True`` writes no data (new files read as zeros); ``inplace=True`` swaps the
    leaves of ``node`` itself for the file-backed ones; ``fsync=True`` flushes every file
    and directory to the disk before returning.
    """
    root, files = save(
        node, prefix, existsok=existsok, num_threads=num_threads, like=like, fsync=fsync
    )
    names = iter(files)

    def mapped(leaf: Tensor) -> MemoryMappedTensor:
        return MemoryMappedTensor._open(root + next(names), leaf.dtype, tuple(leaf.shape))

    return _attach(node, mapped, inplace)
