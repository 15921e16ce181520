"""Tests shared by the HDF5 and Zarr backends of PersistentTensorDict (run by test_h5/test_zarr)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    FileFormatError,
    LazyStackedTensorDict,
    PersistentTensorDict,
    RecordedClassError,
    TensorDict,
)

from ._formats_data import FmtRecord, plain, same, stacked, typed


def save(data: Any, path: Path, fmt: str, **kwargs: Any) -> PersistentTensorDict:
    return getattr(data, f"to_{fmt}")(path, **kwargs)  # type: ignore[no-any-return]


def open_(path: Path, fmt: str, **kwargs: Any) -> PersistentTensorDict:
    return getattr(TensorDict, f"from_{fmt}")(path, **kwargs)  # type: ignore[no-any-return]


def check_round_trip(tmp_path: Path, fmt: str) -> None:
    for make in (plain, typed, stacked):
        data = make()
        save(data, tmp_path / "f", fmt).close()
        with open_(tmp_path / "f", fmt) as ptd:
            assert ptd.batch_size == data.batch_size
            same(ptd.to_tensordict(), data)


def check_lazy_reads(tmp_path: Path, fmt: str) -> None:
    data = typed()
    with save(data, tmp_path / "f", fmt) as ptd:
        torch.testing.assert_close(ptd["x"], data.x)
        assert ptd["name"] == "run-1"
        nested = ptd["inner"]
        assert isinstance(nested, PersistentTensorDict) and nested.batch_size == (4,)
        torch.testing.assert_close(ptd["inner", "z"], data.inner.z)
        assert set(ptd.keys(include_nested=True, leaves_only=True)) == {"x", "name", ("inner", "z")}
        assert ("inner", "z") in ptd and "nope" not in ptd
        for index in (1, -1, slice(1, 3), (slice(None, None, 2),)):
            row = ptd[index]
            assert isinstance(row, FmtRecord)
            same(row, data[index])
        same(ptd[torch.tensor([3, 0])], data[torch.tensor([3, 0])])  # read whole, then indexed
        stack = stacked()
    with save(stack, tmp_path / "s", fmt) as ptd:
        assert isinstance(ptd[0:1], LazyStackedTensorDict)
        same(ptd[1], stack[1])


def check_writes(tmp_path: Path, fmt: str) -> None:
    data = plain()
    with save(data, tmp_path / "f", fmt) as ptd:
        ptd["new"] = torch.full((4, 2), 7.0)
        ptd["b", "d"] = torch.zeros(4, dtype=torch.int32)
        ptd["note"] = "hello"
        ptd[1:3] = TensorDict(a=torch.full((2, 3), -1.0, dtype=torch.float64), batch_size=[2])
        with pytest.raises(ValueError, match="batch size"):
            ptd["bad"] = torch.zeros(5)
    with open_(tmp_path / "f", fmt) as ptd:
        assert ptd["new"].tolist() == [[7.0, 7.0]] * 4 and ptd["note"] == "hello"
        assert ptd["b", "d"].dtype == torch.int32
        assert ptd["a"][:, 0].tolist() == [0.0, -1.0, -1.0, 9.0]
        with pytest.raises(PermissionError, match="read-only"):
            ptd["x"] = torch.zeros(4)


def check_hostile(tmp_path: Path, fmt: str, set_layout: Any) -> None:
    import json

    def edited(change: Any) -> Path:
        path = tmp_path / f"h{len(list(tmp_path.iterdir()))}"
        save(typed(), path, fmt).close()
        layout = json.loads(json.dumps(open_(path, fmt)._layout))
        change(layout)
        set_layout(path, layout)
        return path

    path = edited(lambda layout: layout["root"].update({"class": "<class 'no_such_mod.Evil'>"}))
    with pytest.raises(RecordedClassError, match=str(path)):
        open_(path, fmt).to_tensordict()
    path = edited(lambda layout: layout["root"].update(batch_size=[9]))
    with pytest.raises((FileFormatError, ValueError), match=str(path)):
        open_(path, fmt).to_tensordict()
    path = edited(lambda layout: layout["root"]["keys"]["x"].update(tensor="../../etc/passwd"))
    with pytest.raises(FileFormatError, match="invalid path"):
        open_(path, fmt).to_tensordict()
    path = edited(lambda layout: layout["root"]["keys"]["x"].update(dtype="int8"))
    with pytest.raises(FileFormatError, match=str(path)):
        open_(path, fmt).to_tensordict()
    path = edited(lambda layout: layout.update(root="nonsense"))
    with pytest.raises(FileFormatError, match=str(path)):
        open_(path, fmt).to_tensordict()


def check_foreign_file(tmp_path: Path, fmt: str, write_plain: Any) -> None:
    write_plain(tmp_path / "f")  # a: (5, 2), g/b: (5,), no layout
    with open_(tmp_path / "f", fmt) as ptd:
        assert ptd.batch_size == (5,)
        assert ptd["g", "b"].shape == (5,) and ptd[2]["a"].shape == (2,)
    with open_(tmp_path / "f", fmt, batch_size=[]) as ptd:
        assert ptd.batch_size == ()


def check_special_leaves(tmp_path: Path, fmt: str) -> None:
    from tensorclass import MetaData, UnbatchedTensor

    data = torch.stack([TensorDict(a=torch.zeros(()), s=str(i)) for i in range(3)])
    data["m"] = MetaData({"k": 1})
    data["u"] = UnbatchedTensor(torch.arange(5))
    with save(data, tmp_path / "f", fmt) as ptd:
        assert ptd["s"] == ["0", "1", "2"] and ptd["m"] == {"k": 1}
        assert type(ptd["u"]) is UnbatchedTensor and ptd["u"].tolist() == [0, 1, 2, 3, 4]
        row = ptd[1]
        assert row["s"] == "1" and row["u"].tolist() == [0, 1, 2, 3, 4]
        same(ptd.to_tensordict(), data)
