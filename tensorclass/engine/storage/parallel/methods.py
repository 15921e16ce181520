"""The shared-memory and worker-process methods of every tensor class: ``share_memory_``,
``is_shared``, ``map`` and ``map_iter``.

Functions, attached to ``TensorDictBase`` in ``engine/base.py``; ``map`` and ``map_iter``
forward to :mod:`.map` (a process pool over chunks along a dim). The ``share_memory_``
attached is ``storage/consolidate.py``'s, which calls this one for an instance that is not
consolidated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from ...core.self_types import B
from .map import map_chunks
from .map import map_iter as map_iter_chunks

__all__ = ["is_shared", "map", "map_iter", "share_memory_"]


def share_memory_(self: B) -> B:
    """Move every tensor to shared memory, in place (memory-mapped ones already are).

    Worker processes then see the same memory: their writes reach this instance.
    """
    for tensor in self._own_tensors():
        if not tensor.is_shared():  # type: ignore[no-untyped-call]
            tensor.share_memory_()  # type: ignore[no-untyped-call]
    return self


def is_shared(self: B) -> bool:
    """Whether every tensor is in shared memory (or memory-mapped)."""
    tensors = self._own_tensors()
    return bool(tensors) and all(t.is_shared() for t in tensors)  # type: ignore[no-untyped-call]


def map(
    self: B,
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
    stopped. See ``tensorclass.engine.storage.parallel.map``.
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
    self: B,
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
    return map_iter_chunks(
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
