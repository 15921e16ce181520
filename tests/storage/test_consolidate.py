"""consolidate / is_consolidated / from_consolidated, and the one-buffer pickling, to(device)
and share_memory_ of a consolidated instance."""

import io
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import tensorclass
from tensorclass import (
    LazyStackedTensorDict,
    MemmapFormatError,
    TensorClass,
    TensorDict,
    lazy_stack,
)
from tensorclass.engine.core.state import TensorCore
from tensorclass.engine.storage.consolidate import _rebuild_consolidated, rebuild_consolidated
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
        nested={"b": torch.arange(3), "c": torch.tensor([True, False, True])},
        h=torch.ones(3, dtype=torch.float16),
        note="hello",
        batch_size=[3],
    )


def _episode(extra: bool = True) -> Episode:
    return Episode(
        obs=torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),
        info=Info(step=torch.arange(3), note="n", batch_size=[3]),
        extra=TensorDict(r=torch.ones(3, 1, dtype=torch.float64), batch_size=[3])
        if extra
        else None,
        label="ep",
        batch_size=[3],
    )


def _stack() -> LazyStackedTensorDict:
    return lazy_stack(
        [
            TensorDict(a=torch.zeros(2), b=torch.arange(1)),
            TensorDict(a=torch.ones(2), b=torch.arange(3)),
        ]
    )


MAKERS = [_td, _episode, lambda: _episode(False), _stack]


def _leaves(x: Any) -> list[torch.Tensor]:
    if isinstance(x, LazyStackedTensorDict):
        return [t for m in x.members for t in _leaves(m)]
    return [
        v for v in x.values(include_nested=True, leaves_only=True) if isinstance(v, torch.Tensor)
    ]


def _check_same(result: Any, source: Any) -> None:
    assert type(result) is type(source)
    assert result.batch_size == source.batch_size
    for mine, theirs in zip(_leaves(result), _leaves(source), strict=True):
        assert mine.dtype == theirs.dtype and torch.equal(mine, theirs)
    if isinstance(source, Episode):
        assert result.label == source.label and result.info.note == source.info.note
        assert (result.extra is None) == (source.extra is None)


def _one_storage(x: Any) -> bool:
    storages = {t.untyped_storage().data_ptr() for t in _leaves(x)}
    return len(storages) == 1


@pytest.mark.parametrize("make", MAKERS)
def test_consolidate_round_trip(make) -> None:
    source = make()
    result = source.consolidate()
    _check_same(result, source)
    assert result.is_consolidated() and not source.is_consolidated()
    assert _one_storage(result) and result.is_locked
    assert result.consolidate() is result  # consolidated already


@pytest.mark.parametrize("make", MAKERS)
def test_pickle_sends_one_buffer(make) -> None:
    result = make().consolidate()
    back = pickle.loads(pickle.dumps(result))
    _check_same(back, make())
    assert back.is_consolidated() and _one_storage(back)
    # the pickle holds one buffer (its bytes), not one storage per leaf
    data = pickle.dumps(result)
    assert data.count(b"rebuild_consolidated") == 1 and b"_rebuild_tensor" not in data


@pytest.mark.parametrize("make", MAKERS)
def test_torch_save_weights_only(make) -> None:
    buffer = io.BytesIO()
    torch.save(make().consolidate(), buffer)
    buffer.seek(0)
    back = torch.load(buffer, weights_only=True)
    _check_same(back, make())
    assert back.is_consolidated()


@pytest.mark.parametrize("make", MAKERS)
def test_to_device_moves_one_buffer(make) -> None:
    result = make().consolidate()
    moved = result.to("meta")
    assert all(t.device.type == "meta" for t in _leaves(moved))
    assert len({id(t.untyped_storage()) for t in _leaves(moved)}) == 1
    assert moved.is_consolidated()
    assert [t.shape for t in _leaves(moved)] == [t.shape for t in _leaves(result)]
    assert [t.dtype for t in _leaves(moved)] == [t.dtype for t in _leaves(result)]
    assert result.to("cpu") is result or result.to("cpu").is_consolidated()
    cast = result.to(torch.float64)  # a cast is per leaf, as before
    assert all(t.dtype == torch.float64 for t in _leaves(cast) if t.is_floating_point())


@pytest.mark.parametrize("make", MAKERS)
def test_share_memory_shares_one_buffer(make) -> None:
    result = make().consolidate()
    assert result.share_memory_() is result
    assert result.is_shared() and result.is_consolidated() and _one_storage(result)
    _check_same(result, make())


def test_consolidate_share_memory_keyword() -> None:
    result = _td().consolidate(share_memory=True)
    assert result.is_shared() and result.is_consolidated()


def test_in_place_writes_keep_it_replacing_ends_it() -> None:
    result = _td().consolidate()
    result["a"].add_(1)
    assert result.is_consolidated()
    result.unlock_()
    result["a"] = torch.zeros(3, 2)
    assert not result.is_consolidated()
    assert not result["nested"].is_consolidated()  # a part of the buffer is not all of it
    assert not _td().consolidate()[0].is_consolidated()


def test_inplace_keyword_returns_self() -> None:
    td = _td()
    assert td.consolidate(inplace=True) is td
    assert td.is_consolidated() and not td.is_locked
    _check_same(td, _td())


def test_threads_and_return_early() -> None:
    future = _td().consolidate(num_threads=2, return_early=True)
    assert isinstance(future, TensorDictFuture)
    result = future.result()
    assert result.is_consolidated()
    _check_same(result, _td())


def test_devices_recorded() -> None:
    td = TensorDict(a=torch.zeros(2), batch_size=[2], device="cpu")
    result = td.consolidate(device="meta")
    assert result.device == torch.device("meta") and result["a"].device.type == "meta"
    with pytest.raises(ValueError, match="filename"):
        td.consolidate(filename="x", device="meta")


def test_empty_and_non_tensor_only() -> None:
    only = TensorDict(note="x").consolidate()
    assert only["note"] == "x" and not only.is_consolidated()
    zero = TensorDict(a=torch.zeros(0)).consolidate()
    assert zero["a"].shape == (0,)


# -- files -------------------------------------------------------------------------------


@pytest.mark.parametrize("make", MAKERS)
def test_file_round_trip(tmp_path: Path, make) -> None:
    path = tmp_path / "data.bin"
    result = make().consolidate(filename=path)
    _check_same(result, make())
    assert result.is_consolidated()
    loaded = tensorclass.from_consolidated(path)
    _check_same(loaded, make())
    assert loaded.is_consolidated() and not loaded.is_locked
    again = type(make()).from_consolidated(path)
    _check_same(again, make())


def test_file_writes_and_copy_on_write(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    result = _td().consolidate(filename=path)
    result["a"].fill_(5.0)  # the buffer maps the file: writes reach it
    loaded = TensorDict.from_consolidated(path)
    assert torch.equal(loaded["a"], torch.full((3, 2), 5.0))
    loaded["a"].fill_(-1.0)  # copy-on-write: not written back
    assert torch.equal(TensorDict.from_consolidated(path)["a"], torch.full((3, 2), 5.0))
    other = result.consolidate(filename=tmp_path / "other")  # a new file, as asked
    assert other is not result and other.is_consolidated()
    assert torch.equal(TensorDict.from_consolidated(tmp_path / "other")["a"], result["a"])


def test_consolidated_again_honours_device_and_sharing() -> None:
    result = _td().consolidate()
    assert result.consolidate(device="cpu") is result
    moved = result.consolidate(device="meta")
    assert moved is not result and moved["a"].device.type == "meta" and moved.is_consolidated()
    shared = result.consolidate(share_memory=True)
    assert shared is not result and shared.is_shared() and shared.is_consolidated()
    assert not result.is_shared()
    assert shared.consolidate(share_memory=True) is shared


def test_from_consolidated_wrong_class(tmp_path: Path) -> None:
    _episode().consolidate(filename=tmp_path / "e")
    with pytest.raises(TypeError, match="not a TensorDict"):
        TensorDict.from_consolidated(tmp_path / "e")


def _rewrite(path: Path, change) -> None:
    raw = path.read_bytes()
    length = int.from_bytes(raw[-16:-8], "little")
    data, text = raw[: -16 - length], raw[-16 - length : -16]
    description = json.loads(text)
    change(description)
    new = json.dumps(description).encode()
    path.write_bytes(data + new + len(new).to_bytes(8, "little") + raw[-8:])


def _set_first_tensor(key: str, value: Any):
    def change(description: dict) -> None:
        description["root"]["entries"][0][key] = value

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set_first_tensor("offset", 1 << 40), "outside the data"),
        (_set_first_tensor("offset", 3), "outside the data"),
        (_set_first_tensor("dtype", "object"), "bad dtype"),
        (_set_first_tensor("shape", [3, -2]), "bad dtype, shape"),
        (_set_first_tensor("shape", [4, 2]), "outside the data|misses the batch"),
        (_set_first_tensor("type", "pickle"), "unknown type"),
        (lambda d: d["root"].update({"class": "os:system"}), "not a tensor class"),
        (lambda d: d["root"].update({"class": "not_imported_mod_xyz:Evil"}), "not imported"),
        (lambda d: d.update({"version": 99}), "version"),
        (lambda d: d["root"].update({"batch_size": [4]}), "misses the batch"),
    ],
)
def test_hostile_files_name_the_file(tmp_path: Path, change, message: str) -> None:
    path = tmp_path / "data.bin"
    _td().consolidate(filename=path)
    _rewrite(path, change)
    with pytest.raises(MemmapFormatError, match=message) as info:
        tensorclass.from_consolidated(path)
    assert str(path) in str(info.value) or "not_imported" in str(info.value)
    assert "not_imported_mod_xyz" not in sys.modules  # nothing imported


def test_hostile_typed_level(tmp_path: Path) -> None:
    path = tmp_path / "e.bin"
    _episode().consolidate(filename=path)

    def change(description: dict) -> None:
        description["root"]["entries"][0]["key"] = "not_a_field"

    _rewrite(path, change)
    with pytest.raises(MemmapFormatError, match="not a field of Episode"):
        Episode.from_consolidated(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "too short"),
        (b"x" * 64, "marker"),
        (b"{}" + (2).to_bytes(8, "little") + b"TCCONS01", "format"),
    ],
)
def test_broken_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "broken.bin"
    path.write_bytes(content)
    with pytest.raises(MemmapFormatError, match=message):
        tensorclass.from_consolidated(path)
    with pytest.raises(MemmapFormatError, match="cannot read"):
        tensorclass.from_consolidated(tmp_path / "missing.bin")


def test_rebuild_refuses_malformed_pickles() -> None:
    skeleton = TensorDict._new({"a": (0, torch.float32, (2,), (1,))}, torch.Size([]), None, None)
    good = _rebuild_consolidated(torch.zeros(8, dtype=torch.uint8), skeleton)
    assert good["a"].tolist() == [0.0, 0.0]
    bad = TensorDict._new({"a": (2, torch.float32, (2,), (1,))}, torch.Size([]), None, None)
    with pytest.raises(ValueError, match="bad offset"):
        _rebuild_consolidated(torch.zeros(8, dtype=torch.uint8), bad)
    bad = TensorDict._new({"a": ("x", 1)}, torch.Size([]), None, None)
    with pytest.raises(ValueError, match="malformed"):
        _rebuild_consolidated(torch.zeros(8, dtype=torch.uint8), bad)
    bad = TensorDict._new({"a": (0, torch.float32, (4,), (1,))}, torch.Size([]), None, None)
    with pytest.raises(ValueError, match="outside its buffer"):
        _rebuild_consolidated(torch.zeros(8, dtype=torch.uint8), bad)
    bad = TensorDict._new({"a": (0, torch.float32, "xy", (1,))}, torch.Size([]), None, None)
    with pytest.raises(ValueError, match="outside its buffer"):
        _rebuild_consolidated(torch.zeros(8, dtype=torch.uint8), bad)
    with pytest.raises(ValueError, match="uint8"):
        _rebuild_consolidated(torch.zeros(2), skeleton)


def _crafted_pickle(description_edit: Any) -> Any:
    """The arguments of a consolidated instance's pickle, with its description edited as a
    crafted file could."""
    packed = TensorDict(a=torch.arange(3.0), batch_size=[3]).consolidate()
    rebuild, (buffer, description) = packed.__reduce_ex__(2)
    assert rebuild is rebuild_consolidated
    return rebuild, buffer.tensor, description_edit(list(description))


def test_crafted_consolidated_pickle_may_not_build_an_engine_class() -> None:
    def internal(level: list[Any]) -> tuple[Any, ...]:
        level[1] = TensorCore
        return tuple(level)

    rebuild, buffer, description = _crafted_pickle(internal)
    with pytest.raises(ValueError, match="is not a tensor class a pickle may build"):
        rebuild(buffer, description)


def test_crafted_consolidated_pickle_checks_leaves_against_the_batch() -> None:
    def batch(level: list[Any]) -> tuple[Any, ...]:
        level[2] = (5,)  # the leaf holds 3 rows
        return tuple(level)

    rebuild, buffer, description = _crafted_pickle(batch)
    with pytest.raises(ValueError, match="cannot unpickle a consolidated tensor class"):
        rebuild(buffer, description)
