"""``torch.compile(fullgraph=True)`` on the common paths of tensor-class code (tensordict
0.15.3 compiles each of them without a graph break too).

Each path is compiled with ``fullgraph=True`` (a graph break is an error) on the ``eager``
backend (fast: dynamo's tracing is what is tested), run twice, and its result compared with
the uncompiled run.
"""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
import torch._dynamo
from torch import nn

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, tensorclass
from tensorclass.nn import TensorDictModule, TensorDictSequential
from tensorclass.non_tensor import LIVE_WRAPPERS


@tensorclass
class Decorated:
    x: torch.Tensor
    y: torch.Tensor


class Derived(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


def td_() -> TensorDict:
    inner = TensorDict(c=torch.randn(4, 2), batch_size=[4])
    return TensorDict(a=torch.randn(4, 3), b=torch.randn(4), n=inner, batch_size=[4])


def one_td() -> tuple[TensorDict]:
    return (td_(),)


def tc_() -> Derived:
    return Derived(x=torch.randn(4, 3), y=torch.randn(4), batch_size=[4])


def two() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4, 3), torch.randn(4)


MASK = torch.tensor([True, False, True, True])
MODULE = TensorDictModule(nn.Linear(3, 5), in_keys=["a"], out_keys=["h"])
SEQUENCE = TensorDictSequential(
    MODULE, TensorDictModule(nn.Linear(5, 2), in_keys=["h"], out_keys=["o"])
)
LINEAR = nn.Linear(3, 4)


def _setitem(td: TensorDict) -> TensorDict:
    td["z"] = td["a"] * 2
    return td


def _setattr(tc: Derived) -> Derived:
    tc.y = tc.y * 2
    return tc


def _with_params(x: torch.Tensor, params: TensorDict) -> torch.Tensor:
    with params.to_module(LINEAR):
        out: torch.Tensor = LINEAR(x)
    return out


PATHS: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]] = {
    "construct a TensorDict": (lambda x, y: TensorDict(a=x, b={"c": y}, batch_size=[4]), two),
    "construct a @tensorclass": (lambda x, y: Decorated(x=x, y=y, batch_size=[4]), two),
    "construct a TensorClass": (lambda x, y: Derived(x=x, y=y, batch_size=[4]), two),
    "construct with a string": (lambda x, y: TensorDict(a=x, s="hi", batch_size=[4]), two),
    "get and __getitem__": (lambda td: td.get("a") + td["n", "c"].sum(-1, keepdim=True), one_td),
    "set and __setitem__": (lambda td: _setitem(td.set(("n", "d"), td["b"])), one_td),
    "set_ and update": (lambda td: td.set_("a", td["a"] * 2).update({"z": td["b"]}), one_td),
    "fields": (lambda tc: (tc.x + tc.y.unsqueeze(-1), _setattr(tc)), lambda: (tc_(),)),
    "values of every level": (lambda td: sum(v.sum() for v in td.values(True, True)), one_td),
    "keys": (lambda td: {k: td[k] for k in td.keys()}, one_td),
    "index": (lambda td: (td[0], td[1:3], td[MASK], td[torch.tensor([0, 2])]), one_td),
    "apply and arithmetic": (lambda td: td.apply(lambda x: x * 2) + td * 3, one_td),
    "arithmetic of a tensor class": (lambda tc: tc * 2 + tc, lambda: (tc_(),)),
    "to": (lambda td: td.to(torch.float64).to("cpu"), one_td),
    "stack and cat": (lambda td: (torch.stack([td, td], 0), torch.cat([td, td], 0)), one_td),
    "lazy stack": (lambda td: LazyStackedTensorDict.lazy_stack([td, td], 0), one_td),
    "shape ops": (lambda td: td.reshape(2, 2).unsqueeze(0).transpose(0, 1), one_td),
    "TensorDictModule": (lambda td: MODULE(td), one_td),
    "TensorDictSequential": (lambda td: SEQUENCE(td), one_td),
    "to_module": (_with_params, lambda: (torch.randn(2, 3), TensorDict.from_module(LINEAR))),
    "vmap": (lambda td: torch.vmap(lambda t: t["a"].sum() + t["b"])(td), one_td),
}


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _same(a: Any, b: Any) -> None:
    if isinstance(a, torch.Tensor):
        torch.testing.assert_close(a, b)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    elif hasattr(a, "batch_size"):
        assert type(a) is type(b) and a.batch_size == b.batch_size
        _same(a.to_dict(), b.to_dict())
    else:
        assert a == b


@pytest.mark.parametrize("name", list(PATHS))
def test_compiles_without_a_graph_break(name: str) -> None:
    fn, make = PATHS[name]
    compiled = torch.compile(fn, backend="eager", fullgraph=True)
    for _ in range(2):
        torch.manual_seed(0)
        expected = fn(*make())
        torch.manual_seed(0)
        _same(compiled(*make()), expected)


def test_non_tensor_values_made_in_a_graph_are_unwrapped_afterwards() -> None:
    before = len(LIVE_WRAPPERS)
    compiled = torch.compile(
        lambda x: TensorDict(a=x, s="hi", batch_size=[4]), backend="eager", fullgraph=True
    )
    out = compiled(torch.zeros(4))
    out = compiled(torch.zeros(4))
    assert len(LIVE_WRAPPERS) == before + 1  # the one alive, counted once
    assert dict(out.items())["s"] == "hi"
    del out
    assert len(LIVE_WRAPPERS) == before
