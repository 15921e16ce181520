"""from_module / to_module / from_modules / TensorDictParams (seeds 000, 002, 003, 004)."""

import copy

import pytest
import torch
from torch import nn, vmap

import tensorclass
from tensorclass import (
    KeyNotFoundError,
    LockedError,
    StructureMismatchError,
    TensorDict,
    from_modules,
)
from tensorclass.nn import TensorDictModule, TensorDictParams
from tensorclass.param_swap import ParamSwap


def test_from_module_nests_by_submodule_and_shares_tensors() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.BatchNorm1d(4))
    params = TensorDict.from_module(model)
    assert list(params.keys()) == ["0", "2"]  # ReLU has nothing
    assert sorted(params["2"].keys()) == [
        "bias",
        "num_batches_tracked",
        "running_mean",
        "running_var",
        "weight",
    ]
    assert params["0", "weight"] is model[0].weight
    assert params["2", "running_mean"] is model[2].running_mean
    assert params.is_locked
    with pytest.raises(LockedError):
        params["new"] = torch.zeros(())
    assert not TensorDict.from_module(model, lock=False).is_locked


def test_from_module_with_state_dict() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    params = TensorDict.from_module(model, use_state_dict=True)
    names = sorted(".".join(k) for k in params.keys(include_nested=True, leaves_only=True))
    assert names == sorted(model.state_dict())


def test_seed_params_match_the_state_dict_and_run_the_model() -> None:
    layer1, layer2 = nn.Linear(3, 4), nn.Linear(4, 4)
    model = nn.Sequential(layer1, layer2)
    params = TensorDict.from_module(model)
    weights1 = TensorDict(layer1.state_dict(), []).unflatten_keys(".")
    weights2 = TensorDict(layer2.state_dict(), []).unflatten_keys(".")
    assert (params == TensorDict({"0": weights1, "1": weights2}, [])).all()
    x = torch.randn(10, 3)
    with params.to_module(model):
        out = model(x)
    torch.testing.assert_close(out, model(x))
    params_stack = torch.stack([params, params], 0)

    def func(x: torch.Tensor, params: TensorDict) -> torch.Tensor:
        with params.to_module(model):
            return model(x)

    y = vmap(func, (None, 0))(x, params_stack)
    assert y.shape == torch.Size([2, 10, 4])
    torch.testing.assert_close(y[1], out)


def test_to_module_swaps_and_restores_even_on_error() -> None:
    layer = nn.Linear(2, 2)
    weight, bias = layer.weight, layer.bias
    zeros = TensorDict({"weight": torch.zeros(2, 2), "bias": torch.ones(2)})
    with zeros.to_module(layer) as swapped:
        assert isinstance(swapped, ParamSwap)
        assert swapped["weight"] is weight
        assert layer(torch.ones(2)).tolist() == [1.0, 1.0]
    assert layer.weight is weight and layer.bias is bias
    with pytest.raises(RuntimeError, match="boom"), zeros.to_module(layer):
        raise RuntimeError("boom")
    assert layer.weight is weight and isinstance(layer.weight, nn.Parameter)


def test_to_module_without_context_loads_and_returns_the_old_values() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 3))
    saved = TensorDict.from_module(model).detach().clone()
    original = TensorDict.from_module(model)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    old = saved.to_module(model)
    assert old["0", "weight"] is original["0", "weight"]
    assert model[0].weight is saved["0", "weight"]
    saved["0"].to_module(model[0])  # load on a slice of the model
    assert saved.to_module(model, return_swap=False) is saved


def test_to_module_inplace_copies_into_the_parameters() -> None:
    layer = nn.Linear(2, 2)
    weight = layer.weight
    before = weight.detach().clone()
    with TensorDict({"weight": torch.zeros(2, 2)}).to_module(layer, inplace=True):
        assert layer.weight is weight and weight.eq(0).all()
    assert layer.weight is weight
    torch.testing.assert_close(weight.detach(), before)


def test_to_module_with_state_dict() -> None:
    layer = nn.Linear(2, 2)
    zeros = TensorDict({"weight": torch.zeros(2, 2), "bias": torch.zeros(2)})
    with zeros.to_module(layer, use_state_dict=True):
        assert layer.weight.eq(0).all() and isinstance(layer.weight, nn.Parameter)
    assert not layer.weight.eq(0).all()


def test_to_module_unknown_key_is_a_clear_error() -> None:
    layer = nn.Linear(2, 2)
    with pytest.raises(KeyNotFoundError, match="no parameter, buffer or submodule 'kernel'"):
        TensorDict({"kernel": torch.zeros(2, 2)}).to_module(layer)
    assert isinstance(layer.weight, nn.Parameter)


def test_seed_from_modules_dense_gradients_stay_on_the_stack() -> None:
    torch.manual_seed(0)
    empty_module = nn.Linear(3, 4, device="meta")
    n_models = 2
    modules = [nn.Linear(3, 4) for _ in range(n_models)]
    params = from_modules(*modules)
    assert params is not None and tensorclass.from_modules is from_modules
    assert params.batch_size == (2,) and params.is_locked
    assert isinstance(params["weight"], nn.Parameter) and params["weight"].shape == (2, 4, 3)

    def exec_module(params: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with params.to_module(empty_module):
            return empty_module(x)

    x = torch.randn(3)
    y = torch.vmap(exec_module, (0, None))(params, x)
    assert y.shape == (n_models, 4)
    torch.testing.assert_close(y, torch.stack([m(x) for m in modules]))
    y.sum().backward()
    assert params["weight"].grad.norm() > 0
    assert modules[0].weight.grad is None
    assert empty_module.weight.device.type == "meta"  # the meta parameters are back


def test_from_modules_options() -> None:
    shared = nn.Linear(3, 4)
    stacked = TensorDict.from_modules(shared, shared, expand_identical=True)
    assert stacked["weight"].shape == (2, 4, 3)
    assert stacked["weight"].data_ptr() == shared.weight.data_ptr()  # expanded, not copied
    stacked["weight"].sum().backward()
    assert shared.weight.grad is not None
    assert not from_modules(nn.Linear(3, 4), lock=False).is_locked
    with pytest.raises(StructureMismatchError, match="lazy_stack=True"):
        from_modules(nn.Linear(3, 4), nn.Linear(3, 5))
    with pytest.raises(StructureMismatchError, match="lazy_stack=True"):
        from_modules(nn.Linear(3, 4), nn.Linear(3, 4, bias=False))
    with pytest.raises(ValueError, match="exclusive|cannot be combined"):
        from_modules(nn.Linear(3, 4), lazy_stack=True, as_module=True)
    buffers = from_modules(nn.BatchNorm1d(3), nn.BatchNorm1d(3))
    assert type(buffers["running_mean"]) is torch.Tensor  # buffers stay plain tensors


def test_tensordict_params_registers_leaves() -> None:
    params = TensorDictParams(
        TensorDict({"w": torch.ones(3), "n": {"b": torch.zeros(2), "i": torch.arange(2)}})
    )
    assert [name for name, _ in params.named_parameters()] == ["w", "n.b"]
    assert [name for name, _ in params.named_buffers()] == ["n.i"]
    assert params["n", "b"] is dict(params.named_parameters())["n.b"]
    assert sorted(params.state_dict()) == ["n.b", "n.i", "w"]
    assert "w" in params and len(params) == 0  # no batch dims
    params["extra"] = torch.zeros(4)
    assert "extra" in dict(params.named_parameters())
    assert params.to_tensordict()["extra"] is params["extra"]
    with pytest.raises(ValueError, match="must not contain"):
        TensorDictParams({"a.b": torch.zeros(1)})


def test_tensordict_params_train_inside_a_module() -> None:
    class Affine(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.params = TensorDictParams(
                TensorDict({"scale": torch.ones(3), "shift": torch.zeros(3)})
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.params["scale"] + self.params["shift"]

    model = Affine()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.randn(16, 3)
    target = 2 * x + 1
    for _ in range(50):
        loss = (model(x) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.testing.assert_close(
        model.params["scale"].detach(), torch.full((3,), 2.0), atol=1e-2, rtol=0
    )
    model.double()
    assert model.params["scale"].dtype == torch.float64
    assert model.params.to_tensordict()["scale"] is model.params.scale


def test_as_module_and_to_module_through_params() -> None:
    model = nn.Linear(3, 2)
    params = TensorDict.from_module(model, as_module=True)
    assert isinstance(params, TensorDictParams) and params.is_locked
    assert [p is q for p, q in zip(params.parameters(), model.parameters())] == [True, True]
    with params.expand(2).to_module(model):
        pass
    stacked = from_modules(nn.Linear(3, 2), nn.Linear(3, 2), as_module=True)
    assert isinstance(stacked, TensorDictParams) and len(list(stacked.parameters())) == 2
    x = torch.randn(3)

    def run(p: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with p.to_module(model):
            return model(x)

    assert vmap(run, (0, None))(stacked, x).shape == (2, 2)


def test_functional_call_through_a_tensordict_module() -> None:
    td = TensorDict({"input": torch.randn(3, 4), "hidden": torch.randn(3, 8)}, [3])
    td_module = TensorDictModule(nn.GRUCell(4, 8), in_keys=["input", "hidden"], out_keys=["output"])
    params = TensorDict.from_module(td_module)
    assert list(params.keys()) == ["module"]
    assert sorted(params["module"].keys()) == ["bias_hh", "bias_ih", "weight_hh", "weight_ih"]
    zeros = params.detach().clone().zero_()
    with zeros.to_module(td_module):
        out = td_module(td.clone())
    # zero weights: both gates are one half and the candidate is zero
    torch.testing.assert_close(out["output"], td["hidden"] / 2)
    assert not torch.allclose(td_module(td.clone())["output"], td["hidden"] / 2)


def test_to_module_into_an_unset_entry_unsets_it_again_on_exit() -> None:
    layer = nn.Linear(3, 2, bias=False)
    params = TensorDict.from_module(nn.Linear(3, 2)).detach()
    with params.to_module(layer) as swapped:
        assert layer.bias is params["bias"]
        torch.testing.assert_close(layer(torch.zeros(3)), params["bias"])
        assert swapped["bias"] is None
    assert layer.bias is None and "bias" in layer._parameters
    with pytest.raises(RuntimeError, match="boom"), params.to_module(layer, inplace=True):
        raise RuntimeError("boom")
    assert layer.bias is None


@pytest.mark.parametrize("inplace", [False, True])
def test_a_failed_load_leaves_the_module_as_it_was(inplace: bool) -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    before = TensorDict.from_module(model)
    values = before.detach().clone()
    bad = TensorDict(
        {
            "0": {"weight": torch.zeros(2, 2), "bias": torch.zeros(2)},
            "1": {"weight": torch.zeros(2, 2), "kernel": torch.zeros(2, 2)},
        }
    )
    with pytest.raises(KeyNotFoundError, match=r"\('1', 'kernel'\)"):
        bad.to_module(model, inplace=inplace)
    for key in [("0", "weight"), ("0", "bias"), ("1", "weight"), ("1", "bias")]:
        assert TensorDict.from_module(model)[key] is before[key]
        torch.testing.assert_close(before[key].detach(), values[key])
    if inplace:
        with pytest.raises(RuntimeError):
            TensorDict({"bias": torch.zeros(2), "weight": torch.zeros(3, 3)}).to_module(
                model[0], inplace=True
            )
        torch.testing.assert_close(model[0].bias.detach(), values["0", "bias"])


def test_an_inplace_load_without_swap_checks_before_writing() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    values = TensorDict.from_module(model).detach().clone()
    ones = {"weight": torch.ones(2, 2), "bias": torch.ones(())}  # the bias broadcasts
    for bad, error in [
        ({"0": ones, "1": {"weight": torch.ones(2, 2), "kernel": torch.ones(2)}}, KeyNotFoundError),
        ({"0": ones, "1": {"weight": torch.ones(3, 2)}}, RuntimeError),
    ]:
        with pytest.raises(error, match=r"'1.*(kernel|weight)'"):
            TensorDict(bad).to_module(model, inplace=True, return_swap=False)
        assert (TensorDict.from_module(model) == values).all()
    good = TensorDict({"0": ones, "1": ones})
    assert good.to_module(model, inplace=True, return_swap=False) is good
    assert bool((model[1].bias == 1).all()) and bool((model[0].weight == 1).all())


def test_a_deep_copy_of_tensordict_params_reads_its_own_parameters() -> None:
    params = TensorDictParams(
        TensorDict({"w": torch.ones(3), "n": {"b": torch.zeros(2), "i": torch.arange(2)}}),
        lock=True,
    )
    holder = nn.Module()
    holder.params = params
    copied = copy.deepcopy(holder).params
    assert isinstance(copied, TensorDictParams) and copied.is_locked
    registered = dict(copied.named_parameters())
    assert copied["w"] is registered["w"] and copied["n", "b"] is registered["n.b"]
    assert copied["n", "i"] is dict(copied.named_buffers())["n.i"]
    assert copied["w"] is not params["w"]
    with torch.no_grad():
        for p in copied.parameters():
            p.add_(1)  # an optimizer step on the copy ...
    assert copied["w"].tolist() == [2.0] * 3  # ... is what the copy reads
    assert params["w"].tolist() == [1.0] * 3  # and the original is untouched
