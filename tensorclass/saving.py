"""``tensorclass.memmap(data, prefix)``: tensordict's function form of ``data.memmap``."""

from __future__ import annotations

from typing import Any

from .tensordict_core.base import TensorDictBase
from .tensordict_core.memmap.tensor import PathLike

__all__ = ["memmap"]


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
    return data._memmap(
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
    )
