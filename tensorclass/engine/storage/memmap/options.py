"""The keywords of ``memmap``/``memmap_``/``memmap_like`` beyond the path and the threads.

They come from ``tensordict`` and are checked here, before anything is written:

- ``copy_existing``: a leaf already mapped from a file *outside* the target directory is
  copied into the new save (the default, ``None``, and ``True``). ``copy_existing=False``
  refuses instead (:class:`RuntimeError`), so that data on disk is not duplicated by
  accident: tensordict's default, which here must be asked for, since building a new
  instance from loaded leaves and saving it elsewhere is a common, safe pattern. Leaves
  mapped from the target itself are rewritten in place of the old save (saves are atomic),
  which needs no copy permission.
- ``robust_key``: file names are always derived from keys by percent-encoding (see
  :mod:`.metadata`), so no key can write outside the target. ``robust_key=False`` (the
  legacy layout: keys used as file names unchanged) is accepted when every key already is
  a safe file name, which gives the same names; a key that is not raises ``ValueError``.
- ``atomic``: saves are always atomic; ``True`` and ``False`` both write aside and rename.
- ``archive``/``compression``: ``archive=True``, or a ``.tdz`` path with
  ``archive=None``, saves one archive file (:mod:`.archive`: a directory written aside,
  packed with ``compression``, removed) and returns the instance loaded from it;
  ``memmap_`` (in place) refuses an archive (``NotImplementedError``), and
  ``compression`` without an archive raises ``ValueError``.
- ``share_non_tensor=True``: non-tensor values are plain Python objects kept in each
  process (and JSON in ``meta.json``); they cannot be shared between processes, so it
  raises ``NotImplementedError``.
- ``return_early=True``: the save runs in a background thread and a
  :class:`~tensorclass.utils.TensorDictFuture` is returned; ``result()`` gives the memory-mapped
  instance (or raises what the save raised).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ...core.lazy_stacks import is_lazy_stack
from ...core.state import TensorCore
from ...shape.jagged import jagged_key
from .future import TensorDictFuture
from .metadata import LEAF_SUFFIX, leaf_file_name
from .tensor import MemoryMappedTensor, PathLike

__all__ = ["check_save_options", "in_background", "wants_archive"]

T = TypeVar("T")


def _levels(
    node: TensorCore, where: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], TensorCore]]:
    if is_lazy_stack(node):
        for index, member in enumerate(node.members):
            yield from _levels(member, (*where, f"<member {index}>"))
        return
    yield where, node
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            yield from _levels(leaf, (*where, key))


def _check_plain_keys(node: TensorCore) -> None:
    for where, level in _levels(node, ()):
        for key in level._data:
            if leaf_file_name(key) != key + LEAF_SUFFIX:
                path = (*where, key)
                raise ValueError(
                    f"memmap(robust_key=False): the key {path[0] if len(path) == 1 else path!r} "
                    f"is not a safe file name; tensorclass never writes a key as a file name "
                    f"unchanged (it could escape the directory): pass robust_key=True, the "
                    f"default, to percent-encode it"
                )


def _inside(filename: str, target: str) -> bool:
    return os.path.commonpath([os.path.abspath(filename), target]) == target


def _check_existing(node: TensorCore, target: str | None) -> None:
    for where, level in _levels(node, ()):
        for key, leaf in level._data.items():
            if not isinstance(leaf, MemoryMappedTensor) or leaf._filename is None:
                continue  # not mapped from a file
            if target is None or not _inside(leaf.filename, target):
                path = (*where, key)
                raise RuntimeError(
                    f"memmap: {path[0] if len(path) == 1 else path!r} is already mapped from "
                    f"{leaf.filename}; pass copy_existing=True to copy it to "
                    f"{target or 'anonymous shared memory'}"
                )


def wants_archive(prefix: PathLike | None, archive: bool | None) -> bool:
    """Whether a save asks for an archive: ``archive=True``, or a ``.tdz`` path."""
    if archive is not None or prefix is None:
        return bool(archive)
    return os.fspath(prefix).endswith(".tdz")


def check_save_options(
    node: TensorCore,
    prefix: PathLike | None,
    *,
    copy_existing: bool | None,
    share_non_tensor: bool,
    robust_key: bool | None,
    archive: bool | None,
    compression: Any,
    like: bool,
) -> None:
    """Raise for options tensorclass cannot honour (see the module documentation), and
    for a nested jagged tensor leaf (its shape has no fixed size to map)."""
    jagged = jagged_key(node)
    if jagged is not None:
        raise NotImplementedError(
            f"memmap cannot save the nested jagged tensor (layout=torch.jagged) under key "
            f"{jagged!r}; pad it (torch.nested.to_padded_tensor) or keep it in a lazy stack "
            f"of dense members"
        )
    path = None if prefix is None else os.fspath(prefix)
    if wants_archive(path, archive):
        raise NotImplementedError(
            f"memmap_: an instance cannot be swapped in place onto an archive ({path!r}); "
            f"use memmap(path) (which returns the archived copy) or a directory path"
        )
    if compression is not None:
        raise ValueError(
            f"memmap: compression={compression!r} applies to archives only (archive=True or "
            f"a '.tdz' path); a directory save stores tensors raw, to be memory-mapped"
        )
    if share_non_tensor:
        raise NotImplementedError(
            "memmap(share_non_tensor=True): non-tensor values are Python objects held by each "
            "process (saved as JSON); tensorclass cannot share them between processes"
        )
    if robust_key is False:
        _check_plain_keys(node)
    if copy_existing is False and not like:
        _check_existing(node, None if path is None else os.path.abspath(path))


def in_background(run: Callable[[], T]) -> TensorDictFuture[T]:
    """Start ``run`` in a new thread; its future gives the result (or the error)."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tensorclass-memmap")
    try:
        return TensorDictFuture.of(executor.submit(run))
    finally:
        executor.shutdown(wait=False)  # the thread ends once ``run`` has
