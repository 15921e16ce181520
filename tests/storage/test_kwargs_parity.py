"""tensordict 0.15.3's keywords of memmap, load_memmap, map, the distributed methods,
to_module and from_module: each given its meaning, or refused with a clear error."""

from __future__ import annotations

import errno
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from tensorclass import (
    MemoryMappedTensor,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
    load_memmap,
)
from tensorclass.utils import TensorDictFuture

from .two_ranks import run_two_ranks


class Inner(TensorClass):
    step: torch.Tensor


class Outer(TensorClass):
    obs: torch.Tensor
    inner: Inner


def plain() -> TensorDict:
    return TensorDict(
        {"a": torch.arange(6.0).reshape(3, 2), "n": TensorDict(b=torch.ones(3), batch_size=[3])},
        [3],
    )


def typed() -> Outer:
    return Outer(
        torch.arange(6.0).reshape(3, 2), Inner(torch.arange(3), batch_size=[3]), batch_size=[3]
    )


def stacked() -> Any:
    return lazy_stack([plain(), plain() + 1])


KINDS = {"tensordict": plain, "typed": typed, "lazy_stack": stacked}


def same(a: Any, b: Any) -> bool:
    keys = sorted(a.keys(True, True), key=str)
    if keys != sorted(b.keys(True, True), key=str):
        return False
    return all(torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in keys)


@pytest.fixture(autouse=True)
def _no_worker_left() -> Any:
    yield None
    assert multiprocessing.active_children() == []


# -- memmap ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_copy_existing_guards_files_mapped_elsewhere(kind: str, tmp_path: Path) -> None:
    saved = KINDS[kind]().memmap(tmp_path / "first")
    with pytest.raises(RuntimeError, match="copy_existing=True"):
        saved.memmap(tmp_path / "second", False)  # positional, as in tensordict
    assert not (tmp_path / "second").exists()  # nothing written
    assert same(saved.memmap(tmp_path / "default"), saved)  # by default, copied
    copy = saved.memmap(tmp_path / "second", True)
    assert same(copy, saved)
    files = [t.filename for t in copy._own_tensors()] if kind != "lazy_stack" else []
    assert all(str(tmp_path / "second") in f for f in files)
    # re-saving over its own directory needs no copy permission
    again = saved.memmap(tmp_path / "first", False, existsok=True)
    assert same(again, KINDS[kind]())
    # memmap_like copies nothing: copy_existing has no effect
    assert saved.memmap_like(tmp_path / "third", False).is_memmap()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("threads", [0, 2])
def test_return_early_gives_a_future(kind: str, threads: int, tmp_path: Path) -> None:
    data = KINDS[kind]()
    future = data.memmap(tmp_path / "x", num_threads=threads, return_early=True)
    assert isinstance(future, TensorDictFuture)
    result = future.result(timeout=60)
    assert type(result) is type(data) and result.is_locked and same(result, data)
    like = data.memmap_like(tmp_path / "y", return_early=True).result(timeout=60)
    assert like.is_memmap() and same(like, data.apply(torch.zeros_like))
    inplace = data.memmap_(tmp_path / "z", return_early=True).result(timeout=60)
    assert inplace is data and data.is_locked


def test_return_early_reports_errors_through_the_future(tmp_path: Path) -> None:
    plain().memmap(tmp_path / "x")
    future = plain().memmap(tmp_path / "x", return_early=True, existsok=False)  # exists
    with pytest.raises(FileExistsError):
        future.result(timeout=60)


def test_robust_key_false_accepts_safe_names_only(tmp_path: Path) -> None:
    data = TensorDict({"a": torch.zeros(2), "b_c": torch.ones(2)}, [2])
    data.memmap(tmp_path / "plain", robust_key=False)
    assert sorted(os.listdir(tmp_path / "plain")) == ["a.memmap", "b_c.memmap", "meta.json"]
    odd = TensorDict({"x/y": torch.zeros(2)}, [2])
    with pytest.raises(ValueError, match="'x/y'.*robust_key=True"):
        odd.memmap(tmp_path / "odd", robust_key=False)
    assert not (tmp_path / "odd").exists()
    for robust in (True, None):
        odd.memmap(tmp_path / f"r{robust}", robust_key=robust)
        odd.memmap_like(tmp_path / f"s{robust}", robust_key=robust)
        assert list(TensorDict.load_memmap(tmp_path / f"r{robust}").keys()) == ["x/y"]
        assert os.listdir(tmp_path / f"r{robust}") == os.listdir(tmp_path / f"s{robust}")
    nested = TensorDict({"n": TensorDict({"a b%": torch.zeros(2)}, [2])}, [2])
    with pytest.raises(ValueError, match=r"\('n', 'a b%'\)"):
        nested.memmap(tmp_path / "nested", robust_key=False)


@pytest.mark.parametrize("atomic", [True, False])
def test_atomic_is_accepted_saves_always_are(atomic: bool, tmp_path: Path) -> None:
    first = plain().memmap(tmp_path / "x", atomic=atomic)
    second = (plain() * 2).memmap(tmp_path / "x", existsok=True, atomic=atomic)
    assert same(TensorDict.load_memmap(tmp_path / "x"), second)
    assert torch.equal(first["a"], plain()["a"])  # the old mapping is left intact
    assert [p.name for p in tmp_path.iterdir()] == ["x"]  # no temporary left behind


def test_archives_are_written(tmp_path: Path) -> None:
    from tensorclass import is_memmap_archive

    assert same(plain().memmap(tmp_path / "x", archive=True), plain())
    assert is_memmap_archive(tmp_path / "x")
    assert same(plain().memmap(tmp_path / "x.tdz", compression="deflate"), plain())
    assert is_memmap_archive(tmp_path / "x.tdz")
    like = plain().memmap_like(tmp_path / "y.tdz")
    like["a"].fill_(2.0)  # stored uncompressed: writes reach the archive
    assert (TensorDict.load_memmap(tmp_path / "y.tdz")["a"] == 2).all()
    with pytest.raises(NotImplementedError, match="in place"):
        plain().memmap_(tmp_path / "z.tdz")
    with pytest.raises(ValueError, match="compression='deflate'"):
        plain().memmap(tmp_path / "d", compression="deflate")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x", "x.tdz", "y.tdz"]
    plain().memmap(tmp_path / "w.tdz", archive=False)  # a directory of that name
    assert (tmp_path / "w.tdz" / "meta.json").is_file()


def test_share_non_tensor(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match="share_non_tensor"):
        plain().memmap(tmp_path / "x", share_non_tensor=True)
    assert plain().memmap(tmp_path / "x", share_non_tensor=False).is_memmap()


# -- load_memmap ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_load_device_positional_and_non_blocking(kind: str, tmp_path: Path) -> None:
    data = KINDS[kind]()
    data.memmap(tmp_path / "x")
    cls = type(data) if kind == "typed" else TensorDict
    loaded = cls.load_memmap(tmp_path / "x", "cpu", True)
    assert same(loaded, data)
    top = load_memmap(tmp_path / "x", torch.device("cpu"), non_blocking=True)
    assert type(top) is type(data) and same(top, data)
    assert same(load_memmap(prefix=tmp_path / "x"), data)


def test_subpath_loads_one_level(tmp_path: Path) -> None:
    typed().memmap(tmp_path / "t")
    inner = load_memmap(tmp_path / "t", subpath="inner")
    assert type(inner) is Inner and torch.equal(inner.step, torch.arange(3))
    assert type(Inner.load_memmap(tmp_path / "t", subpath=("inner",))) is Inner
    stacked().memmap(tmp_path / "s")
    member = TensorDict.load_memmap(tmp_path / "s", subpath="1/n")
    assert torch.equal(member["b"], torch.full((3,), 2.0))
    assert same(TensorDict.load_memmap(tmp_path / "s", subpath=("1",)), plain() + 1)
    with pytest.raises(ValueError, match="0/n has no nested level 'c'"):
        TensorDict.load_memmap(tmp_path / "s", subpath="0/n/c")
    with pytest.raises(ValueError, match="no nested level '2'"):
        TensorDict.load_memmap(tmp_path / "s", subpath="2")


def test_mode_copy_on_write_or_shared(tmp_path: Path) -> None:
    plain().memmap(tmp_path / "x")
    private = TensorDict.load_memmap(tmp_path / "x", mode="r")
    private["a"].add_(100)
    assert isinstance(private["a"], MemoryMappedTensor)
    assert torch.equal(TensorDict.load_memmap(tmp_path / "x")["a"], plain()["a"])
    shared = TensorDict.load_memmap(tmp_path / "x", mode="r+")
    shared["a"].add_(1)
    assert torch.equal(TensorDict.load_memmap(tmp_path / "x")["a"], plain()["a"] + 1)
    with pytest.raises(ValueError, match="mode must be one of"):
        TensorDict.load_memmap(tmp_path / "x", mode="w")


def test_mode_default_maps_read_only_files_copy_on_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain().memmap(tmp_path / "x")
    real_open = os.open

    def read_only(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR):  # as if the files were read-only (even for root)
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    loaded = TensorDict.load_memmap(tmp_path / "x")
    loaded["a"].add_(1)  # stays in memory
    monkeypatch.undo()
    assert torch.equal(TensorDict.load_memmap(tmp_path / "x")["a"], plain()["a"])
    writable = TensorDict.load_memmap(tmp_path / "x")
    writable["a"].add_(1)  # a writable file is mapped shared
    assert torch.equal(TensorDict.load_memmap(tmp_path / "x")["a"], plain()["a"] + 1)


def test_load_into_out(tmp_path: Path) -> None:
    plain().memmap(tmp_path / "x")
    nested = TensorDict(c=torch.zeros(3), batch_size=[3])
    out = TensorDict({"a": torch.zeros(3, 2), "n": nested, "gone": torch.ones(3)}, [3])
    returned = TensorDict.load_memmap(tmp_path / "x", out=out)
    assert returned is out and out["n"] is nested  # nested levels are reused
    assert set(out.keys(True, True)) == {"a", ("n", "b")}  # others removed
    assert isinstance(out["a"], MemoryMappedTensor) and same(out, plain())
    typed().memmap(tmp_path / "t")
    target = Outer(
        torch.zeros(3, 2), Inner(torch.zeros(3, dtype=torch.long), batch_size=[3]), batch_size=[3]
    )
    assert load_memmap(tmp_path / "t", out=target) is target and same(target, typed())
    stacked().memmap(tmp_path / "s")
    lazy = lazy_stack([plain() * 0, plain() * 0])
    assert TensorDict.load_memmap(tmp_path / "s", out=lazy) is lazy and same(lazy, stacked())
    with pytest.raises(StructureMismatchError, match="lazy stacks"):
        TensorDict.load_memmap(tmp_path / "x", out=stacked())
    with pytest.raises(ValueError, match="out is on cpu"):
        TensorDict.load_memmap(tmp_path / "x", device="meta", out=plain().to("cpu"))


def test_allow_pickle_and_robust_key(tmp_path: Path) -> None:
    plain().memmap(tmp_path / "x")
    with pytest.raises(ValueError, match="never unpickles"):
        TensorDict.load_memmap(tmp_path / "x", allow_pickle=True)
    with pytest.raises(ValueError, match="never unpickles"):
        load_memmap(tmp_path / "x", allow_pickle=True)
    for value in (None, False):
        assert same(TensorDict.load_memmap(tmp_path / "x", allow_pickle=value), plain())
    for robust in (None, True, False):
        assert same(load_memmap(tmp_path / "x", robust_key=robust), plain())


# -- map ------------------------------------------------------------------------------------


def draw(data: TensorDict) -> TensorDict:
    return TensorDict(
        {
            "torch": torch.rand(data.batch_size[0]),
            "numpy": torch.from_numpy(np.random.rand(data.batch_size[0])),
        },
        data.batch_size,
    )


def pid(data: TensorDict) -> torch.Tensor:
    return torch.full((data.batch_size[0],), os.getpid())


def slow(data: TensorDict) -> TensorDict:
    time.sleep(30)
    return data


def plus_one(data: Any) -> Any:
    return data + 1


def test_map_generator_seeds_the_workers() -> None:
    data = TensorDict(x=torch.zeros(8), batch_size=[8])
    first = data.map(draw, num_workers=1, num_chunks=2, generator=torch.Generator().manual_seed(3))
    second = data.map(draw, num_workers=1, num_chunks=2, generator=torch.Generator().manual_seed(3))
    other = data.map(draw, num_workers=1, num_chunks=2, generator=torch.Generator().manual_seed(4))
    assert same(first, second) and not torch.equal(first["torch"], other["torch"])
    assert not torch.equal(first["numpy"], other["numpy"])
    state = torch.get_rng_state()
    data.map(draw, num_workers=1, generator=torch.Generator())
    assert torch.equal(state, torch.get_rng_state())  # the global RNG was not drawn from


def test_map_max_tasks_per_child_replaces_workers() -> None:
    data = TensorDict(x=torch.zeros(4), batch_size=[4])
    pids = data.map(pid, num_workers=1, chunksize=1, max_tasks_per_child=1)
    assert len(set(pids.tolist())) == 4
    kept = data.map(pid, num_workers=1, chunksize=1)
    assert len(set(kept.tolist())) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_map_index_with_generator(kind: str) -> None:
    data = KINDS[kind]()
    context = mp.get_context("fork")
    with context.Pool(2) as pool:  # a pool given: chunks are indexed and pickled
        for lazily in (True, False):
            result = data.map(
                plus_one, num_workers=2, chunksize=1, pool=pool, index_with_generator=lazily
            )
            assert same(result, data + 1)
    assert same(data.map(plus_one, num_workers=2, index_with_generator=True), data + 1)


def test_map_timeout_surfaces_a_hung_worker() -> None:
    data = TensorDict(x=torch.zeros(4), batch_size=[4])
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="timeout=0.5"):
        data.map(slow, num_workers=2, timeout=0.5)
    assert time.monotonic() - started < 20  # the workers were stopped, not waited for
    with pytest.raises(ValueError, match="timeout must be positive"):
        data.map(plus_one, num_workers=1, timeout=0)
    assert same(data.map(plus_one, num_workers=2, timeout=60), data + 1)


# -- to_module / from_module ----------------------------------------------------------------


def test_to_module_swap_dest() -> None:
    layer = nn.Linear(2, 2)
    weight = layer.weight
    zeros = TensorDict.from_module(layer).detach().clone().zero_()
    dest = TensorDict()
    assert zeros.to_module(layer, swap_dest=dest) is dest
    assert dest["weight"] is weight and layer.weight is zeros["weight"]
    dest.to_module(layer)
    assert layer.weight is weight
    assert zeros.to_module(layer, return_swap=False, swap_dest=dest) is zeros


def test_to_module_preserve_module_state() -> None:
    layer = nn.Linear(2, 2)
    layer.bias.requires_grad_(False)
    weight = layer.weight
    zeros = TensorDict.from_module(layer).detach().clone().zero_()
    with zeros.to_module(layer, preserve_module_state=True):
        assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
        assert isinstance(layer.bias, nn.Parameter) and not layer.bias.requires_grad
        assert layer.weight.data_ptr() == zeros["weight"].data_ptr()  # same storage
        assert "weight" in layer._parameters
    assert layer.weight is weight
    graph = zeros.apply(lambda t: t.clone().requires_grad_())  # a tensor with grad stays itself
    with graph.to_module(layer, preserve_module_state=True):
        assert layer.weight is graph["weight"]
    with zeros.to_module(layer):  # default: loaded as it is
        assert layer.weight is zeros["weight"] and not isinstance(layer.weight, nn.Parameter)


def test_to_module_non_blocking_and_memo() -> None:
    layer = nn.Linear(2, 2)
    ones = TensorDict.from_module(layer).detach().apply(torch.ones_like)
    ones.to_module(layer, inplace=True, non_blocking=True, return_swap=False)
    assert layer.weight.eq(1).all() and isinstance(layer.weight, nn.Parameter)
    with pytest.raises(RuntimeError, match="memo"):
        ones.to_module(layer, memo={})


def test_from_module_filter_empty() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Tanh()))
    assert list(TensorDict.from_module(model).keys()) == ["0"]
    full = TensorDict.from_module(model, filter_empty=False)
    assert list(full.keys()) == ["0", "1", "2"] and list(full["2"].keys()) == ["0"]
    assert full["1"].is_empty()
    full.to_module(model)  # the empty levels fit the module tree
    with pytest.raises(ValueError, match="filter_empty"):
        TensorDict.from_module(model, use_state_dict=True, filter_empty=False)


# -- distributed ----------------------------------------------------------------------------


def test_peer_arguments_are_checked_before_any_message() -> None:
    data = plain()
    with pytest.raises(ValueError, match="exactly one of dst and group_dst"):
        data.send()
    with pytest.raises(ValueError, match="exactly one of dst and group_dst"):
        data.isend(1, group_dst=1)
    with pytest.raises(ValueError, match="group_src=0 needs group"):
        data.recv(group_src=0)
    with pytest.raises(ValueError, match="tag=1 and init_tag=2 differ"):
        data.send(1, tag=1, init_tag=2)


def _episode(value: float) -> Outer:
    return Outer(
        torch.full((3, 2), value),
        Inner(torch.full((3,), int(value)), batch_size=[3]),
        batch_size=[3],
    )


def _scenarios(rank: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    peer = 1 - rank
    pair = dist.new_group([0, 1])
    # consolidated: one packed message, mixed dtypes, a non-contiguous receiver
    mixed = TensorDict(
        {
            "f": torch.full((3, 2), 1.5 + rank),
            "b": torch.tensor([True, False, rank == 0]),
            "i": torch.arange(3, dtype=torch.int16) * (rank + 1),
            "t": torch.zeros(2, 3).t() + rank,
        },
        [3],
    )
    if rank == 0:
        mixed.send(group_dst=1, group=pair, init_tag=7, consolidated=True)
    else:
        out["recv_src"] = mixed.recv(group_src=0, group=pair, init_tag=7, pseudo_rand=True)
        out["mixed"] = {k: mixed[k].tolist() for k in ("f", "b", "i", "t")}
    # a consolidated send to a receiver of another structure: both raise, nothing written
    if rank == 0:
        try:
            _episode(1.0).send(1, consolidated=True)
        except StructureMismatchError as err:
            out["mismatch"] = str(err)
    else:
        other = TensorDict(x=torch.zeros(3), batch_size=[3])
        try:
            other.recv(0)
        except StructureMismatchError as err:
            out["mismatch"] = str(err)
        out["kept"] = other["x"].tolist()
    # isend(return_early=False) waits; irecv(return_premature=False) too; a Transfer is a list
    if rank == 0:
        out["isend_done"] = (
            _episode(4.0).isend(1, return_early=False, consolidated=True).is_completed()
        )
    else:
        target = _episode(0.0)
        transfer = target.irecv(0, return_premature=False)
        out["irecv_done"] = transfer.is_completed()
        out["irecv"] = target.obs.tolist()
    works = _episode(10.0 + rank).isend(peer)
    mine = _episode(0.0)
    for work in mine.irecv(peer):
        work.wait()
    for work in works:
        work.wait()
    out["swap"] = mine.inner.step.tolist()
    # all_reduce: async, in buckets
    shared = TensorDict(
        {
            "a": torch.full((4,), float(rank + 1)),
            "b": torch.full((2, 2), float(rank)),
            "c": torch.ones(3, dtype=torch.long),
        },
        [],
    )
    handle = shared.all_reduce(async_op=True, bucket_bytes=8)
    out["async_type"] = type(handle).__name__
    for work in handle:
        work.wait()
    out["reduced"] = {k: shared[k].tolist() for k in ("a", "b", "c")}
    out["returned"] = shared.all_reduce(bucket_bytes=1) is shared
    # broadcast with the exchange device given
    sent = _episode(float(rank + 5)).broadcast(0, device="cpu")
    out["broadcast"] = sent.obs.tolist()
    return out


@pytest.fixture(scope="module")
def results() -> dict[int, dict[str, Any]]:
    return run_two_ranks(_scenarios)


def test_consolidated_send_with_group_ranks(results: dict[int, dict[str, Any]]) -> None:
    assert results[1]["recv_src"] == 0
    assert results[1]["mixed"] == {
        "f": [[1.5, 1.5]] * 3,
        "b": [True, False, True],
        "i": [0, 1, 2],
        "t": [[0.0, 0.0]] * 3,
    }


def test_consolidated_mismatch_raises_on_both_ranks(results: dict[int, dict[str, Any]]) -> None:
    assert "structures differ" in results[0]["mismatch"]
    assert "structures differ" in results[1]["mismatch"]
    assert results[1]["kept"] == [0.0, 0.0, 0.0]


def test_waiting_variants_and_transfer_lists(results: dict[int, dict[str, Any]]) -> None:
    assert results[0]["isend_done"] is True
    assert results[1]["irecv_done"] is True and results[1]["irecv"] == [[4.0, 4.0]] * 3
    assert results[0]["swap"] == [11, 11, 11] and results[1]["swap"] == [10, 10, 10]


def test_all_reduce_async_and_buckets(results: dict[int, dict[str, Any]]) -> None:
    for rank in (0, 1):
        assert results[rank]["async_type"] == "Transfer"
        assert results[rank]["reduced"] == {"a": [3.0] * 4, "b": [[1.0, 1.0]] * 2, "c": [2, 2, 2]}
        assert results[rank]["returned"] is True
        assert results[rank]["broadcast"] == [[5.0, 5.0]] * 3


# -- top-level functions --------------------------------------------------------------------


def test_top_level_memmap_and_from_module(tmp_path: Path) -> None:
    import tensorclass

    for kind, make in KINDS.items():
        saved = tensorclass.memmap(make(), tmp_path / kind, num_threads=2)
        assert saved.is_locked and same(tensorclass.load_memmap(tmp_path / kind), make())
    future = tensorclass.memmap(plain(), tmp_path / "later", return_early=True)
    assert same(future.result(timeout=60), plain())
    assert same(tensorclass.memmap(plain(), tmp_path / "x.tdz"), plain())
    assert tensorclass.is_memmap_archive(tmp_path / "x.tdz")
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    params = tensorclass.from_module(model, filter_empty=False)
    assert params.is_locked and list(params.keys()) == ["0", "1"]
    assert params["0", "weight"] is model[0].weight
