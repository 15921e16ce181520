"""``tensorclass.memmap(data, prefix)``: tensordict's function form of ``data.memmap``."""

from __future__ import annotations

from typing import Any

from .engine.base import TensorDictBase
from .engine.storage.memmap.tensor import PathLike

__all__ = ["memmap", "save"]


def memmap(
    data: TensorDictBase,
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
) -> Any:
    """Save ``data`` to the directory ``prefix`` (without one: into anonymous shared
    memory); the same as ``data.memmap(prefix, ...)``
    (see :meth:`tensorclass.TensorDict.memmap` for every argument).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, load_memmap, memmap
    >>> with tempfile.TemporaryDirectory() as path:
    ...     saved = memmap(TensorDict(a=torch.zeros(3), batch_size=[3]), path)
    ...     load_memmap(path)["a"].shape
    torch.Size([3])
    """
    saver: Any = data.memmap  # return_early chooses the result's type at run time
    return saver(
        prefix,
        copy_existing,
        num_threads=num_threads,
        return_early=return_early,
        share_non_tensor=share_non_tensor,
        existsok=existsok,
        robust_key=robust_key,
        archive=archive,
        compression=compression,
        atomic=atomic,
        fsync=fsync,
    )


def save(
    data: TensorDictBase,
    prefix: PathLike | None = None,
    copy_existing: bool = False,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = False,
) -> Any:
    """Save ``data`` to the directory ``prefix``, replacing a save there; the same as
    ``data.save(prefix, ...)`` (see :meth:`tensorclass.TensorDict.save`). Read it back with
    :func:`tensorclass.load`.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, load, save
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = save(TensorDict(a=torch.ones(2), batch_size=[2]), path)
    ...     load(path)["a"].tolist()
    [1.0, 1.0]
    """
    saver: Any = data.save  # return_early chooses the result's type at run time
    return saver(
        prefix,
        copy_existing,
        num_threads=num_threads,
        return_early=return_early,
        share_non_tensor=share_non_tensor,
        robust_key=robust_key,
        archive=archive,
        compression=compression,
        atomic=atomic,
    )
