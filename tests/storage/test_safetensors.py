"""to_safetensors / from_safetensors: round trips, memory mapping, tensordict's files, hostile files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
import torch

from tensorclass import (
    FileFormatError,
    LazyStackedTensorDict,
    RecordedClassError,
    TensorDict,
    from_safetensors,
    to_safetensors,
)
from tensorclass.engine.storage.memmap.tensor import MemoryMappedTensor

from ._formats_data import FmtRecord, plain, same, stacked, typed

pytest.importorskip("safetensors")


@pytest.mark.parametrize("make", [plain, typed, stacked])
def test_round_trip(tmp_path: Path, make: object) -> None:
    data = make()  # type: ignore[operator]
    data.to_safetensors(tmp_path / "f.safetensors")
    back = from_safetensors(tmp_path / "f.safetensors")
    same(back, data)


def test_class_methods_and_names(tmp_path: Path) -> None:
    data = typed().refine_names("rows")
    to_safetensors(data, tmp_path / "f")
    back = FmtRecord.from_safetensors(tmp_path / "f")
    assert isinstance(back, FmtRecord) and back.names == ["rows"] and back.name == "run-1"
    plain_back = TensorDict.from_safetensors(tmp_path / "f", classes="tensordict")
    assert type(plain_back) is TensorDict and plain_back["inner", "z"].shape == (4, 2)


def test_lazy_stack_of_different_shapes(tmp_path: Path) -> None:
    ragged = LazyStackedTensorDict.lazy_stack(
        [TensorDict(a=torch.zeros(2), batch_size=[]), TensorDict(a=torch.ones(3), batch_size=[])]
    )
    ragged.to_safetensors(tmp_path / "f")
    back = from_safetensors(tmp_path / "f")
    assert isinstance(back, LazyStackedTensorDict)
    assert [m["a"].tolist() for m in back.tensordicts] == [[0.0, 0.0], [1.0, 1.0, 1.0]]


def test_loading_maps_the_file(tmp_path: Path) -> None:
    TensorDict(a=torch.arange(1000.0), batch_size=[1000]).to_safetensors(tmp_path / "f")
    back = from_safetensors(tmp_path / "f")
    assert not isinstance(back["a"], MemoryMappedTensor)  # a plain view of one mapping
    back["a"][0] = 5.0  # copy-on-write: the file keeps its bytes
    assert from_safetensors(tmp_path / "f")["a"][0] == 0.0


def test_tensordict_reads_ours_and_we_read_tensordicts(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    plain().to_safetensors(tmp_path / "ours")
    theirs = tensordict.from_safetensors(tmp_path / "ours")
    torch.testing.assert_close(theirs["b", "c"], plain()["b", "c"])
    peer = tensordict.TensorDict(
        a=torch.ones(2, 2), s="x", sub={"c": torch.zeros(2)}, batch_size=[2]
    )
    tensordict.to_safetensors(peer, tmp_path / "theirs")
    back = from_safetensors(tmp_path / "theirs")
    assert back.batch_size == (2,) and back["s"] == "x" and back["sub", "c"].tolist() == [0.0, 0.0]


def test_a_checkpoint_without_layout_loads_nested(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    save_file({"0.weight": torch.ones(4, 3), "0.bias": torch.zeros(4)}, tmp_path / "m")
    params = from_safetensors(tmp_path / "m")
    assert params.batch_size == () and params["0", "weight"].shape == (4, 3)


def _rewrite_layout(path: Path, edit: object) -> None:
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    edit(header)  # type: ignore[operator]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + length :])


def _set_layout(header: dict, change: object) -> None:
    layout = json.loads(header["__metadata__"]["tensordict"])
    change(layout)  # type: ignore[operator]
    header["__metadata__"]["tensordict"] = json.dumps(layout)


def test_hostile_files_name_the_file(tmp_path: Path) -> None:
    file = tmp_path / "f"
    typed().to_safetensors(file)

    def unknown_class(layout: dict) -> None:
        layout["root"]["class"] = "<class 'os.system'>"

    _rewrite_layout(file, lambda h: _set_layout(h, unknown_class))
    with pytest.raises(RecordedClassError, match="not a tensor class"):
        from_safetensors(file)

    typed().to_safetensors(file)

    def not_imported(layout: dict) -> None:
        layout["root"]["class"] = "<class 'evil_module_not_here.Payload'>"

    _rewrite_layout(file, lambda h: _set_layout(h, not_imported))
    with pytest.raises(RecordedClassError, match=str(file)):
        from_safetensors(file)

    typed().to_safetensors(file)
    _rewrite_layout(file, lambda h: h["__metadata__"].update(tensordict="{not json"))
    with pytest.raises(FileFormatError, match=f"{file}.*not valid JSON"):
        from_safetensors(file)

    plain().to_safetensors(file)

    def wrong_batch(layout: dict) -> None:
        layout["root"]["batch_size"] = [5]

    _rewrite_layout(file, lambda h: _set_layout(h, wrong_batch))
    with pytest.raises(FileFormatError, match=f"{file}.*does not fit"):
        from_safetensors(file)

    plain().to_safetensors(file)
    _rewrite_layout(file, lambda h: h["a"].update(shape=[400, 3]))
    with pytest.raises(FileFormatError, match=f"{file}.*'a'"):
        from_safetensors(file)

    plain().to_safetensors(file)
    _rewrite_layout(file, lambda h: h["a"].update(dtype="PICKLE"))
    with pytest.raises(FileFormatError, match=f"{file}.*unknown dtype"):
        from_safetensors(file)

    file.write_bytes(b"\xff" * 20)
    with pytest.raises(FileFormatError, match=str(file)):
        from_safetensors(file)


def test_typed_class_refuses_keys_it_does_not_declare(tmp_path: Path) -> None:
    plain().to_safetensors(tmp_path / "f")
    with pytest.raises(FileFormatError, match="not a field of FmtRecord"):
        FmtRecord.from_safetensors(tmp_path / "f")


def test_values_json_cannot_store_are_refused_before_writing(tmp_path: Path) -> None:
    data = TensorDict(a=torch.zeros(2), obj=object(), batch_size=[2])
    with pytest.raises(TypeError, match="obj"):
        data.to_safetensors(tmp_path / "f")
    assert not (tmp_path / "f").exists()


def test_keys_with_one_stored_name_are_refused(tmp_path: Path) -> None:
    data = TensorDict({"a.b": torch.zeros(2), "a": {"b": torch.ones(2)}}, batch_size=[2])
    with pytest.raises(ValueError, match="same stored name"):
        data.to_safetensors(tmp_path / "f")


def test_non_tensor_stacks_metadata_and_unbatched_tensors(tmp_path: Path) -> None:
    from tensorclass import MetaData, UnbatchedTensor

    data = torch.stack([TensorDict(a=torch.zeros(()), s=str(i)) for i in range(3)])
    data["m"] = MetaData({"k": 1})
    data["u"] = UnbatchedTensor(torch.arange(5))
    data.to_safetensors(tmp_path / "f")
    back = from_safetensors(tmp_path / "f")
    same(back, data)
    assert back["s"] == ["0", "1", "2"] and type(back["u"]) is UnbatchedTensor
    assert back[1]["s"] == "1"


def test_a_lazy_stack_of_typed_members(tmp_path: Path) -> None:
    members = [typed(), typed()[:3]]
    stack = LazyStackedTensorDict.lazy_stack([members[0][:3], members[1]], 0)
    stack.to_safetensors(tmp_path / "f")
    back = from_safetensors(tmp_path / "f")
    assert isinstance(back, LazyStackedTensorDict) and back.batch_size == (2, 3)
    assert all(isinstance(m, FmtRecord) for m in back.tensordicts)
    same(back[1], stack[1])


def test_a_missing_extra_names_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorclass.engine.storage.formats import extras

    def missing(name: str) -> None:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(extras.importlib, "import_module", missing)
    with pytest.raises(ImportError, match=r"tensorclass\[formats\]"):
        plain().to_safetensors(tmp_path / "f")
    with pytest.raises(ImportError, match="h5py"):
        plain().to_h5(tmp_path / "g")
