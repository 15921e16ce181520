"""Tensor classes are dataclasses to the standard library, and their annotations resolve.

This module uses ``from __future__ import annotations`` on purpose: every annotation below
is a string, as in user code that imports it, so forward references (a quoted name, a
class defined later in the same function) must resolve to nested fields.
"""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY
from typing import ClassVar

import pytest
import torch
from torch import Tensor

from tensorclass import (
    FieldKind,
    FrozenInstanceError,
    SchemaError,
    TensorClass,
    TensorDict,
    lazy_stack,
    tensorclass,
)


class Pose(TensorClass):
    q: Tensor


class Obs(TensorClass):
    pose: Pose
    reward: Tensor
    label: str = "obs"
    tags: list = dataclasses.field(default_factory=list)
    version: ClassVar[int] = 1


class Frozen(TensorClass, frozen=True):
    x: Tensor


def make_obs(n: int = 3) -> Obs:
    return Obs(Pose(torch.zeros(n, 4), batch_size=[n]), torch.arange(n).float(), batch_size=[n])


# -- the dataclass protocol ------------------------------------------------------------------


def test_tensor_classes_are_dataclasses() -> None:
    obs = make_obs()
    assert dataclasses.is_dataclass(Obs) and dataclasses.is_dataclass(obs)
    assert not dataclasses.is_dataclass(TensorDict) and not dataclasses.is_dataclass(TensorDict({}))
    assert not dataclasses.is_dataclass(TensorClass)
    fields = dataclasses.fields(obs)
    assert [f.name for f in fields] == ["pose", "reward", "label", "tags"]  # no ClassVar
    assert fields[0].type is Pose and fields[2].default == "obs"
    assert fields[3].default_factory is list
    assert dataclasses.fields(Obs) == fields
    stacked = lazy_stack([obs, obs.clone()])
    assert dataclasses.is_dataclass(stacked) and len(dataclasses.fields(stacked)) == 4


def test_replace_keeps_batch_size_device_and_names() -> None:
    obs = make_obs()
    obs.names = ["t"]
    moved = Obs(obs.pose, obs.reward, batch_size=[3], device="cpu")
    changed = dataclasses.replace(moved, label="cam")
    assert type(changed) is Obs and changed.label == "cam" and changed.reward is obs.reward
    assert changed.batch_size == (3,) and changed.device == torch.device("cpu")
    assert dataclasses.replace(obs, reward=torch.ones(3)).names == ["t"]
    frozen = Frozen(torch.zeros(2), batch_size=[2])
    copy = dataclasses.replace(frozen, x=torch.ones(2))
    assert copy.is_locked and copy.x.eq(1).all() and frozen.x.eq(0).all()
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.x = torch.ones(2)
    assert issubclass(FrozenInstanceError, dataclasses.FrozenInstanceError)
    # a lazy stack of typed instances: a dense instance with the stacked fields
    stacked = lazy_stack([obs, obs.clone()])
    dense = dataclasses.replace(stacked, label="both")
    assert type(dense) is Obs and dense.batch_size == (2, 3) and dense.label == "both"
    with pytest.raises(TypeError):
        dataclasses.replace(obs, other=1)


def test_asdict_and_astuple() -> None:
    obs = make_obs()
    as_dict = dataclasses.asdict(obs)
    assert set(as_dict) == {"pose", "reward", "label", "tags"}
    assert as_dict["pose"].keys() == {"q"} and torch.equal(as_dict["reward"], obs.reward)
    assert as_dict["reward"] is not obs.reward  # asdict copies values, as for any dataclass
    assert dataclasses.astuple(obs)[2] == "obs"


def test_dataclasses_field_in_a_class_body() -> None:
    class Options(TensorClass):
        x: Tensor
        scale: float = dataclasses.field(default=2.0, metadata={"unit": "m"})
        history: list = dataclasses.field(default_factory=list)
        step: int = dataclasses.field(default=0, kw_only=True)

    a = Options(torch.zeros(2), batch_size=[2])
    b = Options(torch.zeros(2), 3.0, step=5, batch_size=[2])
    assert a.scale == 2.0 and b.scale == 3.0 and b.step == 5
    assert a.history is not b.history
    found = {f.name: f for f in Options.fields()}
    assert found["scale"].metadata == {"unit": "m"} and found["step"].kw_only
    with pytest.raises(TypeError):
        Options(torch.zeros(2), 3.0, [], 5, batch_size=[2])  # type: ignore[misc]
    with pytest.raises(SchemaError, match="init=False"):

        class NoInit(TensorClass):
            x: Tensor = dataclasses.field(init=False, default=None)


def test_kw_only_marker_and_class_option() -> None:
    class Marked(TensorClass):
        x: Tensor
        _: KW_ONLY
        y: Tensor
        z: Tensor | None = None

    marked = Marked(torch.zeros(2), y=torch.ones(2), batch_size=[2])
    assert [f.name for f in Marked.fields()] == ["x", "y", "z"]
    assert [f.kw_only for f in Marked.fields()] == [False, True, True]
    with pytest.raises(TypeError):
        Marked(torch.zeros(2), torch.ones(2), batch_size=[2])  # type: ignore[misc]
    assert marked.y.eq(1).all()

    class Keywords(TensorClass, kw_only=True):
        a: Tensor
        b: Tensor

    assert all(f.kw_only for f in Keywords.fields())
    assert Keywords(b=torch.zeros(1), a=torch.ones(1), batch_size=[1]).a.eq(1).all()


def test_construction_is_unchanged_by_the_protocol() -> None:
    # __dataclass_fields__ is metadata: the generated __init__ and the storage are as before
    obs = make_obs()
    assert obs.__dict__ is obs._data
    assert "__dataclass_fields__" in vars(Obs) and "__dataclass_fields__" not in vars(TensorDict)


# -- forward references ----------------------------------------------------------------------


class Node(TensorClass):
    value: Tensor
    child: "Node" = None  # noqa: UP037  (quoted on purpose: a string of a string here)


def test_a_quoted_self_reference_is_a_nested_field() -> None:
    child = Node.__tensorclass_schema__.by_name["child"]
    assert child.kind is FieldKind.NESTED and child.nested_class is Node
    tree = Node(torch.zeros(2), child={"value": torch.ones(2)}, batch_size=[2])
    assert type(tree.child) is Node and tree.child.child is None
    assert tree[0].child.value.item() == 1.0


def _define_later() -> tuple[type, type]:
    class Outer(TensorClass):
        inner: Inner | None = None
        x: Tensor | None = None

    class Inner(TensorClass):
        y: Tensor

    return Outer, Inner


def test_a_class_defined_later_in_the_same_function_resolves() -> None:
    Outer, Inner = _define_later()
    outer = Outer(inner={"y": torch.zeros(2)}, batch_size=[2])
    assert type(outer.inner) is Inner
    assert Outer.__tensorclass_schema__.by_name["inner"].kind is FieldKind.NESTED
    # each call of the function gets its own classes
    Outer2, Inner2 = _define_later()
    assert Inner2 is not Inner
    assert type(Outer2(inner={"y": torch.zeros(1)}, batch_size=[1]).inner) is Inner2


def test_the_decorator_spelling_resolves_later_classes_too() -> None:
    @tensorclass
    class Tree:
        leaf: Leaf | None = None

    @tensorclass
    class Leaf:
        w: Tensor

    assert type(Tree(leaf={"w": torch.zeros(3)}, batch_size=[3]).leaf) is Leaf


def test_an_unknown_name_fails_at_first_use_with_a_clear_error() -> None:
    class Broken(TensorClass):
        part: Missing | None = None  # type: ignore[name-defined]  # noqa: F821

    assert Broken.__tensorclass_schema__.by_name["part"].kind is FieldKind.UNRESOLVED
    with pytest.raises(NameError, match=r"Broken\.part: name 'Missing' is not defined"):
        Broken()
    with pytest.raises(NameError):  # every time: never stored as a non-tensor value
        Broken(part={"a": torch.zeros(1)})


def test_an_invalid_annotation_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="not a valid type expression"):

        class Invalid(TensorClass):
            x: "not a type"  # noqa: F722
