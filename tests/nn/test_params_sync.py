"""TensorDictParams keeps its module registration in step with its leaves (issue s17).

Every in-place change of keys (added, removed, renamed, replaced, at any depth) leaves
``named_parameters()``, ``state_dict()``, optimizers and ``to()`` seeing exactly the live
leaves. The last tests call every engine method with a set of argument patterns and check
that whatever changed the keys of a plain ``TensorDict`` in place keeps a
``TensorDictParams`` in step, so a new in-place method is covered without being listed.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from tensorclass import TensorDict
from tensorclass.engine.core.state import TensorCore
from tensorclass.nn import TensorDictParams
from tensorclass.nn.params_forward import LEAFWISE_INPLACE, MUTATORS


def make() -> TensorDictParams:
    """Float leaves (parameters) and an integer one (a buffer), two levels deep."""
    return TensorDictParams(
        TensorDict(
            {
                "w": torch.ones(2, 3),
                "i": torch.arange(2),
                "a": {"b": torch.zeros(2), "c": torch.ones(2, dtype=torch.long)},
            },
            batch_size=[2],
        )
    )


def name(key: Any) -> str:
    return ".".join(key) if isinstance(key, tuple) else key


def stored_tensors(td: TensorCore, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Tensor]:
    """Every tensor the tensor class stores (non-tensor data aside), by its path (a tuple:
    a key ``"a.b"`` that ``flatten_keys`` made is not the nested ``("a", "b")``)."""
    found: dict[tuple[str, ...], Tensor] = {}
    for key, value in td._data.items():
        if isinstance(value, Tensor):
            found[(*prefix, key)] = value
        elif isinstance(value, TensorCore):
            found.update(stored_tensors(value, (*prefix, key)))
    return found


def tensor_leaves(params: TensorDictParams) -> dict[tuple[str, ...], Tensor]:
    """Every tensor leaf of the held tensor class, by its path."""
    return stored_tensors(params._td)


def raw_registration(
    module: nn.Module, prefix: tuple[str, ...] = ()
) -> dict[tuple[str, ...], tuple[str, Any]]:
    """What the module registers, read from its dicts (no method that could fix it first),
    by path."""
    found: dict[tuple[str, ...], tuple[str, Any]] = {}
    for kind in ("_parameters", "_buffers"):
        for key, tensor in module.__dict__[kind].items():
            found[(*prefix, key)] = (kind, tensor)
    for key, child in module.__dict__["_modules"].items():
        assert isinstance(child, TensorDictParams)
        assert child.__dict__["_td"] is module.__dict__["_td"]._data[key], key
        found.update(raw_registration(child, (*prefix, key)))
    return found


def assert_in_step(params: TensorDictParams) -> None:
    """The registration names exactly the tensor leaves, each registered as itself."""
    registered = raw_registration(params)
    leaves = tensor_leaves(params)
    assert registered.keys() == leaves.keys()
    for key, leaf in leaves.items():
        kind, tensor = registered[key]
        assert tensor is leaf, key
        differentiable = leaf.is_floating_point() or leaf.is_complex()
        assert kind == ("_parameters" if differentiable else "_buffers"), key


def dotted_leaves(params: TensorDictParams) -> dict[str, Tensor]:
    """Every tensor leaf by its module name (``named_parameters``' and ``state_dict``'s)."""
    return {".".join(path): leaf for path, leaf in tensor_leaves(params).items()}


def assert_module_sees_the_leaves(params: TensorDictParams, expected: set[str]) -> None:
    """named_parameters, state_dict, an optimizer step and to() act on the live leaves."""
    named = dict(params.named_parameters())  # first: a read brings the registration in step
    leaves = dotted_leaves(params)
    assert set(leaves) == expected
    floats = {k for k, v in leaves.items() if v.is_floating_point()}
    assert set(named) == floats
    assert set(params.state_dict()) == expected
    assert all(named[k] is leaves[k] for k in floats)

    if floats:
        before = {k: leaves[k].detach().clone() for k in floats}
        optimizer = torch.optim.SGD(params.parameters(), lr=1.0)
        for parameter in params.parameters():
            parameter.grad = torch.ones_like(parameter)
        optimizer.step()
        after = dotted_leaves(params)
        for key in floats:
            torch.testing.assert_close(after[key], before[key] - 1)
        stepped = {id(p) for group in optimizer.param_groups for p in group["params"]}
        assert stepped == {id(leaves[k]) for k in floats}

    assert params.to(torch.float64) is params
    moved = dotted_leaves(params)
    assert {k for k, v in moved.items() if v.dtype == torch.float64} == floats
    named = dict(params.named_parameters())
    assert all(named[k] is moved[k] for k in floats)
    assert_in_step(params)


ALL = {"w", "i", "a.b", "a.c"}
NEW = torch.full((2,), 5.0)


def _setattr(p: TensorDictParams) -> None:
    p.x = nn.Parameter(torch.ones(2))


def _delattr(p: TensorDictParams) -> None:
    del p.w


def _rename_back(p: TensorDictParams) -> None:
    p.rename_key_("w", "tmp")
    p.rename_key_("tmp", "w")


def _setitem(p: TensorDictParams) -> None:
    p["x"] = NEW.clone()


def _delitem_nested(p: TensorDictParams) -> None:
    del p["a", "b"]


def _flatten_unflatten(p: TensorDictParams) -> None:
    p.flatten_keys(inplace=True)
    p.unflatten_keys(inplace=True)


def _filter_empty(p: TensorDictParams) -> None:
    p.set("e", TensorDict(batch_size=[2]))
    assert "e" in dict(p.named_modules())
    p.filter_empty_()


def _index_write_adds_keys(p: TensorDictParams) -> None:
    p[0] = TensorDict({"w": torch.ones(3), "i": torch.tensor(0), "a": {"b": 1.0, "c": 1}})
    p.set("x", NEW.clone())


#: (name, mutation, the tensor leaves after it): every way to change keys in place
MUTATIONS: list[tuple[str, Callable[[TensorDictParams], Any], set[str]]] = [
    ("pop", lambda p: p.pop("w"), ALL - {"w"}),
    ("pop nested", lambda p: p.pop(("a", "b")), ALL - {"a.b"}),
    ("pop level", lambda p: p.pop("a"), {"w", "i"}),
    ("popitem", lambda p: p.popitem(), ALL - {"a.b", "a.c"}),
    ("del_", lambda p: p.del_("w"), ALL - {"w"}),
    ("del nested", _delitem_nested, ALL - {"a.b"}),
    ("delattr", _delattr, ALL - {"w"}),
    ("clear", lambda p: p.clear(), set()),
    ("exclude", lambda p: p.exclude("w", ("a", "c"), inplace=True), {"i", "a.b"}),
    ("select", lambda p: p.select("w", ("a", "c"), inplace=True), {"w", "a.c"}),
    ("split_keys", lambda p: p.split_keys(["w"], inplace=True), ALL - {"w"}),
    ("rename_key_", lambda p: p.rename_key_("w", "z"), ALL - {"w"} | {"z"}),
    ("rename nested", lambda p: p.rename_key_(("a", "b"), ("a", "z")), ALL - {"a.b"} | {"a.z"}),
    ("rename level", lambda p: p.rename_key_("a", "n"), {"w", "i", "n.b", "n.c"}),
    ("rename out of a level", lambda p: p.rename_key_(("a", "b"), "z"), ALL - {"a.b"} | {"z"}),
    ("rename and back", _rename_back, ALL),
    ("update new", lambda p: p.update({"x": NEW.clone()}), ALL | {"x"}),
    ("update nested", lambda p: p.update({"a": {"x": NEW.clone()}}), ALL | {"a.x"}),
    ("update replaces", lambda p: p.update({"w": torch.zeros(2, 3)}), ALL),
    ("update new level", lambda p: p.update({"n": {"m": NEW.clone()}}), ALL | {"n.m"}),
    ("set", lambda p: p.set("x", NEW.clone()), ALL | {"x"}),
    ("set nested", lambda p: p.set(("a", "x"), NEW.clone()), ALL | {"a.x"}),
    ("set new level", lambda p: p.set(("n", "m"), NEW.clone()), ALL | {"n.m"}),
    ("set replaces a level", lambda p: p.set("a", {"z": NEW.clone()}), {"w", "i", "a.z"}),
    ("setitem", _setitem, ALL | {"x"}),
    ("setattr", _setattr, ALL | {"x"}),
    ("setdefault", lambda p: p.setdefault("x", NEW.clone()), ALL | {"x"}),
    ("setdefault nested", lambda p: p.setdefault(("a", "x"), NEW.clone()), ALL | {"a.x"}),
    ("flatten_keys", lambda p: p.flatten_keys(inplace=True), ALL),
    ("flatten_keys sep", lambda p: p.flatten_keys("_", inplace=True), {"w", "i", "a_b", "a_c"}),
    ("unflatten_keys", _flatten_unflatten, ALL),
    ("filter_empty_", _filter_empty, ALL),
    ("index write", _index_write_adds_keys, ALL | {"x"}),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS]
)
def test_in_place_change_keeps_the_registration(
    mutate: Callable[[TensorDictParams], Any], expected: set[str]
) -> None:
    params = make()
    with torch.no_grad():
        mutate(params)
    assert_in_step(params)  # at once, before anything reads the registration
    assert_module_sees_the_leaves(params, expected)


def test_renamed_parameter_keeps_its_identity() -> None:
    params = make()
    weight = params["w"]
    optimizer = torch.optim.SGD(params.parameters(), lr=1.0)
    params.rename_key_("w", "z")
    assert params["z"] is weight and dict(params.named_parameters())["z"] is weight
    weight.grad = torch.ones_like(weight)
    optimizer.step()  # the optimizer built before still steps the renamed leaf
    assert (params["z"] == 0).all()


def test_moved_level_keeps_its_module() -> None:
    params = make()
    inner = params._modules["a"]
    params.rename_key_("a", "n")
    assert params._modules["n"] is inner and "a" not in params._modules


def test_new_float_leaf_is_a_parameter_sharing_storage() -> None:
    params = make()
    tensor = NEW.clone()
    params.update({"x": tensor})
    assert isinstance(params["x"], nn.Parameter)
    assert params["x"].data_ptr() == tensor.data_ptr()


@pytest.mark.parametrize("no_convert", [False, True])
def test_new_leaf_registered_as_the_constructor_would(no_convert: bool) -> None:
    params = TensorDictParams(TensorDict(w=torch.ones(2)), no_convert=no_convert)
    params.update({"x": torch.zeros(2), "n": {"m": torch.zeros(2)}})
    built = TensorDictParams(
        TensorDict(x=torch.zeros(2), n={"m": torch.zeros(2)}), no_convert=no_convert
    )
    assert [n for n, _ in params.named_buffers() if n != "w"] == [
        n for n, _ in built.named_buffers()
    ]
    assert sorted(n for n, _ in params.named_parameters() if n != "w") == sorted(
        n for n, _ in built.named_parameters()
    )


def test_set_no_convert_registers_a_buffer() -> None:
    params = make()
    params.set("x", NEW.clone(), no_convert=True)
    params.rename_key_("x", "y")  # and it stays a buffer when moved
    assert "y" in dict(params.named_buffers()) and "y" not in dict(params.named_parameters())


NESTED_VIEW_MUTATIONS: list[tuple[str, Callable[[TensorDictParams], Any], set[str]]] = [
    ("pop", lambda p: p["a"].pop("b"), ALL - {"a.b"}),
    ("set", lambda p: p["a"].set("x", NEW.clone()), ALL | {"a.x"}),
    ("rename_key_", lambda p: p["a"].rename_key_("b", "z"), ALL - {"a.b"} | {"a.z"}),
    ("clear", lambda p: p["a"].clear(), {"w", "i"}),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [m[1:] for m in NESTED_VIEW_MUTATIONS],
    ids=[m[0] for m in NESTED_VIEW_MUTATIONS],
)
@pytest.mark.parametrize(
    "read",
    [
        lambda p: list(p.parameters()),
        lambda p: p.state_dict(),
        lambda p: p.to(torch.float32),
        lambda p: nn.Sequential(p).named_parameters(),
        lambda p: list(nn.ModuleDict({"p": p}).parameters()),
    ],
    ids=["parameters", "state_dict", "to", "inside a model", "inside a ModuleDict"],
)
def test_change_through_a_nested_level_is_seen_by_the_next_read(
    mutate: Callable[[TensorDictParams], Any],
    expected: set[str],
    read: Callable[[TensorDictParams], Any],
) -> None:
    params = make()
    mutate(params)  # on the nested tensor class itself: the module cannot see it happen
    if not isinstance(read(params), dict):
        list(read(params))
    assert_in_step(params)
    assert_module_sees_the_leaves(params, expected)


def test_change_through_a_with_form_is_seen_by_the_next_read() -> None:
    params = make()
    with params.flatten_keys() as flat:
        flat["x"] = NEW.clone()
    assert_module_sees_the_leaves(params, ALL | {"x"})


def test_state_dict_round_trip_after_changes() -> None:
    params = make()
    params.pop("w")
    params.update({"a": {"x": NEW.clone()}})
    other = make()
    other.pop("w")
    other.set(("a", "x"), torch.zeros(2))
    other.load_state_dict(params.state_dict())
    assert (other["a", "x"] == 5).all()
    assert_in_step(other)


def test_deepcopy_after_a_change_through_a_nested_level() -> None:
    import copy

    params = make()
    params["a"].set("x", NEW.clone())
    copied = copy.deepcopy(params)
    assert_in_step(copied)
    assert "a.x" in dict(copied.named_parameters())


def test_in_place_values_keep_the_registration() -> None:
    params = make()
    weight = params["w"]
    with torch.no_grad():
        params.mul_(2).add_(1).apply_(lambda t: t)
    assert params["w"] is weight
    assert_in_step(params)


# --- every engine method, whatever it is called with -------------------------------------

#: argument patterns tried on every method: keys, pairs of keys, new entries, ``inplace``
PATTERNS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    (("w",), {}),
    ((("a", "b"),), {}),
    (("a",), {}),
    (("w", "z"), {}),
    ((("a", "b"), ("a", "z")), {}),
    (("x", torch.full((2,), 5.0)), {}),
    ((("a", "x"), torch.full((2,), 5.0)), {}),
    (({"x": torch.full((2,), 5.0)},), {}),
    (({"a": {"x": torch.full((2,), 5.0)}},), {}),
    ((), {"inplace": True}),
    (("w",), {"inplace": True}),
    ((("a", "b"),), {"inplace": True}),
    ((["w"],), {"inplace": True}),
    (("_",), {"inplace": True}),
    ((torch.tensor([True, False]),), {"inplace": True}),
    ((2,), {"inplace": True}),
    ((1,), {"inplace": True}),
    ((0, torch.tensor([1, 0])), {"inplace": True}),
    ((0, [2, 1]), {"inplace": True}),
    ((1,), {}),
    ((torch.zeros(2, 3), 1), {}),
]

#: not called: they start processes, block, or need a distributed group or a device
SKIP = {"map", "map_iter", "cuda", "pin_memory", "pin_memory_", "to_module"}


def structure(td: TensorCore) -> set[tuple[Any, int]]:
    """Every key path with the identity of what it holds (leaves and nested levels)."""
    found: set[tuple[Any, int]] = set()
    for key, value in td.items(include_nested=True):
        found.add((key, id(value)))
    return found


def make_with_empty_level() -> TensorDictParams:
    params = make()
    params.set("e", TensorDict(batch_size=[2]))
    return params


def plain() -> TensorDict:
    td = make_with_empty_level()._td.to_tensordict()
    return td.apply(lambda t: t.detach().clone(), filter_empty=False)


def engine_methods() -> list[str]:
    names = []
    for method in dir(TensorDict):
        if method.startswith("_") or method in SKIP:
            continue
        static = inspect.getattr_static(TensorDict, method)
        if isinstance(static, (property, classmethod, staticmethod)) or not callable(static):
            continue
        if inspect.iscoroutinefunction(static):
            continue  # asend, arecv: a coroutine that would wait for a peer
        names.append(method)
    return names


def call(target: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    # fresh arguments each call: a method that fills a dict it is given (``state_dict``,
    # ``to_zarr``) must not change what the next method is called with
    args, kwargs = copy.deepcopy((args, kwargs))
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            result = getattr(target, method)(*args, **kwargs)
            if inspect.isgenerator(result):
                list(result)
    except Exception:
        return False
    return True


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # methods given "w" as a path write there
    return tmp_path


def test_every_in_place_change_of_keys_keeps_the_registration(in_tmp: Path) -> None:
    structural: set[str] = set()
    unchecked: list[str] = []
    for method in engine_methods():
        for args, kwargs in PATTERNS:
            td = plain()
            before = structure(td)
            if not call(td, method, args, kwargs) or structure(td) == before:
                continue
            structural.add(method)
            params = make_with_empty_level()
            if not call(params, method, args, kwargs):
                unchecked.append(f"{method}{args}{kwargs}")
                continue
            try:
                assert_in_step(params)
            except AssertionError as err:
                raise AssertionError(
                    f"params.{method}(*{args}, **{kwargs}) changed keys without updating the "
                    f"registration: a new in-place method? (params_forward.MUTATORS)"
                ) from err
    assert not unchecked, f"in-place changes that fail on TensorDictParams: {unchecked}"
    # the patterns reach the methods this file tests one by one (the search works)
    assert {"pop", "popitem", "del_", "clear", "exclude", "select", "rename_key_"} <= structural
    assert {"update", "set", "setdefault", "flatten_keys", "unflatten_keys"} <= structural
    assert {"split_keys"} <= structural
    assert not structural & LEAFWISE_INPLACE


def test_every_method_leaves_the_registration_in_step(in_tmp: Path) -> None:
    called = 0
    for method in engine_methods():
        for args, kwargs in PATTERNS:
            params = make_with_empty_level()
            if call(params, method, args, kwargs):
                called += 1
                assert_in_step(params), f"{method}{args}{kwargs}"
    assert called > 200


def test_mutators_are_engine_methods() -> None:
    assert MUTATORS <= set(engine_methods())
    assert LEAFWISE_INPLACE <= set(engine_methods())


def test_attribute_write_of_a_registered_name_moves_the_leaf() -> None:
    params = make()
    replacement = nn.Parameter(torch.zeros(2, 3))
    params.w = replacement
    assert params["w"] is replacement and dict(params.named_parameters())["w"] is replacement
    params.w = None  # removes the entry, as ``del params.w`` does
    assert "w" not in params and "w" not in dict(params.named_parameters())
    assert_in_step(params)


def test_non_tensor_data_is_kept_and_not_registered() -> None:
    params = make()
    params.set_non_tensor("note", "hello")
    params.pop("w")
    assert params.get_non_tensor("note") == "hello"
    assert "note" not in params.state_dict()
    assert_in_step(params)
