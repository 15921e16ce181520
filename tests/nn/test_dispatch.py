"""dispatch: a function of a tensor class called with tensors (positional, keyword, nested)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
import torch

from tensorclass import InvalidKeyError, TensorClass, TensorDict, lazy_stack
from tensorclass.nn import TensorDictModuleBase, dispatch


class Scaled(TensorDictModuleBase):
    in_keys: ClassVar[list[Any]] = ["x", ("obs", "scale")]
    out_keys: ClassVar[list[Any]] = ["y", "z"]

    @dispatch
    def forward(self, tensordict: Any) -> Any:
        tensordict["y"] = tensordict["x"] * tensordict["obs", "scale"]
        tensordict["z"] = tensordict["x"] + 1
        return tensordict


class Obs(TensorClass):
    scale: torch.Tensor


class Step(TensorClass):
    x: torch.Tensor
    obs: Obs
    y: torch.Tensor | None = None
    z: torch.Tensor | None = None


def test_keywords_with_nested_names() -> None:
    x, scale = torch.randn(4), torch.randn(4)
    y, z = Scaled()(x=x, obs_scale=scale)
    torch.testing.assert_close(y, x * scale)
    torch.testing.assert_close(z, x + 1)


def test_positional_in_source_order() -> None:
    x, scale = torch.randn(2, 3), torch.randn(2, 3)
    y, _ = Scaled()(x, scale)
    torch.testing.assert_close(y, x * scale)


def test_tensor_classes_pass_through() -> None:
    td = TensorDict(x=torch.ones(2), obs={"scale": torch.full((2,), 2.0)}, batch_size=[2])
    out = Scaled()(td)
    assert out is td and torch.equal(td["y"], torch.full((2,), 2.0))
    step = Step(x=torch.ones(3), obs=Obs(scale=torch.ones(3), batch_size=[3]), batch_size=[3])
    assert type(Scaled()(step)) is Step and torch.equal(step.z, torch.full((3,), 2.0))
    stack = lazy_stack([td[0], td[1]])
    assert torch.equal(Scaled()(stack)["y"], torch.full((2,), 2.0))


def test_separator_source_dest_and_batch_size() -> None:
    seen = []

    @dispatch(separator=".", source=["x", ("a", "b")], dest=["out"], auto_batch_size=False)
    def add(tensordict: Any) -> Any:
        seen.append(tensordict.batch_size)
        tensordict["out"] = tensordict["x"] + tensordict["a", "b"]
        return tensordict

    out = add(x=torch.ones(2), **{"a.b": torch.ones(2)})
    torch.testing.assert_close(out, torch.full((2,), 2.0))
    assert seen == [torch.Size([])]

    @dispatch(source=["x"], dest=["out"])
    def double(tensordict: Any) -> Any:
        seen.append(tensordict.batch_size)
        tensordict["out"] = tensordict["x"] * 2
        return tensordict

    torch.testing.assert_close(double(torch.ones(5, 2)), torch.full((5, 2), 2.0))
    assert seen[-1] == torch.Size([5, 2])  # auto batch size: every leading dim shared


def test_extra_keywords_reach_the_function() -> None:
    @dispatch(source=["x"], dest=["out"])
    def shift(tensordict: Any, by: float = 0.0) -> Any:
        tensordict["out"] = tensordict["x"] + by
        return tensordict

    torch.testing.assert_close(shift(x=torch.zeros(1), by=3.0), torch.full((1,), 3.0))


def test_errors() -> None:
    with pytest.raises(TypeError, match="takes 2 input"):
        Scaled()(torch.ones(1), torch.ones(1), torch.ones(1))

    @dispatch
    def plain(tensordict: Any) -> Any:
        return tensordict

    with pytest.raises(InvalidKeyError, match="source"):
        plain(x=torch.ones(1))
    with pytest.raises(TypeError, match="separator"):
        dispatch(separator=3)  # type: ignore[call-overload]
