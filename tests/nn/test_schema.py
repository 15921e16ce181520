"""Typed pipelines: modules and sequentials checked against a tensor class (schema=)."""

import pytest
import torch
from torch import nn

from tensorclass import KeyNotFoundError, SchemaError, TensorClass, TensorDict
from tensorclass.nn import (
    ProbabilisticTensorDictModule,
    TensorDictModule,
    TensorDictSequential,
)


class Inner(TensorClass):
    a: torch.Tensor
    b: torch.Tensor | None = None


class Obs(TensorClass):
    x: torch.Tensor
    inner: Inner
    hidden: torch.Tensor | None = None
    y: torch.Tensor | None = None
    extra: TensorDict | None = None


def make_obs() -> Obs:
    return Obs(torch.ones(4, 3), Inner(torch.ones(4, 2), batch_size=[4]), batch_size=[4])


def test_module_keys_must_be_fields() -> None:
    module = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"], schema=Obs)
    assert module.schema is Obs
    obs = module(make_obs())
    assert isinstance(obs, Obs) and obs.y is not None and obs.y.shape == (4, 2)
    with pytest.raises(KeyNotFoundError) as info:
        TensorDictModule(nn.Linear(3, 2), ["z"], ["y"], schema=Obs)
    message = str(info.value)
    assert "in key 'z' is not a field of Obs" in message
    assert "'x', 'inner', ('inner', 'a'), ('inner', 'b'), 'hidden', 'y', 'extra'" in message
    with pytest.raises(KeyError, match=r"out key \('inner', 'c'\)"):
        TensorDictModule(lambda a: a, [("inner", "a")], [("inner", "c")], schema=Obs)
    with pytest.raises(KeyError, match=r"\('x', 'q'\)"):
        TensorDictModule(lambda a: a, [("x", "q")], ["y"], schema=Obs)


def test_nested_and_dynamic_fields() -> None:
    module = TensorDictModule(
        lambda a: (a * 2, a.sum(-1)),
        [("inner", "a")],
        [("inner", "b"), ("extra", "anything")],
        schema=Obs,
    )
    obs = module(make_obs())
    assert obs.inner.b is not None and obs.inner.b.shape == (4, 2)
    assert isinstance(obs.extra, TensorDict) and obs.extra["anything"].shape == (4,)


def test_calling_with_another_class_is_an_error() -> None:
    module = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"], schema=Obs)
    with pytest.raises(SchemaError, match=r"schema=Obs\) was called with a TensorDict"):
        module(TensorDict({"x": torch.ones(4, 3)}, [4]))
    # calls with tensors build their own container and are fine
    assert module(torch.ones(3)).shape == (2,)


def test_schema_must_be_a_tensor_class() -> None:
    with pytest.raises(SchemaError, match="must be a tensor class"):
        TensorDictModule(lambda x: x, ["x"], ["y"], schema=dict)  # type: ignore[arg-type]


def test_sequential_checks_that_inputs_are_available() -> None:
    encode = TensorDictModule(nn.Linear(3, 5), ["x"], ["hidden"])
    decode = TensorDictModule(nn.Linear(5, 2), ["hidden"], ["y"])
    seq = TensorDictSequential(encode, decode, schema=Obs)
    obs = seq(make_obs())
    assert isinstance(obs, Obs) and obs.y is not None and obs.y.shape == (4, 2)
    with pytest.raises(KeyNotFoundError) as info:
        TensorDictSequential(decode, encode, schema=Obs)
    message = str(info.value)
    assert "module 0 reads 'hidden'" in message and "defaults to None" in message
    # a field the caller must provide, and nested ones, are available
    TensorDictSequential(TensorDictModule(lambda a: a, [("inner", "a")], ["y"]), schema=Obs)
    with pytest.raises(KeyError, match=r"reads \('inner', 'b'\)"):
        TensorDictSequential(TensorDictModule(lambda b: b, [("inner", "b")], ["y"]), schema=Obs)
    # partial_tolerant sequentials skip modules whose inputs are absent: no availability check
    TensorDictSequential(decode, partial_tolerant=True, schema=Obs)


def test_sequential_checks_every_key_of_nested_modules() -> None:
    inner = TensorDictSequential(
        TensorDictModule(lambda x: x, ["x"], ["scratch"]),
        TensorDictModule(lambda s: s, ["scratch"], ["y"]),
        selected_out_keys=["y"],
    )
    with pytest.raises(KeyError, match="module 0 writes the key 'scratch'"):
        TensorDictSequential(inner, schema=Obs)


def test_sequential_modules_share_the_schema() -> None:
    class Other(TensorClass):
        x: torch.Tensor
        y: torch.Tensor | None = None

    module = TensorDictModule(lambda x: x, ["x"], ["y"], schema=Other)
    with pytest.raises(SchemaError, match="module 0 has schema=Other"):
        TensorDictSequential(module, schema=Obs)
    same = TensorDictModule(lambda x: x, ["x"], ["y"], schema=Obs)
    seq = TensorDictSequential(same, schema=Obs)
    with pytest.raises(SchemaError):
        seq(Other(torch.zeros(2), batch_size=[2]))


def test_probabilistic_module_with_schema() -> None:
    class Policy(TensorClass):
        loc: torch.Tensor
        scale: torch.Tensor
        action: torch.Tensor | None = None

    module = ProbabilisticTensorDictModule(
        ["loc", "scale"],
        ["action"],
        distribution_class=torch.distributions.Normal,
        schema=Policy,
    )
    policy = module(Policy(torch.zeros(3), torch.ones(3), batch_size=[3]))
    assert policy.action is not None and policy.action.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(KeyError, match="out key 'sample_log_prob' is not a field of Policy"):
        ProbabilisticTensorDictModule(
            ["loc", "scale"],
            ["action"],
            distribution_class=torch.distributions.Normal,
            return_log_prob=True,
            schema=Policy,
        )


def test_select_subsequence_keeps_the_schema() -> None:
    encode = TensorDictModule(nn.Linear(3, 5), ["x"], ["hidden"])
    decode = TensorDictModule(nn.Linear(5, 2), ["hidden"], ["y"])
    seq = TensorDictSequential(encode, decode, schema=Obs)
    sub = seq.select_subsequence(in_keys=["hidden"])
    assert len(sub) == 1 and sub.schema is Obs
    obs = make_obs()
    obs.hidden = torch.zeros(4, 5)
    assert sub(obs).y is not None


def test_tensordict_out_of_another_class_is_an_error() -> None:
    module = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"], schema=Obs)
    out = make_obs()
    assert module(make_obs(), tensordict_out=out) is out and out.y is not None
    target = TensorDict({}, [4])
    with pytest.raises(SchemaError, match="called with a TensorDict as tensordict_out"):
        module(make_obs(), tensordict_out=target)
    assert "y" not in target


def test_dynamic_schemas_accept_any_key_and_take_it_to_be_available() -> None:
    seq = TensorDictSequential(TensorDictModule(lambda x: x + 1, ["x"], ["y"]), schema=TensorDict)
    assert seq(TensorDict({"x": torch.ones(2)}, [2]))["y"].tolist() == [2.0, 2.0]
    with pytest.raises(SchemaError):
        seq(make_obs())

    class Holder(TensorClass):
        x: torch.Tensor
        bag: TensorDict

    TensorDictSequential(TensorDictModule(lambda a: a, [("bag", "anything")], ["x"]), schema=Holder)
    with pytest.raises(KeyError, match="'nothing' is not a field of Holder"):
        TensorDictSequential(TensorDictModule(lambda a: a, ["nothing"], ["x"]), schema=Holder)
