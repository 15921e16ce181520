"""``memmap()``, ``memmap_()`` and ``memmap_like()`` without a prefix, and saving onto an
existing directory, as tensordict 0.15.3 does them (with tensorclass's safety rules).

tensordict 0.15.3: without a prefix every tensor becomes a ``MemoryMappedTensor`` with no
file (``filename`` raises ``RuntimeError``), ``is_memmap()`` is true, the result is locked
and writable in place; ``memmap_like`` gives zeros. ``existsok`` defaults to ``True``: a save
onto an existing save replaces it. tensorclass replaces it as a whole, atomically, and
refuses a non-empty directory that holds no save (tensordict writes its files into it).
"""

import os
from pathlib import Path

import pytest
import torch

from tensorclass import MemoryMappedTensor, TensorClass, TensorDict, lazy_stack, load_memmap


class Step(TensorClass):
    obs: torch.Tensor
    note: str = ""


def sample() -> TensorDict:
    return TensorDict(
        a=torch.arange(3.0), b={"c": torch.ones(3, 2)}, s="txt", batch_size=[3], device="cpu"
    )


def test_memmap_without_prefix_maps_anonymous_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may be written to the working directory either
    td = sample()
    out = td.memmap()
    assert out is not td and out.is_memmap() and out.is_locked and out["b"].is_locked
    for key in ("a", ("b", "c")):
        leaf = out[key]
        assert type(leaf) is MemoryMappedTensor and leaf.is_shared()
        with pytest.raises(RuntimeError):
            _ = leaf.filename
    assert out["a"].tolist() == [0.0, 1.0, 2.0] and out["s"] == "txt"
    out["a"][0] = 5.0  # writable in place; the source is a copy
    assert out["a"].tolist() == [5.0, 1.0, 2.0] and td["a"][0].item() == 0.0
    assert out.saved_path is None  # memory-mapped, in no directory (as tensordict says)
    assert os.listdir(tmp_path) == []


def test_memmap_like_without_prefix_gives_zeros() -> None:
    for out in (sample().memmap_like(), sample().memmap_like(prefix=None)):
        assert out.is_memmap() and out.is_locked
        assert out["a"].tolist() == [0.0, 0.0, 0.0] and out["b", "c"].shape == (3, 2)
        assert out["b", "c"].sum().item() == 0.0


def test_memmap_in_place_without_prefix() -> None:
    td = sample()
    source = td["a"]
    assert td.memmap_() is td
    assert td.is_memmap() and td.is_locked and td["a"] is not source
    assert torch.equal(td["a"], source)
    kept = td["a"]
    td.unlock_()
    assert td.memmap_()["a"] is kept  # already in anonymous memory: kept as it is


def test_tensor_classes_and_lazy_stacks_without_prefix() -> None:
    step = Step(obs=torch.randn(4, 2), note="n", batch_size=[4])
    mapped = step.memmap()
    assert type(mapped) is Step and mapped.note == "n" and mapped.is_memmap()
    assert torch.equal(mapped.obs, step.obs)
    members = [TensorDict(x=torch.full((2,), float(i))) for i in range(3)]
    stack = lazy_stack(members).memmap()
    assert stack.is_memmap() and stack[1]["x"].tolist() == [1.0, 1.0]
    future = step.memmap(return_early=True)
    assert torch.equal(future.result(timeout=60).obs, step.obs)


def test_options_without_prefix() -> None:
    with pytest.raises(ValueError, match="needs a prefix"):
        sample().memmap(archive=True)
    with pytest.raises(ValueError, match="archives only"):
        sample().memmap(compression="deflate")


def test_copy_existing_false_refuses_file_backed_leaves(tmp_path: Path) -> None:
    on_disk = sample().memmap(tmp_path / "saved")
    with pytest.raises(RuntimeError, match="copy_existing=True"):
        on_disk.memmap(copy_existing=False)
    assert on_disk.memmap()["a"].tolist() == [0.0, 1.0, 2.0]  # copied by default
    anonymous = sample().memmap()
    assert anonymous.memmap(copy_existing=False).is_memmap()  # no file to duplicate


def test_a_save_replaces_an_existing_save_by_default(tmp_path: Path) -> None:
    target = tmp_path / "x"
    sample().memmap(target)
    TensorDict(z=torch.zeros(3), batch_size=[3]).memmap(target)  # existsok=True
    assert sorted(os.listdir(target)) == ["meta.json", "z.memmap"]  # nothing of the old one
    assert list(load_memmap(target).keys()) == ["z"]
    sample().memmap_like(target)
    sample().memmap_(target)
    with pytest.raises(FileExistsError, match="existsok=True"):
        sample().memmap(target, existsok=False)
    (tmp_path / "empty").mkdir()
    sample().memmap(tmp_path / "empty", existsok=False)  # an empty directory takes a save


def test_a_directory_without_a_save_is_never_written_into(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="does not hold a tensorclass save"):
        sample().memmap(home)
    assert os.listdir(home) == ["notes.txt"]
    elsewhere = tmp_path / "elsewhere"
    sample().memmap(elsewhere)
    (tmp_path / "link").symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        TensorDict(z=torch.zeros(3), batch_size=[3]).memmap(tmp_path / "link")
    assert "z.memmap" not in os.listdir(elsewhere)


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    theirs = tensordict.TensorDict(a=torch.arange(3.0), batch_size=[3])
    for out, other in (
        (sample().memmap(), theirs.memmap()),
        (sample().memmap_like(), theirs.memmap_like()),
    ):
        assert out.is_memmap() == other.is_memmap() and out.is_locked == other.is_locked
        assert out["a"].tolist() == other["a"].tolist()
        with pytest.raises(RuntimeError):
            _ = other["a"].filename
