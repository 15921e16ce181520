"""The memory-mapped storage methods of every tensor class: ``memmap``, ``memmap_``,
``memmap_like`` and ``is_memmap``.

Functions, attached to ``TensorDictBase`` in ``engine/base.py``. :func:`write_memmap` checks
the options (``memmap/options.py``) and runs the save itself, ``memmap/save.py`` (or
``memmap/archive.py`` for one archive file). tensordict's other spellings around them
(``save``, ``load_memmap_``, ``make_memmap``...) are in ``storage/save_load.py``.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Literal, cast, overload

from ...core.self_types import B
from ...core.state import TensorCore
from .archive import save_archive
from .options import check_save_options, in_background, wants_archive
from .save import memmap as save_tree
from .tensor import MemoryMappedTensor, PathLike

__all__ = ["is_memmap", "memmap", "memmap_", "memmap_like", "write_memmap"]


@overload
def memmap(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: Literal[False] = False,
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B: ...


@overload
def memmap(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: Literal[True],
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> Future[B]: ...


def memmap(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B | Future[B]:
    """Save to the directory ``prefix`` and return a copy backed by the files (locked).

    One raw file per tensor and a ``meta.json`` per nested level; the save is always
    atomic (written aside, then renamed into place; ``atomic`` is accepted for
    compatibility). Replacing an existing save needs ``existsok=True``. ``num_threads``
    writes files in parallel; ``return_early=True`` saves in a background thread and
    returns a :class:`concurrent.futures.Future` of the result. A leaf already mapped
    from a file elsewhere is copied (``copy_existing=False`` refuses that instead, as
    tensordict's default does). File names are
    percent-encoded keys (``robust_key=False`` is accepted when every key is a safe
    file name). ``archive=True`` or a ``.tdz`` path saves one archive file
    (``compression`` for its tensor payloads; see ``tensorclass.pack_memmap``) and
    returns the instance mapped from it; ``share_non_tensor=True`` raises.
    ``fsync=True`` flushes every file and directory of the save to the disk before
    returning (for saves that must survive a power loss; slower). Two saves racing to
    the same new path: one wins, the other raises ``FileExistsError``. See
    ``docs/storage.md`` and :mod:`tensorclass.engine.storage.memmap.options`.
    """
    return write_memmap(
        self,
        prefix,
        copy_existing,
        num_threads,
        return_early,
        share_non_tensor,
        existsok,
        robust_key,
        archive,
        compression,
        like=False,
        inplace=False,
        fsync=fsync,
    )


@overload
def memmap_(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: Literal[False] = False,
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B: ...


@overload
def memmap_(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: Literal[True],
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> Future[B]: ...


def memmap_(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    existsok: bool = False,
    robust_key: bool | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B | Future[B]:
    """Like :meth:`memmap` (``fsync`` too), but this instance's tensors are replaced by
    the file-backed ones (and it is locked); returns this instance (or a future of it)."""
    return write_memmap(
        self,
        prefix,
        copy_existing,
        num_threads,
        return_early,
        share_non_tensor,
        existsok,
        robust_key,
        None,
        None,
        like=False,
        inplace=True,
        fsync=fsync,
    )


@overload
def memmap_like(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    existsok: bool = False,
    num_threads: int = 0,
    return_early: Literal[False] = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
) -> B: ...


@overload
def memmap_like(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    existsok: bool = False,
    num_threads: int = 0,
    return_early: Literal[True],
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
) -> Future[B]: ...


def memmap_like(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None = None,
    *,
    existsok: bool = False,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
) -> B | Future[B]:
    """Like :meth:`memmap`, without writing the data: new files of the right sizes,
    reading as zeros. An expanded template is never materialised in memory.
    ``copy_existing`` has no effect (no value is copied); the other keywords are
    those of :meth:`memmap`."""
    return write_memmap(
        self,
        prefix,
        copy_existing,
        num_threads,
        return_early,
        share_non_tensor,
        existsok,
        robust_key,
        archive,
        None,
        like=True,
        inplace=False,
    )


def write_memmap(
    self: B,
    prefix: PathLike,
    copy_existing: bool | None,
    num_threads: int,
    return_early: bool,
    share_non_tensor: bool,
    existsok: bool,
    robust_key: bool | None,
    archive: bool | None,
    compression: str | int | None,
    *,
    like: bool,
    inplace: bool,
    fsync: bool = False,
) -> B | Future[B]:
    """Save ``self`` as :func:`memmap` (``like``: :func:`memmap_like`, ``inplace``:
    :func:`memmap_`) and ``tensorclass.memmap`` do: check the options, then write the tree
    (or one archive), in a background thread with ``return_early``."""
    to_archive = not inplace and wants_archive(prefix, archive)
    check_save_options(
        self,
        prefix,
        copy_existing=copy_existing,
        share_non_tensor=share_non_tensor,
        robust_key=robust_key,
        archive=False if to_archive else archive,
        compression=None if to_archive else compression,
        like=like,
    )

    def run() -> TensorCore:
        if to_archive:
            return save_archive(
                self,
                prefix,
                existsok=existsok,
                num_threads=num_threads,
                like=like,
                compression=compression,
            )
        return save_tree(
            self,
            prefix,
            existsok=existsok,
            num_threads=num_threads,
            like=like,
            inplace=inplace,
            fsync=fsync,
        )

    # the tree written is ``self``'s (an archive loads back the classes it recorded: its own)
    return cast("B | Future[B]", in_background(run) if return_early else run())


def is_memmap(self: B) -> bool:
    """Whether every tensor (at every depth) is a :class:`MemoryMappedTensor`."""
    tensors = self._own_tensors()
    return bool(tensors) and all(isinstance(t, MemoryMappedTensor) for t in tensors)
