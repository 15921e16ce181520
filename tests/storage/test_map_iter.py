"""map_iter: the results of map, chunk by chunk, as the workers produce them."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

import pytest
import torch
import torch.multiprocessing as mp

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.engine.storage.parallel.map import RemoteTraceback


class Inner(TensorClass):
    step: torch.Tensor


class Sample(TensorClass):
    x: torch.Tensor
    inner: Inner


def plain(n: int = 10) -> TensorDict:
    return TensorDict(
        {"x": torch.arange(float(n)), "n": TensorDict(y=torch.arange(n), batch_size=[n])}, [n]
    )


def typed(n: int = 10) -> Sample:
    return Sample(torch.arange(float(n)), Inner(torch.arange(n), batch_size=[n]), batch_size=[n])


def stacked(n: int = 10) -> Any:
    return lazy_stack([plain(n)[i] for i in range(n)])


KINDS = {"tensordict": plain, "typed": typed, "lazy_stack": stacked}


def times_ten(data: Any) -> Any:
    return data * 10


def first_x(data: Any) -> float:
    return float(data["x"].reshape(-1)[0])


def fails_on_five(data: Any) -> Any:
    if (data["x"] == 5).any():
        raise ValueError("five")
    return data


def slow(data: Any) -> Any:
    time.sleep(30)
    return data


@pytest.fixture(autouse=True)
def _no_worker_left() -> Any:
    yield None
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("kind", KINDS)
def test_yields_each_chunk_in_order(kind: str) -> None:
    data = KINDS[kind]()
    chunks = list(data.map_iter(times_ten, num_workers=2, chunksize=3))
    assert [c.batch_size[0] for c in chunks] == [3, 3, 3, 1]
    assert all(type(c) is type(data * 10) for c in chunks)
    expected = data * 10
    for start, chunk in zip(range(0, 10, 3), chunks):
        assert torch.equal(chunk["x"], expected["x"][start : start + 3])
        assert torch.equal(
            chunk["n", "y"] if kind != "typed" else chunk.inner.step,
            (expected["n", "y"] if kind != "typed" else expected.inner.step)[start : start + 3],
        )
    assert torch.equal(torch.cat(chunks)["x"], data.map(times_ten, num_workers=2, chunksize=3)["x"])


def test_single_elements_and_any_result() -> None:
    data = plain(5)
    assert list(data.map_iter(first_x, num_workers=2, chunksize=0)) == [0.0, 1.0, 2.0, 3.0, 4.0]
    elements = list(data.map_iter(times_ten, num_workers=2, chunksize=0))
    assert all(e.batch_size == () for e in elements)
    assert [float(e["x"]) for e in elements] == [0.0, 10.0, 20.0, 30.0, 40.0]
    by_default = list(data.map_iter(first_x, num_workers=2))  # one chunk per worker
    assert by_default == [0.0, 3.0]
    assert list(data.map_iter(first_x, 0, 2, num_chunks=5)) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_along_another_dim() -> None:
    data = TensorDict(x=torch.arange(12.0).reshape(2, 6), batch_size=[2, 6])
    chunks = list(data.map_iter(times_ten, dim=1, num_workers=2, chunksize=2))
    assert [tuple(c.batch_size) for c in chunks] == [(2, 2)] * 3
    assert torch.equal(torch.cat(chunks, 1)["x"], data["x"] * 10)


@pytest.mark.parametrize("kind", KINDS)
def test_shuffle_covers_every_element_once(kind: str) -> None:
    data = KINDS[kind]()
    seen = [
        value
        for chunk in data.map_iter(
            times_ten,
            num_workers=2,
            chunksize=3,
            shuffle=True,
            generator=torch.Generator().manual_seed(1),
        )
        for value in chunk["x"].tolist()
    ]
    assert sorted(seen) == [10.0 * i for i in range(10)]
    orders = {
        tuple(
            v
            for c in data.map_iter(
                times_ten,
                num_workers=1,
                chunksize=10,
                shuffle=True,
                generator=torch.Generator().manual_seed(s),
            )
            for v in c["x"].tolist()
        )
        for s in range(3)
    }
    assert len(orders) > 1  # the permutation follows the generator
    again = [
        c["x"].tolist()
        for c in data.map_iter(
            times_ten,
            num_workers=1,
            chunksize=10,
            shuffle=True,
            generator=torch.Generator().manual_seed(0),
        )
    ]
    assert again == [
        c["x"].tolist()
        for c in data.map_iter(
            times_ten,
            num_workers=1,
            chunksize=10,
            shuffle=True,
            generator=torch.Generator().manual_seed(0),
        )
    ]


def test_shuffle_needs_index_with_generator() -> None:
    with pytest.raises(RuntimeError, match="index_with_generator=True"):
        plain().map_iter(times_ten, shuffle=True, index_with_generator=False)


def test_stopping_early_stops_the_workers() -> None:
    iterator = plain(100).map_iter(times_ten, num_workers=2, chunksize=1)
    assert float(next(iterator)["x"]) == 0.0
    iterator.close()
    assert multiprocessing.active_children() == []
    for _ in plain(100).map_iter(times_ten, num_workers=2, chunksize=1):
        break  # the abandoned iterator is closed when it is dropped
    assert multiprocessing.active_children() == []


def test_errors_and_timeouts_surface() -> None:
    results = plain().map_iter(fails_on_five, num_workers=2, chunksize=1)
    assert [float(next(results)["x"]) for _ in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="five") as info:
        next(results)
    assert isinstance(info.value.__cause__, RemoteTraceback)
    with pytest.raises(TimeoutError, match="timeout=0.5"):
        list(plain().map_iter(slow, num_workers=2, timeout=0.5))


def test_with_a_pool_spawned_workers_and_recycling() -> None:
    data = plain()
    with mp.get_context("fork").Pool(2) as pool:
        for lazily in (True, False):
            chunks = list(
                data.map_iter(times_ten, chunksize=4, pool=pool, index_with_generator=lazily)
            )
            assert torch.equal(torch.cat(chunks)["x"], data["x"] * 10)
    chunks = list(data.map_iter(times_ten, num_workers=1, chunksize=2, max_tasks_per_child=1))
    assert torch.equal(torch.cat(chunks)["x"], data["x"] * 10)
    assert list(TensorDict(x=torch.zeros(0), batch_size=[0]).map_iter(times_ten)) == []


def test_memory_mapped_data(tmp_path: Any) -> None:
    data = plain().memmap(tmp_path / "data")
    chunks = list(data.map_iter(times_ten, num_workers=2, chunksize=5))
    assert torch.equal(torch.cat(chunks)["n", "y"], torch.arange(10) * 10)


def test_arguments_are_checked_when_called() -> None:
    with pytest.raises(ValueError, match="timeout must be positive"):
        plain().map_iter(times_ten, timeout=-1)
    with pytest.raises(ValueError, match="chunksize or num_chunks"):
        plain().map_iter(times_ten, chunksize=2, num_chunks=2)
