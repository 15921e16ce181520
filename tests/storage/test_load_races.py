"""Loads that race saves: a load sees one save whole (the old or the new), never changes a
file, and reports a save that keeps being replaced as such (not as damage); two processes
saving to one path each get their own data back.

The deterministic tests pause the reader at a chosen point (between reading the metadata
and mapping the data, or between two data files) and let another process replace the save
there; the last test races processes freely for a bounded time.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    MemmapFormatError,
    MemoryMappedTensor,
    SaveReplacedError,
    TensorDict,
    load_memmap,
)
from tensorclass.engine.storage.memmap import load as load_module
from tensorclass.engine.storage.memmap import save as save_module
from tensorclass.engine.storage.memmap.tensor import FileSizeError, map_checked

FORK = multiprocessing.get_context("fork")


def data(value: float, rows: int) -> TensorDict:
    return TensorDict(
        {"a": torch.full((rows,), value), "n": {"b": torch.full((rows, 2), value)}}, [rows]
    )


def _save(target: str, value: float, rows: int, fsync: bool) -> None:
    data(value, rows).memmap(target, existsok=True, fsync=fsync)


def save_in_another_process(target: Path, value: float, rows: int, fsync: bool = False) -> None:
    """Replace the save at ``target`` from another process (and wait for it)."""
    proc = FORK.Process(target=_save, args=(str(target), value, rows, fsync))
    proc.start()
    proc.join(timeout=60)
    assert proc.exitcode == 0


def values(td: Any) -> set[float]:
    """The distinct values of a loaded save (one value: one save, whole)."""
    found = torch.cat([td["a"].as_tensor().reshape(-1), td["n", "b"].as_tensor().reshape(-1)])
    return set(found.unique().tolist())


def files_of(target: Path) -> dict[str, bytes]:
    return {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()}


def pause_before_mapping(
    monkeypatch: pytest.MonkeyPatch, action: Callable[[int], None], times: int = 1
) -> list[int]:
    """Run ``action(call)`` when a load has read the metadata and is about to map its
    first data file (the first ``times`` loads); returns the calls seen."""
    real = load_module.load_tree
    calls: list[int] = []

    def paused(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(calls))
        if len(calls) <= times:
            action(len(calls) - 1)
        return real(*args, **kwargs)

    monkeypatch.setattr(load_module, "load_tree", paused)
    monkeypatch.setattr("tensorclass.loading.load_tree", paused)
    return calls


# -- a load paused between the metadata and the data -------------------------------------


@pytest.mark.parametrize("fsync", [False, True], ids=["plain", "fsync"])
@pytest.mark.parametrize("new_rows", [4, 40, 400], ids=["shorter", "same-size", "longer"])
def test_a_load_racing_a_replace_returns_one_save_and_changes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_rows: int, fsync: bool
) -> None:
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    after: dict[str, bytes] = {}

    def replace(call: int) -> None:
        save_in_another_process(target, 2.0, new_rows, fsync)
        after.update(files_of(target))

    calls = pause_before_mapping(monkeypatch, replace)
    loaded = load_memmap(target)
    assert values(loaded) == {2.0} and loaded.batch_size == (new_rows,)  # the new save, whole
    assert len(calls) == 2  # read again once the replace was seen
    assert files_of(target) == after  # no file of the new save was extended or written
    monkeypatch.undo()
    assert values(load_memmap(target)) == {2.0}


def test_a_load_that_mapped_the_old_save_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced after every file was mapped, but before the load finished: read again."""
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    real_open = load_module._open
    opened: list[str] = []

    def open_then_replace(filename: str, *args: Any) -> Any:
        out = real_open(filename, *args)
        opened.append(filename)
        if len(opened) == 1:  # between the two data files
            save_in_another_process(target, 2.0, 40)
        return out

    monkeypatch.setattr(load_module, "_open", open_then_replace)
    assert values(load_memmap(target)) == {2.0}
    assert len(opened) == 4  # two files, twice: the first read (a mix) was dropped


def test_a_save_replaced_on_every_attempt_is_reported_as_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "save"
    data(0.0, 40).memmap(target)
    monkeypatch.setattr(load_module, "ATTEMPTS", 3)
    calls = pause_before_mapping(
        monkeypatch, lambda call: save_in_another_process(target, call + 1.0, 4 + call), times=3
    )
    with pytest.raises(SaveReplacedError, match="replaced while it was being read") as info:
        load_memmap(target)
    assert len(calls) == 3
    assert isinstance(info.value, OSError) and not isinstance(info.value, MemmapFormatError)
    assert str(target) in str(info.value)
    monkeypatch.undo()
    assert values(load_memmap(target)) == {3.0}  # the last save is intact


def test_damage_is_reported_as_damage_and_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    os.truncate(target / "a.memmap", 8)
    calls = pause_before_mapping(monkeypatch, lambda call: None, times=0)
    with pytest.raises(MemmapFormatError, match="truncated"):
        load_memmap(target)
    assert calls == []  # refused from the metadata, nothing mapped, no retry
    assert (target / "a.memmap").stat().st_size == 8


def test_a_data_file_changed_after_the_metadata_was_read_is_refused_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a replace (the directory stays): the damage is reported, the file is kept."""
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    calls = pause_before_mapping(monkeypatch, lambda call: os.truncate(target / "a.memmap", 16))
    with pytest.raises(MemmapFormatError, match="holds 16 bytes, the metadata says 160"):
        load_memmap(target)
    assert len(calls) == 1
    assert (target / "a.memmap").stat().st_size == 16  # not extended back


def test_a_data_file_swapped_for_a_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"\0" * 16)

    def swap(call: int) -> None:
        os.unlink(target / "a.memmap")
        os.symlink(outside, target / "a.memmap")

    pause_before_mapping(monkeypatch, swap)
    with pytest.raises(MemmapFormatError, match="a.memmap"):
        load_memmap(target)
    assert outside.stat().st_size == 16


@pytest.mark.parametrize("mode", ["r", None])
def test_read_only_loads_never_open_a_file_for_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str | None
) -> None:
    target = tmp_path / "save"
    data(1.0, 40).memmap(target)
    for path in target.rglob("*.memmap"):
        path.chmod(0o444)
    real_open = os.open
    flags_seen: list[int] = []

    def recording(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(file).endswith(".memmap"):
            flags_seen.append(flags)
            if flags & os.O_RDWR and os.geteuid() == 0:  # root may write anything: refuse
                raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording)
    loaded = load_memmap(target, mode=mode)
    loaded["a"].as_tensor().add_(1)  # copy-on-write: stays in this process
    monkeypatch.undo()
    assert flags_seen and all(not flags & os.O_WRONLY for flags in flags_seen)
    if mode == "r":
        assert all(not flags & os.O_RDWR for flags in flags_seen)
    assert values(load_memmap(target)) == {1.0}


def test_map_checked_never_extends_a_shorter_file(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"\1" * 16)
    for shared in (True, None, False):
        with pytest.raises(FileSizeError):
            map_checked(str(path), shared, 160)
        with pytest.raises(FileSizeError):
            map_checked(str(path), shared, 8)  # exactly, unless at_least
    storage, writable = map_checked(str(path), None, 8, at_least=True)
    assert writable and storage.nbytes() == 8
    assert path.stat().st_size == 16
    with pytest.raises(ValueError, match="holds 16 bytes"):
        MemoryMappedTensor.from_filename(path, torch.float32, (40,))
    assert path.stat().st_size == 16


# -- two processes saving to one path ------------------------------------------------------


def test_each_memmap_returns_its_own_data_when_another_replaces_it_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "save"
    data(0.0, 40).memmap(target)
    real_move = save_module._move_into_place

    def move_then_lose(*args: Any) -> None:
        real_move(*args)
        monkeypatch.setattr(save_module, "_move_into_place", real_move)  # the other's is plain
        save_in_another_process(target, 2.0, 40)  # the other save lands right after ours

    monkeypatch.setattr(save_module, "_move_into_place", move_then_lose)
    mine = data(1.0, 40).memmap(target, existsok=True)
    monkeypatch.undo()
    assert values(mine) == {1.0}  # what this call wrote, not the other process's save
    assert mine["a"].filename == str(target / "a.memmap")
    assert values(load_memmap(target)) == {2.0}


def _memmap_and_report(barrier: Any, results: Any, target: str, value: float) -> None:
    barrier.wait()
    try:
        for _ in range(20):
            got = data(value, 40).memmap(target, existsok=True)
            if values(got) != {value}:
                results.put(f"other data: {values(got)}")
                return
    except BaseException as err:
        results.put(f"error: {type(err).__name__}: {err}")
    else:
        results.put("ok")


def test_two_processes_memmap_to_one_path_each_get_their_own_data(tmp_path: Path) -> None:
    target = str(tmp_path / "save")
    _save(target, 0.0, 40, False)  # replaces (two saves to a new path: see test_save_races)
    barrier, results = FORK.Barrier(2), FORK.Queue()
    procs = [
        FORK.Process(target=_memmap_and_report, args=(barrier, results, target, v))
        for v in (1.0, 2.0)
    ]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert outcomes == ["ok", "ok"]
    assert values(load_memmap(target)) in ({1.0}, {2.0})


# -- a bounded free race ---------------------------------------------------------------------


def _writer(target: str, stop: Any, out: Any, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    saves = 0
    while not stop.is_set():
        value = float(torch.randint(1, 10**6, (1,), generator=generator))
        rows = 4 * int(torch.randint(1, 4, (1,), generator=generator)) ** 3
        _save(target, value, rows, fsync=saves % 4 == 0)
        saves += 1
    out.put(("saves", saves, ""))


def _reader(target: str, stop: Any, out: Any) -> None:
    loads = bad = 0
    problem = ""
    while not stop.is_set():
        try:
            loaded = load_memmap(target)
        except SaveReplacedError:
            loads += 1  # allowed: reported as a replace, nothing returned
            continue
        except Exception as err:
            bad += 1
            problem = f"{type(err).__name__}: {err}"
            continue
        loads += 1
        if len(values(loaded)) != 1:
            bad += 1
            problem = f"a mix of saves: {values(loaded)}"
    out.put(("loads", loads, problem if bad else ""))


def test_loads_racing_replaces_for_a_bounded_time(tmp_path: Path) -> None:
    target = str(tmp_path / "save")
    _save(target, 0.0, 4, False)
    stop, out = FORK.Event(), FORK.Queue()
    procs = [FORK.Process(target=_writer, args=(target, stop, out, seed)) for seed in (1, 2)]
    procs += [FORK.Process(target=_reader, args=(target, stop, out)) for _ in range(2)]
    for proc in procs:
        proc.start()
    time.sleep(3.0)
    stop.set()
    reports = [out.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert [problem for _, _, problem in reports if problem] == []
    assert all(count > 0 for _, count, _ in reports)  # every process saved or loaded
    assert len(values(load_memmap(target))) == 1  # the last save loads, whole
