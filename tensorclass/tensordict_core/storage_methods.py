"""Storage and scale methods of every tensor class: memmap, shared memory, map, distributed.

This mixin only forwards: each concept lives in its own module (``memmap/``, ``parallel``,
``distributed``). It sits above those modules (they build lazy stacks, which derive from
``TensorOps``); ``TensorDictBase`` joins it with the operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import Tensor
from typing_extensions import Self

from ._core import TensorCore
from .distributed import (
    Transfer,
    all_gather,
    all_reduce,
    broadcast,
    irecv,
    isend,
    recv,
    send,
)
from .memmap.load import register_defined
from .memmap.save import memmap
from .memmap.tensor import MemoryMappedTensor, PathLike
from .parallel import map_chunks

__all__ = ["StorageMethods"]


class StorageMethods(TensorCore):
    """``memmap``, ``share_memory_``, ``map``, ``send``/``recv`` and collectives."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_defined(cls)  # loading finds saved classes among these (see memmap/load.py)

    def _own_tensors(self) -> list[Tensor]:
        """The tensors stored in this instance (at every depth), not copies of them."""
        out: list[Tensor] = []
        for leaf in self._data.values():
            if isinstance(leaf, Tensor):
                out.append(leaf)
            elif isinstance(leaf, TensorCore):
                out.extend(StorageMethods._own_tensors(leaf))  # type: ignore[arg-type]
        return out

    # -- memory-mapped storage -------------------------------------------------------------

    def memmap(self, prefix: PathLike, *, num_threads: int = 0, existsok: bool = False) -> Self:
        """Save to the directory ``prefix`` and return a copy backed by the files (locked).

        One raw file per tensor and a ``meta.json`` per nested level; the save is atomic
        (written aside, then renamed into place). Replacing an existing save needs
        ``existsok=True``. ``num_threads`` writes files in parallel. See ``docs/storage.md``.
        """
        return memmap(self, prefix, existsok=existsok, num_threads=num_threads)  # type: ignore[return-value]

    def memmap_(self, prefix: PathLike, *, num_threads: int = 0, existsok: bool = False) -> Self:
        """Like :meth:`memmap`, but this instance's tensors are replaced by the file-backed
        ones (and it is locked); returns this instance."""
        return memmap(self, prefix, existsok=existsok, num_threads=num_threads, inplace=True)  # type: ignore[return-value]

    def memmap_like(
        self, prefix: PathLike, *, num_threads: int = 0, existsok: bool = False
    ) -> Self:
        """Like :meth:`memmap`, without writing the data: new files of the right sizes,
        reading as zeros. An expanded template is never materialised in memory."""
        return memmap(self, prefix, existsok=existsok, num_threads=num_threads, like=True)  # type: ignore[return-value]

    def is_memmap(self) -> bool:
        """Whether every tensor (at every depth) is a :class:`MemoryMappedTensor`."""
        tensors = self._own_tensors()
        return bool(tensors) and all(isinstance(t, MemoryMappedTensor) for t in tensors)

    # -- shared memory and worker processes ------------------------------------------------

    def share_memory_(self) -> Self:
        """Move every tensor to shared memory, in place (memory-mapped ones already are).

        Worker processes then see the same memory: their writes reach this instance.
        """
        for tensor in self._own_tensors():
            if not tensor.is_shared():  # type: ignore[no-untyped-call]
                tensor.share_memory_()  # type: ignore[no-untyped-call]
        return self

    def is_shared(self) -> bool:
        """Whether every tensor is in shared memory (or memory-mapped)."""
        tensors = self._own_tensors()
        return bool(tensors) and all(t.is_shared() for t in tensors)  # type: ignore[no-untyped-call]

    def map(
        self,
        fn: Callable[[Any], Any],
        dim: int = 0,
        num_workers: int | None = None,
        *,
        chunksize: int | None = None,
        num_chunks: int | None = None,
        out: Any = None,
        pool: Any = None,
        pbar: bool = False,
        mp_start_method: str | None = None,
        worker_threads: int = 1,
    ) -> Any:
        """Run ``fn`` on chunks along ``dim`` in worker processes and join the results.

        ``chunksize`` elements per chunk (``0``: one element at a time, results stacked) or
        ``num_chunks`` chunks (default: one per worker); ``num_workers`` defaults to the CPUs
        available. ``fn`` returns a tensor class, a tensor, or ``None`` after writing into
        its chunk in place (then ``map`` returns ``out``). ``pbar=True`` shows a tqdm bar.
        Worker exceptions are raised here with the worker's traceback; a worker that dies
        raises ``BrokenProcessPool``. See ``tensorclass.tensordict_core.parallel``.
        """
        return map_chunks(
            self,
            fn,
            dim,
            num_workers,
            chunksize=chunksize,
            num_chunks=num_chunks,
            out=out,
            pool=pool,
            pbar=pbar,
            mp_start_method=mp_start_method,
            worker_threads=worker_threads,
        )

    # -- torch.distributed -----------------------------------------------------------------

    def send(self, dst: int, *, group: Any = None, tag: int = 0) -> None:
        """Send to rank ``dst`` (which calls :meth:`recv` on the same structure)."""
        send(self, dst, group=group, tag=tag)

    def recv(self, src: int, *, group: Any = None, tag: int = 0) -> int:
        """Receive in place what rank ``src`` sends; returns ``src``."""
        return recv(self, src, group=group, tag=tag)

    def isend(self, dst: int, *, group: Any = None, tag: int = 0) -> Transfer:
        """Start sending to ``dst`` without waiting for it; ``wait()`` on the result finishes."""
        return isend(self, dst, group=group, tag=tag)

    def irecv(self, src: int, *, group: Any = None, tag: int = 0) -> Transfer:
        """Start receiving from ``src`` in place; ``wait()`` on the result finishes."""
        return irecv(self, src, group=group, tag=tag)

    def broadcast(self, src: int, *, group: Any = None) -> Self:
        """Overwrite this instance on every rank with rank ``src``'s values."""
        return broadcast(self, src, group=group)  # type: ignore[return-value]

    def all_reduce(self, op: Any = None, *, group: Any = None) -> Self:
        """Reduce every tensor across ranks in place (default ``ReduceOp.SUM``)."""
        return all_reduce(self, op, group=group)  # type: ignore[return-value]

    def all_gather(self, *, group: Any = None) -> list[Self]:
        """Every rank's instance, in rank order."""
        return all_gather(self, group=group)
