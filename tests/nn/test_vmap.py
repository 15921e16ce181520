"""torch.vmap over tensor classes (pytree nodes), and ensembles with from_modules."""

import copy

import pytest
import torch
import torch.utils._pytree as pytree
from torch import nn

from tensorclass import TensorClass, TensorDict, from_modules
from tensorclass.nn import TensorDictModule


class Inner(TensorClass):
    c: torch.Tensor


class Sample(TensorClass):
    a: torch.Tensor
    inner: Inner
    label: str = "train"


def make_sample(batch: int = 5) -> Sample:
    return Sample(
        torch.arange(batch * 3.0).reshape(batch, 3),
        Inner(torch.ones(batch, 2, 4), batch_size=[batch, 2]),
        batch_size=[batch],
    )


def test_tree_round_trip_keeps_class_structure_and_metadata() -> None:
    sample = make_sample()
    sample.names = ["n"]
    leaves, spec = pytree.tree_flatten(sample)
    assert len(leaves) == 2  # the tensors; the string travels in the spec
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert type(rebuilt) is Sample and type(rebuilt.inner) is Inner
    assert rebuilt.batch_size == (5,) and rebuilt.inner.batch_size == (5, 2)
    assert rebuilt.label == "train" and rebuilt.names == ["n"]
    doubled = pytree.tree_map(lambda t: t * 2, sample)
    assert type(doubled) is Sample and doubled.a[1, 0].item() == 6


def test_vmap_hides_the_mapped_dim_inside_and_restores_it_outside() -> None:
    sample = make_sample()
    seen = []

    def fn(s: Sample) -> Sample:
        seen.append((s.batch_size, s.inner.batch_size, s.a.shape))
        return s * 2

    out = torch.vmap(fn)(sample)
    assert seen == [(torch.Size([]), torch.Size([2]), torch.Size([3]))]
    assert type(out) is Sample and out.batch_size == (5,) and out.inner.batch_size == (5, 2)
    torch.testing.assert_close(out.a, sample.a * 2)
    assert out.label == "train"


def test_vmap_in_dims_and_out_dims() -> None:
    td = TensorDict({"x": torch.randn(4, 3, 2), "y": torch.randn(4, 3)}, [4, 3])

    def total(t: TensorDict) -> torch.Tensor:
        assert t.batch_size == (4,)
        return t["x"].sum(-1) + t["y"]

    out = torch.vmap(total, in_dims=1)(td)  # map over batch dim 1
    assert out.shape == (3, 4)
    torch.testing.assert_close(out, (td["x"].sum(-1) + td["y"]).T)

    def build(x: torch.Tensor) -> TensorDict:
        return TensorDict({"x": x, "x2": x * 2}, batch_size=[4])

    made = torch.vmap(build, in_dims=1, out_dims=1)(torch.randn(4, 7))
    assert made.batch_size == (4, 7) and made["x2"].shape == (4, 7)
    stacked_first = torch.vmap(build, in_dims=1)(torch.randn(4, 7))
    assert stacked_first.batch_size == (7, 4)


def test_vmap_with_unbatched_tensor_class_argument() -> None:
    td = TensorDict({"x": torch.ones(3)}, [3])
    scales = torch.arange(4.0)
    out = torch.vmap(lambda t, s: t * s, (None, 0))(td, scales)
    assert out.batch_size == (4, 3)
    torch.testing.assert_close(out["x"], scales[:, None].expand(4, 3))


def test_ensemble_of_four_mlps_matches_a_loop() -> None:
    torch.manual_seed(0)

    def mlp() -> nn.Module:
        return nn.Sequential(
            nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2)
        )

    models = [mlp() for _ in range(4)]
    params = from_modules(*models)
    assert params.batch_size == (4,) and params["0", "weight"].shape == (4, 16, 5)
    base = copy.deepcopy(models[0]).to("meta")

    def call(p: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with p.to_module(base):
            return base(x)

    x = torch.randn(10, 5)
    same_input = torch.vmap(call, (0, None))(params, x)
    expected = torch.stack([m(x) for m in models])
    assert same_input.shape == (4, 10, 2)
    torch.testing.assert_close(same_input, expected)
    xs = torch.randn(4, 10, 5)  # one batch per model
    per_model = torch.vmap(call, (0, 0))(params, xs)
    torch.testing.assert_close(per_model, torch.stack([m(xi) for m, xi in zip(models, xs)]))
    # gradients land on the stacked parameters, per model, like the loop's
    per_model.sum().backward()
    loop = sum(m(xi).sum() for m, xi in zip(models, xs))
    loop.backward()
    torch.testing.assert_close(params["0", "weight"].grad[2], models[2][0].weight.grad)


def test_grad_and_vmap_compose() -> None:
    model = nn.Linear(3, 1)
    params = TensorDict.from_module(model).detach().clone()

    def loss(p: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with p.to_module(model):
            return model(x).sum()

    per_sample = torch.vmap(torch.func.grad(loss), (None, 0))(params, torch.randn(6, 3))
    assert type(per_sample) is TensorDict
    assert per_sample.batch_size == (6,) and per_sample["weight"].shape == (6, 1, 3)
    assert isinstance(model.weight, nn.Parameter)


def test_non_tensor_entries_travel_in_the_spec() -> None:
    td = TensorDict({"x": torch.zeros(2, 3)}, [2])
    td["tag"] = "hello"
    out = torch.vmap(lambda t: t + 1)(td)
    assert out["tag"] == "hello" and out["x"].eq(1).all()


@pytest.mark.parametrize("locked", [False, True])
def test_lock_is_kept(locked: bool) -> None:
    td = TensorDict({"x": torch.zeros(2, 3)}, [2], lock=locked)
    out = pytree.tree_map(lambda t: t, td)
    assert out.is_locked is locked


@pytest.mark.filterwarnings("ignore:There is a performance drop")
def test_seed_vmap_over_expanded_params_of_a_tensordict_module() -> None:
    td = TensorDict({"input": torch.randn(3, 4), "hidden": torch.randn(3, 8)}, [3])
    td_module = TensorDictModule(nn.GRUCell(4, 8), in_keys=["input", "hidden"], out_keys=["output"])
    params = TensorDict.from_module(td_module)
    params_repeat = params.expand(4)
    assert params_repeat.batch_size == (4,) and params_repeat["module"].batch_size == (4,)
    assert params_repeat["module", "weight_ih"].shape == (4, 24, 4)
    assert params_repeat["module", "bias_hh"].shape == (4, 24)

    def func(td: TensorDict, params: TensorDict) -> TensorDict:
        with params.to_module(td_module):
            return td_module(td)

    td_vmap = torch.vmap(func, (None, 0))(td.clone(), params_repeat)
    assert td_vmap.batch_size == (4, 3)
    assert [td_vmap[key].shape for key in ("hidden", "input", "output")] == [
        (4, 3, 8),
        (4, 3, 4),
        (4, 3, 8),
    ]
    expected = td_module(td.clone())["output"]
    torch.testing.assert_close(td_vmap["output"], expected.expand(4, 3, 8))
    assert isinstance(td_module.module.weight_ih, nn.Parameter)


def test_vmap_over_a_tensordict_module() -> None:
    module = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"])
    td = TensorDict({"x": torch.randn(4, 5, 3)}, [4, 5])
    out = torch.vmap(module)(td.clone())
    assert out.batch_size == (4, 5)
    torch.testing.assert_close(out["y"], module.module(td["x"]))
    by_column = torch.vmap(module, in_dims=1)(td.clone())
    assert by_column.batch_size == (5, 4) and by_column["y"].shape == (5, 4, 2)
    kept = torch.vmap(module, in_dims=1, out_dims=1)(td.clone())
    assert kept.batch_size == (4, 5)
    torch.testing.assert_close(kept["y"], out["y"])
    typed = TensorDictModule(lambda a: a[:2] * 10, ["a"], [("inner", "c")], schema=Sample)
    sample = make_sample()
    mapped = torch.vmap(typed)(sample)
    assert type(mapped) is Sample and type(mapped.inner) is Inner
    assert mapped.inner.batch_size == (5, 2)
    torch.testing.assert_close(mapped.inner.c, sample.a[:, :2] * 10)


def test_seed_004_dense_then_lazy_gradients() -> None:
    torch.manual_seed(0)
    empty_module = nn.Linear(3, 4, device="meta")
    n_models = 2
    modules = [nn.Linear(3, 4) for _ in range(n_models)]
    params = from_modules(*modules)
    assert params.batch_size == (2,)
    assert [params[k].shape for k in ("weight", "bias")] == [(2, 4, 3), (2, 4)]
    assert all(isinstance(params[k], nn.Parameter) for k in ("weight", "bias"))

    def exec_module(params: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with params.to_module(empty_module):
            return empty_module(x)

    x = torch.randn(3)
    y = torch.vmap(exec_module, (0, None))(params, x)
    assert y.shape == (n_models, 4)
    # since lazy_stack = False, backprop leaves the original params untouched
    y.sum().backward()
    assert params["weight"].grad.norm() > 0
    assert modules[0].weight.grad is None
    lazy = TensorDict.from_modules(*modules, lazy_stack=True)
    assert [lazy[k].shape for k in ("weight", "bias")] == [(2, 4, 3), (2, 4)]
    y = torch.vmap(exec_module, (0, None))(lazy, x)
    assert y.shape == (n_models, 4)
    y.sum().backward()
    assert modules[0].weight.grad is not None
    torch.testing.assert_close(modules[1].weight.grad, params["weight"].grad[1])
