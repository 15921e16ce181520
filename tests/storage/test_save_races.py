"""Saves that race, saves that must survive a power loss, and ``map`` interrupted."""

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import TensorClass, TensorDict, lazy_stack, load_memmap, memmap
from tensorclass.engine.storage.memmap import save as save_module


class Pair(TensorClass):
    x: torch.Tensor
    inner: TensorDict


def make_cases() -> list[Any]:
    td = TensorDict({"a": torch.arange(4.0), "n": {"b": torch.ones(4, 2)}}, [4])
    typed = Pair(x=torch.arange(4), inner=TensorDict({"c": torch.zeros(4)}, [4]), batch_size=[4])
    stack = lazy_stack([TensorDict({"a": torch.full((2,), float(i))}, [2]) for i in range(2)])
    return [td, typed, stack]


CASES = pytest.mark.parametrize("data", make_cases(), ids=["td", "typed", "lazy"])


# -- two saves to the same new path ---------------------------------------------------------


@CASES
def test_the_save_that_loses_the_race_gets_a_clear_error(
    data: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "save"
    winner = TensorDict({"w": torch.ones(3)}, [3])
    real_write = save_module._write

    def write_then_lose(root: str, *args: Any) -> None:
        real_write(root, *args)
        monkeypatch.setattr(save_module, "_write", real_write)
        winner.memmap(target)  # the other process finishes first

    monkeypatch.setattr(save_module, "_write", write_then_lose)
    with pytest.raises(FileExistsError, match="another save") as info:
        data.memmap(target)
    assert str(target) in str(info.value)
    assert list(load_memmap(target).keys()) == ["w"]  # the winner's save, intact
    assert [p.name for p in tmp_path.iterdir()] == ["save"]  # no temporary left behind


def _save_after(barrier: Any, results: Any, target: str, value: float) -> None:
    barrier.wait()
    try:
        TensorDict({"a": torch.full((1000,), value)}, [1000]).memmap(target)
    except FileExistsError as err:
        results.put(f"lost: {err}")
    except BaseException as err:  # anything else (a raw OSError) fails the test
        results.put(f"error: {type(err).__name__}: {err}")
    else:
        results.put("won")


def test_two_processes_saving_to_the_same_new_path(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(3):
        target = str(tmp_path / f"save{attempt}")
        barrier, results = context.Barrier(2), context.Queue()
        procs = [
            context.Process(target=_save_after, args=(barrier, results, target, v))
            for v in (1.0, 2.0)
        ]
        for proc in procs:
            proc.start()
        outcomes = sorted(results.get(timeout=60) for _ in procs)
        for proc in procs:
            proc.join(timeout=60)
        assert outcomes[1] == "won", outcomes
        assert outcomes[0] == "won" or outcomes[0].startswith("lost: "), outcomes
        assert load_memmap(target)["a"].unique().numel() == 1  # one save whole, never a mix
    assert sorted(p.name for p in tmp_path.iterdir()) == ["save0", "save1", "save2"]


# -- fsync -----------------------------------------------------------------------------------


@CASES
def test_fsync_flushes_every_file_and_directory(
    data: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def record(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", record)
    target = tmp_path / "save"
    data.memmap(target, fsync=True)
    temporaries = {p.split("/")[0] for p in (os.path.relpath(q, tmp_path) for q in synced)}
    temporaries.discard(".")
    assert len(temporaries) == 1 and temporaries.pop().startswith(".save.tmp-")
    # what was synced in the temporary directory, named as in the finished save
    inside = {os.path.relpath(q, tmp_path).partition("/")[2] or "." for q in synced}
    saved = {os.path.relpath(p, target) for p in target.rglob("*")} | {"."}
    assert inside == saved  # every file and directory, the save's root too
    assert str(tmp_path) in synced  # the directory holding the rename
    key = next(iter(data.keys(True, True)))
    torch.testing.assert_close(load_memmap(target).get(key), data.get(key))


def test_without_fsync_nothing_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(os, "fsync", calls.append)
    memmap(make_cases()[0], tmp_path / "save")
    assert calls == []
    memmap(make_cases()[0], tmp_path / "durable", fsync=True)
    assert calls


def test_memmap_inplace_takes_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(os, "fsync", calls.append)
    td = make_cases()[0].clone()
    td.memmap_(tmp_path / "save", fsync=True)
    assert calls and td.is_memmap()


# -- map interrupted ---------------------------------------------------------------------------


def _record_and_sleep(folder: str) -> Any:
    def fn(chunk: Any) -> Any:
        Path(folder, str(os.getpid())).touch()
        time.sleep(0.2 if int(chunk["a"][0]) == 0 else 120)
        return chunk

    return fn


def _workers_gone(folder: Path) -> list[int]:
    """The recorded worker pids still running (after a short grace period)."""
    pids = [int(p.name) for p in folder.iterdir()]
    assert pids, "no worker started"
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


@pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork", reason="fn is a closure: needs fork"
)
def test_workers_stop_when_the_parent_is_interrupted(tmp_path: Path) -> None:
    td = TensorDict({"a": torch.arange(8)}, [8])
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            td.map(_record_and_sleep(str(tmp_path)), num_workers=2, chunksize=1)
    finally:
        timer.cancel()
    assert _workers_gone(tmp_path) == []  # terminated and joined: not left sleeping


@pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork", reason="fn is a closure: needs fork"
)
def test_workers_stop_when_the_parents_loop_raises(tmp_path: Path) -> None:
    td = TensorDict({"a": torch.arange(8)}, [8])

    def consume() -> None:
        for _ in td.map_iter(_record_and_sleep(str(tmp_path)), num_workers=2, chunksize=1):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        consume()
    assert _workers_gone(tmp_path) == []
