"""``tensorclass.memmap(data, prefix)`` and ``tensorclass.save``: tensordict's function forms
of ``data.memmap`` and ``data.save``.

Their signatures are tensordict's (``data``, an ``Any`` result), not the methods', so they are
functions of their own; each runs the one implementation the method runs
(:func:`~tensorclass.engine.storage.memmap.methods.write_memmap`,
:func:`~tensorclass.engine.storage.save_load.save_to`).
"""

from __future__ import annotations

from typing import Any

from .engine.base import TensorDictBase
from .engine.storage.memmap.methods import write_memmap
from .engine.storage.memmap.tensor import PathLike
from .engine.storage.save_load import save_to

__all__ = ["memmap", "save"]


def memmap(
    data: TensorDictBase,
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
) -> Any:
    """Save ``data`` to the directory ``prefix``; the same as ``data.memmap(prefix, ...)``
    (see :meth:`tensorclass.TensorDict.memmap` for every argument).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, load_memmap, memmap
    >>> with tempfile.TemporaryDirectory() as path:
    ...     saved = memmap(TensorDict(a=torch.zeros(3), batch_size=[3]), path)
    ...     load_memmap(path)["a"].shape
    torch.Size([3])
    """
    del atomic  # every save is atomic
    return write_memmap(
        data,
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
    del atomic  # every save is atomic
    return save_to(
        data,
        prefix,
        copy_existing,
        num_threads,
        return_early,
        share_non_tensor,
        robust_key,
        archive,
        compression,
    )
