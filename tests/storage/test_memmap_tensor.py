"""MemoryMappedTensor: a tensor backed by a file, pickled by file name."""

import copy
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from tensorclass import MemoryMappedTensor


def test_from_tensor_writes_raw_bytes(tmp_path: Path) -> None:
    source = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    mapped = MemoryMappedTensor.from_tensor(source, filename=tmp_path / "x.memmap")
    assert isinstance(mapped, MemoryMappedTensor)
    assert torch.equal(mapped, source)
    assert mapped.filename == str(tmp_path / "x.memmap")
    raw = np.fromfile(tmp_path / "x.memmap", dtype=np.int32)
    assert raw.tolist() == list(range(12))


def test_writes_reach_the_file(tmp_path: Path) -> None:
    mapped = MemoryMappedTensor.zeros(4, dtype=torch.float64, filename=tmp_path / "z")
    mapped[1] = 5.0
    again = MemoryMappedTensor.from_filename(tmp_path / "z", torch.float64, [4])
    assert again.tolist() == [0.0, 5.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.zeros(3, 1).expand(3, 4) + torch.arange(4),
        lambda: torch.arange(12.0).reshape(3, 4).t(),
        lambda: torch.arange(12.0).reshape(3, 4)[:, ::2],
        lambda: torch.ones(2, dtype=torch.bfloat16),
        lambda: torch.tensor([True, False, True]),
        lambda: torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64),
        lambda: torch.tensor(3.5),
        lambda: torch.zeros(0, 3),
        lambda: torch.zeros(2, 3).expand(5, 2, 3),
    ],
    ids=[
        "computed",
        "transposed",
        "strided",
        "bfloat16",
        "bool",
        "complex",
        "0-d",
        "empty",
        "expanded",
    ],
)
def test_round_trip_any_layout_and_dtype(tmp_path: Path, make: object) -> None:
    source = make()  # type: ignore[operator]
    mapped = MemoryMappedTensor.from_tensor(source, filename=tmp_path / "t")
    assert mapped.shape == source.shape and mapped.dtype == source.dtype
    assert torch.equal(mapped.as_tensor(), source)
    assert os.path.getsize(tmp_path / "t") == source.numel() * source.element_size()


def test_factories(tmp_path: Path) -> None:
    empty = MemoryMappedTensor.empty(2, 3, filename=tmp_path / "e")
    assert empty.shape == (2, 3) and empty.dtype == torch.get_default_dtype()
    assert (empty == 0).all()  # new files read as zeros
    ones = MemoryMappedTensor.ones((2, 2), dtype=torch.int64, filename=tmp_path / "o")
    assert ones.tolist() == [[1, 1], [1, 1]]
    full = MemoryMappedTensor.full([3], 7.5, filename=tmp_path / "f")
    assert full.tolist() == [7.5] * 3
    like = MemoryMappedTensor.empty_like(torch.zeros(4, dtype=torch.uint8), filename=tmp_path / "l")
    assert like.dtype == torch.uint8 and like.shape == (4,)


def test_large_empty_file_is_sparse(tmp_path: Path) -> None:
    big = MemoryMappedTensor.empty(1_000_000, 64, dtype=torch.uint8, filename=tmp_path / "big")
    assert os.path.getsize(tmp_path / "big") == 64_000_000
    assert os.stat(tmp_path / "big").st_blocks * 512 < 1_000_000  # nothing written yet
    assert big[999_999].sum().item() == 0


def test_views_stay_mapped_and_results_do_not(tmp_path: Path) -> None:
    mapped = MemoryMappedTensor.from_tensor(
        torch.arange(12.0).reshape(3, 4), filename=tmp_path / "v"
    )
    for view in (mapped[1], mapped[:, 1:3], mapped.view(-1), mapped.t(), mapped.unbind(0)[2]):
        assert isinstance(view, MemoryMappedTensor) and view.filename == mapped.filename
    for result in (mapped + 1, mapped.clone(), mapped[torch.tensor([0, 2])], torch.stack([mapped])):
        assert type(result) is torch.Tensor
    assert mapped.add_(1) is mapped
    assert type(copy.deepcopy(mapped)) is torch.Tensor


@pytest.mark.parametrize(
    "index",
    [
        1,
        -1,
        slice(1, 3),
        (slice(None), 2),
        (..., None, 1),
        torch.tensor(2),
        torch.tensor([0, 2, 2]),
        torch.tensor([True, False, True, False]),
        (torch.tensor([0, 3]), slice(1, None)),
        [0, 1],
        (),
    ],
    ids=str,
)
def test_indexing_matches_plain_tensors(tmp_path: Path, index: object) -> None:
    source = torch.arange(12.0).reshape(4, 3)
    mapped = MemoryMappedTensor.from_tensor(source, filename=tmp_path / "i")
    result = mapped[index]
    expected = source[index]
    assert torch.equal(
        result.as_tensor() if isinstance(result, MemoryMappedTensor) else result, expected
    )
    shares = result.untyped_storage().data_ptr() == mapped.untyped_storage().data_ptr()
    assert isinstance(result, MemoryMappedTensor) == shares  # views are file-backed, copies not
    if shares:
        assert result.filename == mapped.filename


def test_pickles_the_file_name_not_the_data(tmp_path: Path) -> None:
    mapped = MemoryMappedTensor.zeros(1000, 1000, filename=tmp_path / "p")
    payload = pickle.dumps(mapped[10:20])
    assert len(payload) < 1000  # 4 MB of data, a few hundred bytes of pickle
    view = pickle.loads(payload)
    assert isinstance(view, MemoryMappedTensor) and view.shape == (10, 1000)
    view.fill_(3.0)  # the same file: the original sees the write
    assert mapped[15, 0].item() == 3.0 and mapped[20, 0].item() == 0.0


def test_from_filename_checks_the_size(tmp_path: Path) -> None:
    MemoryMappedTensor.from_tensor(torch.zeros(10), filename=tmp_path / "s")
    with pytest.raises(ValueError, match="holds 40 bytes.*needs 80"):
        MemoryMappedTensor.from_filename(tmp_path / "s", torch.float32, [20])
    with pytest.raises(FileNotFoundError):
        MemoryMappedTensor.from_filename(tmp_path / "missing", torch.float32, [1])
    assert os.path.getsize(tmp_path / "s") == 40  # never extended


def test_existsok(tmp_path: Path) -> None:
    first = MemoryMappedTensor.from_tensor(torch.zeros(3), filename=tmp_path / "x")
    with pytest.raises(FileExistsError, match="existsok=True"):
        MemoryMappedTensor.from_tensor(torch.ones(3), filename=tmp_path / "x")
    second = MemoryMappedTensor.from_tensor(torch.ones(3), filename=tmp_path / "x", existsok=True)
    assert second.tolist() == [1.0] * 3
    assert first.tolist() == [0.0] * 3  # the old mapping keeps the old file's data
    assert sorted(os.listdir(tmp_path)) == ["x"]


def test_bad_input_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"cannot be negative; got \[2, -1\]"):
        MemoryMappedTensor.empty(2, -1, filename=tmp_path / "neg")
    with pytest.raises(TypeError, match="only dense tensors"):
        MemoryMappedTensor.from_tensor(torch.eye(2).to_sparse(), filename=tmp_path / "sparse")
    from tensorclass.engine.storage.memmap import tensor as module

    def fails(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(module, "_byte_view", fails)
    with pytest.raises(OSError, match="disk full"):
        MemoryMappedTensor.from_tensor(torch.zeros(3), filename=tmp_path / "half")
    assert os.listdir(tmp_path) == []


def test_unpickling_after_the_file_is_gone(tmp_path: Path) -> None:
    payload = pickle.dumps(MemoryMappedTensor.zeros(3, filename=tmp_path / "gone"))
    os.remove(tmp_path / "gone")
    with pytest.raises(FileNotFoundError, match="no longer exists"):
        pickle.loads(payload)
