"""tensordict's spellings of saving: save/load/load_/load_memmap_/memmap_refresh_,
saved_path, make_memmap*, and the top-level save/load."""

import json
import os
from pathlib import Path

import pytest
import torch

import tensorclass
from tensorclass import (
    LazyStackedTensorDict,
    MemmapFormatError,
    MemoryMappedTensor,
    TensorClass,
    TensorDict,
    lazy_stack,
)
from tensorclass.engine.storage.consolidated_file import tensors_of
from tensorclass.utils import TensorDictFuture


class Info(TensorClass):
    step: torch.Tensor
    note: str = "none"


class Episode(TensorClass):
    obs: torch.Tensor
    info: Info
    extra: TensorDict | None = None
    label: str = "x"


def _td() -> TensorDict:
    return TensorDict(
        a=torch.arange(6.0).reshape(3, 2),
        nested={"b": torch.arange(3), "c": torch.ones(3, dtype=torch.bool)},
        note="hello",
        batch_size=[3],
    )


def _episode(extra: bool = True) -> Episode:
    return Episode(
        obs=torch.randn(3, 4),
        info=Info(step=torch.arange(3), note="n", batch_size=[3]),
        extra=TensorDict(r=torch.ones(3, 1), batch_size=[3]) if extra else None,
        label="ep",
        batch_size=[3],
    )


def _stack() -> LazyStackedTensorDict:
    return lazy_stack(
        [
            TensorDict(a=torch.zeros(2), b=torch.ones(1)),
            TensorDict(a=torch.ones(2), b=torch.ones(3)),
        ]
    )


def _same(x: object, y: object) -> None:
    assert type(x) is type(y)
    assert (x == y).all()  # type: ignore[attr-defined]


@pytest.mark.parametrize("make", [_td, _episode, lambda: _episode(False), _stack])
def test_save_load_round_trip(tmp_path: Path, make) -> None:
    data = make()
    saved = data.save(tmp_path / "d")
    _same(saved, data)
    assert saved.is_locked and saved.saved_path == tmp_path / "d"
    loaded = type(data).load(tmp_path / "d")
    _same(loaded, data)
    assert loaded.saved_path == tmp_path / "d"
    _same(tensorclass.load(tmp_path / "d"), data)
    if isinstance(data, Episode):
        assert loaded.label == "ep" and loaded.info.note == "n"
        assert (loaded.extra is None) == (data.extra is None)


def test_save_replaces_and_leaves_source_unchanged(tmp_path: Path) -> None:
    td = _td()
    td.save(tmp_path)
    other = TensorDict(z=torch.zeros(3), batch_size=[3])
    result = tensorclass.save(other, tmp_path)  # existsok: replaces the first save
    assert set(TensorDict.load(tmp_path).keys()) == {"z"}
    assert not td.is_memmap() and not td.is_locked
    assert isinstance(result["z"], MemoryMappedTensor)


def test_save_return_early(tmp_path: Path) -> None:
    future = _td().save(tmp_path, return_early=True)
    assert isinstance(future, TensorDictFuture)
    assert future.result().saved_path == tmp_path
    assert isinstance(tensorclass.save(_td(), tmp_path, return_early=True), TensorDictFuture)


def test_save_without_prefix_resaves_in_place(tmp_path: Path) -> None:
    saved = _td().save(tmp_path)
    saved["a"].add_(1)  # in-place writes reach the files already
    again = saved.save()
    assert again.saved_path == tmp_path
    assert torch.equal(TensorDict.load(tmp_path)["a"], _td()["a"] + 1)
    with pytest.raises(RuntimeError, match="not memory-mapped"):
        _td().save()


def test_lazy_stack_generic_class_load(tmp_path: Path) -> None:
    _stack().save(tmp_path)
    loaded = LazyStackedTensorDict.load(tmp_path)
    _same(loaded, _stack())


def test_load_memmap_into_instance(tmp_path: Path) -> None:
    _td().save(tmp_path)
    target = TensorDict(a=torch.zeros(3, 2), gone=torch.zeros(3), batch_size=[3])
    assert target.load_memmap_(tmp_path) is target
    assert set(target.keys()) == {"a", "nested", "note"}
    assert torch.equal(target["nested", "b"], torch.arange(3))
    ep = _episode()
    ep.save(tmp_path / "ep")
    other = _episode()
    assert other.load_(tmp_path / "ep") is other  # the older name
    assert torch.equal(other.obs, ep.obs)


def test_load_memmap_into_lazy_stack(tmp_path: Path) -> None:
    _stack().save(tmp_path)
    target = lazy_stack([TensorDict(a=torch.full((2,), 5.0)), TensorDict(a=torch.full((2,), 5.0))])
    target.load_memmap_(tmp_path)
    _same(target, _stack())


def test_load_memmap_never_unpickles(tmp_path: Path) -> None:
    _td().save(tmp_path)
    with pytest.raises(ValueError, match="never unpickles"):
        _td().load_memmap_(tmp_path, allow_pickle=True)


def test_memmap_refresh_sees_new_entries(tmp_path: Path) -> None:
    mapped = TensorDict(a=torch.zeros(3), batch_size=[3]).memmap(tmp_path)
    TensorDict(a=torch.ones(3), b=torch.ones(3), batch_size=[3]).save(tmp_path)
    assert mapped.memmap_refresh_() is mapped
    assert set(mapped.keys()) == {"a", "b"} and mapped["a"].tolist() == [1.0] * 3
    with pytest.raises(RuntimeError, match="memmap_refresh_"):
        _td().memmap_refresh_()


def test_saved_path_rules(tmp_path: Path) -> None:
    with pytest.raises(AttributeError, match="not memory-mapped"):
        _ = _td().saved_path
    saved = _episode().memmap(tmp_path / "e")
    assert saved.saved_path == tmp_path / "e"
    assert saved.info.saved_path == tmp_path / "e" / "info"  # a nested level's own directory
    stack = _stack().memmap(tmp_path / "s")
    assert stack.saved_path == tmp_path / "s"
    mixed = saved.unlock_().clone(recurse=False)
    mixed.obs = torch.zeros(3, 4)  # one leaf in memory: no longer saved in one directory
    with pytest.raises(AttributeError):
        _ = mixed.saved_path


def test_make_memmap_nested_and_reloaded(tmp_path: Path) -> None:
    saved = _td().memmap(tmp_path)
    x = saved.make_memmap(("fresh", "x"), (3, 4), dtype=torch.int32)
    assert isinstance(x, MemoryMappedTensor) and x.dtype == torch.int32
    assert torch.equal(x, torch.zeros(3, 4, dtype=torch.int32))
    assert saved["fresh", "x"] is x and saved.is_locked
    x.fill_(7)
    loaded = TensorDict.load(tmp_path)
    assert torch.equal(loaded["fresh", "x"], torch.full((3, 4), 7, dtype=torch.int32))
    assert torch.equal(loaded["a"], _td()["a"])
    default = saved.make_memmap("d", torch.Size([3]))
    assert default.dtype == torch.get_default_dtype()
    with pytest.raises(KeyError, match="exists"):
        saved.make_memmap("a", (3, 2))


def test_make_memmap_from_tensor(tmp_path: Path) -> None:
    saved = _td().memmap(tmp_path)
    source = torch.arange(6.0).reshape(3, 2)
    copy = saved.make_memmap_from_tensor(("nested", "y"), source)
    assert torch.equal(copy, source) and copy.untyped_storage().data_ptr() != source.data_ptr()
    empty = saved.make_memmap_from_tensor("z", source, copy_data=False)
    assert empty.shape == source.shape and empty.dtype == source.dtype
    loaded = TensorDict.load(tmp_path)
    assert torch.equal(loaded["nested", "y"], source)
    with pytest.raises(RuntimeError, match="not memory-mapped"):
        _td().make_memmap_from_tensor("q", source)
    with pytest.raises(TypeError, match="expected a tensor"):
        saved.make_memmap_from_tensor("q", [1, 2, 3])  # type: ignore[arg-type]


def test_make_memmap_on_typed_and_lazy(tmp_path: Path) -> None:
    saved = _episode().memmap(tmp_path / "e")
    x = saved.make_memmap_from_tensor(("extra", "more"), torch.ones(3), copy_data=True)
    assert torch.equal(saved.extra["more"], x)
    assert torch.equal(Episode.load(tmp_path / "e").extra["more"], torch.ones(3))
    with pytest.raises(Exception):  # noqa: B017  (not a field: the typed class refuses it)
        saved.make_memmap("not_a_field", (3,))
    assert not (tmp_path / "e" / "not_a_field.memmap").exists()  # nothing left behind
    stack = _stack().memmap(tmp_path / "s")
    with pytest.raises(NotImplementedError, match="lazy stack"):
        stack.make_memmap("x", (2, 2))


def test_make_memmap_from_storage(tmp_path: Path) -> None:
    saved = _td().memmap(tmp_path)
    wanted = tmp_path / "w.memmap"
    torch.arange(3.0).numpy().tofile(wanted)
    storage = torch.UntypedStorage.from_file(str(wanted), shared=True, nbytes=12)
    result = saved.make_memmap_from_storage("w", storage, (3,), dtype=torch.float32)
    assert result.tolist() == [0.0, 1.0, 2.0]
    assert TensorDict.load(tmp_path)["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="must map the file"):
        saved.make_memmap_from_storage("v", torch.UntypedStorage(12), (3,))


def test_make_memmap_refuses_symlinked_levels(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    saved = _td().memmap(tmp_path / "d")
    os.symlink(outside, tmp_path / "d" / "evil")
    with pytest.raises(ValueError, match="symbolic link"):
        saved.make_memmap(("evil", "x"), (3,))
    assert list(outside.iterdir()) == []


def test_hostile_meta_names_the_file(tmp_path: Path) -> None:
    _td().save(tmp_path)
    meta = tmp_path / "meta.json"
    raw = json.loads(meta.read_text())
    raw["entries"][0]["file"] = "../../etc/passwd"
    meta.write_text(json.dumps(raw))
    with pytest.raises(MemmapFormatError, match=str(tmp_path)):
        TensorDict.load(tmp_path)
    meta.write_text("not json")
    with pytest.raises(MemmapFormatError, match="meta.json"):
        tensorclass.load(tmp_path)


def test_load_refuses_symlinks_out_of_the_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    torch.ones(3, 2).numpy().tofile(outside / "secret")
    _td().save(tmp_path / "leaf")
    os.unlink(tmp_path / "leaf" / "a.memmap")
    os.symlink(outside / "secret", tmp_path / "leaf" / "a.memmap")
    with pytest.raises(MemmapFormatError, match="a.memmap"):
        TensorDict.load(tmp_path / "leaf")
    _td().save(tmp_path / "level")
    TensorDict(b=torch.arange(3), c=torch.ones(3, dtype=torch.bool), batch_size=[3]).save(
        outside / "nested"
    )
    for entry in (tmp_path / "level" / "nested").iterdir():
        entry.unlink()
    (tmp_path / "level" / "nested").rmdir()
    os.symlink(outside / "nested", tmp_path / "level" / "nested")
    with pytest.raises(MemmapFormatError, match="symbolic link"):
        tensorclass.load(tmp_path / "level")
    target = _td()
    with pytest.raises(MemmapFormatError, match="symbolic link"):
        target.load_memmap_(tmp_path / "level")
    assert torch.equal(target["a"], _td()["a"])  # left unchanged


@pytest.mark.parametrize("make", [_td, _episode, _stack])
def test_memmap_refresh_every_kind(tmp_path: Path, make) -> None:
    mapped = make().memmap(tmp_path)
    changed = make()
    for tensor in tensors_of(changed):
        tensor.logical_not_() if tensor.dtype == torch.bool else tensor.add_(1)
    changed.save(tmp_path)  # another writer replaces the save
    assert mapped.memmap_refresh_() is mapped
    _same(mapped, changed)
    assert mapped.saved_path == tmp_path
