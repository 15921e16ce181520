"""Tables: pandas, Arrow, Parquet, CSV and JSON round trips (1-D batches, one row each)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import pytest
import torch

import tensorclass as tc
from tensorclass import TableFormatError, TensorClass, TensorDict

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


class Inner(TensorClass):
    x: torch.Tensor


class Row(TensorClass):
    a: torch.Tensor
    inner: Inner
    opt: Optional[torch.Tensor] = None  # noqa: UP045  (the spelling users write)
    note: str = ""


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _row(opt: bool = True) -> Row:
    g = _gen()
    return Row(
        a=torch.arange(4),
        inner=Inner(x=torch.randn(4, generator=g), batch_size=[4]),
        opt=torch.rand(4, generator=g) if opt else None,
        note="hello",
        batch_size=[4],
    )


def _td() -> TensorDict:
    g = _gen()
    return TensorDict(
        {
            "i64": torch.arange(4),
            "i8": torch.arange(4, dtype=torch.int8),
            "u8": torch.arange(4, dtype=torch.uint8),
            "f16": torch.rand(4, generator=g).half(),
            "f32": torch.rand(4, generator=g),
            "f64": torch.rand(4, generator=g, dtype=torch.float64),
            "flag": torch.tensor([True, False, True, True]),
            "nest": {
                "deep": {"v": torch.randn(4, generator=g)},
                "w": torch.arange(4, dtype=torch.int32),
            },
            "name": "shared",
            "tags": tc.NonTensorStack.from_list(["a", "b", "c", "d"]),
        },
        batch_size=[4],
    )


def _save_load(fmt: str, obj: Any, cls: Any, tmp_path: Path, **kwargs: Any) -> Any:
    if fmt == "pandas":
        return cls.from_pandas(obj.to_pandas(), **kwargs)
    if fmt == "arrow":
        return cls.from_arrow(obj.to_arrow())
    path = tmp_path / f"data.{fmt}"
    getattr(obj, f"to_{fmt}")(path)
    return getattr(cls, f"from_{fmt}")(path, **kwargs)


def _assert_same_values(got: Any, want: Any, exact_dtype: bool) -> None:
    assert type(got) is type(want)
    assert got.batch_size == want.batch_size
    assert set(got.keys(True, True)) == set(want.keys(True, True))
    for key in want.keys(True, True):
        w, g = want[key], got[key]
        if isinstance(w, torch.Tensor):
            if exact_dtype:
                assert g.dtype == w.dtype, key
                torch.testing.assert_close(g, w)
            else:
                torch.testing.assert_close(g.to(w.dtype), w, rtol=1e-6, atol=1e-6)
        elif type(w) is list and type(g) is not list:  # a column of equal values: shared
            assert w == [g] * len(w), key
        else:
            assert g == w, key


EXACT = ["pandas", "arrow", "parquet"]
TEXT = ["csv", "json"]


@pytest.mark.parametrize("fmt", EXACT + TEXT)
def test_tensordict_round_trip_restores_nesting_and_values(fmt: str, tmp_path: Path) -> None:
    td = _td()
    back = _save_load(fmt, td, TensorDict, tmp_path)
    _assert_same_values(back, td, exact_dtype=fmt in EXACT)
    assert isinstance(back["nest"]["deep"], TensorDict)
    assert back["tags"] == ["a", "b", "c", "d"] and back["name"] == "shared"


@pytest.mark.parametrize("fmt", TEXT)
def test_text_formats_give_64_bit_dtypes_or_the_asked_one(fmt: str, tmp_path: Path) -> None:
    back = _save_load(fmt, _td(), TensorDict, tmp_path)
    assert back["f32"].dtype == torch.float64 and back["i8"].dtype == torch.int64
    assert back["flag"].dtype == torch.bool
    cast = _save_load(fmt, _td(), TensorDict, tmp_path, dtype=torch.float32)
    assert cast["i8"].dtype == torch.float32 and cast["nest", "w"].dtype == torch.float32


@pytest.mark.parametrize("fmt", EXACT + TEXT)
def test_typed_class_round_trips_to_its_class(fmt: str, tmp_path: Path) -> None:
    row = _row()
    back = _save_load(fmt, row, Row, tmp_path)
    assert type(back) is Row and type(back.inner) is Inner
    assert back.note == "hello"
    _assert_same_values(back, row, exact_dtype=fmt in EXACT)


@pytest.mark.parametrize("fmt", EXACT + TEXT)
def test_unset_optional_field_stays_unset(fmt: str, tmp_path: Path) -> None:
    back = _save_load(fmt, _row(opt=False), Row, tmp_path)
    assert back.opt is None
    assert "opt" not in _row(opt=False).to_pandas().columns


@pytest.mark.parametrize("fmt", EXACT + TEXT)
def test_lazy_stack_writes_the_rows_of_its_dense_form(fmt: str, tmp_path: Path) -> None:
    rows = [_row()[i] for i in range(4)]
    stack = tc.lazy_stack(rows)
    assert isinstance(stack, tc.LazyStackedTensorDict)
    back = _save_load(fmt, stack, Row, tmp_path)
    _assert_same_values(back, torch.stack(rows), exact_dtype=fmt in EXACT)
    assert stack.to_pandas().equals(torch.stack(rows).to_pandas())


def test_lazy_stack_class_reads_a_tensordict() -> None:
    frame = _td().to_pandas()
    back = tc.LazyStackedTensorDict.from_pandas(frame)
    _assert_same_values(back, _td(), exact_dtype=True)


def test_lazy_stack_of_different_strings_gives_one_value_per_row() -> None:
    parts = [TensorDict({"x": torch.zeros(2), "s": s}, batch_size=[2]) for s in "ab"]
    stack = tc.lazy_stack([parts[0][0], parts[0][1], parts[1][0]])
    assert stack.to_pandas()["s"].tolist() == ["a", "a", "b"]


def test_columns_are_named_by_the_joined_key() -> None:
    td = _td()
    assert "nest.deep.v" in td.to_pandas().columns
    assert "nest/deep/v" in td.to_pandas(separator="/").columns
    back = TensorDict.from_pandas(td.to_pandas(separator="/"), separator="/")
    torch.testing.assert_close(back["nest", "deep", "v"], td["nest", "deep", "v"])
    flat = TensorDict.from_pandas(td.to_pandas(), separator=None)
    assert "nest.deep.v" in flat.keys()


def test_separator_none_refuses_nested_keys_for_columns() -> None:
    with pytest.raises(TableFormatError, match=r"nested key \('nest', 'deep', 'v'\)"):
        _td().to_pandas(separator=None)


def test_key_containing_the_separator_is_refused() -> None:
    td = TensorDict({"a.b": torch.zeros(2), "c": {"d": torch.zeros(2)}}, batch_size=[2])
    with pytest.raises(TableFormatError, match=r"'a\.b'"):
        td.to_pandas()
    assert list(td.to_pandas(separator="/").columns) == ["a.b", "c/d"]


@pytest.mark.parametrize("fmt", ["pandas", "csv", "json"])
def test_multi_dim_leaf_raises_naming_the_key_in_scalar_formats(fmt: str, tmp_path: Path) -> None:
    td = TensorDict({"img": {"px": torch.zeros(3, 2, 2)}}, batch_size=[3])
    with pytest.raises(TableFormatError, match=r"\('img', 'px'\).*\[3, 2, 2\]"):
        _save_load(fmt, td, TensorDict, tmp_path)


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_multi_dim_leaf_keeps_its_shape_in_arrow_formats(fmt: str, tmp_path: Path) -> None:
    td = TensorDict(
        {"img": {"px": torch.randn(3, 2, 5)}, "b": torch.randint(0, 9, (3, 4))}, batch_size=[3]
    )
    back = _save_load(fmt, td, TensorDict, tmp_path)
    assert torch.equal(back["img", "px"], td["img", "px"]) and torch.equal(back["b"], td["b"])


def test_to_arrow_writes_structs_and_parquet_separated_names(tmp_path: Path) -> None:
    td = _td()
    assert pa.types.is_struct(td.to_arrow().schema.field("nest").type)
    td.to_parquet(tmp_path / "t.parquet")
    import pyarrow.parquet as pq

    assert "nest.deep.v" in pq.read_table(tmp_path / "t.parquet").column_names
    td.to_parquet(tmp_path / "s.parquet", separator=None)
    back = TensorDict.from_parquet(tmp_path / "s.parquet", separator=None)
    torch.testing.assert_close(back["nest", "deep", "v"], td["nest", "deep", "v"])


def test_from_parquet_reads_only_the_asked_columns(tmp_path: Path) -> None:
    _td().to_parquet(tmp_path / "t.parquet")
    back = TensorDict.from_parquet(tmp_path / "t.parquet", columns=["f32", "nest.w"])
    assert set(back.keys(True, True)) == {"f32", ("nest", "w")}


def test_json_lines_round_trip(tmp_path: Path) -> None:
    td = _td()
    td.to_json(tmp_path / "t.jsonl", lines=True)
    assert len((tmp_path / "t.jsonl").read_text().strip().splitlines()) == 4
    back = TensorDict.from_json(tmp_path / "t.jsonl", lines=True)
    _assert_same_values(back, td, exact_dtype=False)


def test_batch_size_and_device_keywords() -> None:
    frame = _td().to_pandas()
    back = TensorDict.from_pandas(frame, batch_size=[4], device="cpu")
    assert back.batch_size == torch.Size([4]) and back.device == torch.device("cpu")
    assert back["f32"].device.type == "cpu"
    with pytest.raises(tc.BatchSizeError):
        TensorDict.from_pandas(frame, batch_size=[5])
    wide = pa.table({"m": pa.FixedShapeTensorArray.from_numpy_ndarray(torch.zeros(4, 3).numpy())})
    assert TensorDict.from_arrow(wide)["m"].shape == (4, 3)
    assert TensorDict.from_parquet is not None
    auto = TensorDict.from_pandas(pd.DataFrame({"a": [1, 2]}), auto_batch_size=True)
    assert auto.batch_size == torch.Size([2])


def test_batch_that_is_not_one_dim_is_refused() -> None:
    td = TensorDict({"a": torch.zeros(2, 3)}, batch_size=[2, 3])
    with pytest.raises(TableFormatError, match=r"batch_size=\[2, 3\].*reshape\(-1\)"):
        td.to_pandas()
    with pytest.raises(TableFormatError, match="batch_size"):
        td.to_arrow()
    assert td.reshape(-1).to_pandas().shape == (6, 1)


def test_foreign_frame_columns_become_entries() -> None:
    frame = pd.DataFrame(
        {
            "x": [1, 2, 3],
            "ratio": [0.5, float("nan"), 2.0],
            "word": ["a", "b", "c"],
            "same": ["k", "k", "k"],
            "nullable": pd.array([1, 2, 3], dtype="Int32"),
        }
    )
    td = TensorDict.from_pandas(frame)
    assert td["x"].dtype == torch.int64 and td["nullable"].dtype == torch.int32
    assert torch.isnan(td["ratio"][1])
    assert td["word"] == ["a", "b", "c"] and td["same"] == "k"


def test_arrow_nulls_raise_fill_or_mask() -> None:
    table = pa.table({"v": pa.array([1.0, None, 3.0]), "i": pa.array([1, 2, None])})
    with pytest.raises(TableFormatError, match="'v' has 1 null"):
        TensorDict.from_arrow(table)
    filled = TensorDict.from_arrow(table, nulls="fill")
    assert torch.isnan(filled["v"][1]) and filled["i"].tolist() == [1, 2, 0]
    masked = tc.from_arrow(table, nulls="mask", mask_key="valid")
    assert masked["valid", "v"].tolist() == [True, False, True]
    assert masked["valid", "i"].tolist() == [True, True, False]
    with pytest.raises(ValueError, match="mask_key"):
        TensorDict.from_arrow(table, mask_key="m")


def test_arrow_other_columns_are_non_tensor_values() -> None:
    table = pa.table({"ids": pa.array([[1, 2], [3], []]), "t": pa.array(["x", "y", "z"])})
    td = tc.from_arrow(table)
    assert td["ids"] == [[1, 2], [3], []] and td["t"] == ["x", "y", "z"]


def test_complex_tensor_is_refused_by_arrow() -> None:
    td = TensorDict({"z": torch.zeros(2, dtype=torch.complex64)}, batch_size=[2])
    with pytest.raises(TableFormatError, match="'z'.*complex"):
        td.to_arrow()
    back = TensorDict.from_pandas(td.to_pandas())  # NumPy holds complex numbers
    assert back["z"].dtype == torch.complex64


def test_top_level_functions_build_tensordicts(tmp_path: Path) -> None:
    td = _td()
    _assert_same_values(tc.from_arrow(tc.to_arrow(td)), td, exact_dtype=True)
    _assert_same_values(tc.from_pandas(td.to_pandas()), td, exact_dtype=True)
    td.to_parquet(tmp_path / "t.parquet")
    _assert_same_values(tc.from_parquet(tmp_path / "t.parquet"), td, exact_dtype=True)
    td.to_csv(tmp_path / "t.csv")
    _assert_same_values(tc.from_csv(tmp_path / "t.csv"), td, exact_dtype=False)
    td.to_json(tmp_path / "t.json")
    _assert_same_values(tc.from_json(tmp_path / "t.json"), td, exact_dtype=False)


@pytest.mark.parametrize(
    ("fmt", "content"),
    [
        ("parquet", b"this is not parquet"),
        ("parquet", b""),
        ("csv", b""),
        ("csv", b"\xff\xfe\x00garbage\x00\xff"),
        ("json", b"{not json"),
        ("json", b"42"),
    ],
)
def test_bad_file_raises_naming_the_file(fmt: str, content: bytes, tmp_path: Path) -> None:
    path = tmp_path / f"bad.{fmt}"
    path.write_bytes(content)
    with pytest.raises(TableFormatError, match=r"bad\." + fmt):
        getattr(TensorDict, f"from_{fmt}")(path)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_missing_file_raises_file_not_found(fmt: str, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        getattr(TensorDict, f"from_{fmt}")(tmp_path / f"missing.{fmt}")


def test_missing_extra_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r'pip install "tensorclass\[formats\]"'):
        _td().to_pandas()
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="'pyarrow'"):
        tc.to_arrow(_td())


def test_files_written_by_tensordict_are_read(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    theirs = tensordict.TensorDict(
        {"a": torch.arange(3), "b": {"c": torch.rand(3)}, "s": ["x", "y", "z"]}, batch_size=[3]
    )
    theirs.to_parquet(tmp_path / "t.parquet", separator=".")
    ours = TensorDict.from_parquet(tmp_path / "t.parquet")
    torch.testing.assert_close(ours["b", "c"], theirs["b", "c"])
    assert ours["s"] == ["x", "y", "z"]
    back = tensordict.TensorDict.from_parquet(tmp_path / "t.parquet", separator=".")
    _td().to_parquet(tmp_path / "ours.parquet")
    read = tensordict.TensorDict.from_parquet(tmp_path / "ours.parquet", separator=".")
    torch.testing.assert_close(read["nest", "deep", "v"], _td()["nest", "deep", "v"])
    assert back.batch_size == torch.Size([3])


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_bfloat16_comes_back_from_arrow_formats(fmt: str, tmp_path: Path) -> None:
    g = _gen()
    td = TensorDict(
        {"h": torch.rand(3, generator=g).bfloat16(), "n": {"k": torch.rand(3, 2).bfloat16()}},
        batch_size=[3],
    )
    back = _save_load(fmt, td, TensorDict, tmp_path)
    assert back["h"].dtype == torch.bfloat16 and back["n", "k"].dtype == torch.bfloat16
    assert torch.equal(back["h"], td["h"]) and torch.equal(back["n", "k"], td["n", "k"])
    assert TensorDict.from_pandas(td.exclude("n").to_pandas())["h"].dtype == torch.float32


def test_typed_class_refuses_a_column_that_is_not_a_field() -> None:
    frame = pd.DataFrame({"a": [1, 2], "inner.x": [0.5, 1.5], "extra": [3, 4]})
    with pytest.raises(tc.KeyNotFoundError, match="'extra'"):
        Row.from_pandas(frame)


def test_ragged_lazy_stack_is_refused_with_the_key() -> None:
    stack = tc.lazy_stack([TensorDict(x=torch.zeros(2)), TensorDict(x=torch.zeros(3))])
    with pytest.raises(tc.StructureMismatchError, match="'x'"):
        stack.to_pandas()


def test_foreign_schema_metadata_is_ignored_not_run() -> None:
    table = pa.table({"v": pa.array([1.0, 2.0], pa.float32())})
    for raw in (b"not json", b'{"a": 1}', b"[[1, 2]]", b"__import__('os')"):
        hostile = table.replace_schema_metadata({"tensorclass.bfloat16": raw})
        assert TensorDict.from_arrow(hostile)["v"].dtype == torch.float32
