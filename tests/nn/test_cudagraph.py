"""CudaGraphModule on a machine without CUDA: eager, the same results, one warning."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.nn import CudaGraphModule, TensorDictModule

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="tests the CPU fallback")


class Obs(TensorClass):
    x: torch.Tensor
    y: torch.Tensor | None = None


def linear() -> TensorDictModule:
    torch.manual_seed(0)
    return TensorDictModule(nn.Linear(3, 2), ["x"], ["y"])


def test_warns_once_and_runs_eagerly() -> None:
    module = linear()
    with pytest.warns(UserWarning, match="runs eagerly") as record:
        graphed = CudaGraphModule(module, warmup=1)
    assert len(record) == 1
    assert graphed.in_keys == ["x"] and graphed.out_keys == ["y"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no further warning on calls
        for _ in range(4):
            td = TensorDict(x=torch.randn(5, 3), batch_size=[5])
            expected = module(td.clone())["y"]
            out = graphed(td)
            assert out is td
            torch.testing.assert_close(out["y"], expected)


def test_typed_lazy_and_tensor_inputs() -> None:
    module = linear()
    with pytest.warns(UserWarning):
        graphed = CudaGraphModule(module)
    obs = Obs(x=torch.randn(4, 3), batch_size=[4])
    torch.testing.assert_close(graphed(obs.clone()).y, module(obs.clone()).y)
    stack = lazy_stack([TensorDict(x=torch.randn(3)) for _ in range(2)])
    torch.testing.assert_close(graphed(stack)["y"], module(stack.contiguous())["y"])
    with pytest.warns(UserWarning):
        fn = CudaGraphModule(lambda a, b: a * b, in_keys=["a", "b"], out_keys=["c"])
    a, b = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(fn(a, b), a * b)
    assert fn.in_keys == ["a", "b"]


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="callable"):
        CudaGraphModule(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="warmup"):
        CudaGraphModule(linear(), warmup=0)
