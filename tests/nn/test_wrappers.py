"""WrapModule, TensorDictModuleWrapper, as_tensordict_module, TensorClassModuleBase/Wrapper."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import tensorclass
from tensorclass import KeyNotFoundError, SchemaError, TensorClass, TensorDict, lazy_stack
from tensorclass.nn import (
    TensorClassModuleBase,
    TensorClassModuleWrapper,
    TensorDictModule,
    TensorDictModuleWrapper,
    TensorDictSequential,
    WrapModule,
    as_tensordict_module,
)


class Inner(TensorClass):
    x: torch.Tensor


class Obs(TensorClass):
    inner: Inner
    y: torch.Tensor | None = None


def obs(n: int = 3) -> Obs:
    return Obs(inner=Inner(x=torch.arange(float(n)), batch_size=[n]), batch_size=[n])


# -- WrapModule ------------------------------------------------------------------------------


def test_wrap_module_returns_the_function_result() -> None:
    td = TensorDict(x=torch.ones(2, 3), batch_size=[2, 3])
    wrap = WrapModule(lambda t: t.reshape(-1))
    assert wrap.in_keys == [] and wrap.out_keys == []
    out = wrap(td)
    assert out.batch_size == (6,) and td.batch_size == (2, 3)


def test_wrap_module_inplace_updates_the_input() -> None:
    td = TensorDict(x=torch.ones(2))
    wrap = WrapModule(lambda t: TensorDict(y=t["x"] * 3), inplace=True, in_keys="x", out_keys="y")
    assert wrap(td) is td and torch.equal(td["y"], torch.full((2,), 3.0))
    not_inplace = WrapModule(lambda t: TensorDict(y=t["x"] * 3), in_keys="x", out_keys="y")
    td2 = TensorDict(x=torch.ones(2))
    out = not_inplace(td2)
    assert out is not td2 and "y" not in td2


def test_wrap_module_in_a_sequential_on_typed_and_lazy() -> None:
    seq = TensorDictSequential(
        TensorDictModule(lambda x: x * 2, [("inner", "x")], ["y"]),
        WrapModule(lambda t: t[1:], in_keys=["y"], out_keys=["y"]),
    )
    out = seq(obs())
    assert type(out) is Obs and torch.equal(out.y, torch.tensor([2.0, 4.0]))
    stack = lazy_stack([TensorDict(x=torch.tensor(float(i))) for i in range(3)])
    double = WrapModule(lambda t: t * 2)
    torch.testing.assert_close(double(stack)["x"], torch.tensor([0.0, 2.0, 4.0]))


def test_wrap_module_schema_checks_keys() -> None:
    WrapModule(lambda t: t, in_keys=[("inner", "x")], out_keys=["y"], schema=Obs)
    with pytest.raises(KeyNotFoundError, match="'nope' is not a field of Obs"):
        WrapModule(lambda t: t, in_keys=["nope"], schema=Obs)
    with pytest.raises(SchemaError):
        WrapModule(lambda t: t, schema=Obs)(TensorDict())


# -- TensorDictModuleWrapper -----------------------------------------------------------------


class Clipped(TensorDictModuleWrapper):
    def forward(self, tensordict: Any) -> Any:
        tensordict = self.td_module(tensordict)
        tensordict["y"] = tensordict["y"].clamp(max=2.0)
        return tensordict


def test_module_wrapper_behaves_like_the_module() -> None:
    inner = TensorDictModule(nn.Linear(1, 1), ["x"], ["y"])
    wrapper = TensorDictModuleWrapper(inner)
    assert wrapper.in_keys == ["x"] and wrapper.out_keys == ["y"]
    assert wrapper.module is inner.module  # attributes read through
    assert list(wrapper.parameters()) == list(inner.parameters())
    td = TensorDict(x=torch.randn(4, 1), batch_size=[4])
    torch.testing.assert_close(wrapper(td.clone())["y"], inner(td.clone())["y"])


def test_module_wrapper_subclass_and_selection() -> None:
    inner = TensorDictModule(lambda x: (x + 1, x), [("inner", "x")], ["y", "z"])
    wrapped = TensorDictModuleWrapper(inner).select_out_keys("y")
    assert wrapped.out_keys == ["y"] and inner.out_keys == ["y"]
    wrapped.reset_out_keys()
    clipped = Clipped(TensorDictModule(lambda x: x + 1, [("inner", "x")], ["y"], schema=Obs))
    assert clipped.schema is Obs
    assert torch.equal(clipped(obs()).y, torch.tensor([1.0, 2.0, 2.0]))
    with pytest.raises(TypeError, match="in_keys and out_keys"):
        TensorDictModuleWrapper(nn.Linear(1, 1))  # type: ignore[arg-type]


# -- as_tensordict_module --------------------------------------------------------------------


def test_as_tensordict_module() -> None:
    @as_tensordict_module(in_keys=["x", "y"], out_keys=["z"])
    def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Add."""
        return x + y

    assert isinstance(add, TensorDictModule) and add.__doc__ == "Add."
    assert torch.equal(
        add(TensorDict(x=torch.ones(2), y=torch.ones(2)))["z"], torch.full((2,), 2.0)
    )
    assert torch.equal(add(torch.ones(1), torch.ones(1)), torch.full((1,), 2.0))
    assert tensorclass.as_tensordict_module is as_tensordict_module
    with pytest.raises(KeyNotFoundError):
        as_tensordict_module(in_keys=["q"], out_keys=["y"], schema=Obs)(add)


# -- TensorClassModuleBase -------------------------------------------------------------------


class Point(TensorClass):
    x: torch.Tensor
    inner: Inner


class Result(TensorClass):
    total: torch.Tensor


class Sum(TensorClassModuleBase[Point, Result]):
    def forward(self, p: Point) -> Result:
        return Result(total=p.x + p.inner.x, batch_size=p.batch_size)


def point() -> Point:
    return Point(
        x=torch.ones(2), inner=Inner(x=torch.full((2,), 2.0), batch_size=[2]), batch_size=[2]
    )


def test_tensorclass_module_types_and_call() -> None:
    assert Sum.input_type is Point and Sum.output_type is Result
    assert torch.equal(Sum()(point()).total, torch.full((2,), 3.0))
    assert tensorclass.TensorClassModuleBase is TensorClassModuleBase


def test_as_td_module_keys_from_the_classes() -> None:
    module = Sum().as_td_module()
    assert isinstance(module, TensorClassModuleWrapper)
    assert module.in_keys == ["x", ("inner", "x")] and module.out_keys == ["total"]
    td = TensorDict(x=torch.ones(2), inner={"x": torch.full((2,), 2.0)}, batch_size=[2])
    out = module(td)
    assert out is td and torch.equal(td["total"], torch.full((2,), 3.0))
    seq = TensorDictSequential(module, TensorDictModule(lambda t: t * 2, ["total"], ["twice"]))
    assert torch.equal(seq(td.clone())["twice"], torch.full((2,), 6.0))
    stack = lazy_stack([td[0].exclude("total"), td[1].exclude("total")])
    assert torch.equal(module(stack)["total"], torch.full((2,), 3.0))


def test_as_td_module_needs_two_tensor_classes() -> None:
    class Untyped(TensorClassModuleBase):
        def forward(self, x: Any) -> Any:
            return x

    class ToTensor(TensorClassModuleBase[Point, torch.Tensor]):
        def forward(self, p: Point) -> torch.Tensor:
            return p.x

    with pytest.raises(ValueError, match="tensor classes"):
        Untyped().as_td_module()
    with pytest.raises(ValueError, match="output_type=<class 'torch.Tensor'>"):
        ToTensor().as_td_module()
    with pytest.raises(KeyNotFoundError):
        Sum().as_td_module()(TensorDict(x=torch.ones(2), batch_size=[2]))
