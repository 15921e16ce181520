"""The memory-mapped storage methods of every tensor class: ``memmap``, ``memmap_``,
``memmap_like`` and ``is_memmap``.

Functions, attached to ``TensorDictBase`` in ``engine/base.py``. :func:`write_memmap` checks
the options (``memmap/options.py``) and runs the save itself, ``memmap/save.py`` (or
``memmap/archive.py`` for one archive file). tensordict's other spellings around them
(``save``, ``load_memmap_``, ``make_memmap``...) are in ``storage/save_load.py``.
"""

from __future__ import annotations

from typing import Literal, Protocol, TypedDict, TypeVar, cast, overload

from typing_extensions import Unpack

from ...core.self_types import B
from ...core.state import TensorCore
from .archive import save_archive
from .future import TensorDictFuture
from .options import check_save_options, in_background, wants_archive
from .save import map_anonymously
from .save import memmap as save_tree
from .tensor import MemoryMappedTensor, PathLike

__all__ = [
    "Memmap",
    "MemmapInPlace",
    "MemmapLike",
    "Save",
    "is_memmap",
    "memmap",
    "memmap_",
    "memmap_like",
    "write_memmap",
]

_T = TypeVar("_T")  # invariant, as TensorDictFuture is


# The signature kinds of the saving methods (``X.memmap`` is a ``Memmap[X]``...): the result
# is the instance, or with ``return_early=True`` a future of it. The keywords that do not
# choose the result are one TypedDict per method; the functions below carry them all.


class _Common(TypedDict, total=False):
    num_threads: int
    share_non_tensor: bool
    robust_key: bool | None


class _LikeOptions(_Common, total=False):
    """The keywords of :func:`memmap_like` besides ``return_early``."""

    existsok: bool
    archive: bool | None


class _InPlaceOptions(_Common, total=False):
    """The keywords of :func:`memmap_` besides ``return_early``."""

    existsok: bool
    atomic: bool
    fsync: bool


class _MemmapOptions(_InPlaceOptions, total=False):
    """The keywords of :func:`memmap` besides ``return_early``."""

    archive: bool | None
    compression: str | int | None


class _SaveOptions(_Common, total=False):
    """The keywords of ``save`` (``storage/save_load.py``) besides ``return_early``."""

    archive: bool | None
    compression: str | int | None
    atomic: bool


class Memmap(Protocol[_T]):
    """The type of ``memmap`` on an instance of ``_T``."""

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[False] = ...,
        **options: Unpack[_MemmapOptions],
    ) -> _T: ...

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[True],
        **options: Unpack[_MemmapOptions],
    ) -> TensorDictFuture[_T]: ...


class MemmapInPlace(Protocol[_T]):
    """The type of ``memmap_`` on an instance of ``_T``."""

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[False] = ...,
        **options: Unpack[_InPlaceOptions],
    ) -> _T: ...

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[True],
        **options: Unpack[_InPlaceOptions],
    ) -> TensorDictFuture[_T]: ...


class MemmapLike(Protocol[_T]):
    """The type of ``memmap_like`` on an instance of ``_T``."""

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[False] = ...,
        **options: Unpack[_LikeOptions],
    ) -> _T: ...

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool | None = ...,
        *,
        return_early: Literal[True],
        **options: Unpack[_LikeOptions],
    ) -> TensorDictFuture[_T]: ...


class Save(Protocol[_T]):
    """The type of ``save`` (``storage/save_load.py``) on an instance of ``_T``."""

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool = ...,
        *,
        return_early: Literal[False] = ...,
        **options: Unpack[_SaveOptions],
    ) -> _T: ...

    @overload
    def __call__(
        self,
        prefix: PathLike | None = ...,
        copy_existing: bool = ...,
        *,
        return_early: Literal[True],
        **options: Unpack[_SaveOptions],
    ) -> TensorDictFuture[_T]: ...


def memmap(
    self: B,
    prefix: PathLike | None = None,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    existsok: bool = True,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B | TensorDictFuture[B]:
    """Save to the directory ``prefix`` and return a copy backed by the files (locked).

    One raw file per tensor and a ``meta.json`` per nested level; the save is always
    atomic (written aside, then renamed into place; ``atomic`` is accepted for
    compatibility). A previous save at ``prefix`` is replaced as a whole (its files
    are gone); ``existsok=False`` refuses to replace it, and a non-empty directory that
    holds no save is always refused (nothing of it is overwritten or deleted). Without
    ``prefix`` the tensors are copied into anonymous shared memory
    (:class:`MemoryMappedTensor` without a file; nothing is written). ``num_threads``
    writes files in parallel; ``return_early=True`` saves in a background thread and
    returns a :class:`~tensorclass.utils.TensorDictFuture` of the result. A leaf already mapped
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


def memmap_(
    self: B,
    prefix: PathLike | None = None,
    copy_existing: bool | None = None,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    existsok: bool = True,
    robust_key: bool | None = None,
    atomic: bool = True,
    fsync: bool = False,
) -> B | TensorDictFuture[B]:
    """Like :meth:`memmap` (``fsync`` too), but this instance's tensors are replaced by
    the file-backed ones (or, without ``prefix``, by copies in anonymous shared memory)
    and it is locked; returns this instance (or a future of it)."""
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


def memmap_like(
    self: B,
    prefix: PathLike | None = None,
    copy_existing: bool | None = None,
    *,
    existsok: bool = True,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
) -> B | TensorDictFuture[B]:
    """Like :meth:`memmap`, without writing the data: new files of the right sizes
    (or, without ``prefix``, anonymous shared memory), reading as zeros. An expanded
    template is never materialised in memory.
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
    prefix: PathLike | None,
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
) -> B | TensorDictFuture[B]:
    """Save ``self`` as :func:`memmap` (``like``: :func:`memmap_like`, ``inplace``:
    :func:`memmap_`) and ``tensorclass.memmap`` do: check the options, then write the tree
    (or one archive), in a background thread with ``return_early``."""
    if prefix is None:
        if archive:
            raise ValueError("memmap(archive=True) needs a prefix: the archive file's path")
        check_save_options(
            self,
            None,
            copy_existing=copy_existing,
            share_non_tensor=share_non_tensor,
            robust_key=robust_key,
            archive=archive,
            compression=compression,
            like=like,
        )

        def anonymous() -> TensorCore:
            return map_anonymously(self, like=like, inplace=inplace)

        return cast(
            "B | TensorDictFuture[B]", in_background(anonymous) if return_early else anonymous()
        )
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
    return cast("B | TensorDictFuture[B]", in_background(run) if return_early else run())


def is_memmap(self: B) -> bool:
    """Whether every tensor (at every depth) is a :class:`MemoryMappedTensor`."""
    tensors = self._own_tensors()
    return bool(tensors) and all(isinstance(t, MemoryMappedTensor) for t in tensors)
