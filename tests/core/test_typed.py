"""The typed layer: both spellings, fields, defaults, nesting, non-tensor fields, frozen."""

import pickle
from typing import ClassVar

import pytest
import torch

from tensorclass import (
    FieldTypeError,
    FrozenInstanceError,
    KeyNotFoundError,
    SchemaError,
    TensorClass,
    TensorDict,
    field,
    is_tensorclass,
    tensorclass,
)


class Obs(TensorClass):
    pixels: torch.Tensor
    name: str = "obs"
    extra: torch.Tensor | None = None


class Step(TensorClass):
    obs: Obs
    reward: torch.Tensor
    info: TensorDict | None = None
    tags: list = field(default_factory=list)
    version: ClassVar[int] = 3

    @property
    def total(self) -> torch.Tensor:
        return self.reward.sum()

    def doubled(self) -> "Step":
        return self.apply(lambda t: t * 2)


@tensorclass
class Pair:
    left: torch.Tensor
    right: torch.Tensor

    def swap(self) -> "Pair":
        return Pair(self.right, self.left, batch_size=self.batch_size)


def make_step(n: int = 4) -> Step:
    return Step(
        obs=Obs(torch.zeros(n, 3), batch_size=[n]), reward=torch.arange(n).float(), batch_size=[n]
    )


def test_both_spellings_are_the_same_kind_of_class() -> None:
    assert issubclass(Pair, TensorClass) and issubclass(Step, TensorClass)
    assert type(Pair) is type(Step)
    assert is_tensorclass(Pair) and is_tensorclass(make_step())
    assert not is_tensorclass(TensorDict({}))
    # the decorator on a TensorClass subclass changes nothing
    assert tensorclass(Step) is Step


def test_positional_keyword_and_defaults() -> None:
    obs = Obs(torch.zeros(2, 3), batch_size=[2])
    assert obs.name == "obs" and obs.extra is None
    obs = Obs(pixels=torch.zeros(2, 3), name="cam", extra=torch.ones(2), batch_size=[2])
    assert obs.name == "cam" and obs.extra.shape == (2,)
    assert list(obs.keys()) == ["pixels", "name", "extra"]
    with pytest.raises(TypeError):
        Obs()  # missing required field
    with pytest.raises(TypeError):
        Obs(torch.zeros(2), nope=1)  # unknown field


def test_default_factory_gives_fresh_values() -> None:
    a, b = make_step(), make_step()
    assert a.tags == [] and a.tags is not b.tags


def test_classvar_is_not_a_field() -> None:
    assert "version" not in Step.__tensorclass_schema__.by_name
    assert Step.version == 3


def test_post_init_methods_and_properties() -> None:
    class Scaled(TensorClass):
        x: torch.Tensor

        def __post_init__(self) -> None:
            self.x = self.x * 10

    assert torch.equal(Scaled(torch.ones(2), batch_size=[2]).x, torch.full((2,), 10.0))
    step = make_step()
    assert step.total == 6.0
    assert torch.equal(step.doubled().reward, step.reward * 2)
    assert isinstance(step.doubled(), Step)


def test_decorator_methods_and_zero_argument_super() -> None:
    @tensorclass
    class Base:
        x: torch.Tensor

        def describe(self) -> str:
            return "base"

    @tensorclass
    class Child(Base):
        y: torch.Tensor

        def describe(self) -> str:
            return "child of " + super().describe()

    child = Child(torch.zeros(2), torch.ones(2), batch_size=[2])
    assert child.describe() == "child of base"
    assert Child.__tensorclass_schema__.names == ("x", "y")
    pair = Pair(torch.zeros(2), torch.ones(2), batch_size=[2])
    assert torch.equal(pair.swap().left, torch.ones(2))


def test_inheritance_adds_fields() -> None:
    class Base(TensorClass):
        a: torch.Tensor

    class Child(Base):
        b: torch.Tensor

    child = Child(torch.zeros(3), torch.ones(3), batch_size=[3])
    assert Child.__tensorclass_schema__.names == ("a", "b")
    assert isinstance(child[0], Child)


def test_nested_classes_and_mappings() -> None:
    step = Step(obs={"pixels": torch.zeros(4, 3)}, reward=torch.zeros(4), batch_size=[4])
    assert isinstance(step.obs, Obs) and step.obs.batch_size == (4,)
    step.info = {"lr": torch.ones(4)}
    assert isinstance(step.info, TensorDict) and step.info.batch_size == (4,)
    assert step["obs", "pixels"].shape == (4, 3)
    assert step["obs"]["name"] == "obs"


def test_non_tensor_fields_follow_indexing_and_stacking() -> None:
    a = make_step()
    b = make_step()
    b.obs.name = "other"
    assert a[1:3].obs.name == "obs"
    stacked = torch.stack([a, b])
    assert stacked.obs.name == [["obs"] * 4, ["other"] * 4]
    assert stacked[1].obs.name == ["other"] * 4  # several elements: a list
    assert stacked[1, 2].obs.name == "other"  # one element: its value
    same = torch.stack([a, make_step()])
    assert same.obs.name == [["obs"] * 4] * 2  # equal values make a stack too


def test_getitem_by_field_name_and_every_op_keeps_class() -> None:
    step = make_step()
    assert step["reward"] is step.reward
    ops = [
        step[0],
        step[1:],
        step[torch.tensor([0, 2])],
        step.reshape(2, 2),
        step.unsqueeze(0),
        step.clone(),
        step.to(torch.float64),
        step.apply(lambda t: t + 1),
        step + 1,
        torch.stack([step, step]),
        torch.cat([step, step]),
        step.expand(2, 4),
        step.detach(),
        step.contiguous(),
        step.select("reward"),
        step.exclude("obs"),
    ]
    for result in ops:
        assert isinstance(result, Step), type(result)
    assert all(isinstance(x, Step) for x in step.unbind(0))
    assert all(isinstance(x, Step) for x in step.split(2))


def test_absent_optional_fields_read_as_none() -> None:
    step = make_step()
    assert step.info is None
    excluded = step.exclude("reward")
    assert excluded.reward is None and "reward" not in excluded
    step.reward = None
    assert "reward" not in step.keys()


def test_field_writes_are_checked() -> None:
    step = make_step()
    with pytest.raises(ValueError, match="reward"):
        step.reward = torch.zeros(5)
    with pytest.raises(FieldTypeError, match="reward"):
        step.reward = "not a tensor"
    with pytest.raises(AttributeError, match="no field 'rewrd'"):
        step.rewrd = torch.zeros(4)
    with pytest.raises(KeyNotFoundError, match="'reward', 'info'"):
        step.set("rewrd", torch.zeros(4))
    with pytest.raises(
        ValueError, match=r"shape \[\], which does not start with the batch size \[4\]"
    ):
        step.reward = 3  # a number becomes a 0-d tensor, which lacks the batch dim
    assert step.reward.shape == (4,)  # unchanged after the failed writes


def test_numbers_and_lists_become_tensors_for_tensor_fields() -> None:
    pair = Pair([1.0, 2.0], 3, batch_size=[])
    assert torch.equal(pair.left, torch.tensor([1.0, 2.0]))
    assert pair.right.dtype == torch.int64


def test_reserved_names_rejected_at_definition() -> None:
    for name in ("batch_size", "device", "shape", "reshape", "keys", "names"):
        with pytest.raises(SchemaError, match=name):
            type(TensorClass)("Bad", (TensorClass,), {"__annotations__": {name: torch.Tensor}})


def test_field_order_rules() -> None:
    with pytest.raises(SchemaError, match="follows"):

        class Bad(TensorClass):
            a: torch.Tensor | None = None
            b: torch.Tensor

    class KwOnly(TensorClass):
        a: torch.Tensor | None = None
        b: torch.Tensor = field(kw_only=True)

    assert KwOnly(b=torch.zeros(())).b.shape == ()


def test_mutable_default_rejected() -> None:
    with pytest.raises(SchemaError, match="default_factory"):

        class Bad(TensorClass):
            a: torch.Tensor = torch.zeros(3)


def test_frozen_classes() -> None:
    @tensorclass(frozen=True)
    class Frozen:
        x: torch.Tensor

    frozen = Frozen(torch.zeros(3), batch_size=[3])
    with pytest.raises(FrozenInstanceError):
        frozen.x = torch.ones(3)
    with pytest.raises(RuntimeError):
        frozen.set("x", torch.ones(3))
    frozen.set_("x", torch.ones(3))  # in-place writes still work
    assert (frozen.x == 1).all()
    assert frozen[0].is_locked  # results of operations stay frozen
    with pytest.raises(FrozenInstanceError):
        frozen.unlock_()

    class AlsoFrozen(TensorClass, frozen=True):
        x: torch.Tensor

    with pytest.raises(FrozenInstanceError):
        AlsoFrozen(torch.zeros(1)).x = torch.zeros(1)


def test_forward_reference_to_own_class() -> None:
    class Node(TensorClass):
        value: torch.Tensor
        child: "Node | None" = None

    tree = Node(torch.zeros(2), Node(torch.ones(2), batch_size=[2]), batch_size=[2])
    assert isinstance(tree.child, Node)
    assert torch.equal(tree[1].child.value, torch.tensor(1.0))


def test_batch_device_and_names_keyword_only() -> None:
    pair = Pair(torch.zeros(2, 3), torch.zeros(2, 3), batch_size=[2, 3], names=["b", "t"])
    assert pair.names == ["b", "t"]
    assert pair[0].names == ["t"]
    on_meta = Pair(torch.zeros(2), torch.zeros(2), batch_size=[2], device="meta")
    assert on_meta.left.device.type == "meta" and on_meta.device == torch.device("meta")


def test_repr_is_compact() -> None:
    step = make_step()
    text = repr(step)
    # tensordict's layout: entries sorted, absent fields last as None, 80 columns a line
    assert text == (
        "Step(batch_size=[4], fields={\n"
        "    obs: Obs{name: str, pixels: f32[3], extra: None},\n"
        "    reward: f32[],\n"
        "    tags: list,\n"
        "    info: None})"
    )
    assert repr(Pair(torch.zeros(2), torch.zeros(2), batch_size=[2])) == (
        "Pair(batch_size=[2], fields={left: f32[], right: f32[]})"
    )


def test_pickle_round_trip() -> None:
    step = make_step()
    back = pickle.loads(pickle.dumps(step))
    assert isinstance(back, Step) and torch.equal(back.reward, step.reward)
    assert back.obs.name == "obs"
    back.reward = torch.ones(4)  # storage and attribute dict are still one object
    assert torch.equal(back["reward"], torch.ones(4))


def test_to_tensordict_shares_leaves() -> None:
    step = make_step()
    td = step.to_tensordict()
    assert isinstance(td, TensorDict) and td["reward"] is step.reward


def test_none_unsets_an_optional_field_through_every_write() -> None:
    step = make_step()
    step.info = {"lr": torch.ones(4)}
    step.update({"info": None, "reward": torch.ones(4)})
    assert step.info is None and "info" not in step and (step.reward == 1).all()
    step["info"] = {"lr": torch.ones(4)}
    step.set("info", None)
    assert "info" not in step
    with pytest.raises(KeyNotFoundError, match="Step has no field 'inf'"):
        step.update({"inf": None})
    td = TensorDict({"n": torch.zeros(4)}, [4])
    td.update({"n": None})  # a TensorDict stores None as a value
    assert "n" in td and td["n"] is None
