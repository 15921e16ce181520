"""Keys and structure: clear/popitem, split_keys, separates, renaming, dim names, with-forms,
conversions, keyword arguments of keys/update/apply, and the top-level key helpers.

Each behaviour runs on a TensorDict, a typed class with a nested field and a lazy stack.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from tensorclass import (
    KEY_SEPARATOR,
    BatchSizeError,
    KeyNotFoundError,
    LazyStackedTensorDict,
    LockedError,
    NonTensorData,
    NonTensorStack,
    SchemaError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    assert_allclose_td,
    assert_close,
    default_is_leaf,
    group_by,
    is_bool,
    is_floating,
    is_inexact,
    is_integer,
    is_leaf_nontensor,
    is_non_tensor,
    lazy_stack,
    merge_tensordicts,
    parse_tensor_dict_string,
    set_printoptions,
    unravel_key_list,
    unravel_key_to_tuple,
)


class Inner(TensorClass):
    c: torch.Tensor
    d: torch.Tensor | None = None


class Outer(TensorClass):
    a: torch.Tensor
    inner: Inner
    label: str = "x"
    extra: torch.Tensor | None = None


def make_td() -> TensorDict:
    return TensorDict(
        {"a": torch.arange(6.0).view(2, 3), "inner": {"c": torch.ones(2), "d": torch.zeros(2, 4)}},
        [2],
    )


def make_typed() -> Outer:
    return Outer(
        torch.arange(6.0).view(2, 3),
        Inner(torch.ones(2), torch.zeros(2, 4), batch_size=[2]),
        batch_size=[2],
    )


def make_lazy() -> Any:
    return make_td().to_lazystack(0)  # members of batch size [], same leaves as make_td


MAKERS = [make_td, make_typed, make_lazy]
IDS = ["TensorDict", "typed", "lazy"]


@pytest.fixture(params=MAKERS, ids=IDS)
def obj(request: pytest.FixtureRequest) -> Any:
    return request.param()


# -- inspecting --------------------------------------------------------------------------


def test_depth_sorted_keys_entry_class_param_count(obj: Any) -> None:
    assert obj.depth == 1
    assert obj.sorted_keys == sorted(obj.keys())
    assert obj.entry_class("a") is torch.Tensor
    assert issubclass(obj.entry_class("inner"), TensorClass)
    assert obj.entry_class(("inner", "c")) is torch.Tensor
    with pytest.raises(KeyNotFoundError):
        obj.entry_class("missing")
    tensors = [v for v in obj.values(True, True) if isinstance(v, torch.Tensor)]
    assert obj.param_count() == sum(t.numel() for t in tensors)
    # tensordict counts the leaves: an empty nested instance adds no level
    assert TensorDict({"a": {}}, []).depth == 0 and TensorDict({}, []).depth == 0
    assert TensorDict({"a": {"b": {"c": {}}, "e": 0}}, []).depth == 1


def test_param_count_duplicates() -> None:
    x = torch.ones(2, 3)
    td = TensorDict({"a": x, "b": x}, [2])
    assert td.param_count() == 12 and td.param_count(count_duplicates=False) == 6


def test_non_tensor_accessors(obj: Any) -> None:
    key = "label" if isinstance(obj, Outer) else "note"  # a typed class takes its fields only
    obj.set_non_tensor(key, "hello")
    assert obj.is_non_tensor(key) and not obj.is_non_tensor("a")
    assert obj.get_non_tensor("nothing", 3) == 3
    if isinstance(obj, LazyStackedTensorDict):  # read from the members: one per element
        expected = ["hello"] * obj.batch_size[0]
        assert obj.get_non_tensor(key) == expected and obj.entry_class(key) is NonTensorStack
        assert (key, expected) in obj.non_tensor_items()
        return
    assert obj.get_non_tensor(key) == "hello"
    assert (key, "hello") in obj.non_tensor_items()
    assert obj.entry_class(key) is NonTensorData


def test_non_tensor_items_nested() -> None:
    td = TensorDict({"s": "top", "n": {"t": "deep", "x": torch.zeros(2)}}, [2])
    assert td.non_tensor_items() == (("s", "top"),)
    assert td.non_tensor_items(include_nested=True) == (("s", "top"), (("n", "t"), "deep"))


def test_set_non_tensor_stores_a_tensor_as_a_value() -> None:
    td = TensorDict({}, [2])
    value = torch.ones(5)
    td.set_non_tensor("t", value)
    assert td.is_non_tensor("t") and td["t"] is value


# -- removing ----------------------------------------------------------------------------


def test_clear_and_popitem_on_dynamic_and_lazy() -> None:
    for make in (make_td, make_lazy):
        obj = make()
        key, value = obj.popitem()
        assert key == "inner" and isinstance(value, TensorClass)
        assert list(obj.keys()) == ["a"]
        assert obj.clear() is obj and list(obj.keys()) == []
        with pytest.raises(KeyError, match="no entry"):
            obj.popitem()


def test_clear_and_popitem_on_typed_unset_fields() -> None:
    obj = make_typed()
    key, value = obj.popitem()  # the last stored field
    assert key == "label" and value == "x"
    obj.clear()
    assert obj.a is None and obj.inner is None and list(obj.keys()) == []


def test_clear_and_popitem_refused_when_locked(obj: Any) -> None:
    obj.lock_()
    with pytest.raises(LockedError):
        obj.clear()
    with pytest.raises(LockedError):
        obj.popitem()
    assert "a" in obj.keys()  # unchanged


def test_filter_empty_() -> None:
    td = TensorDict({"a": torch.zeros(2), "e": {"f": {}}, "g": {"h": torch.zeros(2)}}, [2])
    assert td.filter_empty_() is td
    assert list(td.keys(True)) == ["a", "g", ("g", "h")]


def test_separates(obj: Any) -> None:
    c = obj["inner", "c"].clone()
    out = obj.separates("a", ("inner", "c"))
    assert type(out) is (obj.member_class if isinstance(obj, LazyStackedTensorDict) else type(obj))
    assert torch.equal(out["inner", "c"], c)
    assert "a" not in obj.keys()
    assert ("inner", "c") not in obj.keys(True)
    with pytest.raises(KeyNotFoundError):
        obj.separates("missing")


def test_separates_default_strict_and_filter_empty() -> None:
    td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2)}}, [2])
    out = td.separates("zz", "a", default=torch.full((2,), 7.0))
    assert torch.equal(out["zz"], torch.full((2,), 7.0)) and list(td.keys()) == ["n"]
    out = td.separates("zz", strict=False)
    assert list(out.keys()) == []
    td.separates(("n", "b"), filter_empty=False)
    assert list(td.keys()) == ["n"]  # the emptied level stays
    td2 = TensorDict({"n": {"b": torch.ones(2)}}, [2])
    td2.separates(("n", "b"))
    assert list(td2.keys()) == []


# -- splitting and renaming --------------------------------------------------------------


def test_split_keys(obj: Any) -> None:
    first, rest = obj.split_keys(["a"])
    assert list(first.keys()) == ["a"] and torch.equal(first["a"], obj["a"])
    assert "a" not in rest.keys() and "a" in obj.keys()  # the original is unchanged
    assert torch.equal(rest["inner", "c"], obj["inner", "c"])


def test_split_keys_options() -> None:
    td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2), "c": torch.ones(2)}}, [2])
    a, nb, rest = td.split_keys(["a"], [("n", "b")])
    assert list(nb.keys(True, True)) == [("n", "b")]
    assert list(rest.keys(True, True)) == [("n", "c")]
    with pytest.raises(KeyNotFoundError):
        td.split_keys(["zz"])
    (part, _) = td.split_keys(["a", "zz"], strict=False)
    assert list(part.keys()) == ["a"]
    (part, _) = td.split_keys(["zz"], default=torch.ones(2))
    assert torch.equal(part["zz"], torch.ones(2))
    (part, rest) = td.split_keys(["a"], reproduce_struct=True)
    assert sorted(part.keys()) == ["a", "n"] and list(part["n"].keys()) == []
    out = td.split_keys([("n", "b")], inplace=True)
    assert out[-1] is td and list(td.keys(True, True)) == ["a", ("n", "c")]


def test_rename_keys(obj: Any) -> None:
    if isinstance(obj, Outer):  # a typed class keeps its fields: no key to rename to
        with pytest.raises(KeyNotFoundError, match="no field 'b'"):
            obj.rename_keys({"a": "b"})
        return
    a = obj["a"]
    renamed = obj.rename_keys({"a": "b", ("inner", "c"): ("inner", "z")})
    assert renamed is not obj and "a" in obj.keys()
    assert torch.equal(renamed["b"], a) and ("inner", "z") in renamed.keys(True)


def test_rename_keys_swap_conflict_and_strict() -> None:
    td = TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2])
    swapped = td.rename_keys({"a": "b", "b": "a"})
    assert torch.equal(swapped["a"], torch.ones(2)) and torch.equal(swapped["b"], torch.zeros(2))
    with pytest.raises(StructureMismatchError, match="'b' exists"):
        td.rename_keys({"a": "b"})
    with pytest.raises(KeyNotFoundError):
        td.rename_keys({"zz": "y"})
    assert list(td.rename_keys({"zz": "y"}, strict=False).keys()) == ["a", "b"]


def test_rename_key_safe() -> None:
    td = TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2])
    with pytest.raises(KeyError, match="exists"):
        td.rename_key_("a", "b", safe=True)
    td.rename_key_("a", "b")
    assert list(td.keys()) == ["b"] and torch.equal(td["b"], torch.zeros(2))


def test_replace(obj: Any) -> None:
    new = torch.full((2, 3), 5.0)
    out = obj.replace(a=new)
    assert torch.equal(out["a"], new) and not torch.equal(obj["a"], new)
    out = obj.replace({("inner", "c"): torch.zeros(2)})
    assert torch.equal(out["inner", "c"], torch.zeros(2))
    assert torch.equal(obj["inner", "c"], torch.ones(2))  # unchanged


def test_create_nested() -> None:
    td = TensorDict({"a": torch.zeros(2)}, [2], device="cpu")
    assert td.create_nested(("x", "y")) is td
    assert td["x", "y"].batch_size == (2,) and td["x", "y"].device == torch.device("cpu")
    with pytest.raises(StructureMismatchError, match="holds a Tensor"):
        td.create_nested(("a", "b"))


# -- keys / items / values keywords ------------------------------------------------------


def test_keys_sort_and_is_leaf() -> None:
    td = TensorDict(
        {"b": torch.zeros(2), "a": {"d": torch.zeros(2), "c": torch.zeros(2)}, "s": "x"}, [2]
    )
    assert list(td.keys(True, sort=True)) == ["a", ("a", "c"), ("a", "d"), "b", "s"]
    tensors_only = td.keys(True, True, is_leaf=lambda cls: issubclass(cls, torch.Tensor))
    assert list(tensors_only) == ["b", ("a", "d"), ("a", "c")]
    assert len(tensors_only) == 3 and ("a", "c") in tensors_only and "s" not in tensors_only
    whole = td.keys(
        True, True, is_leaf=lambda cls: cls is TensorDict or issubclass(cls, torch.Tensor)
    )
    assert list(whole) == ["b", "a"]
    assert [k for k, _ in td.items(True, True, sort=True)] == [("a", "c"), ("a", "d"), "b", "s"]
    assert len(list(td.values(True, True, is_leaf=is_leaf_nontensor))) == 4


def test_keys_keywords_on_every_class(obj: Any) -> None:
    assert list(obj.keys(True, True, sort=True)) == sorted(
        obj.keys(True, True), key=lambda k: (k,) if isinstance(k, str) else k
    )
    assert list(obj.keys(True, True, is_leaf=default_is_leaf)) == list(obj.keys(True, True))


# -- writing keywords ----------------------------------------------------------------------


def test_set_item_and_positional_inplace(obj: Any) -> None:
    original = obj["a"]
    obj.set("a", torch.ones(2, 3), True)
    assert obj["a"] is original or isinstance(obj, LazyStackedTensorDict)
    assert torch.equal(obj["a"], torch.ones(2, 3))
    obj.set(key="a", item=torch.zeros(2, 3), non_blocking=True)
    obj.set_(("inner", "c"), item=torch.full((2,), 3.0), non_blocking=True)
    assert torch.equal(obj["inner", "c"], torch.full((2,), 3.0))


def test_setdefault_inplace() -> None:
    td = TensorDict({"a": torch.zeros(2)}, [2])
    assert torch.equal(td.setdefault("b", torch.ones(2), inplace=True), torch.ones(2))
    assert torch.equal(td.setdefault("b", torch.zeros(2)), torch.ones(2))


def test_select_as_tensordict(obj: Any) -> None:
    out = obj.select("a", as_tensordict=True)
    assert type(out) is TensorDict or isinstance(obj, LazyStackedTensorDict)
    assert list(out.keys()) == ["a"]


def test_update_keywords(obj: Any) -> None:
    value = torch.full((2, 3), 2.0)
    obj.update(input_dict_or_td={"a": value}, clone=True)
    assert torch.equal(obj["a"], value) and obj["a"] is not value
    obj.lock_()
    with pytest.raises(LockedError):
        obj.update({"a": torch.zeros(2, 3)})
    obj.update({"a": torch.zeros(2, 3)}, ignore_lock=True)
    assert obj.is_locked and torch.equal(obj["a"], torch.zeros(2, 3))
    obj.unlock_()
    obj.update_({"a": torch.ones(2, 3), ("inner", "c"): torch.ones(2)}, keys_to_update=["a"])
    assert torch.equal(obj["a"], torch.ones(2, 3))


def test_update_is_leaf_replaces_instead_of_merging() -> None:
    td = TensorDict({"n": {"a": torch.zeros(2), "b": torch.zeros(2)}}, [2])
    td.update({"n": TensorDict({"a": torch.ones(2)}, [2])}, is_leaf=lambda c: c is TensorDict)
    assert list(td["n"].keys()) == ["a"]
    td = TensorDict({"n": {"a": torch.zeros(2), "b": torch.zeros(2)}}, [2])
    td.update({"n": TensorDict({"a": torch.ones(2)}, [2])})
    assert list(td["n"].keys()) == ["a", "b"]


def test_update_batch_size() -> None:
    td = TensorDict({"a": torch.zeros(2, 3)}, [2])
    other = TensorDict({"b": torch.ones(2, 3)}, [2, 3])
    td.update(other, update_batch_size=True)
    assert td.batch_size == (2, 3) and list(td.keys()) == ["a", "b"]
    bad = TensorDict({"b": torch.ones(4)}, [4])
    with pytest.raises(BatchSizeError):
        td.update(bad, update_batch_size=True)
    assert td.batch_size == (2, 3) and td["b"].shape == (2, 3)  # unchanged
    with pytest.raises(BatchSizeError, match="lazy stack"):
        make_lazy().update(other, update_batch_size=True)


# -- apply keywords ------------------------------------------------------------------------


def test_apply_filter_empty() -> None:
    td = TensorDict({"a": torch.zeros(2), "e": {}, "n": {"b": torch.zeros(2)}}, [2])
    assert list(td.apply(lambda x: None).keys()) == ["e"]  # emptied by fn: dropped
    assert list(td.apply(lambda x: None, filter_empty=False).keys()) == ["e", "n"]
    assert list(td.apply(lambda x: x + 1, filter_empty=True).keys()) == ["a", "n"]


def test_apply_keywords(obj: Any) -> None:
    obj.lock_()
    locked = obj.apply(lambda x: x + 1, propagate_lock=True)
    assert locked.is_locked and not obj.apply(lambda x: x + 1).is_locked
    obj.unlock_()
    out = obj.clone()
    target = out["a"]
    result = obj.apply(lambda x: x * 2, out=out)
    assert (result is out and out["a"] is target) or isinstance(obj, LazyStackedTensorDict)
    assert torch.equal(out["a"], obj["a"] * 2)
    on_cpu = obj.apply(lambda x: x, device="cpu")
    assert on_cpu.device == torch.device("cpu")
    seen: list[str] = []
    obj.apply(lambda x: seen.append(type(x).__name__), is_leaf=lambda c: issubclass(c, TensorClass))
    assert "Tensor" in seen and any(name != "Tensor" for name in seen)


def test_named_apply_inplace_and_call_on_nested() -> None:
    td = make_td()
    out = td.named_apply(lambda key, x: x + 1, inplace=True)
    assert out is td and torch.equal(td["inner", "c"], torch.full((2,), 2.0))
    names: list[Any] = []
    td.named_apply(lambda key, x: names.append((key, type(x).__name__)), call_on_nested=True)
    assert names == [("a", "Tensor"), ("inner", "TensorDict")]


# -- flatten / unflatten keywords --------------------------------------------------------


def test_flatten_keys_inplace_and_is_leaf() -> None:
    td = TensorDict({"a": {"b": torch.zeros(2), "c": {"d": torch.ones(2)}}}, [2])
    typed = make_typed()
    kept = typed.flatten_keys(is_leaf=lambda cls: cls is Inner)
    assert list(kept.keys()) == ["a", "inner", "label"] and kept["inner"] is typed.inner
    assert list(typed.flatten_keys().keys()) == ["a", "inner.c", "inner.d", "label"]
    assert td.flatten_keys(inplace=True) is td and list(td.keys()) == ["a.b", "a.c.d"]
    assert td.unflatten_keys(inplace=True) is td
    assert list(td.keys(True, True)) == [("a", "b"), ("a", "c", "d")]
    with pytest.raises(SchemaError, match="fixed fields"):
        make_typed().flatten_keys(inplace=True)


# -- with-forms --------------------------------------------------------------------------


def test_with_unlock_and_lock_restore(obj: Any) -> None:
    obj.lock_()
    with obj.unlock_():
        assert not obj.is_locked
        obj.set("a", torch.zeros(2, 3))
    assert obj.is_locked
    obj.unlock_()
    with obj.lock_():
        assert obj.is_locked
    assert not obj.is_locked
    with obj.unlock_():  # already unlocked: stays so
        pass
    assert not obj.is_locked


def test_with_flatten_keys_writes_back(obj: Any) -> None:
    with obj.flatten_keys() as flat:
        flat["inner.c"] += 1
        flat["inner.d"] = torch.full((2, 4), 9.0)
    assert torch.equal(obj["inner", "c"], torch.full((2,), 2.0))
    assert torch.equal(obj["inner", "d"], torch.full((2, 4), 9.0))


def test_with_flatten_keys_new_nested_key() -> None:
    td = make_td()
    with td.flatten_keys("/") as flat:
        flat["x/y"] = torch.ones(2)
    assert torch.equal(td["x", "y"], torch.ones(2))
    with td.unflatten_keys() as nested:  # nothing to split: a copy of the structure
        nested["z"] = torch.zeros(2)
    assert "z" in td.keys()


def test_with_shape_ops_write_back_and_keep_tensors() -> None:
    td = TensorDict({"b": torch.zeros(2, 3)}, [2, 3])
    original = td["b"]
    with td.view(-1) as v:
        v["v"] = torch.arange(6.0)
    with td.permute(1, 0) as p:
        p["b"][0, 1] = 5.0  # a view: reaches the original
        p["z"] = torch.ones(3, 2)
    assert td["b"] is original and original[1, 0] == 5.0
    assert torch.equal(td["z"], torch.ones(2, 3))
    with td.transpose(0, 1) as t:
        t["t"] = torch.arange(6.0).view(3, 2)
    assert torch.equal(td["t"], torch.arange(6.0).view(3, 2).T)
    with td.unsqueeze(0) as u:
        u["u"] = torch.ones(1, 2, 3)
    with td.flatten() as f:
        f["f"] = torch.ones(6)
    with td.unflatten(1, (3, 1)) as uf:
        uf["uf"] = torch.ones(2, 3, 1)
    assert {k: tuple(v.shape) for k, v in td.items()} == {
        k: (2, 3) for k in ["b", "z", "t", "u", "v", "f", "uf"]
    }
    assert torch.equal(td["v"], torch.arange(6.0).view(2, 3)) and td["b"] is original
    single = TensorDict({"a": torch.ones(1, 3)}, [1, 3])
    with single.squeeze(0) as s:
        s["s"] = torch.zeros(3)
    assert single["s"].shape == (1, 3)


def test_with_shape_op_on_typed_class() -> None:
    obj = Outer(torch.zeros(2, 3), Inner(torch.ones(2, 3), batch_size=[2, 3]), batch_size=[2, 3])
    with obj.permute(1, 0) as p:
        p.extra = torch.ones(3, 2)
    assert obj.extra is not None and obj.extra.shape == (2, 3)


def test_results_do_not_chain_their_origins() -> None:
    td = TensorDict({"a": torch.zeros(2, 3)}, [2, 3])
    for _ in range(50):
        td = td.unsqueeze(0).squeeze(0).permute(1, 0)
    chain = 0
    node: Any = td
    while getattr(node, "_last_op", None) is not None:
        node = node._last_op[1]
        chain += 1
    assert chain <= 1  # the last result knows its origin; the origin forgot its own


def test_plain_with_and_nesting() -> None:
    td = make_td()
    with td as same:  # no pending operation: nothing to undo
        assert same is td
    td.lock_()
    with td.unlock_():
        with td.lock_():
            assert td.is_locked
        assert not td.is_locked
    assert td.is_locked


# -- dim names ---------------------------------------------------------------------------


def test_refine_names_rename(obj: Any) -> None:
    obj = obj.unsqueeze(1)
    assert obj.refine_names("batch", None) is obj and obj.names == ["batch", None]
    assert obj.refine_names(..., "one").names == ["batch", "one"]
    with pytest.raises(BatchSizeError, match="named 'batch'"):
        obj.refine_names("other", "one")
    copy = obj.rename(batch="b")
    assert copy.names == ["b", "one"] and obj.names == ["batch", "one"]
    assert obj.rename(None, "x").names == [None, "x"]
    assert obj.rename_("p", "q") is obj and obj.names == ["p", "q"]
    with pytest.raises(BatchSizeError, match="no batch dim is named"):
        obj.rename(nope="z")


# -- devices and batch size --------------------------------------------------------------


def test_auto_and_clear_device(obj: Any) -> None:
    assert obj.auto_device_().device == torch.device("cpu")
    assert obj["inner"].device == torch.device("cpu")
    assert obj.clear_device_().device is None and obj["inner"].device is None


def test_auto_batch_size_keep_compliant_size() -> None:
    td = TensorDict({"a": torch.zeros(3, 4, 5), "b": {"c": torch.zeros(3, 4, 6)}})
    td.auto_batch_size_()
    assert td.batch_size == (3, 4) and td["b"].batch_size == (3, 4, 6)
    td = TensorDict(
        {"a": torch.zeros(3, 4, 5), "b": TensorDict({"c": torch.zeros(3, 4, 6)}, [3, 4])}
    )
    td.auto_batch_size_(batch_dims=1, keep_compliant_size=True)
    assert td.batch_size == (3,) and td["b"].batch_size == (3, 4)
    td = TensorDict(
        {"a": torch.zeros(3, 4, 5), "b": TensorDict({"c": torch.zeros(3, 4, 6)}, [3, 4])}
    )
    td.auto_batch_size_(batch_dims=1)
    assert td["b"].batch_size == (3,)
    obj = make_typed()
    obj.auto_batch_size_()
    assert obj.batch_size == (2,)
    stack = make_lazy()
    assert stack.auto_batch_size_() is stack
    with pytest.raises(BatchSizeError, match="lazy stack"):
        lazy_stack(
            [TensorDict({"a": torch.zeros(3)}, []), TensorDict({"a": torch.zeros(3)}, [])]
        ).auto_batch_size_()


# -- conversions -------------------------------------------------------------------------


def test_to_dict_options(obj: Any) -> None:
    plain = obj.to_dict(retain_none=False)
    assert torch.equal(plain["a"], obj["a"]) and isinstance(plain["inner"], dict)
    lists = obj.to_dict(convert_tensors=True, retain_none=False)
    assert lists["a"] == obj["a"].tolist() and lists["inner"]["c"] == obj["inner", "c"].tolist()
    arrays = obj.numpy()
    assert isinstance(arrays["a"], np.ndarray) and np.array_equal(arrays["a"], obj["a"].numpy())


def test_to_dict_retain_none_and_to_tensordict() -> None:
    obj = make_typed()
    assert obj.to_dict()["extra"] is None and "extra" not in obj.to_dict(retain_none=False)
    assert "extra" not in obj.to_tensordict().keys()
    kept = obj.to_tensordict(retain_none=True)
    assert type(kept) is TensorDict and kept["extra"] is None


def test_tolist(obj: Any) -> None:
    rows = obj.tolist(convert_tensors=True)
    assert len(rows) == 2 and rows[1]["a"] == obj["a"][1].tolist()
    assert rows[0]["inner"]["c"] == obj["inner", "c"][0].item()
    kept = obj.tolist(convert_nodes=False)
    assert isinstance(kept[0], TensorClass)
    with pytest.raises(TypeError):
        obj.tolist(convert_nodes=False, convert_tensors=True)
    unbatched = TensorDict({"a": torch.arange(2)}, []).tolist(convert_tensors=True)
    assert unbatched == {"a": [0, 1]}


def test_tolist_first() -> None:
    td = TensorDict(
        {"a": torch.zeros(2), "b": TensorDict({"c": torch.arange(4).view(2, 2)}, [2, 2])}, [2]
    )
    first = td.to_dict(convert_tensors=True, tolist_first=True)
    assert first["b"] == [[{"c": 0}, {"c": 1}], [{"c": 2}, {"c": 3}]]


# -- dense and lazy ----------------------------------------------------------------------


def test_to_lazystack(obj: Any) -> None:
    obj = obj.unsqueeze(1).expand(2, 3)
    stack = obj.to_lazystack(1)
    assert isinstance(stack, LazyStackedTensorDict) and stack.stack_dim == 1
    assert stack.batch_size == obj.batch_size and len(stack.members) == 3
    assert torch.equal(stack["a"], obj["a"])


def test_densify() -> None:
    td = make_td()
    assert td.densify() is td
    stack = lazy_stack(
        [TensorDict({"a": torch.zeros(3)}, []), TensorDict({"a": torch.ones(4)}, [])]
    )
    dense = stack.densify(layout=torch.jagged)
    assert type(dense) is TensorDict and dense._data["a"].is_nested
    same = make_lazy().densify()
    assert not isinstance(same, LazyStackedTensorDict)
    assert torch.equal(same["a"], make_lazy()["a"])


# -- top-level helpers -------------------------------------------------------------------


def test_key_helpers() -> None:
    assert KEY_SEPARATOR == "."
    assert unravel_key_list(["a", ("b", ("c",)), ("d",)]) == ["a", ("b", "c"), "d"]
    assert unravel_key_to_tuple("a") == ("a",) and unravel_key_to_tuple(("a", 1)) == ()
    with pytest.raises(TypeError):
        unravel_key_list("a")  # type: ignore[arg-type]


def test_predicates() -> None:
    assert default_is_leaf(torch.Tensor) and not default_is_leaf(TensorDict)
    assert not default_is_leaf(Outer)
    assert is_leaf_nontensor(NonTensorData) and not is_leaf_nontensor(TensorDict)
    assert is_non_tensor(NonTensorData("x")) and not is_non_tensor(torch.zeros(1))
    f, c, i, u, b = (
        torch.zeros(1),
        torch.zeros(1, dtype=torch.complex64),
        torch.zeros(1, dtype=torch.long),
        torch.zeros(1, dtype=torch.uint8),
        torch.zeros(1, dtype=torch.bool),
    )
    assert [is_inexact(x) for x in (f, c, i, b)] == [True, True, False, False]
    assert [is_floating(x) for x in (f, c, i)] == [True, False, False]
    assert [is_integer("key", x) for x in (f, i, u, b)] == [False, True, True, False]
    assert [is_bool(x) for x in (f, b)] == [False, True] and not is_bool("not a tensor")
    td = TensorDict({"f": f, "i": i}, [1])
    assert list(td.apply(lambda x: x if is_floating(x) else None).keys()) == ["f"]


def test_merge_tensordicts() -> None:
    a = TensorDict({"x": torch.zeros(2), "n": {"y": torch.zeros(2)}, "s": "a"}, [2])
    b = TensorDict({"x": torch.ones(2), "z": torch.ones(2), "n": {"w": torch.ones(2)}}, [2])
    merged = merge_tensordicts(a, b)
    assert list(merged.keys(True, True, sort=True)) == [("n", "w"), ("n", "y"), "s", "x", "z"]
    assert merged["x"] is a["x"] and merged["s"] == "a"
    summed = merge_tensordicts(a, b, callback_exist=lambda *v: v[0] + v[1] + 1)
    assert torch.equal(summed["x"], torch.full((2,), 2.0))
    by_key = merge_tensordicts(a, b, callback_exist={"z": lambda *v: None, "x": lambda *v: v[1]})
    assert by_key["x"] is b["x"]
    typed = merge_tensordicts(make_typed(), make_td())
    assert type(typed) is TensorDict and "label" in typed.keys()
    with pytest.raises(ValueError, match="at least two"):
        merge_tensordicts(a)


def test_group_by() -> None:
    td = TensorDict({"k": torch.tensor([1, 0, 1]), "v": torch.arange(3)}, [3])
    values, groups = group_by(td, "k")
    assert values.tolist() == [0, 1]
    for value, group in zip(values, groups):
        expected = td[td["k"] == value]
        assert_close(group, expected)
    td = torch.stack(
        [TensorDict({"name": name, "v": torch.tensor(i)}, []) for i, name in enumerate("bab")]
    )
    names, groups = group_by(td, "name")
    assert names == ["b", "a"] and [g["v"].tolist() for g in groups] == [[0, 2], [1]]
    typed_values, typed_groups = group_by(make_lazy(), "a")
    assert len(typed_groups) == 2


def test_assert_close(obj: Any) -> None:
    assert assert_close(obj, obj.clone()) is True
    assert assert_allclose_td is assert_close
    other = obj.clone()
    other["inner", "c"] = other["inner", "c"] + 1
    with pytest.raises(AssertionError, match=r"key \('inner', 'c'\) differs"):
        assert_close(obj, other, msg="run 3")
    with pytest.raises(AssertionError, match="run 3"):
        assert_close(obj, other, msg="run 3")
    assert assert_close(obj, other, atol=1.5, rtol=0)
    fewer = obj.clone()
    fewer.pop("a")
    with pytest.raises(AssertionError, match=r"only in actual \['a'\]"):
        assert_close(obj, fewer)
    assert assert_close(obj, fewer, intersection=True)
    nan = TensorDict({"a": torch.tensor([float("nan")])}, [1])
    assert assert_close(nan, nan.clone())
    with pytest.raises(AssertionError):
        assert_close(nan, nan.clone(), equal_nan=False)


def test_parse_tensor_dict_string(obj: Any) -> None:
    obj = obj.clone() if not isinstance(obj, LazyStackedTensorDict) else obj
    if isinstance(obj, Outer):  # a non-tensor field prints its type only: no value to rebuild
        with pytest.raises(ValueError, match="cannot rebuild entry 'label' \\(str\\)"):
            parse_tensor_dict_string(repr(obj))
        obj = obj.to_tensordict().exclude("label")
    rebuilt = parse_tensor_dict_string(repr(obj))
    assert type(rebuilt) is TensorDict and rebuilt.batch_size == obj.batch_size
    for key in obj.keys(True, True):
        value = obj.get(key)
        assert rebuilt[key].shape == value.shape and rebuilt[key].dtype == value.dtype
        assert not rebuilt[key].any()
    nested = TensorDict(
        {
            "my key": torch.ones(2, 5, dtype=torch.int8),
            "n": TensorDict({"c": torch.ones(2, 3, 4)}, [2, 3]),
        },
        [2],
        device="cpu",
    )
    again = parse_tensor_dict_string(repr(nested))
    assert again["my key"].dtype == torch.int8 and again["my key"].shape == (2, 5)
    assert again["n"].batch_size == (2, 3) and again["n", "c"].shape == (2, 3, 4)
    assert again.device == torch.device("cpu")
    with pytest.raises(ValueError, match="not a printed tensor class"):
        parse_tensor_dict_string("hello")
    with pytest.raises(ValueError, match="exclusive fields"):
        parse_tensor_dict_string(repr(lazy_stack([TensorDict(a=torch.zeros(1)), TensorDict()])))
    with set_printoptions(compact=False):  # the detailed form reads back too
        detailed = parse_tensor_dict_string(repr(nested))
        lazy = parse_tensor_dict_string(repr(make_lazy()))
    assert detailed["n"].batch_size == (2, 3) and detailed["n", "c"].shape == (2, 3, 4)
    assert detailed["my key"].dtype == torch.int8 and detailed.device == torch.device("cpu")
    assert lazy["inner", "d"].shape == (2, 4) and lazy.batch_size == (2,)
    with pytest.raises(ValueError, match="exclusive fields"):
        parse_tensor_dict_string(repr(lazy_stack([TensorDict(a=torch.zeros(1)), TensorDict()])))
