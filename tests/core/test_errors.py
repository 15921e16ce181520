"""Bad input raises a clear error (key, expected, actual) and changes nothing."""

import pytest
import torch

import tensorclass
from tensorclass import (
    BatchSizeError,
    FieldTypeError,
    InvalidKeyError,
    KeyNotFoundError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
)


class Sample(TensorClass):
    image: torch.Tensor
    label: torch.Tensor


def snapshot(td: TensorDict) -> dict:
    return {key: value.clone() for key, value in td.items(include_nested=True, leaves_only=True)}


def same(td: TensorDict, before: dict) -> bool:
    now = dict(td.items(include_nested=True, leaves_only=True))
    return now.keys() == before.keys() and all(torch.equal(now[k], before[k]) for k in now)


def test_wrong_batch_size_names_key_expected_and_actual() -> None:
    with pytest.raises(BatchSizeError) as info:
        TensorDict({"obs": torch.zeros(3, 2), "act": torch.zeros(4)}, batch_size=[3])
    message = str(info.value)
    assert "'act'" in message and "[4]" in message and "batch size [3]" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(BatchSizeError, match=r"'label'.*shape \[5\].*batch size \[4\]"):
        Sample(torch.zeros(4, 3), torch.zeros(5), batch_size=[4])
    with pytest.raises(BatchSizeError, match=r"\('n', 'x'\)"):
        TensorDict({"n": {"x": torch.zeros(2)}}, batch_size=[3])


def test_non_string_keys() -> None:
    td = TensorDict({"a": torch.zeros(3)}, [3])
    for bad in (1, ("a", 2), (), None):
        with pytest.raises(InvalidKeyError):
            td.set(bad, torch.zeros(3))  # type: ignore[arg-type]
    with pytest.raises(InvalidKeyError, match="got int 1"):
        td.get(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        TensorDict({1: torch.zeros(3)}, [3])


def test_missing_key_lists_available_keys() -> None:
    td = TensorDict({"obs": torch.zeros(3), "reward": torch.zeros(3)}, [3])
    with pytest.raises(KeyNotFoundError) as info:
        td["rewards"]
    assert str(info.value) == (
        "key 'rewards' not found in TensorDict; available keys: 'obs', 'reward'"
    )
    assert isinstance(info.value, KeyError)


def test_wrong_field_name_lists_fields() -> None:
    sample = Sample(torch.zeros(2, 3), torch.zeros(2), batch_size=[2])
    with pytest.raises(
        KeyNotFoundError, match="Sample has no field 'labels'; its fields are 'image', 'label'"
    ):
        sample["labels"] = torch.zeros(2)
    with pytest.raises(AttributeError, match="labels"):
        sample.labels = torch.zeros(2)
    with pytest.raises(AttributeError):
        sample.labels
    with pytest.raises(TypeError, match="labels"):
        Sample(torch.zeros(2, 3), labels=torch.zeros(2), batch_size=[2])  # type: ignore[call-arg]
    with pytest.raises(FieldTypeError, match=r"Sample.image expects a tensor; got str 'x'"):
        Sample("x", torch.zeros(2), batch_size=[2])


def test_stacking_mismatched_classes_and_keys() -> None:
    td = TensorDict({"image": torch.zeros(2, 3), "label": torch.zeros(2)}, [2])
    sample = Sample(torch.zeros(2, 3), torch.zeros(2), batch_size=[2])
    with pytest.raises(StructureMismatchError, match="Sample with a TensorDict"):
        torch.stack([sample, td])
    with pytest.raises(StructureMismatchError, match="different keys"):
        torch.cat([td, td.exclude("label")])
    with pytest.raises(ValueError, match="at least one"):
        tensorclass.stack([])


def test_indexing_past_the_end() -> None:
    td = TensorDict({"x": torch.zeros(3, 4)}, [3])
    with pytest.raises(IndexError, match="index 3 is out of range for batch dim 0 of size 3"):
        td[3]
    with pytest.raises(IndexError, match=r"too many indices.*batch size \[3\]"):
        td[0, 1]
    with pytest.raises(IndexError):
        td[torch.tensor([0, 7])]
    with pytest.raises(IndexError):
        td.unsqueeze(5)


def test_failed_set_and_update_change_nothing() -> None:
    td = TensorDict({"a": torch.zeros(3), "n": {"b": torch.zeros(3)}}, [3])
    before = snapshot(td)
    with pytest.raises(BatchSizeError):
        td.set("a", torch.ones(4))
    with pytest.raises(BatchSizeError):
        td.set(("new", "deep", "x"), torch.ones(4))
    assert "new" not in td
    with pytest.raises(BatchSizeError):
        td.update(
            {"a": torch.ones(3), "c": torch.ones(3), "n": {"b": torch.ones(3), "z": torch.ones(5)}}
        )
    with pytest.raises(BatchSizeError):
        td.set_("a", torch.ones(4))
    with pytest.raises(StructureMismatchError):
        td.update({"a": torch.ones(3, 2)}, inplace=True)
    with pytest.raises(KeyError):
        td.update_({"a": torch.ones(3), "zz": torch.ones(3)})
    assert same(td, before)
    assert list(td.keys(True)) == ["a", "n", ("n", "b")]


def test_failed_typed_write_changes_nothing() -> None:
    sample = Sample(torch.zeros(2, 3), torch.zeros(2), batch_size=[2])
    with pytest.raises(BatchSizeError):
        sample.update({"label": torch.ones(2), "image": torch.ones(5, 3)})
    with pytest.raises(KeyNotFoundError):
        sample.update({"label": torch.ones(2), "extra": torch.ones(2)})
    assert (sample.label == 0).all() and (sample.image == 0).all()


def test_bad_batch_size_values() -> None:
    with pytest.raises(BatchSizeError, match="negative"):
        TensorDict({}, batch_size=[-1])
    with pytest.raises(BatchSizeError, match="ints"):
        TensorDict({}, batch_size="3")  # type: ignore[arg-type]


def test_non_string_part_in_a_tuple_key_is_a_key_error_not_an_index_error() -> None:
    td = TensorDict({"a": {"b": torch.zeros(3)}}, [3])
    with pytest.raises(InvalidKeyError, match=r"got int 3 in key \('a', 3\)"):
        td["a", 3] = torch.zeros(3)
    with pytest.raises(InvalidKeyError, match=r"got int 3 in key \('a', 3\)"):
        td["a", 3]
    with pytest.raises(InvalidKeyError, match=r"got float 1.5"):
        td[("a", ("b", 1.5))]
    assert list(td.keys(True)) == ["a", ("a", "b")]


class Inner(TensorClass):
    z: torch.Tensor


class Holder(TensorClass):
    x: torch.Tensor
    inner: Inner


def test_mapping_for_a_nested_class_with_wrong_or_missing_fields() -> None:
    with pytest.raises(
        KeyNotFoundError, match=r"key \('inner', 'zz'\): Inner has no field 'zz'; its fields"
    ):
        Holder(torch.zeros(3), {"zz": torch.zeros(3)}, batch_size=[3])
    with pytest.raises(FieldTypeError, match=r"key \('inner', 'z'\).*'z' of Inner is required"):
        Holder(torch.zeros(3), {}, batch_size=[3])
    holder = Holder(torch.zeros(3), {"z": torch.zeros(3)}, batch_size=[3])
    z = holder.inner.z
    with pytest.raises(KeyNotFoundError, match=r"\('inner', 'q'\)"):
        holder.update({"x": torch.ones(3), "inner": {"q": torch.zeros(3)}})
    with pytest.raises(KeyNotFoundError, match=r"\('inner', 'q'\)"):
        holder.inner = {"z": torch.ones(3), "q": torch.zeros(3)}
    assert holder.inner.z is z and (holder.x == 0).all()


def test_failed_batch_size_assignment_changes_nothing() -> None:
    td = TensorDict({"n": {"y": torch.zeros(3, 4)}, "x": torch.zeros(3)}, [3], names=["b"])
    with pytest.raises(BatchSizeError, match=r"key 'x' has shape \[3\]"):
        td.batch_size = [3, 4]
    # the nested instance that could grow was not grown before the failure
    assert td.batch_size == (3,) and td["n"].batch_size == (3,) and td.names == ["b"]
    td = TensorDict({"n": {"y": torch.zeros(3)}, "x": torch.zeros(3, 4)}, [3])
    with pytest.raises(BatchSizeError, match=r"key \('n', 'y'\) has shape \[3\]"):
        td.batch_size = [3, 4]
    holder = Holder(torch.zeros(3, 4), {"z": torch.zeros(3)}, batch_size=[3])
    with pytest.raises(BatchSizeError, match=r"\('inner', 'z'\)"):
        holder.batch_size = [3, 4]
    assert holder.batch_size == (3,) and holder.inner.batch_size == (3,)


def test_failed_batch_size_assignment_through_lazy_stacks_changes_nothing() -> None:
    members = [TensorDict({"x": torch.zeros(3)}, []), TensorDict({"x": torch.zeros(4)}, [])]
    td = TensorDict({"n": {"y": torch.zeros(2, 3)}, "l": tensorclass.lazy_stack(members)}, [])
    with pytest.raises(BatchSizeError, match=r"key \('l', 'x'\) has shape \[4\]"):
        td.batch_size = [2, 3]  # the second member cannot take it
    assert td["n"].batch_size == () and td["l"].batch_size == (2,)
    assert [m.batch_size for m in members] == [(), ()]


def test_failed_setdefault_and_pop_on_locked_change_nothing() -> None:
    td = TensorDict({"a": torch.zeros(3)}, [3]).lock_()
    with pytest.raises(tensorclass.LockedError, match="cannot add key 'b'"):
        td.setdefault("b", torch.ones(3))
    with pytest.raises(tensorclass.LockedError, match="cannot delete key 'a'"):
        td.pop("a")
    assert list(td.keys()) == ["a"]


def test_bad_batch_indices_name_the_batch_size() -> None:
    sample = Sample(torch.zeros(3, 2), torch.zeros(3), batch_size=[3])
    for index in (torch.tensor([0, 3]), [5], torch.tensor([True, False]), (slice(None), [0])):
        with pytest.raises(IndexError, match=r"batch.size=? ?\[3\]"):
            sample[index]
    with pytest.raises(IndexError, match=r"batch_size=\[3\]"):
        sample[[0, 3]] = 1.0
    assert (sample.image == 0).all()


def test_structure_errors_name_the_key() -> None:
    a = TensorDict({"n": {"a": torch.zeros(3)}}, [3])
    with pytest.raises(StructureMismatchError, match="cannot stack key 'n': a TensorDict with a"):
        torch.stack([a, TensorDict({"n": torch.zeros(3)}, [3])])
    with pytest.raises(
        StructureMismatchError, match=r"different keys under 'n': item 0 has \['a'\]"
    ):
        torch.cat([a, TensorDict({"n": {"b": torch.zeros(3)}}, [3])])
    td = TensorDict({"x": torch.zeros(3, 5), "n": {"y": torch.zeros(3)}}, [3])
    with pytest.raises(
        BatchSizeError, match=r"cannot write key 'x' at the index: value shape \[6\]"
    ):
        td[0] = {"x": torch.zeros(6)}
    with pytest.raises(StructureMismatchError, match="cannot write a tensor into key 'n'"):
        td[0] = {"n": torch.zeros(())}
    with pytest.raises(KeyNotFoundError, match="Sample has no field 'q'; its fields are 'image'"):
        Sample(torch.zeros(3, 2), torch.zeros(3), batch_size=[3])[0] = {"q": torch.zeros(())}
