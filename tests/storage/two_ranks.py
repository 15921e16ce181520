"""Running a scenario function in two gloo processes, for the torch.distributed tests."""

from __future__ import annotations

import functools
import socket
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import torch.distributed as dist
import torch.multiprocessing as mp

Scenarios = Callable[[int], dict[str, Any]]


def _run(scenarios: Scenarios, rank: int, port: int, queue: Any) -> None:
    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=2,
            timeout=timedelta(seconds=60),
        )
        try:
            queue.put((rank, scenarios(rank), None))
        finally:
            dist.destroy_process_group()
    except BaseException:
        queue.put((rank, None, traceback.format_exc()))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def run_two_ranks(scenarios: Scenarios) -> dict[int, dict[str, Any]]:
    """``scenarios(rank)`` in two forked processes of one gloo group; each rank's result.

    A rank that raises fails the calling test with its traceback.
    """
    context = mp.get_context("fork")
    queue = context.Queue()
    port = _free_port()
    target = functools.partial(_run, scenarios)
    workers = [context.Process(target=target, args=(rank, port, queue)) for rank in range(2)]
    for worker in workers:
        worker.start()
    collected: dict[int, dict[str, Any]] = {}
    try:
        for _ in workers:
            rank, found, error = queue.get(timeout=120)
            if error is not None:
                pytest.fail(f"rank {rank} failed:\n{error}")
            collected[rank] = found
    finally:
        for worker in workers:
            worker.join(timeout=30)
            if worker.is_alive():
                worker.kill()
                worker.join()
    return collected
