"""Key-level reads and writes on TensorDict and typed classes."""

import contextlib
from collections.abc import Iterator

import pytest
import torch

from tensorclass import (
    InvalidKeyError,
    KeyNotFoundError,
    LockedError,
    TensorClass,
    TensorDict,
    set_get_defaults_to_none,
    unravel_key,
)


@contextlib.contextmanager
def no_none_default() -> Iterator[None]:
    """``get`` of a missing key raises inside the block (``set_get_defaults_to_none(False)``,
    whose call warns as tensordict's does)."""
    with pytest.warns(DeprecationWarning), set_get_defaults_to_none(False):
        yield


def make() -> TensorDict:
    return TensorDict(
        {"a": torch.zeros(3, 4), "b": {"c": torch.ones(3), "d": {"e": torch.ones(3, 2)}}}, [3]
    )


def test_unravel_key() -> None:
    assert unravel_key(("a", ("b", ("c",)))) == ("a", "b", "c")
    assert unravel_key(("a",)) == "a"
    assert unravel_key("a") == "a"
    with pytest.raises(InvalidKeyError, match="got int 1"):
        unravel_key(("a", 1))
    with pytest.raises(InvalidKeyError):
        unravel_key(())


def test_construction_from_kwargs_tuples_and_instances() -> None:
    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    assert list(td.keys()) == ["a"]
    td = TensorDict({("x", "y"): torch.zeros(2), "z": [1.5, 2.5], "s": "text"}, batch_size=[2])
    assert isinstance(td["x"], TensorDict) and td["x", "y"].shape == (2,)
    assert torch.equal(td["z"], torch.tensor([1.5, 2.5]))  # numbers and lists become tensors
    assert td["s"] == "text"
    copy = TensorDict(td)
    assert copy["x"] is td["x"] and copy.batch_size == (2,)


def test_get_default_and_nested() -> None:
    td = make()
    assert td.get("missing", None) is None
    assert td.get(("b", "x"), 7) == 7
    assert td.get(("b", ("d", "e"))).shape == (3, 2)
    assert td.get("missing") is None and td.get(("b", "zz")) is None  # tensordict's default
    assert td.get(("zz", "x")) is None  # a missing level too
    with no_none_default(), pytest.raises(KeyNotFoundError, match="available keys: 'a', 'b'"):
        td.get("missing")
    with pytest.raises(KeyError, match=r"\('b', 'x'\).*'c', 'd'"):
        td["b", "x"]
    with pytest.raises(KeyError, match="holds a Tensor"):
        td["a", "x"]


def test_set_and_set_inplace() -> None:
    td = make()
    original = td["a"]
    td.set("a", torch.ones(3, 4), inplace=True)
    assert td["a"] is original and (original == 1).all()
    td.set("a", torch.full((3, 4), 2.0))
    assert td["a"] is not original
    td.set_(("b", "c"), torch.zeros(3))
    assert (td["b", "c"] == 0).all()
    with pytest.raises(KeyError):
        td.set_("new", torch.zeros(3))
    td.set("new", torch.zeros(3), inplace=True)  # inplace on a missing key creates it
    assert "new" in td


def test_setdefault_update_update_() -> None:
    td = make()
    assert td.setdefault("a", torch.ones(3, 4)).sum() == 0
    assert td.setdefault("f", torch.ones(3)).sum() == 3
    td.update({"b": {"g": torch.zeros(3)}, "h": torch.zeros(3)})
    assert set(td["b"].keys()) == {"c", "d", "g"}  # nested mappings merge
    before = td["a"]
    td.update_({"a": torch.ones(3, 4)})
    assert td["a"] is before and (before == 1).all()
    with pytest.raises(KeyError):
        td.update_({"zz": torch.ones(3)})
    td.update(TensorDict({"a": torch.full((3, 4), 5.0)}, [3]), inplace=True)
    assert td["a"] is before and (before == 5).all()
    td.update({"a": torch.zeros(3, 4), "x": torch.ones(3)}, keys_to_update=["x"])
    assert (td["a"] == 5).all() and "x" in td


def test_pop_del_rename() -> None:
    td = make()
    assert td.pop("a").shape == (3, 4)
    assert td.pop("a", "gone") == "gone"
    del td["b", "c"]
    assert ("b", "c") not in td.keys(include_nested=True)
    td.rename_key_(("b", "d"), "dd")
    assert "dd" in td and "d" not in td["b"]
    td.del_("dd")
    assert list(td.keys()) == ["b"]
    td["z"] = torch.zeros(3)
    with pytest.raises(KeyError, match="exists"):
        td.rename_key_("b", "z", safe=True)
    td.rename_key_("b", "b", safe=True)  # to itself: nothing to overwrite
    assert list(td.keys()) == ["b", "z"]


def test_keys_values_items_nested_and_leaves() -> None:
    td = make()
    assert list(td.keys()) == ["a", "b"]
    assert list(td.keys(include_nested=True)) == ["a", "b", ("b", "c"), ("b", "d"), ("b", "d", "e")]
    assert list(td.keys(True, True)) == ["a", ("b", "c"), ("b", "d", "e")]
    assert ("b", "d", "e") in td.keys(include_nested=True, leaves_only=True)
    assert ("b", "d") not in td.keys(include_nested=True, leaves_only=True)
    assert ("b", "c") not in td.keys()
    assert len(td.keys(True, True)) == 3
    assert [v.shape for v in td.values(True, True)] == [(3, 4), (3,), (3, 2)]
    assert dict(td.items())["a"] is td["a"]
    assert "a" in td and ("b", ("c",)) in td and "zz" not in td


def test_select_exclude_strict() -> None:
    td = make()
    sel = td.select("a", ("b", "d", "e"))
    assert list(sel.keys(True, True)) == ["a", ("b", "d", "e")]
    with pytest.raises(KeyError):
        td.select("zz")
    assert list(td.select("a", "zz", strict=False).keys()) == ["a"]
    exc = td.exclude(("b", "c"), "zz")
    assert list(exc.keys(True, True)) == ["a", ("b", "d", "e")]
    assert list(td.keys(True, True)) == ["a", ("b", "c"), ("b", "d", "e")]  # unchanged
    td.exclude("a", inplace=True)
    assert "a" not in td


def test_flatten_and_unflatten_keys() -> None:
    td = make()
    flat = td.flatten_keys(".")
    assert list(flat.keys()) == ["a", "b.c", "b.d.e"]
    back = flat.unflatten_keys(".")
    assert list(back.keys(True, True)) == list(td.keys(True, True))
    assert back["b", "d"].batch_size == (3,)


def test_len_and_empty() -> None:
    td = make()
    assert len(td) == 3 and len(TensorDict({})) == 0
    assert td.empty().is_empty() and list(td.empty(recurse=True).keys()) == ["b"]
    assert not td.is_empty()


def test_lock_refuses_new_replaced_deleted_keys() -> None:
    td = make().lock_()
    assert td.is_locked and td["b"].is_locked
    with pytest.raises(LockedError, match="'z'"):
        td["z"] = torch.zeros(3)
    with pytest.raises(LockedError):
        td["a"] = torch.zeros(3, 4)
    with pytest.raises(LockedError):
        del td["a"]
    with pytest.raises(LockedError):
        td["b", "new"] = torch.zeros(3)
    with pytest.raises(LockedError):
        td.update({"z": torch.zeros(3)})
    td.set_("a", torch.ones(3, 4))  # in-place writes are allowed
    td[0] = TensorDict({"a": torch.full((4,), 2.0)}, [])
    td.update({"a": torch.zeros(3, 4)}, inplace=True)
    assert list(td.keys()) == ["a", "b"]
    td.unlock_()
    td["z"] = torch.zeros(3)
    assert not td["b"].is_locked


def test_typed_class_keys() -> None:
    class Item(TensorClass):
        x: torch.Tensor
        label: str = "none"

    item = Item(torch.zeros(2), batch_size=[2])
    assert list(item.keys()) == ["x", "label"]
    assert item.get("label") == "none" and item["label"] == "none"
    assert dict(item.items())["label"] == "none"
    item["x"] = torch.ones(2)
    assert (item.x == 1).all()
    with pytest.raises(KeyError, match="has no field 'y'"):
        item["y"] = torch.ones(2)
    assert list(item.select("x").keys()) == ["x"] and item.select("x").label is None


def test_pop_with_default_when_a_level_is_missing() -> None:
    td = make()
    assert td.pop(("zz", "yy"), "default") == "default"
    assert td.pop(("a", "yy"), None) is None  # "a" holds a tensor, not nested keys
    assert td.pop(("b", "d", "zz"), 0) == 0
    with pytest.raises(KeyNotFoundError, match=r"\('zz', 'yy'\) not found.*'a', 'b'"):
        td.pop(("zz", "yy"))
    assert list(td.keys(True, True)) == ["a", ("b", "c"), ("b", "d", "e")]


def test_missing_nested_keys_name_the_whole_key_and_that_level() -> None:
    td = make()
    # the listed keys are those next to the missing part, not the top level's
    for action in (
        lambda: td.set_(("b", "zz"), torch.zeros(3)),
        lambda: td.pop(("b", "zz")),
        lambda: td.__delitem__(("b", "zz")),
        lambda: td.update_({"b": {"zz": torch.zeros(3)}}),
    ):
        with pytest.raises(KeyNotFoundError, match=r"\('b', 'zz'\) not found.*'c', 'd'$"):
            action()
    with pytest.raises(KeyNotFoundError, match=r"\('q', 'c'\) not found.*'a', 'b'$"):
        td.set_(("q", "c"), torch.zeros(3))
    with pytest.raises(KeyNotFoundError, match=r"\('a', 'c'\) not found: \('a',\) holds a Tensor"):
        td.set_(("a", "c"), torch.zeros(3))


def test_typed_unset_field_reads_none_like_the_attribute() -> None:
    class Inner(TensorClass):
        z: torch.Tensor
        w: torch.Tensor | None = None

    class Outer(TensorClass):
        x: torch.Tensor
        inner: Inner | None = None

    outer = Outer(torch.zeros(2), batch_size=[2])
    assert outer.inner is None and outer["inner"] is None and outer.get("inner") is None
    assert outer.get("inner", "fallback") == "fallback"  # an explicit default wins
    assert "inner" not in outer and list(outer.keys()) == ["x"]
    outer.inner = Inner(torch.ones(2), batch_size=[2])
    assert outer["inner", "w"] is None and outer.get(("inner", "w")) is None
    with pytest.raises(
        KeyNotFoundError, match="Outer has no field 'y'; its fields are 'x', 'inner'"
    ):
        outer["y"]
    with pytest.raises(
        KeyNotFoundError, match=r"key \('inner', 'v'\): Inner has no field 'v'; its fields are"
    ):
        outer["inner", "v"]
    assert outer.get("y") is None  # get's default, as tensordict's tensorclass
    with no_none_default(), pytest.raises(KeyNotFoundError, match="Outer has no field 'y'"):
        outer.get("y")
    with pytest.raises(KeyError):
        outer.pop("y")
    with pytest.raises(KeyError):  # pop removes something: an unset field is an error
        Outer(torch.zeros(2), batch_size=[2]).pop("inner")


def test_rename_key_edge_cases() -> None:
    td = make()
    td.rename_key_("a", "a")  # to itself: nothing changes
    td.rename_key_(("b", "c"), ("b", ("c",)))
    assert list(td.keys(True, True)) == ["a", ("b", "c"), ("b", "d", "e")]
    td.rename_key_("b", ("b", "moved"))  # into its own subtree
    assert list(td.keys(True, True)) == ["a", ("b", "moved", "c"), ("b", "moved", "d", "e")]
    before = list(td.keys(True))
    with pytest.raises(KeyError, match="'a' holds a Tensor"):
        td.rename_key_(("b", "moved"), ("a", "x"))  # a failed rename loses nothing
    sub = TensorDict({"big": torch.zeros(3, 2)}, [3, 2])
    td["b", "sub"] = sub
    before = list(td.keys(True))
    with pytest.raises(ValueError, match=r"shape \[3, 4\].*batch size \[3, 2\]"):
        td.rename_key_("a", ("b", "sub", "a"))  # "a" does not fit the batch size there
    assert list(td.keys(True)) == before
    with pytest.raises(KeyNotFoundError, match=r"\('b', 'zz'\) not found.*'moved'"):
        td.rename_key_(("b", "zz"), "x")
    td["b", "moved"].lock_()  # a locked level refuses to lose the key
    with pytest.raises(LockedError):
        td.rename_key_(("b", "moved", "c"), "c")
    assert ("b", "moved", "c") in td.keys(True)


def test_update_keys_to_update_selects_nested_levels() -> None:
    td = make()
    new = {"a": torch.ones(3, 4), "b": {"c": torch.full((3,), 5.0), "d": {"e": torch.zeros(3, 2)}}}
    td.update(new, keys_to_update=["b"])
    assert (td["a"] == 0).all() and (td["b", "c"] == 5).all() and (td["b", "d", "e"] == 0).all()
    td = make()
    td.update(new, keys_to_update=[("b", "d")])
    assert (td["b", "c"] == 1).all() and (td["b", "d", "e"] == 0).all()


def test_walk_says_how_far_a_key_path_goes() -> None:
    from tensorclass import lazy_stack
    from tensorclass.engine.core.paths import walk

    td = make()
    assert walk(td, ("b", "d", "e")) == (td["b", "d", "e"], 3)
    assert walk(td, ()) == (td, 0)
    reached, depth = walk(td, ("b", "d", "missing", "x"))
    assert depth == 2 and reached is td["b", "d"]  # the level that lacks the part
    reached, depth = walk(td, ("a", "x"))
    assert depth == 1 and reached is td["a"]  # a leaf on the way: the walk stops on it
    assert walk(td, ("b", ["c"]))[1] == 1  # a part that cannot be a key is missing
    members = [TensorDict({"n": {"x": torch.zeros(2)}, "only0": torch.zeros(2)}, [2])]
    members.append(TensorDict({"n": {"x": torch.ones(2)}}, [2]))
    stack = lazy_stack(members)
    leaf, depth = walk(stack, ("n", "x"))
    assert depth == 2 and torch.equal(leaf, torch.stack([torch.zeros(2), torch.ones(2)]))
    assert walk(stack, ("only0",)) == (stack, 0)  # not in every member: missing


def test_key_primitives_agree_on_where_a_path_breaks() -> None:
    td = make()
    assert ("b", "d", "e") in td and ("b", "x") not in td and ("a", "x") not in td
    with pytest.raises(KeyNotFoundError, match=r"\('a',\) holds a Tensor"):
        td._leaf(("a", "x"))
    with pytest.raises(
        KeyNotFoundError,
        match=r"key \('b', 'x'\) not found in TensorDict; available keys: 'c', 'd'",
    ):
        td._leaf(("b", "x"))
    with pytest.raises(KeyNotFoundError, match=r"\('a',\) holds a Tensor"):
        td.pop(("a", "x"))
    with pytest.raises(KeyNotFoundError, match="'a' holds a Tensor"):
        td.set(("a", "x", "y"), torch.zeros(3))
    td.set(("b", "new", "deep"), torch.zeros(3))  # missing levels are created
    assert td["b", "new", "deep"].shape == (3,)


class Leaves(TensorClass):
    x: torch.Tensor
    note: str


def test_keys_of_flat_nested_and_lazy_instances_in_every_mode() -> None:
    from tensorclass import lazy_stack

    flat = TensorDict({"a": torch.zeros(2), "s": "text", "b": torch.ones(2)}, [2])
    nested = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2), "m": {}}}, [2])
    members = [nested.clone(), nested.clone()]
    members[0]["only0"] = torch.zeros(2)
    lazy = lazy_stack(members)
    typed = Leaves(torch.zeros(2), "note", batch_size=[2])
    empty = TensorDict({"m": {"n": {}}}, [])
    expected = {
        id(flat): {
            mode: ["a", "s", "b"]
            for mode in ((False, False), (True, False), (False, True), (True, True))
        },
        id(nested): {
            (False, False): ["a", "n"],
            (True, False): ["a", "n", ("n", "b"), ("n", "m")],
            (False, True): ["a"],
            (True, True): ["a", ("n", "b")],
        },
        id(typed): {
            mode: ["x", "note"]
            for mode in ((False, False), (True, False), (False, True), (True, True))
        },
        id(empty): {
            (False, False): ["m"],
            (True, False): ["m", ("m", "n")],
            (False, True): [],
            (True, True): [],
        },
    }
    expected[id(lazy)] = expected[id(nested)]
    for td in (flat, nested, lazy, typed, empty):
        for mode, keys in expected[id(td)].items():
            view = td.keys(*mode)
            assert list(view) == keys, (type(td).__name__, mode)
            assert len(view) == len(keys) and all(key in view for key in keys)
            assert [key for key, _ in td.items(*mode)] == keys
    assert empty.is_empty() and not flat.is_empty() and TensorDict({}).is_empty()


def test_flat_keys_are_a_snapshot_and_the_view_stays_live() -> None:
    td = TensorDict({"a": torch.zeros(2), "b": torch.zeros(2)}, [2])
    view = td.keys(True, True)
    keys = iter(view)
    td["c"] = torch.zeros(2)  # writing while iterating the listed keys is fine
    assert list(keys) == ["a", "b"]
    assert list(view) == ["a", "b", "c"] and len(view) == 3
    td["n"] = {"x": torch.zeros(2)}  # no longer flat: the nested key appears
    assert list(view) == ["a", "b", "c", ("n", "x")] and len(view) == 4
