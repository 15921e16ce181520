"""Building instances and converting them: the constructors every class has (``Self``), the
``new_*`` factories, the joins, the top-level functions and ``TypedTensorDict``.

Each constructor is tested on ``TensorDict``, on a typed class with a nested field, and on
lazy stacks where it applies (a lazy-stack class builds its members' class, except
``from_dict``/``from_list``, which build lazy stacks there).
"""

from __future__ import annotations

import collections
import dataclasses
from collections import OrderedDict, defaultdict

import numpy as np
import pytest
import torch
from torch import Tensor, nn

import tensorclass
from tensorclass import (
    BatchSizeError,
    FieldTypeError,
    KeyNotFoundError,
    LazyStackedTensorDict,
    NonTensorData,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    TypedTensorDict,
    lazy_stack,
)


class Pose(TensorClass):
    q: Tensor


class Obs(TensorClass):
    pose: Pose
    reward: Tensor
    label: str = "obs"


def make_obs(n: int = 3) -> Obs:
    return Obs(Pose(torch.zeros(n, 4), batch_size=[n]), torch.arange(n).float(), batch_size=[n])


Point = collections.namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class Inner:
    q: Tensor


@dataclasses.dataclass
class Outer:
    pose: Inner
    reward: Tensor
    label: str = "dc"


# -- from_dict -----------------------------------------------------------------------------


def test_from_dict_batch_size_rules() -> None:
    data = {"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3, 4, 5)}}
    assert TensorDict.from_dict(data).batch_size == ()  # no batch size unless asked
    td = TensorDict.from_dict(data, auto_batch_size=True)
    assert td.batch_size == (3, 4) and td["b"].batch_size == (3, 4, 5)
    td = TensorDict.from_dict(data, batch_dims=1)  # turns auto_batch_size on
    assert td.batch_size == (3,) and td["b"].batch_size == (3,)
    assert TensorDict.from_dict(data, auto_batch_size=False, batch_dims=1).batch_size == ()
    td = TensorDict.from_dict(data, batch_size=[3], names=["n"], auto_batch_size=True)
    assert td.batch_size == (3,) and td.names == ["n"]  # the given batch size wins
    with pytest.raises(BatchSizeError):
        TensorDict.from_dict(data, batch_size=[3], batch_dims=1)
    with pytest.raises(TypeError):
        TensorDict.from_dict([("a", torch.zeros(2))])  # type: ignore[arg-type]


def test_from_dict_round_trips_to_dict_with_values() -> None:
    td = TensorDict(
        {"x": torch.zeros(2), "n": {"count": NonTensorData(3)}, "flag": NonTensorData(True)}, [2]
    )
    back = TensorDict.from_dict(td.to_dict(), batch_size=[2])
    assert back["n", "count"] == 3 and back["flag"] is True
    assert torch.equal(back["x"], td["x"])
    # with no batch dims a number is a 0-dim tensor
    assert isinstance(TensorDict.from_dict({"a": 1})["a"], Tensor)


def test_from_dict_of_an_instance_shares_its_leaves() -> None:
    td = TensorDict({"x": torch.zeros(2, 3)}, [2])
    again = TensorDict.from_dict(td)
    assert again is not td and again["x"] is td["x"] and again.batch_size == (2,)
    assert TensorDict.from_dict(td, auto_batch_size=True).batch_size == (2, 3)


def test_from_dict_on_a_typed_class() -> None:
    obs = Obs.from_dict(
        {"pose": {"q": torch.zeros(3, 4)}, "reward": torch.zeros(3)}, auto_batch_size=True
    )
    assert type(obs) is Obs and type(obs.pose) is Pose
    assert obs.batch_size == (3,) and obs.pose.batch_size == (3, 4)
    assert obs.label == "obs"  # a missing field takes its default
    obs = Obs.from_dict(
        {"pose": {"q": torch.zeros(3, 4)}, "reward": torch.zeros(3)}, batch_size=[3], device="cpu"
    )
    assert obs.device == torch.device("cpu") and obs.pose.batch_size == (3,)
    with pytest.raises(KeyNotFoundError, match="no field 'other'"):
        Obs.from_dict({"reward": torch.zeros(3), "pose": {"q": torch.zeros(3)}, "other": 1})
    with pytest.raises(FieldTypeError, match="required"):
        Obs.from_dict({"reward": torch.zeros(3)})


def test_from_dict_on_a_lazy_stack_class_builds_a_lazy_stack() -> None:
    stack = LazyStackedTensorDict.from_dict(
        [{"a": torch.zeros(3)}, {"a": torch.zeros(4)}], stack_dim_name="t"
    )
    assert isinstance(stack, LazyStackedTensorDict) and stack.batch_size == (2,)
    assert stack.names == ["t"] and stack[1]["a"].shape == (4,)
    same = LazyStackedTensorDict.from_dict({"0": {"a": torch.zeros(3)}, "1": {"a": torch.ones(3)}})
    assert same.batch_size == (2,) and same["a"].shape == (2, 3)
    with pytest.raises(TypeError, match="'0', '1'"):
        LazyStackedTensorDict.from_dict({"a": torch.zeros(3)})
    # the lazy-stack class of a typed class builds lazy stacks of it
    typed = type(lazy_stack([make_obs(), make_obs()]))
    built = typed.from_dict(
        [{"pose": {"q": torch.zeros(3)}, "reward": torch.zeros(3)}] * 2, batch_size=[3]
    )
    assert isinstance(built, Obs) and isinstance(built, LazyStackedTensorDict)
    assert built.batch_size == (2, 3) and built.pose.q.shape == (2, 3)


def test_from_dict_instance_gives_the_template_classes() -> None:
    template = TensorDict({"obs": make_obs(), "x": torch.zeros(3)}, [3])
    data = template.to_dict()
    plain = TensorDict.from_dict(data, batch_size=[3])
    assert type(plain["obs"]) is TensorDict
    rebuilt = template.from_dict_instance(data, batch_size=[3])
    assert type(rebuilt) is TensorDict and type(rebuilt["obs"]) is Obs
    assert type(rebuilt["obs"].pose) is Pose and rebuilt["obs"].label == "obs"
    stacked = lazy_stack([template, template.clone()])
    assert type(stacked.from_dict_instance(data, batch_size=[3])["obs"]) is Obs


# -- from_list -----------------------------------------------------------------------------


def test_from_list_dense_lazy_and_batch_sizes() -> None:
    same = [{"a": torch.zeros(3)}, {"a": torch.ones(3)}]
    td = TensorDict.from_list(same, batch_size=[2, 3], names=["n", "t"])
    assert type(td) is TensorDict and td.batch_size == (2, 3) and td.names == ["n", "t"]
    assert TensorDict.from_list(same).batch_size == (2,)
    assert TensorDict.from_list(same, auto_batch_size=True).batch_size == (2, 3)
    assert TensorDict.from_list(same, batch_dims=1).batch_size == (2,)
    ragged = TensorDict.from_list([{"a": torch.zeros(3)}, {"a": torch.zeros(4)}])
    assert isinstance(ragged, LazyStackedTensorDict) and ragged.batch_size == (2,)
    assert isinstance(TensorDict.from_list(same, lazy=True), LazyStackedTensorDict)
    with pytest.raises(StructureMismatchError):
        TensorDict.from_list([{"a": torch.zeros(3)}, {"b": torch.zeros(3)}], lazy=False)
    with pytest.raises(BatchSizeError):
        TensorDict.from_list(same, batch_size=[3])
    mixed = TensorDict.from_list(
        [TensorDict({"a": torch.zeros(3)}, [3]), {"a": torch.ones(3)}], batch_size=[2, 3]
    )
    assert mixed.batch_size == (2, 3)
    # a lazy-stack class stacks lazily
    assert isinstance(LazyStackedTensorDict.from_list(same), LazyStackedTensorDict)


def test_from_list_on_a_typed_class() -> None:
    items = [{"pose": {"q": torch.zeros(3)}, "reward": torch.zeros(3)}] * 2
    obs = Obs.from_list(items, batch_size=[2, 3])
    assert type(obs) is Obs and obs.batch_size == (2, 3) and obs.pose.q.shape == (2, 3)


# -- tuples, named tuples, dataclasses -----------------------------------------------------


def test_from_tuple() -> None:
    td = TensorDict.from_tuple((torch.zeros(3), (torch.ones(3), {"x": 1}), [1, 2], "s"))
    assert sorted(td.keys()) == ["0", "1", "2", "3"]
    assert td["1", "1", "x"].item() == 1 and td["2"].tolist() == [1, 2] and td["3"] == "s"
    assert TensorDict.from_tuple((torch.zeros(3, 2),), batch_dims=1).batch_size == (3,)
    assert TensorDict.from_tuple((torch.zeros(3, 2),), batch_size=[3]).batch_size == (3,)
    with pytest.raises(TypeError):
        TensorDict.from_tuple((torch.zeros(3),), auto_batch_size=True, batch_size=[3])
    # a typed class takes the elements as its fields, in order
    obs = Obs.from_tuple(({"q": torch.zeros(3)}, torch.ones(3), "cam"), batch_size=[3])
    assert type(obs.pose) is Pose and obs.label == "cam"
    with pytest.raises(TypeError, match="4 values"):
        Obs.from_tuple((1, 2, 3, 4))
    # a lazy-stack class builds its members' class
    assert type(LazyStackedTensorDict.from_tuple((torch.zeros(3),))) is TensorDict


def test_namedtuples_both_ways() -> None:
    td = TensorDict.from_namedtuple(Point(torch.zeros(3), Point(1, "s")), auto_batch_size=True)
    assert td.batch_size == () and td["y", "y"] == "s"
    assert sorted(TensorDict.from_namedtuple(torch.tensor([2, 0, 1]).max(0)).keys()) == [
        "indices",
        "values",
    ]
    data = TensorDict({"a": torch.zeros(3), "n": {"b": torch.zeros(3), "s": "zero"}}, [3])
    nt = data.to_namedtuple()
    assert type(nt).__name__ == "GenericDict" and nt.n.s == "zero"
    assert TensorDict.from_namedtuple(nt, batch_size=[3])["n", "s"] == "zero"
    assert data.to_namedtuple(dest_cls=collections.namedtuple("Mine", ["n", "a"])).a is data["a"]
    with pytest.raises(TypeError):
        TensorDict.from_namedtuple((1, 2))
    # a typed class: a named tuple of its fields, which converts back
    obs = make_obs()
    nt = obs.to_namedtuple()
    assert type(nt).__name__ == "ObsTuple" and type(nt.pose).__name__ == "PoseTuple"
    assert nt._fields == ("pose", "reward", "label") and nt.label == "obs"
    back = Obs.from_namedtuple(nt, batch_size=[3])
    assert type(back.pose) is Pose and torch.equal(back.reward, obs.reward)
    assert type(obs.to_namedtuple()) is type(nt)  # one class per typed class
    stacked = lazy_stack([obs, obs.clone()])
    assert stacked.to_namedtuple().reward.shape == (2, 3)


def test_from_dataclass() -> None:
    data = Outer(Inner(torch.zeros(3, 4)), torch.ones(3))
    td = TensorDict.from_dataclass(data, auto_batch_size=True)
    assert type(td) is TensorDict and td.batch_size == (3,) and td["pose", "q"].shape == (3, 4)
    assert td["label"] == "dc"
    obs = Obs.from_dataclass(data, batch_size=[3])
    assert type(obs) is Obs and type(obs.pose) is Pose and obs.label == "dc"
    with pytest.raises(TypeError, match="as_tensorclass"):
        TensorDict.from_dataclass(Outer)
    # as_tensorclass: one tensor class per dataclass, nested dataclasses nested classes
    made = TensorDict.from_dataclass(data, as_tensorclass=True, batch_size=[3])
    assert type(made).__name__ == "Outer_tc" and type(made.pose).__name__ == "Inner_tc"
    again = TensorDict.from_dataclass(data, as_tensorclass=True, batch_size=[3])
    assert type(again) is type(made) and torch.stack([made, again]).batch_size == (2, 3)
    assert TensorDict.from_dataclass(Outer, as_tensorclass=True) is type(made)
    assert type(TensorDict.from_dataclass(data, as_tensorclass=True, dest_cls=Obs)) is Obs
    assert type(LazyStackedTensorDict.from_dataclass(data)) is TensorDict


def test_from_dataclass_function() -> None:
    OuterTC = tensorclass.from_dataclass(Outer)
    assert tensorclass.is_tensorclass(OuterTC) and [f.name for f in OuterTC.fields()] == [
        "pose",
        "reward",
        "label",
    ]
    instance = tensorclass.from_dataclass(
        Outer(Inner(torch.zeros(2)), torch.ones(2)), batch_size=[2]
    )
    assert type(instance) is OuterTC and instance.label == "dc"
    frozen = tensorclass.from_dataclass(Outer, frozen=True)
    assert frozen is not OuterTC and frozen.__tensorclass_schema__.frozen
    assert tensorclass.from_dataclass(Obs) is Obs  # a tensor class stays itself

    @dataclasses.dataclass
    class WithDefaults:
        x: Tensor = dataclasses.field(default_factory=lambda: torch.zeros(2))
        shared: Tensor = torch.ones(2)  # noqa: RUF009  (dataclasses allow it: shared)
        n: int = dataclasses.field(default=3, kw_only=True)

    made = tensorclass.from_dataclass(WithDefaults)
    first, second = made(batch_size=[2]), made(batch_size=[2])
    assert first.x is not second.x and first.shared is second.shared and first.n == 3


# -- pytrees -------------------------------------------------------------------------------


def test_pytrees_round_trip() -> None:
    class Key:
        pass

    key = Key()
    tree = (
        [torch.arange(3), torch.zeros(2)],
        {"tensor": torch.ones(2), key: torch.arange(2), 3: torch.zeros(1), "list": [1, 2, 3]},
        Point(torch.zeros(1), 2.0),
        OrderedDict(a=torch.zeros(1)),
        torch.tensor([2, 0]).max(0),
    )
    td = TensorDict.from_pytree(tree)
    assert td["_pytree_type"] is tuple and td["2", "_pytree_type"] is Point
    back = td.to_pytree()
    assert type(back) is tuple and type(back[2]) is Point and type(back[3]) is OrderedDict
    assert key in back[1] and torch.equal(back[1][key], torch.arange(2))
    assert torch.equal(back[0][0], torch.arange(3)) and back[2].y.item() == 2.0
    assert type(back[4]) is type(tree[4]) and torch.equal(back[4].indices, tree[4].indices)
    assert [v.item() for v in back[1]["list"]] == [1, 2, 3]
    rebuilt = TensorDict.from_pytree({"d": defaultdict(list, a=torch.zeros(1))}).to_pytree()
    assert type(rebuilt["d"]) is defaultdict and rebuilt["d"].default_factory is None
    assert TensorDict.from_pytree({"a": torch.zeros(3, 2)}, auto_batch_size=True).batch_size == (
        3,
        2,
    )
    plain = TensorDict({"a": torch.zeros(2)}, [2])
    assert plain.to_pytree() is plain  # not made by from_pytree
    with pytest.raises(TypeError):
        TensorDict.from_pytree(torch.zeros(3))
    with pytest.raises(TypeError):
        TensorDict.from_pytree({"a": "text"})


def test_from_pytree_on_a_typed_class() -> None:
    obs = Obs.from_pytree({"pose": {"q": torch.zeros(3)}, "reward": torch.zeros(3)}, batch_size=[3])
    assert type(obs) is Obs and type(obs.pose) is Pose and obs.batch_size == (3,)
    assert obs.to_pytree() is obs  # a typed class is its own node type


# -- structured arrays ---------------------------------------------------------------------


def test_struct_arrays_share_memory_and_round_trip() -> None:
    x = np.array(
        [("Rex", 9, 81.0, [1, 2]), ("Fido", 3, 27.0, [3, 4])],
        dtype=[("name", "U10"), ("age", "i4"), ("weight", "f4"), ("v", "f8", (2,))],
    )
    td = TensorDict.from_struct_array(x)
    assert td.batch_size == (2,) and td["name"] == ["Rex", "Fido"] and td["v"].shape == (2, 2)
    x["age"] += 1
    assert td["age"].tolist() == [10, 4]  # shared memory
    td["weight"] += 1
    assert x["weight"].tolist() == [82.0, 28.0]
    back = td.to_struct_array()
    assert back.dtype == x.dtype and (back == x).all()
    nested = np.zeros((2, 3), dtype=[("a", "f4"), ("n", [("b", "i8"), ("c", "f4")])])
    td = TensorDict.from_struct_array(nested)
    assert td.batch_size == (2, 3) and td["n", "b"].dtype == torch.int64
    assert td.to_struct_array().dtype == nested.dtype
    assert TensorDict.from_struct_array(nested, batch_size=[2]).batch_size == (2,)
    vectors = np.zeros(4, dtype=[("a", "f4", (3,)), ("b", "f4", (3,))])
    assert TensorDict.from_struct_array(vectors, auto_batch_size=True).batch_size == (4, 3)
    with pytest.raises(TypeError):
        TensorDict.from_struct_array(np.zeros(3))


def test_to_struct_array_of_nested_and_values() -> None:
    td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2, 3)}, "s": "hello"}, [2])
    array = td.to_struct_array()
    assert (
        array.shape == (2,)
        and array["n"]["b"].shape == (2, 3)
        and array["s"].tolist()
        == [
            "hello",
            "hello",
        ]
    )
    assert TensorDict.from_struct_array(array)["s"] == ["hello", "hello"]
    obs = make_obs()
    array = obs.to_struct_array()
    again = Obs.from_struct_array(array)
    assert type(again) is Obs and again.label == ["obs"] * 3 and type(again.pose) is Pose
    stacked = lazy_stack([obs, obs.clone()])
    assert stacked.to_struct_array().shape == (2, 3)


# -- from_any, fromkeys, from_schema, from_tensordict ---------------------------------------


def test_from_any() -> None:
    data = Outer(Inner(torch.zeros(3)), torch.ones(3))
    td = TensorDict.from_any({"dc": data, "pair": (torch.zeros(3), 1), "nt": Point(1, 2)})
    assert sorted(td.keys(include_nested=True, leaves_only=True), key=str)[:3] == [
        ("dc", "label"),
        ("dc", "pose", "q"),
        ("dc", "reward"),
    ]
    assert td["nt", "y"].item() == 2
    assert TensorDict.from_any([1, 2, 3]).tolist() == [1, 2, 3]
    assert TensorDict.from_any("text") == "text"
    tensor = torch.zeros(2)
    assert TensorDict.from_any(tensor) is tensor
    assert TensorDict.from_any((1, 2))["1"].item() == 2
    assert TensorDict.from_any(np.zeros(2, dtype=[("a", "f4")]))["a"].shape == (2,)
    obs = make_obs()
    assert Obs.from_any(obs) is obs
    converted = TensorDict.from_any(obs)
    assert type(converted) is TensorDict and converted["reward"] is obs.reward
    assert type(Obs.from_any({"pose": {"q": torch.zeros(2)}, "reward": torch.zeros(2)})) is Obs
    assert type(LazyStackedTensorDict.from_any({"a": 1})) is TensorDict


def test_fromkeys() -> None:
    value = torch.zeros(3)
    td = TensorDict.fromkeys(["a", ("b", "c")], value)
    assert td["a"] is value and td["b", "c"] is value and td.batch_size == ()
    numbers = TensorDict.fromkeys(["a", "b"])
    assert numbers["a"].item() == 0 and numbers["a"] is not numbers["b"]
    assert TensorDict.fromkeys(["a"], "s")["a"] == "s"
    pose = Pose.fromkeys(["q"], value)
    assert type(pose) is Pose and pose.q is value
    with pytest.raises(KeyNotFoundError):
        Pose.fromkeys(["other"])


def test_from_schema(tmp_path) -> None:  # type: ignore[no-untyped-def]
    schema = {"obs": ([84, 84, 3], torch.uint8), "reward": ([], torch.float32)}
    td = TensorDict.from_schema(schema, batch_size=[16])
    assert td["obs"].shape == (16, 84, 84, 3) and td["obs"].dtype == torch.uint8
    assert not td["reward"].any()
    mapped = TensorDict.from_schema(schema, batch_size=[4], storage="memmap", prefix=tmp_path / "m")
    assert mapped.is_memmap() and mapped["obs"].shape == (4, 84, 84, 3)
    shared = TensorDict.from_schema(schema, batch_size=[2], storage="shared")
    assert shared.is_shared()
    with pytest.raises(ValueError, match="storage"):
        TensorDict.from_schema(schema, storage="h5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="prefix"):
        TensorDict.from_schema(schema, storage="memmap")
    pose = Pose.from_schema({"q": ([4], torch.float64)}, batch_size=[2])
    assert type(pose) is Pose and pose.q.shape == (2, 4) and pose.q.dtype == torch.float64


def test_from_tensordict() -> None:
    td = TensorDict({"pose": {"q": torch.zeros(3, 4)}, "reward": torch.zeros(3)}, [3], names=["t"])
    obs = Obs.from_tensordict(td, {"label": "cam"})
    assert type(obs) is Obs and type(obs.pose) is Pose and obs.label == "cam"
    assert obs.reward is td["reward"] and obs.pose.q is td["pose", "q"] and obs.names == ["t"]
    with pytest.raises(FieldTypeError, match="missing required"):
        Obs.from_tensordict(TensorDict({"reward": torch.zeros(3)}, [3]))
    partial = Obs.from_tensordict(TensorDict({"reward": torch.zeros(3)}, [3]), check=False)
    assert partial.pose is None
    with pytest.raises(KeyNotFoundError):
        Pose.from_tensordict(TensorDict({"q": torch.zeros(2), "extra": torch.zeros(2)}, [2]))
    stacked = lazy_stack([td, td.clone()])
    converted = Obs.from_tensordict(stacked, check=False)
    assert isinstance(converted, LazyStackedTensorDict) and isinstance(converted, Obs)
    assert converted.members[0].reward is td["reward"]
    assert TensorDict.from_tensordict(obs)["reward"] is obs.reward
    with pytest.raises(TypeError):
        Obs.from_tensordict({"reward": torch.zeros(3)})  # type: ignore[arg-type]


# -- modules -------------------------------------------------------------------------------


class LinearParams(TensorClass):
    weight: Tensor
    bias: Tensor


def test_from_module_on_every_class() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    params = TensorDict.from_module(model)
    assert type(params) is TensorDict and params["0", "weight"] is model[0].weight
    assert "1" not in params.keys()
    assert "1" in TensorDict.from_module(model, filter_empty=False).keys()
    typed = LinearParams.from_module(nn.Linear(3, 2))
    assert type(typed) is LinearParams and typed.is_locked and typed.weight.shape == (2, 3)
    assert not LinearParams.from_module(nn.Linear(3, 2), lock=False).is_locked
    assert (
        type(TensorDict.from_module(nn.Linear(2, 2), as_module=True)).__name__ == "TensorDictParams"
    )
    assert type(LazyStackedTensorDict.from_module(nn.Linear(2, 2))) is TensorDict
    assert tensorclass.from_module(nn.Linear(2, 2))["weight"].shape == (2, 2)


def test_from_modules_on_every_class() -> None:
    modules = [nn.Linear(3, 2) for _ in range(4)]
    stacked = LinearParams.from_modules(*modules)
    assert type(stacked) is LinearParams and stacked.batch_size == (4,) and stacked.is_locked
    lazy = LinearParams.from_modules(*modules, lazy_stack=True)
    assert isinstance(lazy, LinearParams) and isinstance(lazy, LazyStackedTensorDict)
    assert lazy.members[1].weight is modules[1].weight
    assert TensorDict.from_modules(*modules).batch_size == (4,)
    assert LazyStackedTensorDict.from_modules(*modules).batch_size == (4,)


# -- stacking ------------------------------------------------------------------------------


def test_stack_cat_lazy_stack_classmethods() -> None:
    a = TensorDict({"x": torch.zeros(3)}, [3])
    b = TensorDict({"y": torch.ones(3)}, [3])
    assert TensorDict.stack([a, a]).batch_size == (2, 3)
    assert TensorDict.cat([a, a], 0).batch_size == (6,)
    lazy = TensorDict.lazy_stack([a, b])
    assert isinstance(lazy, LazyStackedTensorDict) and lazy.batch_size == (2, 3)
    obs = make_obs()
    assert type(Obs.stack([obs, obs], 1)) is Obs and Obs.cat([obs, obs]).batch_size == (6,)
    assert isinstance(Obs.lazy_stack([obs, obs]), Obs)
    assert type(LazyStackedTensorDict.stack([a, a])) is TensorDict
    out = TensorDict.stack([a, a]).zero_()
    assert TensorDict.stack([a + 1, a + 1], out=out) is out and out["x"].eq(1).all()
    assert type(obs.stack([obs, obs])) is Obs  # callable on an instance too


def test_lazy_stack_classmethod_options() -> None:
    a = TensorDict({"x": torch.zeros(3)}, [3])
    named = LazyStackedTensorDict.lazy_stack([a, a], 1, stack_dim_name="k")
    assert named.names == [None, "k"] and named.stack_dim == 1
    out = LazyStackedTensorDict.lazy_stack([a.clone(), a.clone()])
    assert LazyStackedTensorDict.lazy_stack([a + 1, a + 2], out=out) is out
    assert out["x"][:, 0].tolist() == [1.0, 2.0]
    tensors = [torch.zeros(2), torch.ones(3)]
    assert LazyStackedTensorDict.lazy_stack(tensors, as_list=True) == tensors
    padded = LazyStackedTensorDict.lazy_stack(tensors, as_padded_tensor=True, padding_value=-1)
    assert padded.tolist() == [[0.0, 0.0, -1.0], [1.0, 1.0, 1.0]]
    left = LazyStackedTensorDict.lazy_stack(tensors, as_padded_tensor=True, padding_side="left")
    assert left[0].tolist() == [0.0, 0.0, 0.0] and left.shape == (2, 3)
    nested = LazyStackedTensorDict.lazy_stack(tensors, as_nested_tensor=True)
    assert nested.is_nested
    assert LazyStackedTensorDict.lazy_stack([torch.zeros(2)] * 2).shape == (2, 2)
    with pytest.raises(ValueError):
        LazyStackedTensorDict.lazy_stack(tensors, as_list=True, as_padded_tensor=True)
    assert tensorclass.lazy_stack([a, a], out=None).batch_size == (2, 3)


def test_maybe_dense_stack() -> None:
    a = TensorDict({"x": torch.zeros(3), "n": {"y": torch.zeros(2)}, "s": "a"}, [])
    b = TensorDict({"x": torch.ones(3), "n": {"y": torch.zeros(4)}, "s": "b"}, [])
    c = TensorDict({"z": torch.ones(3)}, [])
    assert type(TensorDict.maybe_dense_stack([a, a])) is TensorDict
    mixed = TensorDict.maybe_dense_stack([a, b])
    assert type(mixed) is TensorDict and isinstance(mixed["n"], LazyStackedTensorDict)
    assert mixed["x"].shape == (2, 3) and mixed["s"] == ["a", "b"]
    assert isinstance(LazyStackedTensorDict.maybe_dense_stack([a, c]), LazyStackedTensorDict)
    assert isinstance(tensorclass.maybe_dense_stack([a, c]), LazyStackedTensorDict)
    obs = make_obs()
    assert type(Obs.maybe_dense_stack([obs, obs], 1)) is Obs
    out = TensorDict.maybe_dense_stack([a, a]).zero_()
    assert LazyStackedTensorDict.maybe_dense_stack([a, a], out=out, strict=True) is out
    with pytest.raises(StructureMismatchError):
        LazyStackedTensorDict.maybe_dense_stack([c, c], out=out, strict=True)


def test_dense_stack_tds() -> None:
    td0 = TensorDict({"a": torch.zeros(3)})
    td1 = TensorDict({"a": torch.zeros(4), "b": torch.zeros(2)})
    container = TensorDict({"lazy": lazy_stack([td0, td1])})
    stacked = lazy_stack([container, container.clone()])
    dense = tensorclass.dense_stack_tds(stacked)
    assert type(dense) is TensorDict and dense.batch_size == (2,)
    assert dense["lazy"][:, 1]["b"].shape == (2, 2)
    listed = tensorclass.dense_stack_tds([container, container.clone()], dim=0)
    assert listed["lazy"][:, 0]["a"].shape == (2, 3)
    assert tensorclass.dense_stack_tds(container) is container
    with pytest.raises(ValueError, match="dim"):
        tensorclass.dense_stack_tds([container, container])


# -- empty and the new_* factories ---------------------------------------------------------


def test_empty() -> None:
    td = TensorDict({"a": torch.zeros(3), "b": {"c": torch.ones(3, 2)}, "s": "v"}, [3], names=["t"])
    assert list(td.empty().keys()) == [] and td.empty().names == ["t"]
    assert list(td.empty(recurse=True).keys(include_nested=True)) == ["b", "s"]
    resized = td.empty(recurse=True, batch_size=[5, 4], device="cpu", names=["x", "y"])
    assert resized.batch_size == (5, 4) and resized["b"].batch_size == (5, 4)
    assert resized.device == torch.device("cpu") and resized.names == ["x", "y"]
    assert td.empty(batch_size=[]).names == [None] * 0
    assert not td.lock_().empty().is_locked
    obs = make_obs()
    assert type(obs.empty(recurse=True).pose) is Pose and obs.empty().reward is None
    stacked = lazy_stack([obs, obs.clone()])
    assert isinstance(stacked.empty(), LazyStackedTensorDict)
    assert type(stacked.empty(batch_size=[2])) is Obs


def test_new_factories() -> None:
    td = TensorDict(
        {
            "a": torch.zeros(3, 4),
            "b": torch.zeros(3, dtype=torch.int64),
            "n": {"c": torch.ones(3, 2, 5)},
            "s": "str",
        },
        [3],
        names=["t"],
    )
    out = td.new_zeros(2, 2)
    assert (
        out.batch_size == (2, 2) and out["a"].shape == (2, 2, 4) and out["b"].dtype == torch.int64
    )
    assert out["n"].batch_size == (2, 2) and out["n", "c"].shape == (2, 2, 2, 5)
    assert out["s"] == "str" and out.names == [None, None]
    assert td.new_zeros([2]).names == ["t"] and td.new_zeros(torch.Size([2])).batch_size == (2,)
    ones = td.new_ones(2, dtype=torch.float16)
    assert ones["b"].dtype == torch.float16 and ones["a"].eq(1).all()
    full = td.new_full([2], 7)
    assert full["b"].tolist() == [7, 7] and full["a"].eq(7).all()
    assert td.new_empty(5)["n", "c"].shape == (5, 2, 5)
    grads = td.new_zeros(2, requires_grad=True)
    assert grads["a"].requires_grad and not grads["b"].requires_grad
    assert td.new_zeros(2, device="cpu").device == torch.device("cpu")
    tensor = td.new_tensor([1, 2])
    assert tensor.batch_size == (2,) and tensor["a"].tolist() == [1.0, 2.0]
    assert tensor["b"].dtype == torch.int64 and tensor["n", "c"].shape == (2,)
    other = TensorDict(
        {"a": torch.ones(2), "b": torch.ones(2), "n": {"c": torch.ones(2)}, "s": "x"}, [2]
    )
    copied = td.new_tensor(other)
    assert copied["a"].tolist() == [1.0, 1.0] and copied["a"] is not other["a"]
    stack_values = torch.stack([TensorDict({"s": "a"}, []), TensorDict({"s": "b"}, [])])
    assert stack_values.new_zeros(2)["s"] == ["a", "b"]
    assert stack_values.new_zeros(3)["s"] == [None, None, None]
    obs = make_obs()
    made = obs.new_zeros(5)
    assert type(made) is Obs and type(made.pose) is Pose and made.pose.q.shape == (5, 4)
    stacked = lazy_stack([obs, obs.clone()])
    assert type(stacked.new_ones(4)) is Obs
    holder = TensorDict({"lazy": stacked}, [2])
    emptied = holder.new_zeros(2, empty_lazy=True)
    assert list(emptied["lazy"].keys()) == [] and emptied["lazy"].batch_size == (2, 3)


def test_like_functions_keep_the_class() -> None:
    obs = make_obs()
    zeros = torch.zeros_like(obs)
    assert type(zeros) is Obs and zeros.batch_size == (3,) and not zeros.reward.any()
    assert torch.ones_like(obs).pose.q.eq(1).all() and torch.full_like(obs, 2).reward.eq(2).all()
    stacked = lazy_stack([obs, obs.clone()])
    assert isinstance(torch.zeros_like(stacked), Obs)


# -- joining leaves ------------------------------------------------------------------------


def test_stack_and_cat_tensors() -> None:
    td = TensorDict({"a": torch.zeros(()), "b": torch.ones(())})
    assert td.stack_tensors("a", "b", out_key="c") is td
    assert td["c"].tolist() == [0.0, 1.0] and list(td.keys()) == ["c"]
    td = TensorDict({"a": torch.zeros(1), "b": torch.ones(1)})
    td.cat_tensors("a", "b", out_key=("n", "c"), keep_entries=True)
    assert td["n", "c"].tolist() == [0.0, 1.0] and "a" in td.keys()
    td = TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2])
    td.stack_tensors("a", "b", out_key="a", dim=1)
    assert td["a"].shape == (2, 2) and list(td.keys()) == ["a"]
    bad = TensorDict({"a": torch.zeros(3), "b": torch.ones(3)}, [3])
    with pytest.raises(BatchSizeError):
        bad.stack_tensors("a", "b", out_key="c")  # (2, 3) does not fit the batch size [3]
    assert sorted(bad.keys()) == ["a", "b"]
    bad = TensorDict({"a": torch.zeros(2), "b": torch.ones(3)}, [])
    with pytest.raises(StructureMismatchError):
        bad.stack_tensors("a", "b", out_key="c")
    assert sorted(bad.keys()) == ["a", "b"]  # nothing removed


def test_stack_and_cat_from_tensordict() -> None:
    td = TensorDict(
        {"b": torch.ones(2), "a": torch.zeros(2), "n": {"c": torch.full((2,), 2.0)}}, [2]
    )
    assert td.stack_from_tensordict(1).tolist() == [[1.0, 0.0, 2.0]] * 2
    assert td.stack_from_tensordict(sorted=True)[:, 0].tolist() == [0.0, 1.0, 2.0]
    ordered = td.cat_from_tensordict(sorted=[("n", "c"), "b", "a"])
    assert ordered.tolist() == [2.0, 2.0, 1.0, 1.0, 0.0, 0.0]
    with pytest.raises(StructureMismatchError):
        td.cat_from_tensordict(sorted=["a"])
    out = torch.empty(3, 2)
    assert td.stack_from_tensordict(out=out) is out


# -- auto_batch_size_ and the functions ------------------------------------------------------


def test_auto_batch_size_on_every_class() -> None:
    obs = Obs(Pose(torch.zeros(3, 4, 5)), torch.zeros(3, 4))
    assert obs.auto_batch_size_() is obs
    assert obs.batch_size == (3, 4) and obs.pose.batch_size == (3, 4, 5)
    td = TensorDict({"a": torch.zeros(3, 4, 5), "b": {"c": torch.zeros(3, 4, 6)}})
    td.auto_batch_size_()
    td.auto_batch_size_(batch_dims=1, keep_compliant_size=True)
    assert td.batch_size == (3,) and td["b"].batch_size == (3, 4, 6)  # kept: 1 dim or more
    td.auto_batch_size_(batch_dims=1)
    assert td["b"].batch_size == (3,)
    holder = TensorDict(
        {"lazy": lazy_stack([TensorDict({"a": torch.zeros(3)}, [])] * 2), "x": torch.zeros(2, 3)}
    )
    holder.auto_batch_size_()
    assert holder.batch_size == (2,) and holder["lazy"].batch_size == (2,)  # kept


def test_the_functions_build_tensordicts() -> None:
    data = {"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3)}}
    assert tensorclass.from_dict(data, batch_dims=1).batch_size == (3,)
    assert tensorclass.from_dict(data, batch_size=[3], names=["n"]).names == ["n"]
    assert sorted(tensorclass.from_any({"p": (torch.zeros(3), 1)})["p"].keys()) == ["0", "1"]
    assert tensorclass.from_tuple((torch.zeros(3),), auto_batch_size=True).batch_size == (3,)
    assert tensorclass.from_namedtuple(Point(1, 2))["x"].item() == 1
    assert tensorclass.fromkeys(["a"], 1)["a"].item() == 1
    assert tensorclass.from_pytree([torch.zeros(2)]).to_pytree()[0].shape == (2,)
    assert tensorclass.from_struct_array(np.zeros(2, dtype=[("a", "f4")])).batch_size == (2,)
    td = tensorclass.make_tensordict({"a": torch.zeros(3)}, a=torch.ones(3), b=torch.zeros(3, 2))
    assert td.batch_size == () and td["a"].eq(0).all()  # the mapping wins
    assert tensorclass.make_tensordict(a=torch.zeros(3, 2), auto_batch_size=True).batch_size == (
        3,
        2,
    )
    assert tensorclass.make_tensordict(a=torch.zeros(3), batch_size=[3]).batch_size == (3,)
    source = TensorDict({"a": torch.zeros(2)}, [2])
    assert tensorclass.make_tensordict(source).batch_size == (2,)


# -- TypedTensorDict -----------------------------------------------------------------------


class State(TypedTensorDict):
    eta: Tensor
    X: Tensor
    y: Tensor | None = None


def make_state() -> State:
    return State(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), batch_size=[5])


def test_typed_tensordict_construction() -> None:
    state = make_state()
    assert isinstance(state, TensorClass) and not isinstance(state, TensorDict)
    assert state.y is None and list(state.keys()) == ["eta", "X"]
    with pytest.raises(TypeError):
        State(torch.zeros(5, 3), torch.zeros(5, 4), batch_size=[5])  # type: ignore[misc]
    with pytest.raises(TypeError):
        State(eta=torch.zeros(5, 3), batch_size=[5])  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        State(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), z=torch.ones(5))  # type: ignore[call-arg]
    with pytest.raises(FieldTypeError):
        state.eta = "text"  # type: ignore[assignment]
    # entries first, as a TensorDict takes them; fields by keyword win
    source = {
        "eta": torch.zeros(5, 3),
        "X": torch.zeros(5, 4),
        "step": torch.arange(5),
        ("n", "m"): torch.zeros(5),
    }
    built = State(source, X=torch.ones(5, 4), batch_size=[5], lock=True)
    assert built["X"].eq(1).all() and built["step"].shape == (5,) and built["n", "m"].shape == (5,)
    assert built.is_locked
    from_td = State(TensorDict(source, [5]))
    assert from_td.batch_size == (5,) and from_td.eta is source["eta"]


def test_typed_tensordict_takes_extra_keys() -> None:
    state = make_state()
    state["step"] = torch.arange(5)
    state["sum"] = torch.ones(5)  # a key named like a method does not hide it
    assert callable(state.sum) and state["sum"].shape == (5,)
    assert sorted(state.keys()) == ["X", "eta", "step", "sum"]
    assert "step: i64[]" in repr(state)
    with pytest.raises(AttributeError, match=r"x\['other'\]"):
        state.other = 1  # type: ignore[attr-defined]
    assert type(state[1:3]) is State and state[1:3]["step"].tolist() == [1, 2]
    stacked = torch.stack([state, state])
    assert type(stacked) is State and stacked["step"].shape == (2, 5)
    assert dict(**state).keys() == state.to_dict(retain_none=False).keys()
    del state["X"]
    assert state.X is None
    state["n"] = {"a": torch.zeros(5)}
    assert type(state["n"]) is TensorDict


def test_typed_tensordict_from_tensordict_and_dicts() -> None:
    td = TensorDict(eta=torch.zeros(5, 3), X=torch.zeros(5, 4), q=torch.ones(5), batch_size=[5])
    state = State.from_tensordict(td)
    assert type(state) is State and state.eta is td["eta"] and state["q"] is td["q"]
    state.eta += 1
    assert td["eta"].eq(1).all()  # the same tensors
    with pytest.raises(FieldTypeError, match="missing required"):
        State.from_tensordict(TensorDict(eta=torch.zeros(5, 3), batch_size=[5]))
    assert State.from_tensordict(TensorDict(batch_size=[5]), check=False).eta is None
    built = State.from_dict(
        {"eta": torch.zeros(5, 3), "X": torch.zeros(5, 4), "k": 1}, batch_size=[5]
    )
    assert type(built) is State and built["k"] == 1
    lazy = State.from_tensordict(lazy_stack([td, td.clone()]))
    assert isinstance(lazy, State) and lazy.eta.shape == (2, 5, 3)


def test_typed_tensordict_subclasses_and_frozen() -> None:
    class Wider(State):
        extra: Tensor | None = None

    wide = Wider(eta=torch.zeros(2, 3), X=torch.zeros(2, 4), extra=torch.ones(2), batch_size=[2])
    wide["free"] = torch.zeros(2)
    assert [f.name for f in Wider.fields()] == ["eta", "X", "y", "extra"]

    class Locked(TypedTensorDict, frozen=True):
        x: Tensor

    locked = Locked({"x": torch.zeros(2), "more": torch.ones(2)}, batch_size=[2])
    assert locked.is_locked and locked["more"].shape == (2,)


def test_typed_tensordict_saves_and_validates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    state = make_state()
    state["step"] = torch.arange(5)
    state["tag"] = "run"
    saved = state.memmap(tmp_path / "s")
    loaded = tensorclass.load_memmap(tmp_path / "s")
    assert (
        type(loaded) is State
        and loaded["tag"] == "run"
        and torch.equal(loaded["step"], saved["step"])
    )
    checked = State.validate(
        {"eta": torch.zeros(5, 3), "X": torch.zeros(5, 4), "other": torch.zeros(5)}, batch_size=[5]
    )
    assert checked["other"].shape == (5,)
