"""map over worker processes, shared memory, and pickling for torch.multiprocessing."""

import multiprocessing
import pickle
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from tensorclass import MemoryMappedTensor, TensorClass, TensorDict, lazy_stack
from tensorclass.engine.storage.parallel.map import RemoteTraceback


class Sample(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor


class Features(TensorClass):
    average: torch.Tensor


def process_data(data: TensorDict) -> None:
    # seed 003's preprocessing: flip the images and cluster the labels, in place
    images = data.get("images").flip(-2).clone()
    labels = data.get("labels") // 10
    data.set_("images", images)
    data.set_("labels", labels)


def features(data: Sample) -> Features:
    return Features(data.images.float().mean((-2, -1)), batch_size=data.batch_size)


def fails_on_three(data: TensorDict) -> TensorDict:
    if (data["x"] == 3).any():
        raise ValueError(f"bad chunk {data['x'].tolist()}")
    return data.clone()


class Unpicklable(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(a)


def raises_unpicklable(data: TensorDict) -> None:
    raise Unpicklable(1, 2)


def double(data: TensorDict) -> TensorDict:
    return data * 2


@pytest.fixture(autouse=True)
def _no_worker_left() -> object:
    yield None
    assert multiprocessing.active_children() == []


def dataset(n: int = 40) -> TensorDict:
    images = torch.arange(n * 2 * 3, dtype=torch.uint8).reshape(n, 2, 3)
    return TensorDict({"images": images, "labels": torch.arange(n) * 3}, [n])


def test_seed_003_preprocessing_in_place_on_a_memmap(tmp_path: Path) -> None:
    original = dataset()
    data = original.clone().memmap(tmp_path / "data")
    result = data.map(process_data, num_workers=2, chunksize=0)  # one element at a time
    assert result is None
    assert torch.equal(data["images"], original["images"].flip(-2))
    assert torch.equal(data["labels"], original["labels"] // 10)
    on_disk = TensorDict.load_memmap(tmp_path / "data")
    assert torch.equal(on_disk["labels"], original["labels"] // 10)


def test_in_place_writes_reach_an_instance_in_ram() -> None:
    original = dataset()
    data = original.clone()
    data.map(process_data, num_workers=2, chunksize=7)
    assert data.is_shared()  # map moved it to shared memory, so the workers' writes show
    assert torch.equal(data["labels"], original["labels"] // 10)


def test_results_are_gathered_into_the_returned_class() -> None:
    data = Sample(torch.rand(10, 4, 4), torch.arange(10), batch_size=[10])
    out = data.map(features, num_workers=2, num_chunks=3, pbar=False)
    assert type(out) is Features and out.batch_size == (10,)
    assert torch.allclose(out.average, data.images.mean((-2, -1)))
    stacked = data.map(features, num_workers=2, chunksize=0)
    assert type(stacked) is Features and torch.allclose(stacked.average, out.average)


def test_dim_and_out() -> None:
    data = TensorDict({"x": torch.arange(24.0).reshape(4, 6)}, [4, 6])
    result = data.map(lambda td: td * 2, dim=1, num_workers=2, chunksize=4)  # lambdas: fork
    assert torch.equal(result["x"], data["x"] * 2)
    out = TensorDict({"x": torch.zeros(4, 6)}, [4, 6])
    assert data.map(double, dim=1, num_workers=2, chunksize=5, out=out) is out
    assert torch.equal(out["x"], data["x"] * 2)


def test_worker_exception_is_raised_with_its_traceback() -> None:
    data = TensorDict({"x": torch.arange(8)}, [8])
    with pytest.raises(ValueError, match=r"bad chunk \[2, 3\]") as info:
        data.map(fails_on_three, num_workers=2, chunksize=2)
    cause = info.value.__cause__
    assert isinstance(cause, RemoteTraceback)
    assert "fails_on_three" in cause.text and "ValueError: bad chunk" in cause.text


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    import os
    from concurrent.futures.process import BrokenProcessPool

    def dies_on_three(data: TensorDict) -> TensorDict:
        if (data["x"] == 3).any():
            os._exit(3)  # as if killed: the pool never hears back about this chunk
        return data.clone()

    data = TensorDict({"x": torch.arange(8)}, [8])
    with pytest.raises(BrokenProcessPool, match=r"worker process \d+ exited with code 3"):
        data.map(dies_on_three, num_workers=2, chunksize=2)  # fork: fn is inherited


def test_unpicklable_worker_exception() -> None:
    data = TensorDict({"x": torch.arange(4)}, [4])
    with pytest.raises(RuntimeError, match="Unpicklable: 1"):
        data.map(raises_unpicklable, num_workers=2)


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    data = TensorDict({"x": torch.arange(6.0)}, [6])
    result = data.map(double, num_workers=2, chunksize=1, pbar=True)
    assert torch.equal(result["x"], data["x"] * 2)
    assert "6/6" in capsys.readouterr().err


def process_and_report(data: TensorDict) -> TensorDict:
    process_data(data)  # in place: through the file the worker mapped again
    return data.select("labels").clone()  # and a result gathered by the caller


def test_spawned_workers_get_memmaps_by_file_name(tmp_path: Path) -> None:
    data = dataset(12).memmap(tmp_path / "data")
    result = data.map(process_and_report, num_workers=2, num_chunks=2, mp_start_method="spawn")
    assert torch.equal(result["labels"], torch.arange(12) * 3 // 10)
    assert torch.equal(data["labels"], torch.arange(12) * 3 // 10)


def test_user_pool_and_lazy_stacks() -> None:
    stack = lazy_stack([TensorDict({"x": torch.full((3,), float(i))}, [3]) for i in range(4)], 0)
    with mp.get_context("fork").Pool(2) as pool:
        result = stack.map(double, num_workers=2, chunksize=2, pool=pool)
    assert torch.equal(result["x"], stack["x"] * 2)


def test_results_outlive_a_recycled_worker() -> None:
    # Each worker exits after one chunk: its results must not depend on it staying alive.
    data = TensorDict({"x": torch.arange(12.0)}, [12])
    with mp.get_context("fork").Pool(2, maxtasksperchild=1) as pool:
        result = data.map(double, chunksize=2, pool=pool)
    assert torch.equal(result["x"], data["x"] * 2)


def test_argument_errors() -> None:
    data = TensorDict({"x": torch.arange(4)}, [4])
    with pytest.raises(ValueError, match="not both"):
        data.map(double, chunksize=1, num_chunks=2)
    with pytest.raises(ValueError, match="num_workers"):
        data.map(double, num_workers=0)


# -- shared memory and torch.multiprocessing ---------------------------------------------


def _child_writes(queue: "mp.Queue[Sample]", done: "mp.Queue[str]") -> None:
    sample = queue.get()
    sample.labels += 100
    done.put(type(sample).__name__)


def test_share_memory_and_pickling_across_processes() -> None:
    sample = Sample(torch.zeros(3, 2), torch.arange(3), batch_size=[3])
    assert not sample.is_shared()
    assert sample.share_memory_() is sample and sample.is_shared()
    context = mp.get_context("spawn")
    queue, done = context.Queue(), context.Queue()
    child = context.Process(target=_child_writes, args=(queue, done))
    child.start()
    queue.put(sample)
    assert done.get(timeout=60) == "Sample"  # the class travels with the instance
    child.join(timeout=60)
    assert sample.labels.tolist() == [100, 101, 102]  # the child's writes are shared


def test_pickled_memmap_instances_carry_file_names(tmp_path: Path) -> None:
    data = dataset(1000).memmap(tmp_path / "d")
    payload = pickle.dumps(data[100:200])
    assert len(payload) < 2000
    again = pickle.loads(payload)
    assert isinstance(again["images"], MemoryMappedTensor) and again.batch_size == (100,)
    assert torch.equal(again["labels"], data["labels"][100:200])
