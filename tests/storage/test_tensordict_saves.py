"""Opening saves written by tensordict 0.15's ``memmap()`` (real saves, made by tensordict).

Loading reads them as our own saves are read: JSON and raw files only, never a pickle.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    LazyStackedTensorDict,
    MemmapFormatError,
    NonTensorStack,
    TensorClass,
    TensorDict,
    load_memmap,
    read_metadata,
)
from tensorclass.cli import main
from tensorclass.cli.validate import check

td = pytest.importorskip("tensordict")


class TdSavePoint(TensorClass):
    """The class tensordict's ``TdSavePoint`` saves map to (matched by name)."""

    x: torch.Tensor
    label: str


def _td_point_class() -> Any:
    @td.tensorclass
    class TdSavePoint:  # the same name as ours, defined with tensordict
        x: torch.Tensor
        label: str

    return TdSavePoint


def _td_unknown_class() -> Any:
    @td.tensorclass
    class TdSaveNobodyDefines:
        y: torch.Tensor

    return TdSaveNobodyDefines


def _sample() -> Any:
    """A tensordict TensorDict with every feature we read."""
    return td.TensorDict(
        a=torch.arange(6, dtype=torch.float32).reshape(3, 2),
        b=torch.arange(3),
        c=torch.tensor([True, False, True]),
        h=torch.arange(12, dtype=torch.bfloat16).reshape(3, 4),
        empty=torch.zeros(3, 0),
        nested=td.TensorDict(
            d=torch.arange(15).reshape(3, 5),
            deeper=td.TensorDict(e=torch.linspace(0, 1, 3).unsqueeze(-1), batch_size=[3]),
            batch_size=[3],
        ),
        s="hello",
        n=td.NonTensorData(3.5),
        i=td.NonTensorData(7),
        l=td.NonTensorData([1, 2, {"k": "v"}]),
        point=_td_point_class()(x=torch.ones(3, 2), label="pt", batch_size=[3]),
        batch_size=[3],
        names=["row"],
    )


@pytest.fixture
def sample_save(tmp_path: Path) -> Path:
    path = tmp_path / "sample"
    _sample().memmap(path)
    return path


def _assert_tensor(ours: Any, theirs: torch.Tensor) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert torch.equal(torch.as_tensor(ours).clone(), theirs.clone())


def test_round_trip_values(sample_save: Path) -> None:
    original = _sample()
    loaded = load_memmap(sample_save)
    assert type(loaded) is TensorDict and loaded.batch_size == torch.Size([3])
    assert loaded.names == ["row"]
    for key in ("a", "b", "c", "h", "empty"):
        _assert_tensor(loaded[key], original[key])
    _assert_tensor(loaded["nested", "d"], original["nested", "d"])
    _assert_tensor(loaded["nested", "deeper", "e"], original["nested", "deeper", "e"])
    assert loaded["s"] == "hello" and loaded["n"] == 3.5 and loaded["i"] == 7
    assert loaded["l"] == [1, 2, {"k": "v"}]
    point = loaded["point"]
    assert type(point) is TdSavePoint  # the recorded tensorclass, matched by name
    _assert_tensor(point.x, original["point"].x)
    assert point.label == "pt"
    assert loaded.is_locked


def test_td_load_memmap_and_plain_classes(sample_save: Path) -> None:
    loaded = TensorDict.load_memmap(sample_save)
    assert type(loaded["point"]) is TdSavePoint
    plain = TensorDict.load_memmap(sample_save, classes="tensordict")
    assert type(plain["point"]) is TensorDict and plain["point", "label"] == "pt"
    assert load_memmap(sample_save, subpath="point")["x"].shape == (3, 2)


def test_top_level_tensorclass_and_given_class(tmp_path: Path) -> None:
    _td_point_class()(x=torch.arange(4.0).reshape(2, 2), label="q", batch_size=[2]).memmap(
        tmp_path / "p"
    )
    loaded = load_memmap(tmp_path / "p")
    assert type(loaded) is TdSavePoint and loaded.label == "q"
    assert loaded.x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert type(TdSavePoint.load_memmap(tmp_path / "p")) is TdSavePoint


def test_unknown_tensorclass_loads_as_tensordict_and_says_so(tmp_path: Path) -> None:
    _td_unknown_class()(y=torch.zeros(2), batch_size=[2]).memmap(tmp_path / "u")
    with pytest.warns(UserWarning, match="TdSaveNobodyDefines.*loads as TensorDict"):
        loaded = load_memmap(tmp_path / "u")
    assert type(loaded) is TensorDict and loaded["y"].tolist() == [0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert type(load_memmap(tmp_path / "u", classes="tensordict")) is TensorDict


def test_lazy_stack(tmp_path: Path) -> None:
    members = [
        td.TensorDict(a=torch.zeros(2), s="x", batch_size=[]),
        td.TensorDict(a=torch.ones(2), extra=torch.arange(3), s="y", batch_size=[]),
    ]
    td.lazy_stack(members, dim=0).memmap(tmp_path / "stack")
    td.TensorDict(inner=td.lazy_stack(members, dim=0), batch_size=[2]).memmap(tmp_path / "outer")
    for loaded in (load_memmap(tmp_path / "stack"), load_memmap(tmp_path / "outer")["inner"]):
        assert isinstance(loaded, LazyStackedTensorDict) and loaded.batch_size == (2,)
        assert loaded.members[0]["a"].tolist() == [0.0, 0.0]
        assert loaded.members[1]["extra"].tolist() == [0, 1, 2]
        assert [member["s"] for member in loaded.members] == ["x", "y"]
        assert "extra" not in loaded.members[0].keys()


def test_non_tensor_stack_and_metadata(tmp_path: Path) -> None:
    stacked = torch.stack(
        [td.TensorDict(s=s, x=torch.zeros(()), batch_size=[]) for s in ("a", "b")]
    )
    stacked.set("m", td.MetaData("run"))
    stacked.memmap(tmp_path / "nts")
    kinds = {e.key: e.type for e in read_metadata(tmp_path / "nts").entries}
    assert kinds == {"s": "non_tensor_stack", "x": "tensor", "m": "non_tensor"}
    loaded = load_memmap(tmp_path / "nts")
    assert isinstance(loaded._data["s"], NonTensorStack) and loaded["s"] == ["a", "b"]
    assert loaded["m"] == "run" and loaded._data["m"].meta


def test_inspect(sample_save: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(sample_save)]) == 0
    out = capsys.readouterr().out
    assert "tensordict's memmap" in out
    assert "bfloat16" in out and "TdSavePoint" in out and '"hello"' in out
    assert main(["inspect", "--json", str(sample_save)]) == 0
    tree = json.loads(capsys.readouterr().out)["tree"]
    assert tree["origin"] == "tensordict"
    point = next(e for e in tree["entries"] if e["key"] == "point")["child"]
    assert point["tensordict_class"].endswith("TdSavePoint")


class TdSaveRow(TensorClass):
    a: torch.Tensor
    b: torch.Tensor


def test_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    td.TensorDict(a=torch.zeros(3, 2), b=torch.arange(3), batch_size=[3]).memmap(tmp_path / "ok")
    td.TensorDict(a=torch.zeros(3, 2), batch_size=[3]).memmap(tmp_path / "bad")
    assert check(tmp_path / "ok", TdSaveRow).ok
    result = check(tmp_path / "bad", TdSaveRow)
    assert not result.ok and not result.damaged
    assert [p["loc"] for p in result.problems] == [["b"]]
    schema = tmp_path / "td_save_schema.py"
    schema.write_text(
        "import torch\nfrom tensorclass import TensorClass\n\n"
        "class Row(TensorClass):\n    a: torch.Tensor\n    b: torch.Tensor\n"
    )
    sys_path = list(sys.path)
    try:
        ok = main(["validate", str(tmp_path / "ok"), "--schema", f"{schema}:Row"])
        bad = main(["validate", str(tmp_path / "bad"), "--schema", f"{schema}:Row"])
    finally:
        sys.path[:] = sys_path
    out = capsys.readouterr().out
    assert (ok, bad) == (0, 1), out
    assert "missing" in out


class _Opaque:
    def __init__(self) -> None:
        self.value = 1


def test_pickled_value_is_refused(tmp_path: Path) -> None:
    td.TensorDict(o=td.NonTensorData(_Opaque()), x=torch.zeros(2), batch_size=[2]).memmap(
        tmp_path / "p"
    )
    pickled = tmp_path / "p" / "o" / "other.pickle"
    assert pickled.exists()
    marker = tmp_path / "ran"
    # a pickle that would create ``marker`` if it were ever unpickled
    pickled.write_bytes(pickle.dumps({"data": _Touch(str(marker))}))
    with pytest.raises(MemmapFormatError, match="never loads") as err:
        load_memmap(tmp_path / "p")
    assert str(pickled) in str(err.value) and "arbitrary code" in str(err.value)
    assert not marker.exists()
    assert main(["inspect", str(tmp_path / "p")]) == 1
    assert not marker.exists()


class _Touch:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def test_pickled_non_tensor_stack_is_refused(tmp_path: Path) -> None:
    stacked = torch.stack([td.TensorDict(x=torch.zeros(()), batch_size=[]) for _ in range(2)])
    stacked.set("o", td.NonTensorStack(td.NonTensorData(_Opaque()), td.NonTensorData(_Opaque())))
    stacked.memmap(tmp_path / "p")
    with pytest.raises(MemmapFormatError, match="pickle.pkl"):
        load_memmap(tmp_path / "p")


def _simple_save(path: Path) -> Path:
    td.TensorDict(
        a=torch.zeros(2), sub=td.TensorDict(b=torch.ones(2), batch_size=[2]), batch_size=[2]
    ).memmap(path)
    return path


def _edit(meta_file: Path, change: Any) -> None:
    meta = json.loads(meta_file.read_text())
    change(meta)
    meta_file.write_text(json.dumps(meta))


def test_bad_json_names_the_file(tmp_path: Path) -> None:
    save = _simple_save(tmp_path / "s")
    (save / "sub" / "meta.json").write_text("{not json")
    with pytest.raises(MemmapFormatError, match="not valid JSON") as err:
        load_memmap(save)
    assert str(save / "sub" / "meta.json") in str(err.value)


def test_key_cannot_reach_outside(tmp_path: Path) -> None:
    save = _simple_save(tmp_path / "s")
    torch.ones(2).numpy().tofile(tmp_path / "outside.memmap")  # a file a naive join would find
    _edit(
        save / "meta.json",
        lambda meta: meta.update(
            {"../outside": {"device": "cpu", "shape": [2], "dtype": "torch.float32"}}
        ),
    )
    with pytest.raises(MemmapFormatError, match="missing") as err:
        load_memmap(save)
    assert str(save / "..%2Foutside.memmap") in str(err.value)


def test_symbolic_links_are_refused(tmp_path: Path) -> None:
    save = _simple_save(tmp_path / "s")
    outside = tmp_path / "outside.memmap"
    torch.ones(2).numpy().tofile(outside)
    (save / "a.memmap").unlink()
    (save / "a.memmap").symlink_to(outside)
    with pytest.raises(MemmapFormatError, match="not a regular file") as err:
        load_memmap(save)
    assert str(save / "a.memmap") in str(err.value)
    other = _simple_save(tmp_path / "t")
    os.rename(other / "sub", tmp_path / "elsewhere")
    (other / "sub").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(MemmapFormatError, match="symbolic link") as err:
        load_memmap(other)
    assert str(other / "meta.json") in str(err.value)


@pytest.mark.parametrize("shape", [[0, 2**63], [0, 2**62, 4], [2, -1], "3"])
def test_impossible_shapes(tmp_path: Path, shape: Any) -> None:
    save = _simple_save(tmp_path / "s")
    _edit(save / "meta.json", lambda meta: meta["a"].update(shape=shape))
    with pytest.raises(MemmapFormatError, match="shape|2\\*\\*63") as err:
        read_metadata(save)
    assert str(save / "meta.json") in str(err.value)


def test_hostile_format_fields(tmp_path: Path) -> None:
    cases = [
        ("meta.json", lambda meta: meta.update(shape=[3])),  # batch larger than the leaves
        ("meta.json", lambda meta: meta["a"].update(dtype="torch.object")),
        ("meta.json", lambda meta: meta["a"].update(is_nested=True)),
        ("meta.json", lambda meta: meta.update(_format_version=99)),
        ("sub/meta.json", lambda meta: meta.update(shape=[5])),
    ]
    for index, (name, change) in enumerate(cases):
        save = _simple_save(tmp_path / str(index))
        _edit(save / name, change)
        with pytest.raises(MemmapFormatError) as err:
            load_memmap(save)
        assert str(save / name) in str(err.value)


def test_truncated_file(tmp_path: Path) -> None:
    save = _simple_save(tmp_path / "s")
    with open(save / "sub" / "b.memmap", "r+b") as file:
        file.truncate(4)
    with pytest.raises(MemmapFormatError, match="truncated"):
        load_memmap(save)


def test_our_own_saves_are_unchanged(tmp_path: Path) -> None:
    ours = TensorDict(a=torch.arange(3), batch_size=[3]).memmap(tmp_path / "ours")
    meta = json.loads((tmp_path / "ours" / "meta.json").read_text())
    assert (
        meta["format"] == "tensorclass-memmap"
        and "origin" not in read_metadata(tmp_path / "ours").to_dict()
    )
    assert load_memmap(tmp_path / "ours")["a"].tolist() == ours["a"].tolist()


def test_lazy_stack_of_tensorclasses(tmp_path: Path) -> None:
    point = _td_point_class()
    stacked = td.lazy_stack(
        [point(x=torch.zeros(2), label="a", batch_size=[]), point(x=torch.ones(2), label="b")]
    )
    stacked.memmap(tmp_path / "points")
    loaded = load_memmap(tmp_path / "points")
    assert isinstance(loaded, LazyStackedTensorDict) and loaded.batch_size == (2,)
    assert [type(m) for m in loaded.members] == [TdSavePoint, TdSavePoint]
    assert [m.label for m in loaded.members] == ["a", "b"]
    assert loaded.members[1].x.tolist() == [1.0, 1.0]


def test_keys_named_like_format_fields(tmp_path: Path) -> None:
    keys = ("stack_dim", "custom_op", "_names", "data")
    td.TensorDict({key: torch.full((2,), float(i)) for i, key in enumerate(keys)}, [2]).memmap(
        tmp_path / "k"
    )
    loaded = load_memmap(tmp_path / "k")
    assert {key: loaded[key].tolist() for key in keys} == {
        key: [float(i)] * 2 for i, key in enumerate(keys)
    }


def test_jagged_tensor_is_not_read(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's prototype warning for nested tensors
        nested = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
    td.TensorDict(nt=nested, batch_size=[2]).memmap(tmp_path / "j")
    with pytest.raises(MemmapFormatError, match="nested \\(jagged\\) tensor") as err:
        load_memmap(tmp_path / "j")
    assert str(tmp_path / "j" / "meta.json") in str(err.value)
