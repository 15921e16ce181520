"""tensordict's introspection of probabilistic modules: parameter and sample keys, the
distribution from given parameters, the parameters a chain computes."""

from __future__ import annotations

import torch
from torch import nn
from torch.distributions import Normal

from tensorclass import TensorDict
from tensorclass.nn import (
    InteractionType,
    NormalParamExtractor,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    set_interaction_type,
)


def make_chain() -> ProbabilisticTensorDictSequential:
    return ProbabilisticTensorDictSequential(
        TensorDictModule(
            nn.Sequential(nn.Linear(3, 4), NormalParamExtractor()), ["obs"], ["loc", "scale"]
        ),
        ProbabilisticTensorDictModule(
            ["loc", "scale"],
            ["action"],
            distribution_class=Normal,
            return_log_prob=True,
            log_prob_key="lp",
            default_interaction_type="mode",
            num_samples=2,
        ),
    )


def test_module_keys() -> None:
    module = make_chain().last
    assert module.dist_params_keys == ["loc", "scale"]
    assert module.dist_sample_keys == ["action"]
    assert module.log_prob_key == "lp" and module.log_prob_keys == ["lp"]
    assert module.out_keys == ["action", "lp"]


def test_chain_forwards_the_last_module() -> None:
    chain = make_chain()
    assert chain.dist_params_keys == ["loc", "scale"] and chain.dist_sample_keys == ["action"]
    assert chain.log_prob_key == "lp" and chain.log_prob_keys == ["lp"]
    assert chain.default_interaction_type is InteractionType.MODE
    assert chain.num_samples == (2,)


def test_build_dist_from_params_runs_no_other_module() -> None:
    chain = make_chain()
    params = TensorDict({"loc": torch.zeros(5), "scale": torch.ones(5)}, [5])
    dist = chain.build_dist_from_params(params)
    assert isinstance(dist, Normal) and torch.equal(dist.mean, torch.zeros(5))
    assert set(params.keys()) == {"loc", "scale"}
    assert isinstance(chain.last.build_dist_from_params(params), Normal)


def test_get_dist_params_matches_the_chain() -> None:
    chain = make_chain()
    td = TensorDict({"obs": torch.randn(5, 3)}, [5])
    params = chain.get_dist_params(td.clone())
    assert set(params.keys()) == {"obs", "loc", "scale"}
    full = chain(td.clone())
    assert full["loc"].shape == (2, 5, 2) and torch.equal(params["loc"], full["loc"][0])
    out = TensorDict({}, [5])
    assert chain.get_dist_params(td.clone(), out) is out and "loc" in out


def test_default_interaction_type_without_one_is_the_current_type() -> None:
    chain = ProbabilisticTensorDictSequential(
        TensorDictModule(nn.Identity(), ["loc"], ["loc2"]),
        ProbabilisticTensorDictModule(
            ["loc"], ["x"], distribution_class=Normal, distribution_kwargs={"scale": 1.0}
        ),
    )
    assert chain.default_interaction_type is InteractionType.DETERMINISTIC
    chain.last.default_interaction_type = None  # type: ignore[assignment]
    assert chain.default_interaction_type is None
    with set_interaction_type("random"):
        assert chain.default_interaction_type is InteractionType.RANDOM
