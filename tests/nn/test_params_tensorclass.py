"""TensorDictParams is the tensor class as well as the module (issue 15)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

from tensorclass import TensorClass, TensorDict
from tensorclass.nn import TensorDictParams


class Inner(TensorClass):
    c: torch.Tensor


class Point(TensorClass):
    a: torch.Tensor
    inner: Inner


def make_dict() -> TensorDict:
    gen = torch.Generator().manual_seed(0)
    return TensorDict(
        {"a": torch.randn(3, 2, generator=gen), "inner": {"c": torch.randn(3, generator=gen)}},
        batch_size=[3],
    )


def make_typed() -> Point:
    gen = torch.Generator().manual_seed(1)
    return Point(
        a=torch.randn(3, 2, generator=gen),
        inner=Inner(c=torch.randn(3, generator=gen), batch_size=[3]),
        batch_size=[3],
    )


@pytest.fixture(params=[make_dict, make_typed], ids=["TensorDict", "typed"])
def params(request: Any) -> TensorDictParams:
    return TensorDictParams(request.param())


def leaves(obj: Any) -> dict[Any, torch.Tensor]:
    return dict(obj.items(include_nested=True, leaves_only=True))


def check_leafwise(result: Any, params: TensorDictParams, fn: Callable[..., Any]) -> None:
    assert not isinstance(result, nn.Module)
    expected = {k: fn(v) for k, v in leaves(params).items()}
    got = leaves(result)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        torch.testing.assert_close(got[key], value)


def test_apply_is_the_tensor_class_apply(params: TensorDictParams) -> None:
    result = params.apply(lambda x: x * 2)
    check_leafwise(result, params, lambda x: x * 2)
    assert result.batch_size == params.batch_size


def test_eq_is_leafwise_and_hash_stays_identity(params: TensorDictParams) -> None:
    result = params == params
    assert not isinstance(result, bool)
    assert result.all()
    check_leafwise(params != 0, params, lambda x: x != 0)
    check_leafwise(params < 0, params, lambda x: x < 0)
    assert hash(params) == object.__hash__(params)
    assert {params: 1}[params] == 1


@pytest.mark.parametrize(
    "op",
    [
        lambda p: p + 1,
        lambda p: 1 + p,
        lambda p: p * 2,
        lambda p: p - 0.5,
        lambda p: 0.5 - p,
        lambda p: p / 4,
        lambda p: -p,
        lambda p: abs(p),
        lambda p: p**2,
    ],
)
def test_arithmetic(params: TensorDictParams, op: Callable[[Any], Any]) -> None:
    check_leafwise(op(params), params, op)


def test_arithmetic_between_params(params: TensorDictParams) -> None:
    check_leafwise(params + params, params, lambda x: x + x)


def test_methods_act_on_the_parameters(params: TensorDictParams) -> None:
    check_leafwise(params.exp(), params, torch.exp)
    check_leafwise(params.float64(), params, lambda x: x.to(torch.float64))
    assert params.batch_size == torch.Size([3])
    assert params.shape == torch.Size([3])


def test_torch_functions(params: TensorDictParams) -> None:
    check_leafwise(torch.sin(params), params, torch.sin)
    stacked = torch.stack([params, params])
    assert stacked.batch_size == torch.Size([2, 3])
    check_leafwise(stacked, params, lambda x: torch.stack([x, x]))
    check_leafwise(torch.cat([params, params]), params, lambda x: torch.cat([x, x]))


def test_indexing_reads_and_writes(params: TensorDictParams) -> None:
    check_leafwise(params[1:], params, lambda x: x[1:])
    check_leafwise(params[0], params, lambda x: x[0])
    a = params["a"]
    with torch.no_grad():
        params[0] = params[0] * 0 + 7
    assert params["a"] is a  # written in place: still the registered parameter
    assert (a[0] == 7).all() and (params["inner", "c"][0] == 7).all()
    assert iter(params).__next__().batch_size == torch.Size([])
    assert len(params) == 3


def test_in_place_methods_return_the_module(params: TensorDictParams) -> None:
    a = params["a"]
    with torch.no_grad():
        assert params.mul_(0) is params
        assert params.apply_(lambda x: x + 1) is params
    assert params["a"] is a
    assert (a == 1).all()


def test_optimizer_steps_the_registered_leaves(params: TensorDictParams) -> None:
    registered = dict(params.named_parameters())
    assert set(registered) == {"a", "inner.c"}
    before = {k: v.detach().clone() for k, v in registered.items()}
    opt = torch.optim.SGD(params.parameters(), lr=0.1)
    loss = (params * 2).sum(reduce=True)
    loss.backward()
    opt.step()
    for name, value in registered.items():
        torch.testing.assert_close(value.detach(), before[name] - 0.2)
    assert params["a"] is registered["a"]


def test_state_dict_unchanged(params: TensorDictParams) -> None:
    state = params.state_dict()
    assert list(state) == ["a", "inner.c"]
    other = TensorDictParams(params.apply(lambda x: x * 0))
    other.load_state_dict(state)
    assert (other == params).all()


def test_to_dtype_keeps_module_semantics(params: TensorDictParams) -> None:
    """``to``/``cpu`` cast the registered parameters in place and return the module."""
    assert params.to(torch.float64) is params
    assert params["a"].dtype == torch.float64
    assert isinstance(params["a"], nn.Parameter)
    assert params["a"] is dict(params.named_parameters())["a"]
    assert params.cpu() is params


def test_float_double_follow_the_tensor_class(params: TensorDictParams) -> None:
    """``float()``/``double()`` give a cast tensor class (tensordict's choice); the module stays."""
    result = params.double()
    assert not isinstance(result, nn.Module)
    assert result["a"].dtype == torch.float64
    assert params["a"].dtype == torch.float32


def test_class_level_names_and_signatures() -> None:
    assert "dim" in inspect.signature(TensorDictParams.sum).parameters
    assert isinstance(TensorDictParams.batch_size, property)
    assert TensorDictParams.to is nn.Module.to
    assert TensorDictParams.state_dict is nn.Module.state_dict


def test_module_inside_a_model_moves_with_it() -> None:
    model = nn.Module()
    model.params = TensorDictParams(make_dict())
    model.double()
    assert model.params["a"].dtype == torch.float64
    assert model.params.to_tensordict()["a"] is model.params["a"]


def test_set_inplace_keeps_the_parameter() -> None:
    params = TensorDictParams(make_dict())
    a = params["a"]
    with torch.no_grad():
        params.set("a", torch.zeros(3, 2), inplace=True)
    assert params["a"] is a and (a == 0).all()
    params.set("a", torch.ones(3, 2))
    assert params["a"] is not a and isinstance(params["a"], nn.Parameter)


def test_get_post_hook() -> None:
    params = TensorDictParams(make_dict())
    handle = params.register_get_post_hook(lambda p, v: v * 10)
    torch.testing.assert_close(params["a"], params.to_tensordict()["a"] * 10)
    torch.testing.assert_close(
        params.get(("inner", "c")), params.to_tensordict()["inner", "c"] * 10
    )
    handle.remove()
    assert params["a"] is params.to_tensordict()["a"]


def test_delete_unregisters() -> None:
    params = TensorDictParams(make_dict())
    del params["inner", "c"]
    assert [name for name, _ in params.named_parameters()] == ["a"]
    assert ("inner", "c") not in params.keys(include_nested=True)
    params.del_("a")
    assert list(params.parameters()) == [] and "a" not in params
    with pytest.raises(KeyError, match="'missing'"):
        params.del_(("missing", "x"))


def test_properties_read_and_write_through() -> None:
    params = TensorDictParams(make_dict())
    params.batch_size = torch.Size([])
    assert params.to_tensordict().batch_size == torch.Size([])
    assert params.requires_grad
