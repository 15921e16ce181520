"""Hostile saves: loading refuses, naming the file, and never reaches outside the save."""

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    MemmapFormatError,
    RecordedClassError,
    TensorClass,
    TensorDict,
    lazy_stack,
    load_memmap,
)


class Item(TensorClass):
    x: torch.Tensor
    child: TensorDict


def _edit(meta_file: Path, change: Any) -> None:
    meta = json.loads(meta_file.read_text())
    change(meta)
    meta_file.write_text(json.dumps(meta))


def _stack_save(path: Path) -> Path:
    members = [TensorDict({"a": torch.full((3,), float(i))}, [3]) for i in range(2)]
    lazy_stack(members).memmap(path)
    return path


def test_a_symlinked_lazy_stack_member_is_refused(tmp_path: Path) -> None:
    save = _stack_save(tmp_path / "save")
    outside = tmp_path / "outside"
    shutil.move(save / "1", outside)
    before = (outside / "a.memmap").read_bytes()
    os.symlink(outside, save / "1")
    with pytest.raises(MemmapFormatError, match="member 1") as info:
        load_memmap(save)
    assert str(save) in str(info.value)  # the error names the save's file
    assert (outside / "a.memmap").read_bytes() == before


def test_the_member_directory_itself_loads_when_it_is_real(tmp_path: Path) -> None:
    save = _stack_save(tmp_path / "save")
    loaded = load_memmap(save)
    torch.testing.assert_close(loaded[1]["a"], torch.full((3,), 1.0))


@pytest.mark.parametrize("big", [2**63, 2**64 + 5])
@pytest.mark.parametrize("where", ["shape", "batch_size"])
def test_a_size_past_int64_next_to_a_zero_is_refused(tmp_path: Path, big: int, where: str) -> None:
    save = tmp_path / "save"
    TensorDict({"a": torch.zeros(0, 2)}, [0]).memmap(save)

    def change(meta: dict[str, Any]) -> None:
        if where == "shape":
            meta["entries"][0]["shape"] = [0, big]
        else:
            meta["batch_size"] = [0, big]
            meta["entries"][0]["shape"] = [0, big]

    _edit(save / "meta.json", change)
    with pytest.raises(MemmapFormatError, match="2\\*\\*63") as info:
        load_memmap(save)
    assert str(save / "meta.json") in str(info.value)


def test_the_largest_int64_size_next_to_a_zero_still_loads(tmp_path: Path) -> None:
    save = tmp_path / "save"
    TensorDict({"a": torch.zeros(0, 2)}, [0]).memmap(save)
    _edit(save / "meta.json", lambda m: m["entries"][0].update(shape=[0, 2**63 - 1]))
    assert load_memmap(save)["a"].shape == (0, 2**63 - 1)


@pytest.mark.parametrize(
    "recorded",
    [
        "tensorclass.engine.core.state:TensorCore",
        "tensorclass.engine.ops:TensorOps",
        "tensorclass.collection:TensorCollection",
        "tensorclass.engine.base:TensorDictBase",
        "tensorclass.compiler:_Blank",
        "tensorclass.engine.lazy.stack:LazyStackedTensorDict",
    ],
)
def test_internal_classes_are_never_built(tmp_path: Path, recorded: str) -> None:
    save = tmp_path / "save"
    Item(x=torch.zeros(2), child=TensorDict({}, [2]), batch_size=[2]).memmap(save)
    _edit(save / "meta.json", lambda m: m.update({"class": recorded}))
    with pytest.raises(RecordedClassError, match="not a tensor class") as info:
        load_memmap(save)
    assert str(save) in str(info.value)


def test_internal_classes_are_refused_in_nested_levels_too(tmp_path: Path) -> None:
    save = tmp_path / "save"
    TensorDict({"child": TensorDict({"y": torch.ones(2)}, [2])}, [2]).memmap(save)
    recorded = "tensorclass.engine.ops:TensorOps"
    _edit(save / "child" / "meta.json", lambda m: m.update({"class": recorded}))
    with pytest.raises(RecordedClassError, match="TensorOps") as info:
        load_memmap(save)
    assert str(save / "child") in str(info.value)


def test_public_containers_and_user_classes_still_load(tmp_path: Path) -> None:
    save = tmp_path / "save"
    TensorDict({"a": torch.arange(2)}, [2]).memmap(save)
    assert type(load_memmap(save)) is TensorDict
    typed = tmp_path / "typed"
    Item(x=torch.zeros(2), child=TensorDict({}, [2]), batch_size=[2]).memmap(typed)
    assert type(load_memmap(typed)) is Item
