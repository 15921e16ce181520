"""Special leaves: MetaData, NonTensorDataBase, stand-alone NonTensorData, NonTensorStack,
UnbatchedTensor; on a TensorDict, a typed class with a nested field, and a lazy stack."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import (
    FieldTypeError,
    LazyStackedTensorDict,
    MetaData,
    NonTensorData,
    NonTensorDataBase,
    NonTensorStack,
    TensorClass,
    TensorDict,
    UnbatchedTensor,
    lazy_stack,
    set_capture_non_tensor_stack,
)


class Inner(TensorClass):
    x: torch.Tensor
    note: Any = None


class Outer(TensorClass):
    inner: Inner
    y: torch.Tensor
    config: Any = None
    table: UnbatchedTensor | None = None


def make_td(config: Any = None, name: str = "run") -> TensorDict:
    td = TensorDict({"x": torch.arange(6.0).reshape(3, 2), "n": {"z": torch.zeros(3)}}, [3])
    td["config"] = MetaData(config if config is not None else {"lr": 0.1})
    td["name"] = name
    return td


def make_outer(config: Any, table: Any = None) -> Outer:
    return Outer(
        Inner(torch.zeros(3, 2), note="n", batch_size=[3]),
        torch.arange(3.0),
        config=MetaData(config),
        table=table,
        batch_size=[3],
    )


# -- MetaData ------------------------------------------------------------------------------


def test_metadata_reads_back_the_very_object_through_batch_operations() -> None:
    config = {"lr": 0.1}
    td = make_td(config)
    assert td["config"] is config
    for view in (td[0], td[1:], td.reshape(3, 1), td.unsqueeze(0), td.permute(0), td.flip(0)):
        assert view["config"] is config
        assert isinstance(view._data["config"], MetaData)


@pytest.mark.parametrize("stacker", [torch.stack, torch.cat])
def test_metadata_stacks_to_one_value_only_for_the_same_object(stacker: Callable[..., Any]) -> None:
    config = {"lr": 0.1}
    a, b = make_td(config), make_td(config)
    joined = stacker([a, b])
    assert joined["config"] is config and isinstance(joined._data["config"], MetaData)
    # equal but not the same object: one value per element (as tensordict: `is`, not `==`)
    other = stacker([a, make_td({"lr": 0.1})])
    assert type(other._data["config"]) is NonTensorStack
    flat = torch.stack([a, make_td({"lr": 0.1})])["config"]
    assert flat[0][0] is config and flat[1][0] == {"lr": 0.1} and flat[1][0] is not config


def test_plain_equal_values_stay_one_value_unlike_metadata() -> None:
    a, b = make_td(), make_td()
    stacked = torch.stack([a, b])
    # equal plain values make a stack (tensordict 0.15.3's default, capture off)
    assert stacked["name"] == [["run"] * 3] * 2 and stacked.get("name").data == "run"
    assert type(stacked._data["config"]) is NonTensorStack  # MetaData: different objects
    with pytest.warns(DeprecationWarning), set_capture_non_tensor_stack(True):
        assert torch.stack([a, b])["name"] == "run"  # captured: one shared value


def test_metadata_clone_copies_the_object() -> None:
    config = {"lr": 0.1}
    td = make_td(config)
    clone = td.clone()
    assert clone["config"] == config and clone["config"] is not config
    assert isinstance(clone._data["config"], MetaData)
    leaf = MetaData(config)
    assert leaf.clone().data is not config and leaf.clone().data == config


def test_metadata_typed_variant_checks_the_value() -> None:
    assert MetaData[str]("abc").data == "abc"
    with pytest.raises(TypeError, match=r"MetaData\[str\] expects a str; got int"):
        MetaData[str](1)
    assert isinstance(MetaData[str]("a"), MetaData)
    assert not isinstance(MetaData("a"), MetaData[int])
    assert not isinstance(NonTensorData("a"), MetaData)
    assert MetaData(NonTensorData(3)).data == 3  # a NonTensorData is unwrapped


def test_metadata_in_typed_class_and_lazy_stack() -> None:
    config = {"lr": 0.1}
    a, b = make_outer(config), make_outer(config)
    assert a[1].config is config
    assert torch.stack([a, b]).config is config
    assert torch.stack([a, make_outer({"lr": 0.1})]).config[1][0] == {"lr": 0.1}
    lazy = lazy_stack([a, b])
    assert isinstance(lazy, LazyStackedTensorDict)
    assert lazy["config"] is config and lazy[0]["config"] is config


def test_nontensordatabase_is_what_tensordict_says() -> None:
    for leaf in (NonTensorData("a"), MetaData(1), MetaData[int](1)):
        assert isinstance(leaf, NonTensorDataBase)
    assert not isinstance(NonTensorStack.from_list(["a"]), NonTensorDataBase)
    assert not isinstance("a", NonTensorDataBase)
    assert not isinstance(torch.zeros(1), NonTensorDataBase)
    assert issubclass(MetaData, NonTensorDataBase)


# -- NonTensorData on its own -------------------------------------------------------------


def test_standalone_nontensordata_has_a_batch_size_that_follows_torch() -> None:
    leaf = NonTensorData("v", batch_size=[2, 3], device="cpu", names=["a", "b"])
    probe = torch.zeros(2, 3)
    assert leaf.batch_size == leaf.shape == probe.shape
    assert leaf.device == torch.device("cpu") and leaf.names == ["a", "b"]
    cases: list[tuple[Callable[[Any], Any], str]] = [
        (lambda t: t[0], "index"),
        (lambda t: t[:, 1:], "slice"),
        (lambda t: t.reshape(6), "reshape"),
        (lambda t: t.unsqueeze(1), "unsqueeze"),
        (lambda t: t.permute(1, 0), "permute"),
        (lambda t: t.expand(4, 2, 3), "expand"),
        (lambda t: t.flatten(), "flatten"),
    ]
    for op, what in cases:
        assert op(leaf).batch_size == op(probe).shape, what
        assert op(leaf).data == "v"
    assert leaf.tolist() == [["v"] * 3] * 2
    assert NonTensorData("v").tolist() == "v"
    assert NonTensorData(NonTensorData("v")).data == "v"


def test_standalone_nontensordata_stored_in_an_instance_is_shared() -> None:
    td = TensorDict({"x": torch.zeros(3)}, [3])
    td["s"] = NonTensorData("v", batch_size=[3])
    assert td._data["s"].shape == () and td[1]["s"] == "v" and td["s"] == "v"
    assert repr(NonTensorData("v", batch_size=[3])) == (
        "NonTensorData(data=v, batch_size=torch.Size([3]), device=None)"
    )
    assert repr(MetaData(1)) == "MetaData(data=1, batch_size=torch.Size([]), device=None)"


# -- NonTensorStack -----------------------------------------------------------------------


def test_nontensorstack_from_list_tolist_data_and_indexing() -> None:
    tags = NonTensorStack.from_list([["a", "b"], ["c", "d"]])
    assert tags.batch_size == torch.Size([2, 2]) and len(tags) == 2
    assert tags.tolist() == [["a", "b"], ["c", "d"]]
    assert tags[0].tolist() == ["a", "b"] and tags[:, 0].tolist() == ["a", "c"]
    assert tags[1, 1].data == "d"
    assert [part.tolist() for part in tags] == [["a", "b"], ["c", "d"]]
    with pytest.raises(AttributeError, match="holds different values"):
        tags.data
    assert NonTensorStack.from_list(["z", "z"]).data == "z"
    assert repr(tags) == (
        "NonTensorStack(\n    [['a', 'b'], ['c', 'd']],\n"
        "    batch_size=torch.Size([2, 2]),\n    device=None)"
    )
    assert NonTensorStack("a", "b").tolist() == ["a", "b"]
    assert NonTensorStack(NonTensorData("a"), NonTensorData("b")).tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="not rectangular"):
        NonTensorStack.from_list([["a"], ["b", "c"]])


def test_nontensorstack_written_to_an_instance_gives_one_value_per_element() -> None:
    td = TensorDict({"x": torch.zeros(3)}, [3])
    td["tag"] = NonTensorStack.from_list(["a", "b", "c"])
    assert td["tag"] == ["a", "b", "c"] and td[1]["tag"] == "b" and td[1:]["tag"] == ["b", "c"]


def test_selecting_one_element_reads_the_value() -> None:
    a, b = make_td(name="abc"), make_td(name="xyz")
    stacked = torch.stack([a, b])
    assert stacked["name"] == [["abc"] * 3, ["xyz"] * 3]
    # several elements read as a list even when equal (tensordict gives "abc" for
    # stacked[0] here: it keeps the members' shared values; see docs/migrating.md)
    assert stacked[0]["name"] == ["abc"] * 3 and stacked[1, 2]["name"] == "xyz"
    assert stacked[:, 0]["name"] == ["abc", "xyz"]  # different values: still a list
    assert stacked[0].batch_size == torch.Size([3])  # the batch size is the tensors'
    # typed class with a nested field, and a lazy stack
    one, two = make_outer(1), make_outer(1)
    one.inner.note, two.inner.note = "abc", "xyz"
    typed = torch.stack([one, two])
    assert typed[0, 0].inner.note == "abc" and typed[:, 1].inner.note == ["abc", "xyz"]
    lazy = lazy_stack([a, b])
    assert lazy[0]["name"] == "abc" and lazy[:, 0]["name"] == ["abc", "xyz"]  # the member


# -- UnbatchedTensor ------------------------------------------------------------------------


def test_unbatched_tensor_is_untouched_by_batch_operations() -> None:
    table = UnbatchedTensor(torch.arange(5))
    td = TensorDict({"x": torch.zeros(3, 2)}, [3])
    td["table"] = table
    assert type(td["table"]) is UnbatchedTensor and td["table"] is table
    for view in (td[0], td[1:], td.reshape(3, 1), td.unsqueeze(0), td.permute(0), td.expand(2, 3)):
        assert torch.equal(view["table"], table) and view["table"].shape == (5,)
    assert torch.equal(torch.stack([td, td])["table"], table)  # kept whole, not stacked
    assert torch.equal(torch.cat([td, td.clone()])["table"], table)  # equal payloads: one
    different = td.clone()
    different["table"] = UnbatchedTensor(torch.ones(5, dtype=torch.int64))
    both = torch.stack([td, different])
    assert torch.equal(both[1, 0]["table"], torch.ones(5, dtype=torch.int64))  # per element
    clone = td.clone()
    clone["table"].add_(1)
    assert torch.equal(td["table"], torch.arange(5))  # clone copied the payload
    assert torch.equal((td + 1)["table"], table)  # element-wise ops: batched leaves only
    assert "table: i64[5]" in repr(td)  # its own full shape, not the batch's


def test_unbatched_tensor_is_a_tensor() -> None:
    table = UnbatchedTensor([1.0, 2.0])
    assert isinstance(table, torch.Tensor) and type(table + 1) is UnbatchedTensor
    assert torch.equal(table.as_subclass(torch.Tensor), torch.tensor([1.0, 2.0]))
    assert UnbatchedTensor(table) is table
    again = pickle.loads(pickle.dumps(table))
    assert type(again) is UnbatchedTensor and torch.equal(again, table)
    assert type(copy.deepcopy(table)) is UnbatchedTensor


def test_unbatched_tensor_in_a_typed_class_and_lazy_stack() -> None:
    table = UnbatchedTensor(torch.ones(7))
    a = make_outer(None, table)
    assert a.table is table and a[1].table is table and a.reshape(1, 3).table is table
    assert torch.stack([a, a]).table is table
    lazy = lazy_stack([a, a])
    assert torch.equal(lazy[1].table, table) and torch.equal(lazy["table"], table)

    class Batched(TensorClass):
        x: torch.Tensor

    with pytest.raises(FieldTypeError, match="needs a field annotated UnbatchedTensor"):
        Batched(UnbatchedTensor(torch.ones(7)), batch_size=[3])


def test_special_leaves_pass_through_vmap() -> None:
    td = TensorDict({"x": torch.randn(4, 3)}, [4])
    td["table"] = UnbatchedTensor(torch.arange(5.0))
    td["config"] = MetaData("cfg")
    out = torch.vmap(lambda t: t["x"].sum() + t["table"].sum())(td)
    torch.testing.assert_close(out, td["x"].sum(-1) + 10)
    same = torch.vmap(lambda t: t)(td)
    assert same["config"] == "cfg" and torch.equal(same["table"], td["table"])
