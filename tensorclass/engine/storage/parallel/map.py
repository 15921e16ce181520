"""``map``: run a function over chunks of a tensor class in a pool of worker processes.

The instance is split along ``dim`` into chunks (slices: views, not copies), ``fn`` runs on
each chunk in a worker, and the results are joined along ``dim`` (``torch.cat``, or
``torch.stack`` when ``chunksize=0`` passes single elements). If ``fn`` returns ``None``
for every chunk, it is expected to write into its chunk in place, and ``map`` returns
``None`` (or ``out``).

How the data reaches the workers:

- memory-mapped tensors travel by file name (the workers map the same files);
- other CPU tensors are moved to shared memory first (as ``torch.multiprocessing`` does when
  it sends a tensor), so writes made by the workers reach the caller's instance;
- with the ``fork`` start method (the default on Linux) the workers inherit the instance and
  ``fn`` when they start: nothing is pickled on the way in, and ``fn`` may be a lambda or a
  function defined in a notebook. With ``spawn``/``forkserver`` (or a ``pool`` you pass),
  chunks and ``fn`` are pickled: ``fn`` must be importable (defined at module level).

An exception raised by ``fn`` in a worker is raised again in the caller, with the worker's
traceback as its cause; a worker that dies (killed, out of memory, a crash in native code)
raises ``concurrent.futures.process.BrokenProcessPool`` instead of leaving the caller
waiting for a result that never comes. Either way the pool is then terminated and joined,
so no worker is left behind.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.pool import Pool
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import torch
import torch.multiprocessing as torch_mp
from torch import Tensor

from ...core.self_types import B
from ...core.state import TensorCore
from ...shape.batch_dims import batch_dim

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import Synchronized

    from tqdm import tqdm

    from ...base import TensorDictBase

__all__ = ["RemoteTraceback", "map", "map_iter"]

#: what a forked worker finds in memory instead of a pickled chunk: (data, fn) by token
#: what a worker runs on each chunk
_Fn = Callable[["TensorDictBase"], object]
_INHERITED: dict[int, tuple[TensorDictBase, _Fn]] = {}
_TOKENS = itertools.count()
_POLL_SECONDS = 0.1  # how often a wait for results checks that the workers are alive


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (the ``__cause__``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\nTraceback in the worker process:\n{self.text}"


def _init_worker(threads: int, seed: int, counter: Synchronized[int]) -> None:
    torch.set_num_threads(threads)
    with counter.get_lock():  # the worker's index in its pool: 1, 2, ... (replacements too)
        counter.value += 1
        index = counter.value
    worker_seed = seed + index
    torch.manual_seed(worker_seed)
    numpy = sys.modules.get("numpy")  # seeded only when the caller uses it already
    if numpy is not None:
        numpy.random.seed(worker_seed % 2**32)


Span = tuple[int, int | None] | Tensor  # (start, stop), (index, None), or shuffled indices


class _Inherited(NamedTuple):
    """A chunk a forked worker indexes itself from the data it inherited."""

    token: int
    dim: int
    span: Span


class _Pickled(NamedTuple):
    """A chunk sent to the worker with the function."""

    fn: _Fn
    chunk: TensorDictBase


def _take(data: B, dim: int, span: Span) -> B:
    taken: B = data[_span_index(dim, span)]
    return taken


def _span_index(dim: int, span: Span) -> tuple[slice | int | Tensor, ...]:
    lead: list[slice | int | Tensor] = [slice(None)] * dim
    if isinstance(span, Tensor):
        return (*lead, span if span.ndim else int(span))
    start, stop = span
    return (*lead, start) if stop is None else (*lead, slice(start, stop))


def _run(task: _Inherited | _Pickled) -> tuple[bool, bytes]:
    """Run one chunk in a worker. The outcome is pickled here, so that a value that cannot
    travel becomes an error in this worker, never a broken pool in the caller.

    Tensors travel by value (plain ``pickle``), not as shared-memory handles
    (``ForkingPickler``): a handle is served by the worker that made it, and a worker may be
    gone (recycled by ``maxtasksperchild``, or dead) before the caller reads its result.
    Memory-mapped tensors still travel by file name."""
    try:
        if isinstance(task, _Inherited):
            data, fn = _INHERITED[task.token]
            result = fn(_take(data, task.dim, task.span))
        else:
            result = task.fn(task.chunk)
        return True, pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:
        text = traceback.format_exc()
        try:
            payload = pickle.dumps(exc, pickle.HIGHEST_PROTOCOL)
            pickle.loads(payload)  # some exceptions pickle but cannot be rebuilt
        except Exception:
            error = RuntimeError(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}")
            payload = pickle.dumps(error, pickle.HIGHEST_PROTOCOL)
        return False, pickle.dumps((payload, text), pickle.HIGHEST_PROTOCOL)


def _spans(
    size: int, num_workers: int, chunksize: int | None, num_chunks: int | None
) -> list[tuple[int, int | None]]:
    if chunksize is not None and num_chunks is not None:
        raise ValueError("map: pass chunksize or num_chunks, not both")
    if chunksize == 0:
        return [(i, None) for i in range(size)]
    if chunksize is None:
        count = num_chunks if num_chunks is not None else num_workers
        if count <= 0:
            raise ValueError(f"map: num_chunks must be positive; got {count}")
        chunksize = max(1, -(-size // count))
    if chunksize < 0:
        raise ValueError(f"map: chunksize must be >= 0; got {chunksize}")
    return [(start, min(start + chunksize, size)) for start in range(0, size, chunksize)]


def _progress(total: int, enabled: bool) -> tqdm[NoReturn] | None:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        raise ImportError("map(pbar=True) needs tqdm: pip install tqdm") from None
    return tqdm(total=total)


def _gather(results: list[Any], dim: int, stacked: bool, out: Any, spans: Sequence[Span]) -> Any:
    if all(result is None for result in results):
        return out
    if any(result is None for result in results):
        raise ValueError("map: fn returned None for some chunks and a value for others")
    if out is not None:
        for span, result in zip(spans, results):
            out[_span_index(dim, span)] = result
        return out
    if stacked:
        return torch.stack(results, dim)
    return torch.cat(results, dim)


def _worker_count(num_workers: int | None) -> int:
    if num_workers is not None:
        if num_workers <= 0:
            raise ValueError(f"map: num_workers must be positive; got {num_workers}")
        return num_workers
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _workers(pool: Pool) -> list[BaseProcess]:
    """The pool's worker processes, to watch for deaths (a ``multiprocessing`` pool only)."""
    processes = getattr(pool, "_pool", None)
    return list(processes) if isinstance(processes, list) else []


def _died(workers: list[BaseProcess], recycles: bool) -> str | None:
    """Which watched worker died, if one did (``recycles``: exit code 0 is a normal exit)."""
    for worker in workers:
        code = worker.exitcode
        if code is not None and (code != 0 or not recycles):
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            return f"worker process {worker.pid} {how}"
    return None


def _results(
    pool: Pool,
    tasks: Iterable[_Inherited | _Pickled],
    count: int,
    ordered: bool,
    timeout: float | None,
) -> Iterator[tuple[bool, bytes]]:
    """The outcomes, in task order if ``ordered``. A worker that dies (killed,
    ``os._exit``, a crash in C) loses its task, which a pool never reports: instead of
    waiting forever, this watches the workers and raises ``BrokenProcessPool``. With a
    ``timeout``, waiting longer than that for the next outcome raises ``TimeoutError``."""
    workers = _workers(pool)
    recycles = getattr(pool, "_maxtasksperchild", None) is not None
    outcomes = (pool.imap if ordered else pool.imap_unordered)(_run, tasks)
    for done in range(count):
        started = time.monotonic()
        while True:
            try:
                outcome: tuple[bool, bytes] = outcomes.next(timeout=_POLL_SECONDS)
                break
            except multiprocessing.TimeoutError:
                death = _died(workers, recycles)
                if death is not None:
                    raise BrokenProcessPool(
                        f"map: {death} while running fn; its chunk is lost (out of memory? "
                        f"a crash in native code? os._exit in fn?)"
                    ) from None
                if timeout is not None and time.monotonic() - started > timeout:
                    raise TimeoutError(
                        f"map: no chunk finished within timeout={timeout} s ({done} of {count} "
                        f"done); is fn stuck? The workers were stopped"
                    ) from None
        yield outcome


def _collect(
    pool: Pool,
    tasks: Iterable[_Inherited | _Pickled],
    count: int,
    bar: tqdm[NoReturn] | None,
    ordered: bool = True,
    timeout: float | None = None,
) -> Iterator[object]:
    for ok, payload in _results(pool, tasks, count, ordered, timeout):
        if not ok:
            error_bytes, text = pickle.loads(payload)
            raise pickle.loads(error_bytes) from RemoteTraceback(text)
        result = pickle.loads(payload)
        if bar is not None:
            bar.update(1)
        yield result


def _check_timeout(timeout: float | None) -> None:
    if timeout is not None and timeout <= 0:
        raise ValueError(f"map: timeout must be positive (seconds); got {timeout}")


def _base_seed(generator: torch.Generator | None) -> int:
    """The workers' base seed: drawn from ``generator``, or from the global torch RNG."""
    return int(torch.empty((), dtype=torch.int64).random_(generator=generator).item())


def _chunks(
    data: TensorDictBase,
    fn: _Fn,
    dim: int,
    spans: Sequence[Span],
    *,
    workers: int,
    pool: Pool | None,
    pbar: bool,
    mp_start_method: str | None,
    worker_threads: int,
    generator: torch.Generator | None,
    max_tasks_per_child: int | None,
    index_with_generator: bool,
    ordered: bool,
    timeout: float | None,
) -> Iterator[object]:
    """The results of ``fn`` on each span of ``data`` along ``dim`` (in span order if
    ``ordered``), computed in worker processes; the pool is closed when this ends."""
    data.share_memory_()
    method = mp_start_method or multiprocessing.get_start_method()
    inherit = pool is None and method == "fork"
    token = next(_TOKENS)
    tasks: Iterable[_Inherited | _Pickled]
    if inherit:
        _INHERITED[token] = (data, fn)
        tasks = [_Inherited(token, dim, span) for span in spans]
    elif index_with_generator:  # each chunk is indexed when the pool takes its task
        tasks = (_Pickled(fn, _take(data, dim, span)) for span in spans)
    else:
        tasks = [_Pickled(fn, _take(data, dim, span)) for span in spans]
    bar = _progress(len(spans), pbar)
    own: Pool | None = None
    try:
        if pool is None:
            context = torch_mp.get_context(method)
            own = pool = context.Pool(
                min(workers, len(spans)),
                initializer=_init_worker,
                initargs=(worker_threads, _base_seed(generator), context.Value("q", 0)),
                maxtasksperchild=max_tasks_per_child,
            )
        yield from _collect(pool, tasks, len(spans), bar, ordered, timeout)
        if own is not None:
            own.close()
    finally:
        if own is not None:
            own.terminate()
            own.join()
        _INHERITED.pop(token, None)
        if bar is not None:
            bar.close()


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
    _check_timeout(timeout)
    d = batch_dim(dim, len(self._batch_size))
    workers = _worker_count(num_workers)
    spans: list[Span] = list(_spans(self._batch_size[d], workers, chunksize, num_chunks))
    if not spans:
        return out
    results = list(
        _chunks(
            self,
            fn,
            d,
            spans,
            workers=workers,
            pool=pool,
            pbar=pbar,
            mp_start_method=mp_start_method,
            worker_threads=worker_threads,
            generator=generator,
            max_tasks_per_child=max_tasks_per_child,
            index_with_generator=index_with_generator,
            ordered=True,
            timeout=timeout,
        )
    )
    result = _gather(results, d, chunksize == 0, out, spans)
    if result is None and not _writes_reach_caller(self):
        warnings.warn(
            "map: fn returned None, but the data is neither memory-mapped nor in shared "
            "memory, so writes made by the workers are lost",
            RuntimeWarning,
            stacklevel=2,  # the caller of map (map was a method calling this function)
        )
    return result


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
    _check_timeout(timeout)
    d = batch_dim(dim, len(self._batch_size))
    if shuffle and not index_with_generator:
        raise RuntimeError("map_iter: shuffle=True needs index_with_generator=True")
    workers = _worker_count(num_workers)
    size = self._batch_size[d]
    spans: list[Span] = list(_spans(size, workers, chunksize, num_chunks))
    if shuffle:
        order = torch.randperm(size, generator=generator)
        spans = [order[_span_index(0, span)] for span in spans]
    if not spans:
        return iter(())
    return _chunks(
        self,
        fn,
        d,
        spans,
        workers=workers,
        pool=pool,
        pbar=pbar,
        mp_start_method=mp_start_method,
        worker_threads=worker_threads,
        generator=generator,
        max_tasks_per_child=max_tasks_per_child,
        index_with_generator=index_with_generator,
        ordered=not shuffle,
        timeout=timeout,
    )


def _writes_reach_caller(data: TensorCore) -> bool:
    tensors: list[Tensor] = data._own_tensors()
    return all(tensor.is_shared() for tensor in tensors)  # type: ignore[no-untyped-call]
