"""tensordict 0.15.3's keywords of the nn modules, with their meaning here."""

from __future__ import annotations

import threading
import warnings
from typing import Any, ClassVar

import pytest
import torch
from torch import nn
from torch.distributions import Distribution, Normal

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.errors import KeyNotFoundError
from tensorclass.nn import (
    InteractionType,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
    interaction_type,
    set_interaction_type,
)


class Obs(TensorClass):
    x: torch.Tensor
    y: torch.Tensor | None = None
    z: torch.Tensor | None = None
    h: torch.Tensor | None = None


def inputs() -> TensorDict:
    return TensorDict({"x": torch.arange(3.0), "y": torch.ones(3)}, [3])


def three_kinds() -> list[Any]:
    return [
        inputs(),
        Obs(torch.arange(3.0), torch.ones(3), batch_size=[3]),
        lazy_stack(list(inputs().unbind(0))),
    ]


# -- TensorDictModule -----------------------------------------------------------------------


@pytest.mark.parametrize("data", three_kinds(), ids=["tensordict", "typed", "lazy_stack"])
def test_out_to_in_map(data: Any) -> None:
    def f(first: torch.Tensor, *, second: torch.Tensor) -> torch.Tensor:
        return first - 10 * second

    reads = TensorDictModule(
        f, in_keys={"first": "x", "second": "y"}, out_keys=["z"], out_to_in_map=True
    )
    assert reads.in_keys == ["x", "y"]
    assert torch.equal(reads(data)["z"], torch.arange(3.0) - 10)
    same = TensorDictModule(
        f, in_keys={"x": "first", "y": "second"}, out_keys=["z"], out_to_in_map=False
    )
    default = TensorDictModule(f, in_keys={"x": "first", "y": "second"}, out_keys=["z"])
    assert torch.equal(same(data)["z"], default(data)["z"])
    with pytest.warns(UserWarning, match="dict in_keys"):
        TensorDictModule(f, in_keys=["x"], out_keys=["z"], out_to_in_map=True)


def test_method_and_method_kwargs() -> None:
    class Coder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(3, 2)

        def encode(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
            return self.linear(x) * scale

    coder = Coder()
    module = TensorDictModule(
        coder, in_keys=["x"], out_keys=["code"], method="encode", method_kwargs={"scale": 2.0}
    )
    data = TensorDict(x=torch.ones(4, 3), batch_size=[4])
    torch.testing.assert_close(module(data)["code"], coder.linear(torch.ones(4, 3)) * 2)
    assert {n for n, _ in module.named_parameters()} == {
        "module.linear.weight",
        "module.linear.bias",
    }
    scaled = TensorDictModule(
        lambda x, *, k: x * k, in_keys=["x"], out_keys=["y"], method_kwargs={"k": 3}
    )
    assert torch.equal(scaled(data)["y"], torch.full((4, 3), 3.0))
    with pytest.raises(AttributeError, match="no method 'decode'"):
        TensorDictModule(coder, in_keys=["x"], out_keys=["y"], method="decode")


@pytest.mark.parametrize("data", three_kinds()[:2], ids=["tensordict", "typed"])
def test_strict(data: Any) -> None:
    def optional(x: torch.Tensor, w: torch.Tensor | None) -> torch.Tensor:
        return x if w is None else x * w

    loose = TensorDictModule(optional, in_keys=["x", "w"], out_keys=["z"], strict=False)
    assert torch.equal(loose(data)["z"], torch.arange(3.0))
    with pytest.raises(KeyNotFoundError, match="reads 'w'"):
        TensorDictModule(optional, in_keys=["x", "w"], out_keys=["z"])(data)  # strict by default
    failing = TensorDictModule(lambda x, w: x * w, in_keys=["x", "w"], out_keys=["z"], strict=False)
    with pytest.raises(TypeError) as info:
        failing(data)
    assert "passed None for the missing input(s) ['w']" in str(info.value) + "".join(
        getattr(info.value, "__notes__", [])
    )


def test_get_kwargs() -> None:
    module = TensorDictModule(
        lambda w: w + 1, in_keys=["w"], out_keys=["z"], get_kwargs={"default": torch.zeros(3)}
    )
    assert torch.equal(module(inputs())["z"], torch.ones(3))
    held = inputs().set("w", torch.full((3,), 5.0))
    assert torch.equal(module(held)["z"], torch.full((3,), 6.0))


def test_inplace_empty() -> None:
    data = inputs()
    module = TensorDictModule(lambda x: x * 2, in_keys=["x"], out_keys=["z"], inplace="empty")
    out = module(data)
    assert out is not data and list(out.keys()) == ["z"] and out.batch_size == (3,)
    assert "z" not in data
    with pytest.raises(ValueError, match="inplace must be"):
        TensorDictModule(lambda x: x, in_keys=["x"], out_keys=["z"], inplace="copy")  # type: ignore[arg-type]


# -- sequentials ----------------------------------------------------------------------------


def chain(**kwargs: Any) -> TensorDictSequential:
    return TensorDictSequential(
        TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["h"]),
        TensorDictModule(lambda h: h * 2, in_keys=["h"], out_keys=["z"]),
        **kwargs,
    )


@pytest.mark.parametrize("data", three_kinds(), ids=["tensordict", "typed", "lazy_stack"])
def test_sequential_inplace(data: Any) -> None:
    expected = (torch.arange(3.0) + 1) * 2
    kept = set(data.keys())
    for mode in (False, "empty"):
        out = chain(inplace=mode)(data)
        assert out is not data and set(out.keys()) == {"h", "z"} and type(out) is type(data.empty())
        assert torch.equal(out["z"], expected) and set(data.keys()) == kept
    assert chain(inplace=True)(data) is data and torch.equal(data["z"], expected)
    with pytest.raises(ValueError, match="inplace must be"):
        chain(inplace="copy")


def test_sequential_inplace_true_gathers_outputs_of_modules_writing_elsewhere() -> None:
    data = inputs()
    seq = TensorDictSequential(
        TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["h"], inplace=False),
        TensorDictModule(lambda h: h * 2, in_keys=["h"], out_keys=["z"]),
        inplace=True,
    )
    assert seq(data) is data and torch.equal(data["z"], (torch.arange(3.0) + 1) * 2)
    assert seq[1:].inplace is True  # kept by sub-chains


# -- probabilistic --------------------------------------------------------------------------


def normal(**kwargs: Any) -> ProbabilisticTensorDictModule:
    return ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["action"], distribution_class=Normal, **kwargs
    )


def params() -> TensorDict:
    return TensorDict({"loc": torch.arange(3.0), "scale": torch.ones(3)}, [3])


def test_log_prob_keys() -> None:
    module = normal(return_log_prob=True, log_prob_keys=["lp"])
    assert module.log_prob_keys == ["lp"] and module.log_prob_key == "lp"
    out = module(params())
    torch.testing.assert_close(out["lp"], Normal(torch.arange(3.0), 1.0).log_prob(out["action"]))
    with pytest.raises(Exception, match="one key per sampled key"):
        normal(log_prob_keys=["a", "b"])
    with pytest.raises(Exception, match="disagree"):
        normal(log_prob_keys=["a"], log_prob_key="b")


def test_num_samples() -> None:
    data = params()
    with set_interaction_type("random"):
        out = normal(num_samples=4, return_log_prob=True)(data)
    assert out is not data and out.batch_size == (4, 3) and "action" not in data
    assert out["action"].shape == (4, 3) and not torch.equal(out["action"][0], out["action"][1])
    torch.testing.assert_close(
        out["sample_log_prob"], Normal(out["loc"], out["scale"]).log_prob(out["action"])
    )
    repeated = normal(num_samples=(2, 2))(params())  # deterministic: the mean, repeated
    assert repeated.batch_size == (2, 2, 3) and torch.equal(
        repeated["action"], torch.arange(3.0).expand(2, 2, 3)
    )


def test_generator_int_generator_and_key() -> None:
    with set_interaction_type("random"):
        state = torch.get_rng_state()
        seeded = normal(generator=0)
        first, second = seeded(params())["action"], seeded(params())["action"]
        assert torch.equal(state, torch.get_rng_state())  # the global generator is untouched
        assert torch.equal(
            first, torch.arange(3.0) + torch.randn(3, generator=torch.Generator().manual_seed(0))
        )
        assert not torch.equal(first, second)  # the generator advances
        assert torch.equal(
            normal(generator=torch.Generator().manual_seed(0))(params())["action"], first
        )
        keyed = normal(generator="seed")
        data = params().set("seed", torch.full((3,), 0))
        assert torch.equal(keyed(data)["action"], first)
        assert not torch.equal(data["seed"], torch.zeros(3, dtype=torch.long))  # a new seed
        holding = params()
        holding["gen"] = torch.Generator().manual_seed(0)  # a generator held as a non-tensor
        assert torch.equal(normal(generator="gen")(holding)["action"], first)
        assert normal(generator="missing")(params())["action"].shape == (3,)  # global generator
    with pytest.raises(TypeError, match="generator must be"):
        normal(generator=1.5)


_NO_SHAPE = torch.Size()


class NoMean(Distribution):
    arg_constraints: ClassVar[dict[str, Any]] = {}

    def __init__(self, value: torch.Tensor) -> None:
        super().__init__(validate_args=False)
        self.value = value

    def sample(self, sample_shape: torch.Size = _NO_SHAPE) -> torch.Tensor:
        return self.value + torch.randint(0, 2, (*sample_shape, *self.value.shape)).float()


def test_n_empirical_estimate_and_cache_dist() -> None:
    module = ProbabilisticTensorDictModule(
        in_keys=["value"], out_keys=["mean"], distribution_class=NoMean, n_empirical_estimate=4000
    )
    with set_interaction_type("mean"):
        estimate = module(TensorDict(value=torch.zeros(2), batch_size=[2]))["mean"]
    assert ((estimate - 0.5).abs() < 0.1).all()
    with pytest.raises(ValueError, match="n_empirical_estimate"):
        normal(n_empirical_estimate=0)
    with pytest.warns(FutureWarning, match="cache_dist"):
        normal(cache_dist=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        normal(cache_dist=False)


def policy(**kwargs: Any) -> ProbabilisticTensorDictSequential:
    return ProbabilisticTensorDictSequential(
        TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["loc"]),
        ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"], out_keys=["action"], distribution_class=Normal
        ),
        **kwargs,
    )


def test_probabilistic_sequential_keywords() -> None:
    data = TensorDict({"x": torch.zeros(2), "scale": torch.ones(2)}, [2])
    out = policy(inplace=False)(data)
    assert set(out.keys()) == {"loc", "action"} and set(data.keys()) == {"x", "scale"}
    assert policy(return_composite=False).return_composite is False
    assert policy(return_composite=True).return_composite is True
    written = TensorDict(batch_size=[2])
    dist = policy().get_dist(data, written)
    assert torch.equal(dist.loc, torch.ones(2)) and list(written.keys()) == ["loc"]
    assert "loc" not in data
    value = data.clone().set("action", torch.zeros(2))
    given = Normal(torch.zeros(2), 2.0)
    torch.testing.assert_close(policy().log_prob(value, dist=given), given.log_prob(torch.zeros(2)))
    untouched = value.clone()
    torch.testing.assert_close(
        policy().log_prob(untouched, TensorDict()),
        Normal(torch.ones(2), 1.0).log_prob(torch.zeros(2)),
    )
    assert "loc" not in untouched
    single = normal()
    wide = Normal(torch.zeros(3), 2.0)
    torch.testing.assert_close(
        single.log_prob(params().set("action", torch.zeros(3)), dist=wide),
        wide.log_prob(torch.zeros(3)),
    )


# -- set_interaction_type(thread_local=) ----------------------------------------------------


def _seen_by_another_thread() -> InteractionType | None:
    seen: list[InteractionType | None] = []
    thread = threading.Thread(target=lambda: seen.append(interaction_type()))
    thread.start()
    thread.join()
    return seen[0]


def test_thread_local() -> None:
    with set_interaction_type("mode"):  # thread-local by default
        assert interaction_type() is InteractionType.MODE
        assert _seen_by_another_thread() is None
    with set_interaction_type("random", thread_local=False):
        assert interaction_type() is InteractionType.RANDOM
        assert _seen_by_another_thread() is InteractionType.RANDOM
        with set_interaction_type("mode", thread_local=True):
            assert interaction_type() is InteractionType.MODE
            assert _seen_by_another_thread() is InteractionType.RANDOM
            with set_interaction_type("mean", thread_local=False):  # stays in this thread
                assert interaction_type() is InteractionType.MEAN
                assert _seen_by_another_thread() is InteractionType.RANDOM
        assert interaction_type() is InteractionType.RANDOM
    assert interaction_type() is None and _seen_by_another_thread() is None
