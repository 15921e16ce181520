"""Storage and scale methods of every tensor class: memmap, shared memory, map, distributed.

This mixin only forwards: each concept lives in its own module (``memmap/``, ``parallel``,
``distributed``). It sits above those modules (they build lazy stacks, which derive from
``TensorOps``); ``TensorDictBase`` joins it with the operations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, Literal, Protocol, overload

import torch
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
from .distributed_rooted import gather_and_stack, reduce, scatter
from .memmap.archive import save_archive
from .memmap.load import register_defined
from .memmap.options import check_save_options, in_background, wants_archive
from .memmap.save import memmap
from .memmap.tensor import MemoryMappedTensor, PathLike
from .parallel import map_chunks, map_iter

__all__ = ["StorageMethods", "TensorPipe"]


class TensorPipe(Protocol):
    """What :meth:`~StorageMethods.asend` and :meth:`~StorageMethods.arecv` need: any object
    with these two coroutine methods (tensordict's UCXX ``TensorDictPipe`` is one)."""

    async def asend(self, data: Any, /) -> Any:
        """Send ``data`` through the pipe."""

    async def arecv(self, data: Any, /, *, device: Any = None) -> Any:
        """Receive into ``data`` if it can, else return a new instance."""


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

    @overload
    def memmap(
        self,
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
    ) -> Self: ...

    @overload
    def memmap(
        self,
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
    ) -> Future[Self]: ...

    def memmap(
        self,
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
    ) -> Self | Future[Self]:
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
        ``docs/storage.md`` and :mod:`tensorclass.tensordict_core.memmap.options`.
        """
        result: Self | Future[Self] = self._memmap(
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
        return result

    @overload
    def memmap_(
        self,
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
    ) -> Self: ...

    @overload
    def memmap_(
        self,
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
    ) -> Future[Self]: ...

    def memmap_(
        self,
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
    ) -> Self | Future[Self]:
        """Like :meth:`memmap` (``fsync`` too), but this instance's tensors are replaced by
        the file-backed ones (and it is locked); returns this instance (or a future of it)."""
        result: Self | Future[Self] = self._memmap(
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
        return result

    @overload
    def memmap_like(
        self,
        prefix: PathLike,
        copy_existing: bool | None = None,
        *,
        existsok: bool = False,
        num_threads: int = 0,
        return_early: Literal[False] = False,
        share_non_tensor: bool = False,
        robust_key: bool | None = None,
        archive: bool | None = None,
    ) -> Self: ...

    @overload
    def memmap_like(
        self,
        prefix: PathLike,
        copy_existing: bool | None = None,
        *,
        existsok: bool = False,
        num_threads: int = 0,
        return_early: Literal[True],
        share_non_tensor: bool = False,
        robust_key: bool | None = None,
        archive: bool | None = None,
    ) -> Future[Self]: ...

    def memmap_like(
        self,
        prefix: PathLike,
        copy_existing: bool | None = None,
        *,
        existsok: bool = False,
        num_threads: int = 0,
        return_early: bool = False,
        share_non_tensor: bool = False,
        robust_key: bool | None = None,
        archive: bool | None = None,
    ) -> Self | Future[Self]:
        """Like :meth:`memmap`, without writing the data: new files of the right sizes,
        reading as zeros. An expanded template is never materialised in memory.
        ``copy_existing`` has no effect (no value is copied); the other keywords are
        those of :meth:`memmap`."""
        result: Self | Future[Self] = self._memmap(
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
        return result

    def _memmap(
        self,
        prefix: PathLike,
        copy_existing: bool | None,
        num_threads: int,
        return_early: bool,
        share_non_tensor: bool,
        existsok: bool,
        robust_key: bool | None,
        archive: bool | None,
        compression: Any,
        *,
        like: bool,
        inplace: bool,
        fsync: bool = False,
    ) -> Any:
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
            return memmap(
                self,
                prefix,
                existsok=existsok,
                num_threads=num_threads,
                like=like,
                inplace=inplace,
                fsync=fsync,
            )

        return in_background(run) if return_early else run()

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
        out: Any = None,
        chunksize: int | None = None,
        num_chunks: int | None = None,
        pool: Any = None,
        generator: torch.Generator | None = None,
        max_tasks_per_child: int | None = None,
        worker_threads: int = 1,
        index_with_generator: bool = False,
        pbar: bool = False,
        mp_start_method: str | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Run ``fn`` on chunks along ``dim`` in worker processes and join the results.

        ``chunksize`` elements per chunk (``0``: one element at a time, results stacked) or
        ``num_chunks`` chunks (default: one per worker); ``num_workers`` defaults to the CPUs
        available. ``fn`` returns a tensor class, a tensor, or ``None`` after writing into
        its chunk in place (then ``map`` returns ``out``). ``pbar=True`` shows a tqdm bar.

        Worker ``i`` seeds torch (and NumPy, if imported) with a base seed plus ``i``; the
        base seed is drawn from ``generator``, default the global torch RNG.
        ``max_tasks_per_child`` replaces a worker after that many chunks;
        ``index_with_generator=True`` indexes each chunk when a worker takes it rather than
        all up front (with ``fork``, workers always index their own chunk). A ``pool``
        you pass ignores ``num_workers``, ``generator``, ``max_tasks_per_child``,
        ``worker_threads`` and ``mp_start_method``.

        Worker exceptions are raised here with the worker's traceback; a worker that dies
        raises ``BrokenProcessPool``; with ``timeout`` (seconds), waiting longer than that
        for the next chunk raises ``TimeoutError`` (a hung ``fn``), and the workers are
        stopped. See ``tensorclass.tensordict_core.parallel``.
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
            generator=generator,
            max_tasks_per_child=max_tasks_per_child,
            worker_threads=worker_threads,
            index_with_generator=index_with_generator,
            pbar=pbar,
            mp_start_method=mp_start_method,
            timeout=timeout,
        )

    def map_iter(
        self,
        fn: Callable[[Any], Any],
        dim: int = 0,
        num_workers: int | None = None,
        *,
        shuffle: bool = False,
        chunksize: int | None = None,
        num_chunks: int | None = None,
        pool: Any = None,
        generator: torch.Generator | None = None,
        max_tasks_per_child: int | None = None,
        worker_threads: int = 1,
        index_with_generator: bool = True,
        pbar: bool = False,
        mp_start_method: str | None = None,
        timeout: float | None = None,
    ) -> Iterator[Any]:
        """Like :meth:`map`, but yield ``fn``'s result for each chunk as soon as it is ready
        (a data loader over this instance), in chunk order.

        ``shuffle=True`` fills the chunks from a random permutation along ``dim`` (drawn
        from ``generator``) and yields them in the order the workers finish; it needs
        ``index_with_generator=True`` (the default here). Results are not joined, so ``fn``
        may return anything picklable. The workers run while the iterator is consumed;
        closing it early (``break``, ``close()``) stops them.

        >>> import torch
        >>> from tensorclass import TensorDict
        >>> data = TensorDict(x=torch.arange(6.0), batch_size=[6])
        >>> [chunk["x"].tolist() for chunk in data.map_iter(lambda td: td * 10, num_workers=2, chunksize=2)]
        [[0.0, 10.0], [20.0, 30.0], [40.0, 50.0]]
        """
        return map_iter(
            self,
            fn,
            dim,
            num_workers,
            shuffle=shuffle,
            chunksize=chunksize,
            num_chunks=num_chunks,
            pool=pool,
            generator=generator,
            max_tasks_per_child=max_tasks_per_child,
            worker_threads=worker_threads,
            index_with_generator=index_with_generator,
            pbar=pbar,
            mp_start_method=mp_start_method,
            timeout=timeout,
        )

    # -- torch.distributed -----------------------------------------------------------------

    def send(
        self,
        dst: int | None = None,
        *,
        group: Any = None,
        tag: int = 0,
        group_dst: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ) -> None:
        """Send to rank ``dst`` (which calls :meth:`recv` on the same structure).

        ``group_dst``: the receiver's rank in ``group`` instead of ``dst``. ``init_tag``: the
        tag (``tag``'s tensordict name); ``pseudo_rand`` is accepted and has no effect (one
        tag serves a whole transfer, in order). ``consolidated=True`` packs every tensor
        into one message. See :mod:`tensorclass.tensordict_core.distributed`.
        """
        send(
            self,
            dst,
            group=group,
            tag=tag,
            group_dst=group_dst,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            consolidated=consolidated,
        )

    def recv(
        self,
        src: int | None = None,
        *,
        group: Any = None,
        tag: int = 0,
        group_src: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ) -> int:
        """Receive in place what rank ``src`` sends; returns ``src`` (its global rank).
        Keywords as in :meth:`send` (``consolidated``: the sender's choice is followed)."""
        return recv(
            self,
            src,
            group=group,
            tag=tag,
            group_src=group_src,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            consolidated=consolidated,
        )

    def isend(
        self,
        dst: int | None = None,
        *,
        group: Any = None,
        tag: int = 0,
        group_dst: int | None = None,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        return_early: bool = True,
        consolidated: bool = False,
    ) -> Transfer:
        """Start sending to ``dst`` without waiting for it; ``wait()`` on the result finishes
        (``return_early=False`` waits before returning). Keywords as in :meth:`send`."""
        return isend(
            self,
            dst,
            group=group,
            tag=tag,
            group_dst=group_dst,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            return_early=return_early,
            consolidated=consolidated,
        )

    def irecv(
        self,
        src: int | None = None,
        *,
        group: Any = None,
        tag: int = 0,
        group_src: int | None = None,
        return_premature: bool = True,
        init_tag: int = 0,
        pseudo_rand: bool = False,
        consolidated: bool = False,
    ) -> Transfer:
        """Start receiving from ``src`` in place; ``wait()`` on the result finishes
        (``return_premature=False`` waits before returning). Keywords as in :meth:`recv`."""
        return irecv(
            self,
            src,
            group=group,
            tag=tag,
            group_src=group_src,
            return_premature=return_premature,
            init_tag=init_tag,
            pseudo_rand=pseudo_rand,
            consolidated=consolidated,
        )

    def broadcast(
        self, src: int, *, group: Any = None, device: torch.device | str | None = None
    ) -> Self:
        """Overwrite this instance on every rank with rank ``src``'s values (in place);
        ``device``: where the exchange buffers live (default: CUDA for NCCL, else CPU)."""
        return broadcast(self, src, group=group, device=device)  # type: ignore[return-value]

    @overload
    def all_reduce(
        self,
        op: Any = None,
        *,
        group: Any = None,
        async_op: Literal[False] = False,
        bucket_bytes: int | None = None,
    ) -> Self: ...

    @overload
    def all_reduce(
        self,
        op: Any = None,
        *,
        group: Any = None,
        async_op: Literal[True],
        bucket_bytes: int | None = None,
    ) -> Transfer: ...

    def all_reduce(
        self,
        op: Any = None,
        *,
        group: Any = None,
        async_op: bool = False,
        bucket_bytes: int | None = None,
    ) -> Self | Transfer:
        """Reduce every tensor across ranks in place (default ``ReduceOp.SUM``).

        Tensors travel as one flat buffer per dtype, of at most ``bucket_bytes`` bytes if
        given. ``async_op=True`` returns a :class:`~tensorclass.tensordict_core.distributed.Transfer`
        at once; ``wait()`` on it writes the results into the leaves.
        """
        return all_reduce(self, op, group=group, async_op=async_op, bucket_bytes=bucket_bytes)  # type: ignore[no-any-return]

    def all_gather(self, *, group: Any = None) -> list[Self]:
        """Every rank's instance, in rank order."""
        return all_gather(self, group=group)

    def reduce(
        self,
        dst: int,
        op: Any = None,
        async_op: bool = False,
        return_premature: bool = False,
        group: Any = None,
        *,
        bucket_bytes: int | None = None,
    ) -> Transfer | None:
        """Reduce every tensor over the ranks into rank ``dst``'s instance, in place
        (default ``ReduceOp.SUM``); the other ranks keep their values.

        Every rank calls it with the same structure (checked first). Tensors travel as one
        flat buffer per dtype, of at most ``bucket_bytes`` bytes if given. With
        ``async_op=True, return_premature=True`` the handle returns at once (``wait()``
        on it writes the result); otherwise this waits and returns ``None``.
        """
        return reduce(
            self,
            dst,
            op,
            async_op,
            return_premature,
            group,
            bucket_bytes=bucket_bytes,
        )

    def gather_and_stack(self, dst: int, group: Any = None) -> Self | None:
        """On rank ``dst``, write the other ranks' instances, stacked in rank order, into this
        instance (its first batch dim is ``world_size - 1``) and return it; the other ranks
        return ``None``. Structures travel as JSON, never pickled; the senders' classes
        must be imported on ``dst``. See :mod:`tensorclass.tensordict_core.distributed_rooted`.
        """
        return gather_and_stack(self, dst, group)  # type: ignore[return-value]

    def scatter(
        self,
        src: int,
        tensordicts: list[Any] | None = None,
        *,
        group: Any = None,
        device: torch.device | str | None = None,
    ) -> Any:
        """Rank ``src`` passes ``tensordicts`` (one per rank); every rank returns a new
        instance holding its own. Receivers need no template (structures travel as JSON,
        never pickled; their classes must be imported); this instance is not used.
        ``device``: where the received instance goes (default: the CPU with gloo)."""
        return scatter(self, src, tensordicts, group=group, device=device)

    async def asend(self, dst: TensorPipe) -> None:
        """Send through a pipe, asynchronously: awaits ``dst.asend(self)``. Any object
        with coroutine methods ``asend(data)`` and ``arecv(data, *, device=None)`` is a
        pipe (tensorclass ships none; tensordict's UCXX ``TensorDictPipe`` fits).

        >>> import asyncio, torch
        >>> from tensorclass import TensorDict
        >>> class Pipe:
        ...     async def asend(self, data): self.data = data.clone()
        ...     async def arecv(self, data, *, device=None): return data.update_(self.data)
        >>> pipe = Pipe()
        >>> asyncio.run(TensorDict(a=torch.ones(2), batch_size=[2]).asend(pipe))
        >>> asyncio.run(TensorDict(a=torch.zeros(2), batch_size=[2]).arecv(pipe))["a"]
        tensor([1., 1.])
        """
        await dst.asend(self)

    async def arecv(self, src: TensorPipe, *, device: torch.device | str | None = None) -> Any:
        """Receive from a pipe, asynchronously: returns ``await src.arecv(self,
        device=device)``, this instance written in place or another one (use the return
        value). See :meth:`asend` for what a pipe is."""
        return await src.arecv(self, device=device)
