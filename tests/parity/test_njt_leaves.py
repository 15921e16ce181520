"""Nested jagged tensors (``torch.nested``, ``layout=torch.jagged``) as leaves, their dim 0
the batch dim. Each test states what tensordict 0.15.3 does with the same calls (checked
side by side); where it refuses (memmap), so does tensorclass, with an error naming the key;
``consolidate()`` (in memory, into a file, pickled) keeps them and reports
``is_consolidated()``, as tensordict does."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch
from torch import Tensor

from tensorclass import TensorDict, from_consolidated, lazy_stack
from tensorclass.errors import MemmapFormatError, StructureMismatchError

ROWS = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]


def _njt(rows: list[list[float]] = ROWS) -> Tensor:
    return torch.nested.nested_tensor([torch.tensor(r) for r in rows], layout=torch.jagged)


def _td() -> TensorDict:
    return TensorDict(a=_njt(), b=torch.arange(3.0), batch_size=[3])


def _rows(value: Tensor) -> list[list[float]]:
    assert value.is_nested and value.layout is torch.jagged
    return [row.tolist() for row in value.unbind()]


def test_clone_copies_the_values() -> None:
    td = _td()
    copy = td.clone()
    assert _rows(copy["a"]) == ROWS
    assert copy["a"].values().data_ptr() != td["a"].values().data_ptr()


def test_to_dtype_and_device() -> None:
    assert _td().to(torch.float64)["a"].dtype == torch.float64
    assert _rows(_td().to("cpu")["a"]) == ROWS


def test_integer_index_gives_the_row() -> None:
    assert _td()[1]["a"].tolist() == ROWS[1]


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (slice(1, None), [1, 2]),
        (slice(None, None, 2), [0, 2]),
        ([0, 2], [0, 2]),
        (torch.tensor([2, 0]), [2, 0]),
        (torch.tensor([True, False, True]), [0, 2]),
    ],
)
def test_index_along_the_batch_dim(index: object, expected: list[int]) -> None:
    # torch itself refuses these on an NJT (slice on dim 0, aten.index.Tensor)
    picked = _td()[index]
    assert picked.batch_size == torch.Size([len(expected)])
    assert _rows(picked["a"]) == [ROWS[i] for i in expected]
    assert picked["b"].tolist() == [float(i) for i in expected]


def test_cat_joins_the_rows() -> None:
    joined = torch.cat([_td(), _td()])
    assert joined.batch_size == torch.Size([6])
    assert _rows(joined["a"]) == ROWS + ROWS


def test_dense_stack_of_different_ragged_structures_is_refused_naming_the_key() -> None:
    # tensordict: RuntimeError "... incompatible ... for key a."
    with pytest.raises(StructureMismatchError, match="'a'"):
        torch.stack([_td(), _td()])


def test_lazy_stack_keeps_members_and_refuses_one_tensor_read() -> None:
    stacked = lazy_stack([_td(), _td()])
    assert stacked.batch_size == torch.Size([2, 3])
    assert _rows(stacked[1]["a"]) == ROWS
    with pytest.raises(StructureMismatchError, match="'a'"):
        stacked.get("a")


def test_apply_and_unbind() -> None:
    doubled = _td().apply(lambda x: x * 2)
    assert _rows(doubled["a"]) == [[2 * v for v in r] for r in ROWS]
    assert _td().unbind(0)[2]["a"].tolist() == ROWS[2]


def test_consolidate_packs_values_and_offsets_into_one_buffer() -> None:
    td = TensorDict(a=_njt(), b={"c": torch.ones(3, 2)}, batch_size=[3])
    packed = td.consolidate()
    assert _rows(packed["a"]) == ROWS
    values = packed["a"].values()
    assert values.untyped_storage().data_ptr() == packed["b", "c"].untyped_storage().data_ptr()
    assert values.data_ptr() != td["a"].values().data_ptr()


def test_consolidate_of_an_njt_with_holes_keeps_its_rows() -> None:
    holes = torch.nested.nested_tensor_from_jagged(
        torch.arange(10.0), torch.tensor([0, 3, 8, 10]), lengths=torch.tensor([2, 4, 1])
    )
    packed = TensorDict(a=holes, batch_size=[3]).consolidate()
    assert _rows(packed["a"]) == [[0.0, 1.0], [3.0, 4.0, 5.0, 6.0], [8.0]]


def test_consolidated_with_njt_leaves_reports_it() -> None:
    # tensordict 0.15.3: is_consolidated() is True after consolidate(), NJTs included
    td = TensorDict(a=_njt(), x={"c": _njt()}, b=torch.ones(3), batch_size=[3])
    assert not td.is_consolidated()
    packed = td.consolidate()
    assert packed.is_consolidated() and packed.consolidate() is packed
    packed["a"].values().mul_(2)  # an in-place write keeps it
    assert packed.is_consolidated()
    unlocked = td.consolidate().unlock_()
    unlocked["a"] = _njt()  # replacing a leaf ends it
    assert not unlocked.is_consolidated()


def test_consolidated_njt_pickles_through_its_buffer() -> None:
    packed = TensorDict(a=_njt(), b=torch.ones(3), batch_size=[3]).consolidate()
    back = pickle.loads(pickle.dumps(packed))
    assert back.is_consolidated() and _rows(back["a"]) == ROWS
    stacked = lazy_stack([TensorDict(a=_njt(), batch_size=[3])] * 2).consolidate()
    assert pickle.loads(pickle.dumps(stacked)).is_consolidated()


def test_consolidate_into_a_file_round_trip(tmp_path: Path) -> None:
    # tensordict 0.15.3 writes NJTs with consolidate(filename=) and reads them back
    td = TensorDict(x={"a": _njt()}, b=torch.arange(3.0), batch_size=[3])
    packed = td.consolidate(filename=tmp_path / "td.bin")
    assert packed.is_consolidated() and _rows(packed["x", "a"]) == ROWS
    loaded = from_consolidated(tmp_path / "td.bin")
    assert loaded.is_consolidated() and _rows(loaded["x", "a"]) == ROWS
    assert loaded["b"].tolist() == [0.0, 1.0, 2.0]


def test_a_file_with_bad_offsets_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "td.bin"
    TensorDict(a=_njt(), batch_size=[3]).consolidate(filename=path)
    raw = bytearray(path.read_bytes())
    ends = torch.tensor([0, 3, 8, 10]).numpy().tobytes()
    at = raw.index(ends)
    raw[at : at + len(ends)] = torch.tensor([0, 9, 8, 10]).numpy().tobytes()
    path.write_bytes(bytes(raw))
    with pytest.raises(MemmapFormatError, match="offsets"):
        from_consolidated(path)


def test_consolidate_same_as_tensordict(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    theirs = tensordict.TensorDict(x={"a": _njt()}, batch_size=[3])
    packed = theirs.consolidate(filename=tmp_path / "theirs.bin")
    ours = TensorDict(x={"a": _njt()}, batch_size=[3]).consolidate(filename=tmp_path / "ours")
    assert packed.is_consolidated() and ours.is_consolidated()
    assert _rows(packed["x", "a"]) == _rows(ours["x", "a"]) == ROWS


@pytest.mark.parametrize("method", ["memmap", "memmap_", "memmap_like", "save"])
def test_saving_an_njt_is_refused_naming_the_key_and_writes_nothing(
    method: str, tmp_path: Path
) -> None:
    # tensordict 0.15.3: NotImplementedError "memmap does not support nested tensors with
    # the torch.jagged layout (key 'a')"
    td = TensorDict(x={"a": _njt()}, b=torch.zeros(3), batch_size=[3])
    with pytest.raises(NotImplementedError, match=r"jagged.*\('x', 'a'\)"):
        getattr(td, method)(tmp_path / "save")
    assert not (tmp_path / "save").exists()
    assert not td.is_locked


def test_memmap_without_prefix_is_refused_naming_the_key() -> None:
    with pytest.raises(NotImplementedError, match="'a'"):
        _td().memmap()
