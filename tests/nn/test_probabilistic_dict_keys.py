"""A dict ``in_keys`` of the probabilistic modules is {distribution keyword: key}, as
tensordict 0.15.3 reads it (TensorDictModule's dict runs the other way): the module, the
sequential's introspection, composite distributions, and side by side with tensordict."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import distributions as d

from tensorclass import TensorClass, TensorDict
from tensorclass.errors import KeyNotFoundError
from tensorclass.nn import (
    CompositeDistribution,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    set_interaction_type,
)

SCALE_KEY = ("p", "my_scale")


def normal_module(lib_nn: Any = None) -> Any:
    nn_ns = lib_nn or __import__("tensorclass.nn", fromlist=["nn"])
    return nn_ns.ProbabilisticTensorDictModule(
        in_keys={"loc": "my_loc", "scale": SCALE_KEY},
        out_keys=["action"],
        distribution_class=d.Normal,
        return_log_prob=True,
        log_prob_key="lp",
    )


def normal_params(lib: Any = TensorDict) -> Any:
    return lib(
        {
            "my_loc": torch.tensor([0.0, 1.0, -2.0]),
            "p": {"my_scale": torch.tensor([1.0, 2.0, 0.5])},
        },
        [3],
    )


def test_dict_in_keys_map_keywords_to_keys() -> None:
    module = normal_module()
    assert module.in_keys == ["my_loc", SCALE_KEY]
    assert module.dist_params_keys == ["my_loc", SCALE_KEY]
    dist = module.get_dist(normal_params())
    assert isinstance(dist, d.Normal)
    assert dist.loc.tolist() == [0.0, 1.0, -2.0] and dist.scale.tolist() == [1.0, 2.0, 0.5]
    out = module(normal_params())
    assert out["action"].tolist() == [0.0, 1.0, -2.0]  # the mean: deterministic by default
    torch.testing.assert_close(out["lp"], dist.log_prob(out["action"]))
    torch.testing.assert_close(module.log_prob(out), out["lp"])
    assert isinstance(module.build_dist_from_params(normal_params()), d.Normal)
    assert "in_keys=['my_loc', ('p', 'my_scale')]" in repr(module)


def test_dict_in_keys_call_with_tensors_by_key_name() -> None:
    action, lp = normal_module()(my_loc=torch.zeros(2), p_my_scale=torch.ones(2))
    assert action.tolist() == [0.0, 0.0]
    torch.testing.assert_close(lp, d.Normal(0.0, 1.0).log_prob(action))


def test_a_missing_parameter_names_its_key() -> None:
    with pytest.raises(KeyError, match="my_loc"):
        normal_module()(TensorDict({"p": {"my_scale": torch.ones(3)}}, [3]))


def test_a_keyword_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(ValueError, match="keyword name"):
        ProbabilisticTensorDictModule(
            in_keys={("p", "loc"): "loc"},  # type: ignore[dict-item]  # the old direction
            out_keys=["x"],
            distribution_class=d.Normal,
        )


class Obs(TensorClass):
    mu: torch.Tensor
    sigma: torch.Tensor
    action: torch.Tensor | None = None


def test_schema_checks_the_dict_values() -> None:
    module = ProbabilisticTensorDictModule(
        {"loc": "mu", "scale": "sigma"}, ["action"], distribution_class=d.Normal, schema=Obs
    )
    out = module(Obs(mu=torch.zeros(2), sigma=torch.ones(2), batch_size=[2]))
    assert isinstance(out, Obs) and out.action is not None and out.action.tolist() == [0.0, 0.0]
    with pytest.raises(KeyNotFoundError, match="'loc' is not a field"):
        ProbabilisticTensorDictModule(
            {"mu": "loc", "sigma": "scale"}, ["action"], distribution_class=d.Normal, schema=Obs
        )


def chain_of_two() -> ProbabilisticTensorDictSequential:
    first = ProbabilisticTensorDictModule(
        ["loc", "scale"], ["x"], distribution_class=d.Normal, return_log_prob=True
    )
    shift = TensorDictModule(lambda x: (x + 1, x.abs() + 1), ["x"], ["loc2", ("n", "scale2")])
    second = ProbabilisticTensorDictModule(
        {"loc": "loc2", "scale": ("n", "scale2")}, ["y"], distribution_class=d.Normal
    )
    return ProbabilisticTensorDictSequential(first, shift, second, return_composite=True)


def test_sequential_introspection_reads_the_dict_values() -> None:
    seq = chain_of_two()
    assert seq.in_keys == ["loc", "scale"]
    assert seq.dist_params_keys == ["loc2", ("n", "scale2"), "loc", "scale"]
    assert seq.dist_sample_keys == ["y", "x"]
    plain = ProbabilisticTensorDictSequential(*seq, return_composite=False)
    assert plain.dist_params_keys == seq.dist_params_keys  # every module's, either way
    data = TensorDict({"loc": torch.zeros(5), "scale": torch.ones(5)}, [5])
    params = plain.get_dist_params(data.clone())
    assert {"loc2", ("n", "scale2")} <= set(params.keys(include_nested=True))
    dist = plain.build_dist_from_params(params)
    assert isinstance(dist, d.Normal)
    torch.testing.assert_close(dist.loc, params["loc2"])
    torch.testing.assert_close(dist.scale, params["n", "scale2"])


def test_return_composite_scores_through_dict_keys() -> None:
    seq = chain_of_two()
    data = TensorDict({"loc": torch.zeros(5), "scale": torch.ones(5)}, [5])
    composite = seq.get_dist(data)
    assert isinstance(composite, CompositeDistribution) and list(composite) == ["x", "y"]
    with set_interaction_type("random"):
        out = seq(data.clone())
    x, y = out["x"], out["y"]
    lp = seq.log_prob(out)
    torch.testing.assert_close(lp["y_log_prob"], d.Normal(x + 1, x.abs() + 1).log_prob(y))


def test_composite_distribution_reads_params_through_a_dict() -> None:
    arm = ProbabilisticTensorDictModule(
        in_keys={"params": ("net", "out")},
        distribution_class=CompositeDistribution,
        distribution_kwargs={"distribution_map": {"move": d.Normal, "grip": d.Categorical}},
        return_log_prob=True,
    )
    assert arm.in_keys == [("net", "out")] and arm.dist_params_keys == [("net", "out")]
    raw = {
        "move": {"loc": torch.zeros(3, 2), "scale": torch.ones(3, 2)},
        "grip": {"logits": torch.zeros(3, 4)},
    }
    out = arm(TensorDict({("net", "out"): TensorDict(raw, [3])}, [3]))
    assert out["move"].shape == (3, 2) and out["grip"].shape == (3,)
    assert out["move_log_prob"].shape == (3, 2)


# -- side by side with tensordict 0.15.3 -----------------------------------------------------


def test_same_keys_and_values_as_tensordict() -> None:
    peer = pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    ours, theirs = normal_module(), normal_module(peer_nn)
    assert ours.in_keys == theirs.in_keys
    assert ours.dist_params_keys == theirs.dist_params_keys
    assert ours.out_keys == theirs.out_keys
    our_out, their_out = ours(normal_params()), theirs(normal_params(peer.TensorDict))
    for key in ("action", "lp"):
        torch.testing.assert_close(our_out[key], their_out[key])
    our_dist = ours.get_dist(normal_params())
    their_dist = theirs.get_dist(normal_params(peer.TensorDict))
    torch.testing.assert_close(our_dist.scale, their_dist.scale)
    torch.testing.assert_close(
        ours(my_loc=torch.ones(2), p_my_scale=torch.ones(2))[1],
        theirs(my_loc=torch.ones(2), p_my_scale=torch.ones(2))[1],
    )
    for nn_ns in (peer_nn, __import__("tensorclass.nn", fromlist=["nn"])):
        with pytest.raises(ValueError):
            nn_ns.ProbabilisticTensorDictModule(
                in_keys={("p", "loc"): "loc"}, out_keys=["x"], distribution_class=d.Normal
            )


def test_same_sequential_introspection_as_tensordict() -> None:
    peer = pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    chains = []
    for nn_ns in (__import__("tensorclass.nn", fromlist=["nn"]), peer_nn):
        shift = nn_ns.TensorDictModule(
            lambda x: (x + 1, x.abs() + 1), ["x"], ["loc2", ("n", "scale2")]
        )
        chains.append(
            nn_ns.ProbabilisticTensorDictSequential(
                nn_ns.ProbabilisticTensorDictModule(
                    ["loc", "scale"], ["x"], distribution_class=d.Normal
                ),
                shift,
                nn_ns.ProbabilisticTensorDictModule(
                    {"loc": "loc2", "scale": ("n", "scale2")}, ["y"], distribution_class=d.Normal
                ),
                return_composite=True,
            )
        )
    ours, theirs = chains
    for name in ("in_keys", "dist_params_keys", "dist_sample_keys"):
        assert getattr(ours, name) == getattr(theirs, name), name
    raw = {"loc": torch.tensor([0.5, -1.0]), "scale": torch.tensor([1.0, 2.0])}
    our_out = ours(TensorDict(raw, [2]))
    their_out = theirs(peer.TensorDict(raw, [2]))
    for key in ("x", "loc2", ("n", "scale2"), "y"):
        torch.testing.assert_close(our_out[key], their_out[key])
    torch.testing.assert_close(
        ours.log_prob(our_out)["y_log_prob"], theirs.log_prob(their_out)["y_log_prob"]
    )


def test_same_composite_module_as_tensordict() -> None:
    peer = pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    dmap = {"cont": d.Normal, ("nested", "disc"): d.Categorical}
    raw = {
        "cont": {"loc": torch.tensor([[0.5, -1.0]]), "scale": torch.ones(1, 2)},
        ("nested", "disc"): {"logits": torch.tensor([[0.1, 2.0, -1.0]])},
    }
    results = []
    for lib, nn_ns in (
        (TensorDict, __import__("tensorclass.nn", fromlist=["nn"])),
        (peer.TensorDict, peer_nn),
    ):
        module = nn_ns.ProbabilisticTensorDictModule(
            in_keys={"params": ("net", "out")},
            distribution_class=nn_ns.CompositeDistribution,
            distribution_kwargs={"distribution_map": dmap},
            return_log_prob=True,
        )
        out = module(lib({("net", "out"): lib(raw, [1])}, [1]))
        results.append((module.in_keys, module.out_keys, out))
    (our_in, our_keys, our_out), (their_in, their_keys, their_out) = results
    assert our_in == their_in and our_keys == their_keys
    for key in their_keys:
        torch.testing.assert_close(our_out[key], their_out[key])
