"""Table imports that would lose columns are refused before anything is built: a column
``"a"`` next to ``"a.b"`` (one key would replace the other's level), the same column name
twice (Arrow and pandas allow it), and duplicate ``struct`` fields. The error names both
columns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    TableFormatError,
    TensorClass,
    TensorDict,
    from_arrow,
    from_csv,
    from_json,
    from_pandas,
    from_parquet,
)
from tensorclass.engine.storage.tables import columns as columns_module

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


class Row(TensorClass):
    a: torch.Tensor


def frame(order: tuple[str, str]) -> Any:
    return pd.DataFrame({order[0]: [1, 2], order[1]: [3, 4]})


def never_built(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record every instance the readers would build (none, when a collision is refused)."""
    built: list[object] = []
    real = columns_module.build

    def recording(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        built.append(out)
        return out

    for module in ("arrow", "frames"):
        monkeypatch.setattr(f"tensorclass.engine.storage.tables.{module}.build", recording)
    return built


def readers(tmp_path: Path, order: tuple[str, str]) -> dict[str, Callable[[], object]]:
    df = frame(order)
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, tmp_path / "t.parquet")
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_json(tmp_path / "t.json", orient="records")
    return {
        "from_pandas": lambda: from_pandas(df),
        "TensorDict.from_pandas": lambda: TensorDict.from_pandas(df),
        "from_parquet": lambda: from_parquet(tmp_path / "t.parquet"),
        "TensorDict.from_parquet": lambda: TensorDict.from_parquet(tmp_path / "t.parquet"),
        "from_csv": lambda: from_csv(tmp_path / "t.csv"),
        "TensorDict.from_csv": lambda: TensorDict.from_csv(tmp_path / "t.csv"),
        "from_json": lambda: from_json(tmp_path / "t.json"),
        "TensorDict.from_json": lambda: TensorDict.from_json(tmp_path / "t.json"),
        "TensorDict.from_arrow": lambda: TensorDict.from_arrow(table, separator="."),
        "Row.from_pandas": lambda: Row.from_pandas(df),
    }


@pytest.mark.parametrize("order", [("a.b", "a"), ("a", "a.b")], ids=["nested-first", "flat-first"])
@pytest.mark.parametrize(
    "reader",
    [
        "from_pandas",
        "TensorDict.from_pandas",
        "from_parquet",
        "TensorDict.from_parquet",
        "from_csv",
        "TensorDict.from_csv",
        "from_json",
        "TensorDict.from_json",
        "TensorDict.from_arrow",
        "Row.from_pandas",
    ],
)
def test_a_column_and_a_nested_column_under_it_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, order: tuple[str, str]
) -> None:
    read = readers(tmp_path, order)[reader]
    built = never_built(monkeypatch)
    with pytest.raises(TableFormatError) as info:
        read()
    message = str(info.value)
    assert "'a'" in message and "'a.b'" in message  # both columns named
    assert "replace" in message
    assert built == []


def test_the_nested_key_is_kept_with_another_separator(tmp_path: Path) -> None:
    df = frame(("a.b", "a"))
    td = from_pandas(df, separator="/")
    assert sorted(td.keys()) == ["a", "a.b"]
    assert td["a.b"].tolist() == [1, 2] and td["a"].tolist() == [3, 4]


def test_from_arrow_without_a_separator_keeps_both_columns() -> None:
    table = pa.table({"a.b": [1, 2], "a": [3, 4]})
    td = from_arrow(table)  # tensordict's signature: column names are keys as they are
    assert td["a.b"].tolist() == [1, 2] and td["a"].tolist() == [3, 4]


def test_duplicate_arrow_column_names_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    built = never_built(monkeypatch)
    for read in (lambda: from_arrow(table), lambda: TensorDict.from_arrow(table)):
        with pytest.raises(TableFormatError, match="the columns 'x' and 'x' both give the key"):
            read()
    assert built == []


def test_duplicate_parquet_column_names_are_refused(tmp_path: Path) -> None:
    table = pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    pq.write_table(table, tmp_path / "dup.parquet")
    with pytest.raises(TableFormatError, match="from_parquet: .*x"):  # pyarrow refuses too
        from_parquet(tmp_path / "dup.parquet")


def test_duplicate_data_frame_column_names_are_refused() -> None:
    df = pd.DataFrame([[1, 2], [3, 4]], columns=["x", "x"])
    with pytest.raises(TableFormatError, match="the columns 'x' and 'x'"):
        from_pandas(df)
    numbered = pd.DataFrame({1: [1, 2], "1": [3, 4]})  # both become the key "1"
    with pytest.raises(TableFormatError, match="the columns '1' and '1'"):
        from_pandas(numbered)


def test_duplicate_struct_fields_are_refused() -> None:
    struct = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array([3, 4])], names=["q", "q"])
    with pytest.raises(TableFormatError, match=r"the columns 's\.q' and 's\.q'"):
        from_arrow(pa.table({"s": struct}))


def test_a_struct_column_and_a_flat_column_under_it_are_refused() -> None:
    struct = pa.StructArray.from_arrays([pa.array([1, 2])], names=["b"])
    table = pa.table({"a": struct, "a.b": [3, 4]})
    with pytest.raises(TableFormatError, match=r"the columns 'a\.b' and 'a\.b'"):
        TensorDict.from_arrow(table, separator=".")


def test_a_null_mask_that_would_replace_a_column_is_refused() -> None:
    table = pa.table({"_mask": [1, 2], "v": pa.array([1.0, None])})
    with pytest.raises(TableFormatError, match="'_mask'"):
        from_arrow(table, nulls="mask")
    masked = from_arrow(table, nulls="mask", mask_key="valid")
    assert masked["valid", "v"].tolist() == [True, False] and masked["_mask"].tolist() == [1, 2]


def test_tables_without_collisions_still_load(tmp_path: Path) -> None:
    td = TensorDict({"a": torch.arange(2), "n": {"b": torch.ones(2), "c": torch.zeros(2)}}, [2])
    td.to_parquet(tmp_path / "ok.parquet")
    back = from_parquet(tmp_path / "ok.parquet")
    assert set(back.keys(True, True)) == set(td.keys(True, True))
    assert from_pandas(td.to_pandas())["n", "b"].tolist() == [1.0, 1.0]
