"""tensordict's MemoryMappedTensor constructors and loading entry points, ported."""

from __future__ import annotations

import errno
import multiprocessing
import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    MemoryMappedTensor,
    MetaData,
    TensorClass,
    TensorDict,
    lazy_stack,
    load_memmap,
    read_metadata,
)


class Info(TensorClass):
    step: torch.Tensor


class Episode(TensorClass):
    obs: torch.Tensor
    info: Info


def make_episode() -> Episode:
    return Episode(torch.randn(4, 3), Info(torch.arange(4), batch_size=[4]), batch_size=[4])


# -- anonymous shared memory ----------------------------------------------------------------


def test_from_tensor_without_filename_is_anonymous_shared_memory() -> None:
    source = torch.randn(3, 4)
    mapped = MemoryMappedTensor.from_tensor(source)
    assert type(mapped) is MemoryMappedTensor and mapped.is_shared()
    assert torch.equal(mapped, source)
    mapped[0] = 0  # its own memory: the source is unchanged
    assert not torch.equal(mapped, source)
    with pytest.raises(RuntimeError, match="has no file"):
        mapped.filename
    assert type(mapped[1:]) is MemoryMappedTensor
    again = pickle.loads(pickle.dumps(mapped))
    assert type(again) is MemoryMappedTensor and torch.equal(again, mapped)
    assert MemoryMappedTensor.from_tensor(mapped) is mapped  # no file, no filename: itself


def _fill_ones(tensor: Any) -> None:
    tensor.fill_(1)


def test_anonymous_memory_is_shared_with_a_worker_process() -> None:
    mapped = MemoryMappedTensor.zeros(5)
    context = multiprocessing.get_context("fork")
    worker = context.Process(target=_fill_ones, args=(mapped,))
    worker.start()
    worker.join(60)
    assert worker.exitcode == 0
    assert torch.equal(mapped, torch.ones(5))


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda: MemoryMappedTensor.zeros(2, 3), torch.zeros(2, 3)),
        (lambda: MemoryMappedTensor.zeros((2, 3), dtype=torch.int64), torch.zeros(2, 3).long()),
        (lambda: MemoryMappedTensor.zeros(shape=(2,)), torch.zeros(2)),
        (lambda: MemoryMappedTensor.empty(torch.Size([4])), torch.zeros(4)),
        (lambda: MemoryMappedTensor.ones(3, dtype=torch.float64), torch.ones(3).double()),
        (lambda: MemoryMappedTensor.full(2, 2, fill_value=7), torch.full((2, 2), 7.0)),
        (lambda: MemoryMappedTensor.full((3,), 2.5), torch.full((3,), 2.5)),
        (
            lambda: MemoryMappedTensor.full(shape=[2], fill_value=True, dtype=torch.bool),
            torch.ones(2).bool(),
        ),
    ],
)
def test_constructors_match_torch(build: Any, expected: torch.Tensor) -> None:
    mapped = build()
    assert type(mapped) is MemoryMappedTensor
    assert mapped.dtype == expected.dtype and torch.equal(mapped.as_tensor(), expected)


def test_like_constructors_match_torch(tmp_path: Path) -> None:
    source = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    for mine, theirs in [
        (MemoryMappedTensor.zeros_like(source), torch.zeros_like(source)),
        (MemoryMappedTensor.ones_like(source), torch.ones_like(source)),
        (MemoryMappedTensor.full_like(source, 9), torch.full_like(source, 9)),
        (MemoryMappedTensor.empty_like(source), torch.zeros_like(source)),
        (MemoryMappedTensor.ones_like(source, filename=tmp_path / "o"), torch.ones_like(source)),
    ]:
        assert type(mine) is MemoryMappedTensor and torch.equal(mine.as_tensor(), theirs)
    assert MemoryMappedTensor.ones_like(source, filename=tmp_path / "p").filename == str(
        tmp_path / "p"
    )


def test_constructor_errors() -> None:
    with pytest.raises(TypeError, match="a size is required"):
        MemoryMappedTensor.zeros()
    with pytest.raises(TypeError, match="not both"):
        MemoryMappedTensor.zeros(2, shape=(2,))
    with pytest.raises(TypeError, match="needs a fill_value"):
        MemoryMappedTensor.full(2, 3)
    with pytest.raises(ValueError, match="device must be None or 'cpu'"):
        MemoryMappedTensor.zeros(2, device="meta")
    with pytest.raises(RuntimeError, match="requires grad"):
        MemoryMappedTensor.from_tensor(torch.nn.Parameter(torch.zeros(2)))


# -- from_tensor keywords -------------------------------------------------------------------


def test_from_tensor_keywords(tmp_path: Path) -> None:
    source = torch.arange(3.0)
    first = MemoryMappedTensor.from_tensor(source, filename=tmp_path / "a")
    assert MemoryMappedTensor.from_tensor(first, filename=tmp_path / "a") is first
    with pytest.raises(RuntimeError, match="copy_existing=True"):
        MemoryMappedTensor.from_tensor(first, filename=tmp_path / "b")
    copied = MemoryMappedTensor.from_tensor(first, filename=tmp_path / "b", copy_existing=True)
    assert copied.filename == str(tmp_path / "b") and torch.equal(copied, source)
    with pytest.raises(FileExistsError, match="existsok=True"):
        MemoryMappedTensor.from_tensor(source, filename=tmp_path / "a")
    replaced = MemoryMappedTensor.from_tensor(source * 2, filename=tmp_path / "a", existsok=True)
    assert torch.equal(replaced, source * 2)
    blank = MemoryMappedTensor.from_tensor(source, copy_data=False)
    assert blank.shape == source.shape and torch.equal(blank, torch.zeros(3))
    on_disk = MemoryMappedTensor.from_tensor(source, filename=tmp_path / "c", copy_data=False)
    assert torch.equal(on_disk, torch.zeros(3)) and os.path.getsize(tmp_path / "c") == 12
    wide = MemoryMappedTensor.from_tensor(source, shape=(2, 3))
    assert torch.equal(wide, source.expand(2, 3))
    to_file = MemoryMappedTensor.from_tensor(first)  # a file-backed input, no filename
    assert torch.equal(to_file, source) and to_file.is_shared()


# -- from_filename, from_storage, parent_shape ----------------------------------------------


def test_from_filename_index_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "x"
    MemoryMappedTensor.from_tensor(torch.arange(6).reshape(2, 3), filename=path)
    row = MemoryMappedTensor.from_filename(path, torch.int64, (2, 3), index=1)
    assert row.tolist() == [3, 4, 5]
    private = MemoryMappedTensor.from_filename(path, torch.int64, (2, 3), mode="r")
    private[0, 0] = 100  # copy-on-write: the file keeps its data
    assert MemoryMappedTensor.from_filename(path, torch.int64, (2, 3))[0, 0] == 0
    shared = MemoryMappedTensor.from_filename(path, torch.int64, (2, 3), mode="r+")
    shared[0, 0] = 7
    assert MemoryMappedTensor.from_filename(path, torch.int64, (2, 3))[0, 0] == 7
    with pytest.raises(ValueError, match="mode must be"):
        MemoryMappedTensor.from_filename(path, torch.int64, (2, 3), mode="w")


def test_from_filename_read_only_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ro"
    MemoryMappedTensor.from_tensor(torch.arange(3), filename=path)
    real_open = os.open

    def read_only(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR):  # as if the file were read-only (even for root)
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(PermissionError, match="read-only"):
        MemoryMappedTensor.from_filename(path, torch.int64, (3,), mode="r+")
    copy_on_write = MemoryMappedTensor.from_filename(path, torch.int64, (3,))
    copy_on_write[0] = 5
    monkeypatch.undo()
    assert MemoryMappedTensor.from_filename(path, torch.int64, (3,))[0] == 0


def test_from_storage_views_without_copy(tmp_path: Path) -> None:
    path = tmp_path / "s"
    MemoryMappedTensor.from_tensor(torch.arange(6.0), filename=path)
    storage = torch.UntypedStorage.from_file(str(path), shared=True, nbytes=24)
    view = MemoryMappedTensor.from_storage(storage, dtype=torch.float32, shape=(2, 3))
    assert view.filename == str(path) and view.tolist() == [[0, 1, 2], [3, 4, 5]]
    view[1, 1] = 40
    assert MemoryMappedTensor.from_filename(path, torch.float32, (6,))[4] == 40
    with pytest.raises(RuntimeError, match="mapped from"):
        MemoryMappedTensor.from_storage(storage, filename=tmp_path / "other")
    plain = torch.arange(4)
    untyped = MemoryMappedTensor.from_storage(plain.untyped_storage())  # int64 by default
    assert untyped.tolist() == [0, 1, 2, 3]
    untyped[0] = 9
    assert plain[0] == 9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage is deprecated in torch
        typed_storage = torch.arange(3.0).storage()
    typed = MemoryMappedTensor.from_storage(typed_storage, index=slice(1, None))
    assert typed.dtype == torch.float32 and typed.tolist() == [1.0, 2.0]


def test_parent_shape_is_kept_by_views(tmp_path: Path) -> None:
    mapped = MemoryMappedTensor.from_tensor(torch.zeros(2, 3), filename=tmp_path / "p")
    assert mapped.parent_shape == torch.Size([2, 3])
    assert mapped[0].parent_shape == torch.Size([2, 3])
    assert mapped.view(6).parent_shape == torch.Size([2, 3])


# -- loading -------------------------------------------------------------------------------


def test_tensordict_load_memmap_gives_the_recorded_class(tmp_path: Path) -> None:
    episode = make_episode()
    episode.memmap(tmp_path / "ep")
    for loaded in (TensorDict.load_memmap(tmp_path / "ep"), load_memmap(tmp_path / "ep")):
        assert type(loaded) is Episode and type(loaded.info) is Info
        assert torch.equal(loaded.obs, episode.obs)
    plain = TensorDict.load_memmap(tmp_path / "ep", classes="tensordict")
    assert type(plain) is TensorDict and type(plain["info"]) is TensorDict
    assert type(Episode.load_memmap(tmp_path / "ep")) is Episode
    lazy = lazy_stack([make_episode(), make_episode()])
    lazy.memmap(tmp_path / "lazy")
    loaded_lazy = TensorDict.load_memmap(tmp_path / "lazy")
    assert type(loaded_lazy[0]) is Episode and len(loaded_lazy.members) == 2


def test_loaded_parameters_compare_with_the_parameters(tmp_path: Path) -> None:
    module = torch.nn.Linear(3, 2)
    params = TensorDict.from_module(module)
    in_memory = params.memmap(tmp_path / "params")
    loaded = load_memmap(tmp_path / "params")
    for copy in (in_memory, loaded, TensorDict.load_memmap(tmp_path / "params")):
        assert type(copy["weight"]) is MemoryMappedTensor
        torch.testing.assert_close(copy["weight"], module.weight)
        torch.testing.assert_close(module.bias, copy["bias"])
        assert isinstance(copy["weight"], torch.nn.Parameter)
        assert not isinstance(copy["weight"][0], torch.nn.Parameter)  # views are not
    entries = {entry.key: entry for entry in read_metadata(tmp_path / "params").entries}
    assert entries["weight"].parameter
    # a plain tensor is not marked
    TensorDict({"w": torch.zeros(2)}, []).memmap(tmp_path / "plain")
    assert not isinstance(load_memmap(tmp_path / "plain")["w"], torch.nn.Parameter)


# -- lazy pre-allocation reads zeros ---------------------------------------------------------


def test_unwritten_rows_of_a_preallocated_key_read_as_zeros() -> None:
    td = TensorDict(batch_size=[4])
    td[1] = TensorDict({"x": torch.ones(3), "n": {"y": torch.ones(2, dtype=torch.int64)}}, [])
    assert torch.equal(td["x"], torch.tensor([[0.0] * 3, [1.0] * 3, [0.0] * 3, [0.0] * 3]))
    assert torch.equal(td["n", "y"][[0, 2, 3]], torch.zeros(3, 2, dtype=torch.int64))
    stack = lazy_stack([TensorDict(batch_size=[2]), TensorDict(batch_size=[2])])
    stack[0, 1] = TensorDict({"x": torch.ones(3)}, [])
    assert torch.equal(stack["x"].sum(-1), torch.tensor([[0.0, 3.0], [0.0, 0.0]]))


def test_unwritten_rows_of_a_memmap_like_read_as_zeros(tmp_path: Path) -> None:
    episode = make_episode()
    blank = episode.memmap_like(tmp_path / "like")
    assert torch.equal(blank.obs, torch.zeros(4, 3)) and torch.equal(
        blank.info.step, torch.zeros(4).long()
    )


def test_metadata_round_trips_through_memmap(tmp_path: Path) -> None:
    td = TensorDict({"x": torch.zeros(2)}, [2])
    td["config"] = MetaData({"lr": 0.1})
    td["name"] = "plain"
    td.memmap(tmp_path / "m")
    loaded = load_memmap(tmp_path / "m")
    assert isinstance(loaded._data["config"], MetaData) and loaded["config"] == {"lr": 0.1}
    assert not isinstance(loaded._data["name"], MetaData) and loaded["name"] == "plain"
