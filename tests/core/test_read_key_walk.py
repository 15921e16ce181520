"""The read key walk is written once (``engine.keys.access.read_str``/``read_path``) and
inlined into ``get`` and ``td[key]``: changing it there changes both."""

from typing import Any

import torch

from tensorclass import TensorClass, TensorDict
from tensorclass.engine.core.state import MISSING
from tensorclass.engine.keys.access import READ_KEY, WRAPPED, get, read_path, read_str
from tensorclass.engine.shape import indexing


class Item(TensorClass):
    x: torch.Tensor


def walked(node: Any, key: Any, unwrap: Any) -> Any:
    if key:
        return ("walked", key)
    return MISSING


def make() -> TensorDict:
    return TensorDict({"a": torch.zeros(3), "n": {"b": torch.ones(3), "s": "text"}}, [3])


def test_get_and_getitem_follow_the_one_str_walk() -> None:
    td = make()
    with READ_KEY.replaced(walked, "read_str"):
        assert td["a"] == ("walked", "a")
        assert td.get("a") == ("walked", "a")
        assert td.get(("n", "b")) is td["n", "b"]  # the other walk is unchanged
    assert td["a"] is td.get("a")


def test_get_and_getitem_follow_the_one_path_walk() -> None:
    td = make()
    item = Item(x=torch.zeros(3), batch_size=[3])
    with READ_KEY.replaced(walked, "read_path"):
        assert td["n", "b"] == ("walked", ("n", "b"))
        assert td.get(("n", "b")) == ("walked", ("n", "b"))
        assert item.get(("x",)) == ("walked", ("x",))
    assert td["n", "s"] == td.get(("n", "s")) == "text"


def test_the_walks_are_inlined_not_called() -> None:
    for func in (get, indexing.__getitem__):
        assert "read_str" not in func.__code__.co_names
        assert "read_path" not in func.__code__.co_names


def test_the_walks() -> None:
    td = make()
    assert read_str(td, "a", WRAPPED) is td._data["a"]
    assert read_str(td, "zz", WRAPPED) is MISSING
    assert read_path(td, ("n", "s"), WRAPPED) == "text"
    assert read_path(td, ("n", "zz"), WRAPPED) is MISSING
    assert read_path(td, ("a", "b"), WRAPPED) is MISSING  # a leaf on the way
    assert read_path(td, (), WRAPPED) is td


def test_the_walks_unwrap_the_leaves_they_are_given() -> None:
    td = TensorDict({"tags": ["a", "b", "c"]}, [3])
    assert read_str(td, "tags", WRAPPED) == ["a", "b", "c"]  # td[key]: the values
    assert read_str(td, "tags", None) is td._data["tags"]  # get (the class's): the stack
    assert read_path(td, ("tags",), None) is td._data["tags"]
    assert td["tags"] == ["a", "b", "c"] and td.get("tags").tolist() == ["a", "b", "c"]
