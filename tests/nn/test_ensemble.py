"""EnsembleModule: stacked, reset copies run under vmap, equal to a loop over the copies."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from tensorclass import BatchSizeError, TensorClass, TensorDict, lazy_stack
from tensorclass.nn import EnsembleModule, TensorDictModule, TensorDictSequential


class Inner(TensorClass):
    x: torch.Tensor


class Obs(TensorClass):
    inner: Inner
    y: torch.Tensor | None = None


def make(seed: int = 0) -> TensorDictModule:
    torch.manual_seed(seed)
    return TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])


def loop(ensemble: EnsembleModule, td: TensorDict) -> torch.Tensor:
    outs = []
    for index in range(ensemble.num_copies):
        with ensemble.params_td[index].to_module(ensemble.module):
            outs.append(ensemble.module(td.clone())["y"])
    return torch.stack(outs)


def test_matches_a_loop_over_copies() -> None:
    ensemble = EnsembleModule(make(), num_copies=3)
    td = TensorDict(x=torch.randn(5, 3), batch_size=[5])
    out = ensemble(td)
    assert out.batch_size == (3, 5)
    torch.testing.assert_close(out["y"], loop(ensemble, td))
    assert "y" not in td  # the input is left as it was


def test_copies_differ_and_are_the_only_parameters() -> None:
    ensemble = EnsembleModule(make(), num_copies=4)
    weight = ensemble.params_td["module", "weight"]
    assert weight.shape == (4, 2, 3)
    for i in range(1, 4):
        assert not torch.equal(weight[0], weight[i])
    names = [name for name, _ in ensemble.named_parameters()]
    assert names == ["params_td.module.weight", "params_td.module.bias"]


def test_keys_and_schema_come_from_the_module() -> None:
    module = TensorDictModule(nn.Linear(3, 2), [("inner", "x")], ["y"], schema=Obs)
    ensemble = EnsembleModule(module, num_copies=2)
    assert ensemble.in_keys == [("inner", "x")] and ensemble.out_keys == ["y"]
    assert ensemble.schema is Obs
    obs = Obs(inner=Inner(x=torch.randn(4, 3), batch_size=[4]), batch_size=[4])
    out = ensemble(obs)
    assert type(out) is Obs and out.batch_size == (2, 4)
    with ensemble.params_td[1].to_module(module):
        expected = module(obs.clone()).y
    torch.testing.assert_close(out.y[1], expected)


def test_lazy_stack_input() -> None:
    ensemble = EnsembleModule(make(), num_copies=2)
    stack = lazy_stack([TensorDict(x=torch.randn(3)) for _ in range(4)])
    out = ensemble(stack)
    torch.testing.assert_close(out["y"], loop(ensemble, stack.contiguous()))


def test_expand_input_false_reads_one_entry_per_copy() -> None:
    first = EnsembleModule(make(), num_copies=3)
    second = EnsembleModule(
        TensorDictModule(nn.Linear(2, 1), ["y"], ["z"]), num_copies=3, expand_input=False
    )
    td = TensorDict(x=torch.randn(5, 3), batch_size=[5])
    out = TensorDictSequential(first, second)(td)
    assert out["z"].shape == (3, 5, 1)
    for i in range(3):
        with second.params_td[i].to_module(second.module):
            torch.testing.assert_close(out["z"][i], second.module.module(out["y"][i]))
    with pytest.raises(BatchSizeError, match="leading dim of size 3"):
        second(TensorDict(y=torch.randn(5, 2), batch_size=[5]))


def test_gradients_reach_every_copy() -> None:
    ensemble = EnsembleModule(make(), num_copies=3)
    out = ensemble(TensorDict(x=torch.randn(5, 3), batch_size=[5]))
    out["y"].sum().backward()
    grad = ensemble.params_td["module", "weight"].grad
    assert grad is not None and grad.shape == (3, 2, 3) and bool((grad != 0).all())


def test_reset_parameters_recursive_redraws_each_copy() -> None:
    ensemble = EnsembleModule(make(), num_copies=2)
    before = ensemble.params_td["module", "weight"].detach().clone()
    ensemble.reset_parameters_recursive()
    after = ensemble.params_td["module", "weight"]
    assert not torch.equal(before, after)
    assert not torch.equal(after[0], after[1])
    with pytest.raises(BatchSizeError):
        ensemble.reset_parameters_recursive(TensorDict.from_module(ensemble.module))


def test_tensors_in_tensors_out() -> None:
    ensemble = EnsembleModule(make(), num_copies=2)
    assert ensemble(torch.randn(4, 3)).shape == (2, 4, 2)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="in_keys and out_keys"):
        EnsembleModule(nn.Linear(2, 2), 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_copies"):
        EnsembleModule(make(), 0)


def test_a_deep_copy_runs_its_own_parameters() -> None:
    ensemble = EnsembleModule(make(), num_copies=2)
    twin = copy.deepcopy(ensemble)
    with torch.no_grad():
        twin.params_td["module", "bias"].add_(100.0)
    td = TensorDict(x=torch.randn(3, 3), batch_size=[3])
    torch.testing.assert_close(twin(td)["y"], ensemble(td)["y"] + 100.0)
