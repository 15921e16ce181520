"""Module methods tensordict's modules have beyond reading and writing keys."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tensorclass import BatchSizeError, TensorDict
from tensorclass.nn import TensorDictModule, TensorDictModuleBase, TensorDictSequential


def make() -> TensorDictSequential:
    return TensorDictSequential(
        TensorDictModule(nn.Linear(3, 4), ["x"], ["h"]),
        TensorDictModule(nn.Linear(4, 2), ["h"], ["y"]),
    )


def test_is_tdmodule_compatible() -> None:
    assert TensorDictModuleBase.is_tdmodule_compatible(make())
    assert not TensorDictModuleBase.is_tdmodule_compatible(nn.Linear(2, 2))
    assert not TensorDictModule.is_tdmodule_compatible(lambda x: x)


def test_reset_parameters_recursive_resets_the_module_in_place() -> None:
    torch.manual_seed(0)
    module = make()
    with torch.no_grad():
        for p in module.parameters():
            p.zero_()
    weights = [p for p in module.parameters()]
    assert module.reset_parameters_recursive() is None
    assert all(a is b for a, b in zip(weights, module.parameters()))  # same Parameters
    assert all(p.abs().sum() > 0 for p in module.parameters() if p.dim() > 1)


def test_reset_parameters_recursive_into_given_parameters_leaves_the_module() -> None:
    torch.manual_seed(0)
    module = make()
    before = TensorDict.from_module(module).clone()
    params = TensorDict.from_module(module).clone().zero_()
    fresh = module.reset_parameters_recursive(params)
    assert (TensorDict.from_module(module) == before).all()  # module untouched
    for key in params.keys(include_nested=True, leaves_only=True):
        assert fresh[key].data_ptr() == params[key].data_ptr()  # shares the storage
        assert fresh[key].requires_grad
    assert params["module", "0", "module", "weight"].abs().sum() > 0  # new values drawn into params


def test_reset_parameters_recursive_refuses_batched_parameters() -> None:
    module = make()
    params = TensorDict.from_modules(make(), make())
    with pytest.raises(BatchSizeError, match=r"batch_size=\[2\]"):
        module.reset_parameters_recursive(params)


def test_reset_parameters_recursive_warns_when_nothing_can_be_reset() -> None:
    module = TensorDictModule(torch.nn.Identity(), ["x"], ["y"])
    with pytest.warns(UserWarning, match="nothing was reset"):
        module.reset_parameters_recursive()
