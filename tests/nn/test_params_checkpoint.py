"""``TensorDictParams`` in a module's checkpoint: ``state_dict`` / ``load_state_dict``."""

import io
from typing import Any

import pytest
import torch
from torch import nn

from tensorclass import TensorClass, TensorDict
from tensorclass.nn import TensorDictParams


class Inner(TensorClass):
    b: torch.Tensor


class Typed(TensorClass):
    w: torch.Tensor
    count: torch.Tensor
    inner: Inner


def make_td(kind: str, seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    w, b = torch.randn(2, 3, generator=g), torch.randn(2, 4, generator=g)
    count = torch.randint(0, 9, (2,), generator=g)
    if kind == "tensordict":
        return TensorDict({"w": w, "count": count, "inner": {"b": b}}, [2])
    return Typed(w=w, count=count, inner=Inner(b=b, batch_size=[2]), batch_size=[2])


class Net(nn.Module):
    def __init__(self, kind: str, seed: int) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.params = TensorDictParams(make_td(kind, seed))
        self.lin = nn.Linear(3, 1)


KINDS = ["tensordict", "typed"]
KEYS = ["params.w", "params.count", "params.inner.b", "lin.weight", "lin.bias"]


def _saved(state: Any) -> Any:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer)  # weights_only is the default


@pytest.mark.parametrize("kind", KINDS)
def test_state_dict_names_parameters_and_buffers(kind: str) -> None:
    net = Net(kind, 0)
    state = net.state_dict()
    assert sorted(state) == sorted(KEYS)
    assert torch.equal(state["params.inner.b"], net.params["inner", "b"])
    assert state["params.count"].dtype == torch.int64  # integers are buffers, saved too
    assert "params.count" in dict(net.named_buffers())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("assign", [False, True])
def test_torch_save_load_round_trip(kind: str, assign: bool) -> None:
    source, target = Net(kind, 0), Net(kind, 1)
    result = target.load_state_dict(_saved(source.state_dict()), assign=assign)
    assert not result.missing_keys and not result.unexpected_keys
    for key, value in source.params.items(include_nested=True, leaves_only=True):
        assert torch.equal(target.params[key], value)
    # the tensor class's leaves are still the module's registered tensors
    inner = target.params._modules["inner"]
    assert target.params["inner", "b"] is inner._parameters["b"]
    assert target.params["count"] is target.params._buffers["count"]
    assert target.params["w"] is target.params._parameters["w"]
    assert isinstance(target.params["w"], nn.Parameter)
    # and gradients reach them through the tensor class
    target.params["inner", "b"].sum().backward()
    assert inner._parameters["b"].grad is not None


@pytest.mark.parametrize("kind", KINDS)
def test_load_without_assign_keeps_the_storage(kind: str) -> None:
    source, target = Net(kind, 0), Net(kind, 1)
    before = target.params["inner", "b"]
    target.load_state_dict(source.state_dict())
    assert target.params["inner", "b"] is before
    assert torch.equal(before, source.params["inner", "b"])


def test_strict_loading_reports_missing_and_unexpected_nested_keys() -> None:
    source, target = Net("tensordict", 0), Net("tensordict", 1)
    state = source.state_dict()
    missing = {k: v for k, v in state.items() if k != "params.inner.b"}
    with pytest.raises(RuntimeError, match=r"params\.inner\.b"):
        target.load_state_dict(missing)
    extra = {**state, "params.inner.zz": torch.zeros(2)}
    with pytest.raises(RuntimeError, match=r"params\.inner\.zz"):
        target.load_state_dict(extra)
    before = target.params["inner", "b"].clone()
    result = target.load_state_dict(missing, strict=False)
    assert result.missing_keys == ["params.inner.b"]
    assert torch.equal(target.params["inner", "b"], before)
    assert torch.equal(target.params["w"], source.params["w"])


def test_wrong_shape_is_an_error_naming_the_key() -> None:
    target = Net("tensordict", 1)
    state = target.state_dict()
    state["params.inner.b"] = torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"params\.inner\.b"):
        target.load_state_dict(state)


def test_params_alone_round_trip() -> None:
    source = TensorDictParams(make_td("tensordict", 0))
    target = TensorDictParams(make_td("tensordict", 1))
    target.load_state_dict(_saved(source.state_dict()), assign=True)
    assert (target.to_tensordict() == source.to_tensordict()).all()
    assert target["inner", "b"] is target._modules["inner"]._parameters["b"]


def test_lazy_stack_source_round_trip() -> None:
    stacked = TensorDict.lazy_stack([make_td("tensordict", 0)[0], make_td("tensordict", 1)[0]])
    params = TensorDictParams(stacked.contiguous())
    state = _saved(params.state_dict())
    target = TensorDictParams(stacked.contiguous().zero_())
    target.load_state_dict(state)
    assert torch.equal(target["inner", "b"], stacked["inner", "b"])


class Holder(nn.Module):
    """A module holding a plain TensorDict as an attribute: saved as its extra state."""

    def __init__(self, value: float) -> None:
        super().__init__()
        self.data = TensorDict({"a": torch.full((2, 3), value), "n": {"b": torch.ones(2)}}, [2])

    def get_extra_state(self) -> Any:
        return self.data.state_dict()

    def set_extra_state(self, state: Any) -> None:
        self.data.load_state_dict(state)


def test_plain_tensordict_attribute_through_extra_state() -> None:
    source, target = Holder(5.0), Holder(0.0)
    target.load_state_dict(_saved(source.state_dict()))
    assert torch.equal(target.data["a"], source.data["a"])
    assert target.data.batch_size == torch.Size([2])
