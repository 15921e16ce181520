"""torch.compile: tensor-class code and module forward passes trace as one graph.

Each test compiles with ``fullgraph=True`` (any graph break is an error), calls three
times with same-shaped inputs, and checks with dynamo's counters that one graph was
built (no recompilation).
"""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch._dynamo
from torch import nn
from torch._dynamo.utils import counters

from tensorclass import TensorClass, TensorDict
from tensorclass.nn import TensorDictModule, TensorDictSequential


class Inner(TensorClass):
    c: torch.Tensor


class Point(TensorClass):
    a: torch.Tensor
    b: torch.Tensor
    inner: Inner | None = None
    out: torch.Tensor | None = None


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def compiled_runs(fn: Callable[..., Any], *make_args: Callable[[], Any]) -> list[Any]:
    """Run ``fn`` compiled (fullgraph) three times; assert a single graph, return results."""
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    results = [compiled(*(make() for make in make_args)) for _ in range(3)]
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    assert not counters["graph_break"]
    assert not counters["recompiles"]
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
    torch._dynamo.reset()
    counters.clear()
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
