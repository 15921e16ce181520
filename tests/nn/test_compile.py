"""torch.compile: tensor-class code and module forward passes trace as one graph.

Each test compiles with ``fullgraph=True`` (any graph break is an error), calls three
times with same-shaped inputs under ``error_on_recompile`` (a recompilation is an error),
and checks with dynamo's counters that one graph was built.
"""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch._dynamo
from torch import nn
from torch._dynamo.utils import counters
from torch.distributions import Normal

from tensorclass import TensorClass, TensorDict
from tensorclass.nn import (
    NormalParamExtractor,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
    set_interaction_type,
)


class Inner(TensorClass):
    c: torch.Tensor


class Point(TensorClass):
    a: torch.Tensor
    b: torch.Tensor
    inner: Inner | None = None
    out: torch.Tensor | None = None


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    yield
    torch._dynamo.reset()


def compiled_runs(fn: Callable[..., Any], *make_args: Callable[[], Any]) -> list[Any]:
    """Run ``fn`` compiled (fullgraph) three times, from a fresh dynamo; assert a single
    graph, return results."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    with torch._dynamo.config.patch(error_on_recompile=True):
        results = [compiled(*(make() for make in make_args)) for _ in range(3)]
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    assert not counters["graph_break"]
    return results


def tensors() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4, 3), torch.randn(4)


def test_build_and_read_fields() -> None:
    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        point = Point(a, b, inner=Inner(a * 2, batch_size=[4]), batch_size=[4])
        td = TensorDict({"a": a, "n": {"b": b}}, batch_size=[4])
        return point.a + point.inner.c + td["n", "b"][:, None] + td.get("a")

    a, b = tensors()
    (result, *_) = compiled_runs(fn, lambda: a, lambda: b)
    torch.testing.assert_close(result, a + a * 2 + b[:, None] + a)


def test_index_reshape_add_stack() -> None:
    def fn(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        point = Point(a, b, batch_size=[4])
        first, tail = point[0], point[1:]
        picked = point[torch.tensor([0, 2])]
        grid = point.reshape(2, 2)
        total = point + point * 2.0
        stacked = torch.stack([point, total], 0)
        joined = torch.cat([point, tail], 0)
        return first.a, tail.b, picked.a, grid.a, total.b, stacked.a, joined.b, point.unsqueeze(0).a

    a, b = tensors()
    (result, *_) = compiled_runs(fn, lambda: a, lambda: b)
    first, tail, picked, grid, total, stacked, joined, unsq = result
    assert grid.shape == (2, 2, 3) and stacked.shape == (2, 4, 3) and joined.shape == (7,)
    torch.testing.assert_close(total, b * 3)
    torch.testing.assert_close(picked, a[[0, 2]])


def test_tensor_class_arguments_and_results() -> None:
    def fn(point: Point) -> Point:
        point.out = point.a.sum(-1) + point.b
        return point.apply(lambda t: t * 2)

    results = compiled_runs(fn, lambda: Point(*tensors(), batch_size=[4]))
    assert isinstance(results[0], Point) and results[0].out is not None


def test_module_forward_passes() -> None:
    linear = TensorDictModule(nn.Linear(3, 5), ["a"], ["hidden"])
    head = TensorDictModule(nn.Linear(5, 1), ["hidden"], [("head", "y")])
    seq = TensorDictSequential(linear, head)
    (td, *_) = compiled_runs(seq, lambda: TensorDict({"a": torch.randn(4, 3)}, [4]))
    assert td["head", "y"].shape == (4, 1)


def test_typed_pipeline_and_selected_out_keys() -> None:
    encode = TensorDictModule(nn.Linear(3, 5), ["a"], ["b"])
    decode = TensorDictModule(lambda b: b.sum(-1, keepdim=True), ["b"], ["out"])
    seq = TensorDictSequential(encode, decode, schema=Point)
    (point, *_) = compiled_runs(
        seq, lambda: Point(torch.randn(4, 3), torch.randn(4), batch_size=[4])
    )
    assert isinstance(point, Point) and point.out is not None and point.b.shape == (4, 5)
    selected = TensorDictSequential(
        TensorDictModule(lambda a: a + 1, ["a"], ["h"]),
        TensorDictModule(lambda h: h * 2, ["h"], ["y"]),
        selected_out_keys=["y"],
    )
    (td, *_) = compiled_runs(selected, lambda: TensorDict({"a": torch.randn(4)}, [4]))
    assert sorted(td.keys()) == ["a", "y"]


def test_training_step_compiles() -> None:
    model = TensorDictSequential(
        TensorDictModule(nn.Linear(3, 8), ["a"], ["h"]),
        TensorDictModule(nn.Linear(8, 1), ["h"], ["y"]),
    )

    def loss_fn(a: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        td = model(TensorDict({"a": a}, batch_size=[a.shape[0]]))
        return (td["y"].squeeze(-1) - target).pow(2).mean()

    losses = compiled_runs(loss_fn, lambda: torch.randn(4, 3), lambda: torch.randn(4))
    losses[0].backward()
    assert all(p.grad is not None for p in model.parameters())


def test_the_harness_catches_recompiles() -> None:
    ranks = iter([1, 1, 2])

    def fn(td: TensorDict) -> torch.Tensor:
        return td["x"] + 1

    def make() -> TensorDict:
        return TensorDict({"x": torch.zeros((4,) * next(ranks))}, [4])

    with pytest.raises(torch._dynamo.exc.RecompileError):
        compiled_runs(fn, make)


def test_module_call_forms() -> None:
    keyword = TensorDictModule(lambda x, *, y: x - y, in_keys={"a": "x", "b": "y"}, out_keys=["z"])
    (td, *_) = compiled_runs(
        keyword, lambda: TensorDict({"a": torch.ones(4), "b": torch.ones(4) * 3}, [4])
    )
    assert td["z"].tolist() == [-2.0] * 4
    as_dict = TensorDictModule(lambda x: {("n", "a"): x, "b": x + 1}, ["x"], ["b", ("n", "a")])
    (td, *_) = compiled_runs(as_dict, lambda: TensorDict({"x": torch.zeros(4)}, [4]))
    assert td["n", "a"].shape == (4,) and td["b"].tolist() == [1.0] * 4
    linear = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"])
    (out, *_) = compiled_runs(linear, lambda: torch.randn(4, 3))
    assert isinstance(out, torch.Tensor) and out.shape == (4, 2)
    (out, *_) = compiled_runs(
        lambda td, dest: linear(td, tensordict_out=dest),
        lambda: TensorDict({"x": torch.randn(4, 3)}, [4]),
        lambda: TensorDict({}, [4]),
    )
    assert list(out.keys()) == ["y"]


def test_partial_tolerant_sequential() -> None:
    seq = TensorDictSequential(
        TensorDictModule(lambda x: x + 1, ["x"], ["y"]),
        TensorDictModule(lambda w: w + 1, ["w"], ["v"]),
        partial_tolerant=True,
    )
    (td, *_) = compiled_runs(seq, lambda: TensorDict({"x": torch.zeros(4)}, [4]))
    assert sorted(td.keys()) == ["x", "y"]


def test_functional_call_with_to_module() -> None:
    layer = nn.Linear(3, 2)
    params = TensorDict.from_module(layer).detach().clone().zero_()

    def fn(p: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with p.to_module(layer):
            return layer(x)

    (out, *_) = compiled_runs(fn, lambda: params, lambda: torch.randn(4, 3))
    assert out.eq(0).all()
    assert isinstance(layer.weight, nn.Parameter) and not layer.weight.eq(0).all()


def test_probabilistic_sequential_and_interaction_types() -> None:
    actor = ProbabilisticTensorDictSequential(
        TensorDictModule(NormalParamExtractor(), ["p"], ["loc", "scale"]),
        ProbabilisticTensorDictModule(
            ["loc", "scale"], ["a"], distribution_class=Normal, return_log_prob=True
        ),
    )
    inputs = torch.randn(4, 6)
    (td, *_) = compiled_runs(actor, lambda: TensorDict({"p": inputs}, [4]))
    torch.testing.assert_close(td["a"], inputs[:, :3])  # deterministic: the mean

    def sampled(td: TensorDict) -> TensorDict:
        with set_interaction_type("random"):
            return actor(td)

    (td, *_) = compiled_runs(sampled, lambda: TensorDict({"p": inputs}, [4]))
    assert not torch.equal(td["a"], inputs[:, :3])
    torch.testing.assert_close(td["sample_log_prob"], actor.log_prob(td))
    # the interaction type set outside a compiled call is honoured (dynamo guards on it)
    compiled = torch.compile(actor, backend="eager", fullgraph=True)
    with set_interaction_type("random"):
        drawn = compiled(TensorDict({"p": inputs}, [4]))["a"]
    assert not torch.equal(drawn, inputs[:, :3])
    with set_interaction_type("mode"):
        torch.testing.assert_close(compiled(TensorDict({"p": inputs}, [4]))["a"], inputs[:, :3])
