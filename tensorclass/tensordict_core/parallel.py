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
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import torch
import torch.multiprocessing as torch_mp
from torch import Tensor

from ._core import TensorCore
from .shape import batch_dim

__all__ = ["RemoteTraceback", "map_chunks"]

_INHERITED: dict[int, tuple[Any, Callable[..., Any]]] = {}
_TOKENS = itertools.count()
_POLL_SECONDS = 0.1  # how often a wait for results checks that the workers are alive


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (the ``__cause__``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\nTraceback in the worker process:\n{self.text}"


def _init_worker(threads: int, seed: int) -> None:
    torch.set_num_threads(threads)
    identity = multiprocessing.current_process()._identity
    torch.manual_seed(seed + (identity[0] if identity else 0))


def _take(data: Any, dim: int, span: tuple[int, int | None]) -> Any:
    return data[_span_index(dim, span)]


def _span_index(dim: int, span: tuple[int, int | None]) -> tuple[Any, ...]:
    start, stop = span
    lead = [slice(None)] * dim
    return (*lead, start) if stop is None else (*lead, slice(start, stop))


def _run(task: tuple[Any, ...]) -> tuple[bool, bytes]:
    """Run one chunk in a worker. The outcome is pickled here, so that a value that cannot
    travel becomes an error in this worker, never a broken pool in the caller.

    Tensors travel by value (plain ``pickle``), not as shared-memory handles
    (``ForkingPickler``): a handle is served by the worker that made it, and a worker may be
    gone (recycled by ``maxtasksperchild``, or dead) before the caller reads its result.
    Memory-mapped tensors still travel by file name."""
    try:
        if task[0] == "inherited":
            _, token, dim, span = task
            data, fn = _INHERITED[token]
            result = fn(_take(data, dim, span))
        else:
            _, fn, chunk = task
            result = fn(chunk)
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


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        raise ImportError("map(pbar=True) needs tqdm: pip install tqdm") from None
    return tqdm(total=total)


def _gather(
    results: list[Any], dim: int, stacked: bool, out: Any, spans: list[tuple[int, int | None]]
) -> Any:
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


def _workers(pool: Any) -> list[Any]:
    """The pool's worker processes, to watch for deaths (a ``multiprocessing`` pool only)."""
    processes = getattr(pool, "_pool", None)
    return list(processes) if isinstance(processes, list) else []


def _died(workers: list[Any], recycles: bool) -> str | None:
    """Which watched worker died, if one did (``recycles``: exit code 0 is a normal exit)."""
    for worker in workers:
        code = worker.exitcode
        if code is not None and (code != 0 or not recycles):
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            return f"worker process {worker.pid} {how}"
    return None


def _results(pool: Any, tasks: list[tuple[Any, ...]]) -> Iterator[tuple[bool, bytes]]:
    """The outcomes in task order. A worker that dies (killed, ``os._exit``, a crash in C)
    loses its task, which a pool never reports: instead of waiting forever, this watches
    the workers and raises ``BrokenProcessPool``."""
    workers = _workers(pool)
    recycles = getattr(pool, "_maxtasksperchild", None) is not None
    outcomes = pool.imap(_run, tasks)
    for _ in tasks:
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
        yield outcome


def _collect(pool: Any, tasks: list[tuple[Any, ...]], bar: Any) -> Iterator[Any]:
    for ok, payload in _results(pool, tasks):
        if not ok:
            error_bytes, text = pickle.loads(payload)
            raise pickle.loads(error_bytes) from RemoteTraceback(text)
        result = pickle.loads(payload)
        if bar is not None:
            bar.update(1)
        yield result


def map_chunks(
    data: TensorCore,
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
    """Run ``fn`` on chunks of ``data`` in worker processes (see the module documentation)."""
    d = batch_dim(dim, len(data._batch_size))
    workers = _worker_count(num_workers)
    spans = _spans(data._batch_size[d], workers, chunksize, num_chunks)
    if not spans:
        return out
    data.share_memory_()  # type: ignore[attr-defined]
    method = mp_start_method or multiprocessing.get_start_method()
    inherit = pool is None and method == "fork"
    token = next(_TOKENS)
    tasks: Iterable[tuple[Any, ...]]
    if inherit:
        _INHERITED[token] = (data, fn)
        tasks = [("inherited", token, d, span) for span in spans]
    else:
        tasks = [("pickled", fn, _take(data, d, span)) for span in spans]
    bar = _progress(len(spans), pbar)
    try:
        if pool is not None:
            results = list(_collect(pool, list(tasks), bar))
        else:
            seed = int(torch.empty((), dtype=torch.int64).random_().item())
            context = torch_mp.get_context(method)
            own = context.Pool(
                min(workers, len(spans)), initializer=_init_worker, initargs=(worker_threads, seed)
            )
            try:
                results = list(_collect(own, list(tasks), bar))
                own.close()
            finally:
                own.terminate()
                own.join()
    finally:
        _INHERITED.pop(token, None)
        if bar is not None:
            bar.close()
    result = _gather(results, d, chunksize == 0, out, spans)
    if result is None and not _writes_reach_caller(data):
        warnings.warn(
            "map: fn returned None, but the data is neither memory-mapped nor in shared "
            "memory, so writes made by the workers are lost",
            RuntimeWarning,
            stacklevel=3,
        )
    return result


def _writes_reach_caller(data: TensorCore) -> bool:
    tensors: list[Tensor] = data._own_tensors()  # type: ignore[attr-defined]
    return all(tensor.is_shared() for tensor in tensors)  # type: ignore[no-untyped-call]
