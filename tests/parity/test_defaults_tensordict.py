"""tensordict 0.15.3's defaults for missing keys and non-tensor data, on a ``TensorDict``.

``get`` of a missing key is ``None`` (``td[key]`` raises), a list holds one value per batch
element, and stacking non-tensor values keeps one value per element (a ``NonTensorStack``).
The first tests state what tensordict 0.15.3 does as literal expectations (they run without
tensordict); the side-by-side tests at the end run the same code on both libraries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensorclass
from tensorclass import (
    BatchSizeError,
    FieldTypeError,
    KeyNotFoundError,
    NonTensorData,
    NonTensorStack,
    TensorClass,
    TensorDict,
    lazy_stack,
)
from tensorclass.base import NO_DEFAULT


def make() -> TensorDict:
    return TensorDict(a=torch.zeros(3), n={"b": torch.zeros(3)}, batch_size=[3])


# -- missing keys ---------------------------------------------------------------------------


def test_get_of_a_missing_key_is_none() -> None:
    td = make()
    assert td.get("missing") is None
    assert td.get(("n", "missing")) is None and td.get(("missing", "x")) is None
    assert td.get("missing", 1) == 1 and td.get("missing", default=1) == 1  # a default wins
    assert td.get_at("missing", 0) is None and td.get_at("missing", 0, default=5) == 5
    assert td.get("a") is td._data["a"]


def test_no_default_asks_get_to_raise() -> None:
    td = make()
    for read in (
        lambda: td.get("missing", NO_DEFAULT),
        lambda: td.get(("n", "missing"), NO_DEFAULT),
        lambda: td.get_at("missing", 0, NO_DEFAULT),
        lambda: td.pop("missing", NO_DEFAULT),
        lambda: td.get_non_tensor("missing", NO_DEFAULT),
        lambda: lazy_stack([td, td.clone()]).get("missing", NO_DEFAULT, as_list=True),
    ):
        with pytest.raises(KeyError, match="missing"):
            read()
    assert td.get("a", NO_DEFAULT) is td._data["a"]


def test_a_path_through_a_leaf_is_still_an_error() -> None:
    with pytest.raises(KeyError, match="holds a Tensor"):
        make().get(("a", "x"))


def test_getitem_of_a_missing_key_raises_naming_the_key_and_the_keys() -> None:
    td = make()
    with pytest.raises(
        KeyError, match=r"'missing' not found in TensorDict; available keys: 'a', 'n'"
    ):
        td["missing"]
    with pytest.raises(KeyNotFoundError, match=r"\('n', 'x'\) not found.*'b'"):
        td["n", "x"]
    with pytest.raises(KeyError, match="missing"):
        td.pop("missing")
    assert td.pop("missing", None) is None


def test_typed_classes_read_none_too() -> None:
    class Item(TensorClass):
        x: torch.Tensor
        y: torch.Tensor | None = None

    item = Item(torch.zeros(2), batch_size=[2])
    assert item.get("unknown") is None and item.get("y") is None and item.y is None
    with pytest.raises(KeyNotFoundError, match="Item has no field 'unknown'"):
        item["unknown"]


# -- lists ----------------------------------------------------------------------------------


def test_a_list_holds_one_value_per_element() -> None:
    td = TensorDict(a=["x", "y", "z"], batch_size=[3])
    assert td[1]["a"] == "y" and td["a"] == ["x", "y", "z"]
    stack = td.get("a")
    assert type(stack) is NonTensorStack and stack.tolist() == ["x", "y", "z"]
    assert stack.shape == stack.batch_size == (3,)
    assert td[1:]["a"] == ["y", "z"] and td[torch.tensor([2, 0])]["a"] == ["z", "x"]
    for write in (
        lambda t: t.__setitem__("b", ["p", "q", "r"]),
        lambda t: t.set("b", ["p", "q", "r"]),
        lambda t: t.update({"b": ["p", "q", "r"]}),
    ):
        other = TensorDict(batch_size=[3])
        write(other)
        assert type(other.get("b")) is NonTensorStack and other[2]["b"] == "r"
    built = TensorDict.from_dict({"a": ["x", "y"], "b": torch.zeros(2)}, auto_batch_size=True)
    assert built.batch_size == (2,) and built[0]["a"] == "x"


def test_what_a_list_becomes() -> None:
    td = TensorDict(batch_size=[2])
    td["ints"] = [1, 2]  # numbers: a tensor
    td["tensors"] = [torch.zeros(3), torch.ones(3)]  # tensors of one shape: their stack
    td["ragged_tensors"] = [torch.zeros(2), torch.zeros(3)]  # else one tensor per element
    td["mixed"] = ["x", None]
    td["dicts"] = [{"q": 1}, {"q": 2}]
    td["grid"] = [["a", "b", "c"], ["d", "e", "f"]]  # nested lists of one length: a dim each
    td["ragged"] = [["a", "b"], ["c"]]  # lengths differ: the inner lists are the values
    td["pair"] = ("x", "y")  # a tuple is one shared value
    assert td["ints"].dtype == torch.int64 and td["tensors"].shape == (2, 3)
    assert type(td.get("ragged_tensors")) is NonTensorStack
    assert td[1]["mixed"] is None and td[1]["dicts"] == {"q": 2}
    assert td.get("grid").shape == (2, 3) and td[1]["grid"] == ["d", "e", "f"]
    assert td.get("ragged").shape == (2,) and td[1]["ragged"] == ["c"]
    assert td[1]["pair"] == ("x", "y")
    assert TensorDict(a=[], batch_size=[0])["a"].shape == (0,)  # an empty list: a tensor
    extra = TensorDict(a=["x", "y"])  # batch size []: the list adds a dim of its own
    assert extra.batch_size == () and extra.get("a").shape == (2,)


@pytest.mark.parametrize(
    "write",
    [
        lambda td: td.__setitem__("a", ["x", "y"]),
        lambda td: td.set("a", ["x", "y"]),
        lambda td: td.update({"ok": ["p", "q", "r"], "a": ["x", "y"]}),
        lambda td: td.__setitem__("a", [["x", "y"]] * 2),  # nested: the first dim is 2
    ],
)
def test_a_list_of_the_wrong_length_is_refused_and_nothing_is_written(
    write: Callable[[TensorDict], Any],
) -> None:
    td = TensorDict(x=torch.zeros(3), batch_size=[3])
    with pytest.raises(BatchSizeError, match=r"key 'a'.*shape \[2.*batch size \[3\]") as info:
        write(td)
    assert isinstance(info.value, ValueError) and list(td.keys()) == ["x"]
    with pytest.raises(BatchSizeError, match=r"shape \[2\].*batch size \[2, 3\]"):
        TensorDict(a=["x", "y"], batch_size=[2, 3])  # a list fills the leading dims


def test_set_non_tensor_stores_a_list_as_one_value() -> None:
    td = TensorDict(batch_size=[3])
    td.set_non_tensor("a", ["x", "y"])
    assert td[2]["a"] == ["x", "y"] and td.get("a") == ["x", "y"]


# -- stacking non-tensor values -------------------------------------------------------------


def test_stacking_equal_values_keeps_a_stack() -> None:
    stacked = torch.stack([TensorDict(a="x"), TensorDict(a="x")])
    assert type(stacked.get("a")) is NonTensorStack
    assert stacked.get("a").tolist() == ["x", "x"] and stacked["a"] == ["x", "x"]
    assert stacked[0]["a"] == "x" and stacked.get("a").data == "x"
    assert [member["a"] for member in stacked.unbind(0)] == ["x", "x"]
    assert type(stacked[:1].get("a")) is NonTensorStack  # a selection stays a stack
    assert stacked[torch.tensor([True, False])].get("a").tolist() == ["x"]


def test_stacks_of_different_values() -> None:
    stacked = torch.stack([TensorDict(a="x"), TensorDict(a="y")])
    assert stacked["a"] == ["x", "y"] and stacked[[1, 0]].get("a").tolist() == ["y", "x"]
    with pytest.raises(AttributeError, match="different values"):
        stacked.get("a").data
    twice = torch.stack([stacked, stacked])
    assert twice[1, 1]["a"] == "y" and twice.get("a").tolist() == [["x", "y"]] * 2


def test_cat_and_lazy_stacks() -> None:
    same = torch.stack([TensorDict(a="x"), TensorDict(a="x")])
    different = torch.stack([TensorDict(a="x"), TensorDict(a="y")])
    assert torch.cat([same, different]).get("a").tolist() == ["x", "x", "x", "y"]
    shared = TensorDict(a="x", batch_size=[2])
    assert torch.cat([shared, shared])["a"] == "x"  # equal shared values stay one in cat
    lazy = lazy_stack([TensorDict(a="x"), TensorDict(a="x")])
    assert type(lazy.get("a")) is NonTensorStack and lazy["a"] == ["x", "x"]
    assert lazy[1]["a"] == "x"


def test_shared_values_and_metadata() -> None:
    td = TensorDict(a=torch.zeros(2), s="shared", batch_size=[2])
    assert td.get("s") == "shared" and td[1]["s"] == "shared"  # a shared value: itself
    assert type(td._data["s"]) is NonTensorData


# -- typed classes: the annotation decides ------------------------------------------------


class Clip(TensorClass):
    frames: torch.Tensor
    source: str = "camera"
    tags: list[str] | None = None
    extra: Any = None


def test_a_typed_field_annotation_decides() -> None:
    clip = Clip(torch.zeros(3), source=["a", "b", "c"], tags=["x", "y"], batch_size=[3])
    assert clip[1].source == "b" and clip.source == ["a", "b", "c"]  # str: per element
    assert clip.get("source") == ["a", "b", "c"]  # a typed class reads a stack as a list
    assert clip[1].tags == ["x", "y"]  # list[str]: one list, shared
    clip.tags = [["x"], ["y"], ["z", "w"]]  # a list of lists: one list per element
    assert clip[2].tags == ["z", "w"]
    clip.extra = ["p", "q", "r"]  # Any: TensorDict's rule
    assert clip[0].extra == "p"
    with pytest.raises(FieldTypeError, match="Clip.source is a str field.*int 2"):
        Clip(torch.zeros(3), source=["a", 2, "c"], batch_size=[3])
    with pytest.raises(BatchSizeError, match="key 'source'"):
        Clip(torch.zeros(3), source=["a", "b"], batch_size=[3])


def test_stacking_typed_instances_keeps_a_stack() -> None:
    one = Clip(torch.zeros(()), source="u")
    stacked = torch.stack([one, one.clone()])
    assert stacked.source == ["u", "u"] and stacked[0].source == "u"


# -- side by side with tensordict ------------------------------------------------------------


def plain(value: Any) -> Any:
    """A read as plain Python data, for comparing the two libraries."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.tolist())
    if isinstance(value, list):  # tensordict's LinkedList too
        return [plain(item) for item in value]
    if hasattr(value, "batch_size") and hasattr(value, "tolist"):  # a NonTensorStack
        return ("stack", tuple(value.batch_size), value.tolist())
    return value


def run_both(check: Callable[[Any], Any]) -> None:
    """``check(lib)`` on tensordict and on tensorclass: equal plain results."""
    tensordict = pytest.importorskip("tensordict")
    results = []
    for lib in (tensordict, tensorclass):
        try:
            results.append(plain(check(lib)))
        except Exception as err:  # both must fail alike
            results.append(("error", isinstance(err, (KeyError, ValueError, RuntimeError))))
    assert results[0] == results[1]


CHECKS: dict[str, Callable[[Any], Any]] = {
    "get missing": lambda lib: lib.TensorDict(a=torch.zeros(2), batch_size=[2]).get("zz"),
    "get nested missing": lambda lib: lib.TensorDict(n={"b": torch.zeros(())}).get(("n", "z")),
    "get default": lambda lib: lib.TensorDict().get("zz", 3),
    "getitem missing": lambda lib: lib.TensorDict()["zz"],
    "get_at missing": lambda lib: lib.TensorDict(batch_size=[2]).get_at("zz", 0),
    "list get": lambda lib: lib.TensorDict(a=["x", "y", "z"], batch_size=[3]).get("a"),
    "list getitem": lambda lib: lib.TensorDict(a=["x", "y", "z"], batch_size=[3])["a"],
    "list element": lambda lib: lib.TensorDict(a=["x", "y", "z"], batch_size=[3])[1]["a"],
    "list slice": lambda lib: lib.TensorDict(a=["x", "y", "z"], batch_size=[3])[1:].get("a"),
    "list wrong length": lambda lib: lib.TensorDict(a=["x", "y"], batch_size=[3]),
    "list 2d": lambda lib: lib.TensorDict(a=[["a", "b"], ["c", "d"]], batch_size=[2, 2])[1, 0]["a"],
    "list of ints": lambda lib: lib.TensorDict(a=[1, 2, 3], batch_size=[3])["a"],
    "list of tensors": lambda lib: lib.TensorDict(a=[torch.zeros(2)] * 3, batch_size=[3])["a"],
    "list no batch": lambda lib: lib.TensorDict(a=["x", "y"]).get("a"),
    "stack equal": lambda lib: torch.stack([lib.TensorDict(a="x"), lib.TensorDict(a="x")]).get("a"),
    "stack equal element": lambda lib: torch.stack([lib.TensorDict(a="x")] * 2)[0]["a"],
    "stack equal data": lambda lib: torch.stack([lib.TensorDict(a="x")] * 2).get("a").data,
    "stack cat": lambda lib: torch.cat(
        [torch.stack([lib.TensorDict(a="x")] * 2), torch.stack([lib.TensorDict(a="y")] * 2)]
    ).get("a"),
    "lazy stack": lambda lib: lib.lazy_stack([lib.TensorDict(a="x")] * 2).get("a"),
    "unbind": lambda lib: [
        m["a"] for m in torch.stack([lib.TensorDict(a="x"), lib.TensorDict(a="y")]).unbind(0)
    ],
    "index list": lambda lib: torch.stack([lib.TensorDict(a="x"), lib.TensorDict(a="y")])[
        [1, 0]
    ].get("a"),
    "cat shared": lambda lib: torch.cat([lib.TensorDict(a="x", batch_size=[2])] * 2)["a"],
    "shared read": lambda lib: lib.TensorDict(s="v", batch_size=[2])[1]["s"],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_side_by_side(name: str) -> None:
    run_both(CHECKS[name])
