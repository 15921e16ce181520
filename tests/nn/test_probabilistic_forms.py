"""The forms of ``ProbabilisticTensorDictSequential`` and interaction types that tensordict
0.15.3 accepts: a chain ending with a module that draws nothing, a chain given as an
(ordered) dict or a list, and ``InteractionType.MEDIAN``. Each expectation was read from
tensordict 0.15.3."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
import torch
from torch import distributions as d
from torch import nn

from tensorclass import TensorDict
from tensorclass.nn import (
    CompositeDistribution,
    InteractionType,
    NormalParamExtractor,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
    set_interaction_type,
)


def _parts() -> tuple[TensorDictModule, ProbabilisticTensorDictModule, TensorDictModule]:
    torch.manual_seed(0)
    net = TensorDictModule(
        nn.Sequential(nn.Linear(3, 4), NormalParamExtractor()),
        in_keys=["obs"],
        out_keys=["loc", "scale"],
    )
    prob = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["action"], distribution_class=d.Normal
    )
    post = TensorDictModule(lambda a: a * 2, in_keys=["action"], out_keys=["action2"])
    return net, prob, post


def test_a_chain_may_end_with_a_module_that_draws_nothing() -> None:
    net, prob, post = _parts()
    chain = ProbabilisticTensorDictSequential(net, prob, post)
    assert chain.return_composite  # tensordict's default for such a chain
    out = chain(TensorDict(obs=torch.zeros(5, 3), batch_size=[5]))
    assert torch.equal(out["action2"], out["action"] * 2)
    assert chain.out_keys == ["loc", "scale", "action", "action2"]
    assert chain.last is prob
    dist = chain.get_dist(TensorDict(obs=torch.zeros(5, 3), batch_size=[5]))
    assert isinstance(dist, CompositeDistribution)
    log_prob = chain.log_prob(out)  # per key, as composite_lp_aggregate() is off
    assert isinstance(log_prob, TensorDict) and log_prob.batch_size == (5,)


def test_return_composite_false_needs_a_probabilistic_end() -> None:
    net, prob, post = _parts()
    with pytest.raises(TypeError, match="must end with"):
        ProbabilisticTensorDictSequential(net, prob, post, return_composite=False)
    with pytest.raises(ValueError):
        ProbabilisticTensorDictSequential()


def test_a_chain_given_as_an_ordered_dict() -> None:
    net, prob, _ = _parts()
    chain = ProbabilisticTensorDictSequential(OrderedDict(net=net, prob=prob))
    out = chain(TensorDict(obs=torch.zeros(5, 3), batch_size=[5]))
    assert out["action"].shape == (5, 2)
    assert isinstance(chain.module, nn.ModuleDict)
    assert chain["net"] is net and len(chain) == 2
    with pytest.raises(KeyError):
        chain[0]  # a dict is indexed by name, as in tensordict
    assert list(chain.state_dict()) == ["module.net.module.0.weight", "module.net.module.0.bias"]
    assert isinstance(chain.get_dist(TensorDict(obs=torch.zeros(5, 3), batch_size=[5])), d.Normal)


def test_plain_sequentials_take_a_dict_or_a_list_too() -> None:
    net, _, _ = _parts()
    named = TensorDictSequential({"net": net})
    assert isinstance(named.module, nn.ModuleDict) and named["net"] is net
    listed = TensorDictSequential([net])
    assert isinstance(listed.module, nn.ModuleList) and listed[0] is net
    assert list(listed.state_dict()) == ["module.0.module.0.weight", "module.0.module.0.bias"]


class WithMedian(d.Normal):
    """A distribution that defines a median (torch's do not)."""

    @property
    def median(self) -> torch.Tensor:
        return self.loc


def test_interaction_type_median() -> None:
    assert [kind.value for kind in InteractionType] == [
        "mode",
        "median",
        "mean",
        "random",
        "deterministic",
    ]
    assert InteractionType.from_str("MEDIAN") is InteractionType.MEDIAN
    params = TensorDict(loc=torch.ones(2), scale=torch.ones(2), batch_size=[2])
    module = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["action"], distribution_class=WithMedian
    )
    with set_interaction_type(InteractionType.MEDIAN):
        assert module(params.clone())["action"].tolist() == [1.0, 1.0]
    by_default = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=WithMedian,
        default_interaction_type="median",
    )
    assert by_default(params.clone())["action"].tolist() == [1.0, 1.0]


def test_median_of_a_distribution_without_one_is_not_implemented() -> None:
    module = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["action"], distribution_class=d.Normal
    )
    with set_interaction_type("median"), pytest.raises(NotImplementedError, match="median"):
        module(TensorDict(loc=torch.ones(2), scale=torch.ones(2), batch_size=[2]))


def test_side_by_side_with_tensordict() -> None:
    peer = pytest.importorskip("tensordict.nn")
    import tensordict

    def peer_parts() -> tuple[Any, Any, Any]:
        net = peer.TensorDictModule(
            nn.Sequential(nn.Linear(3, 4), peer.NormalParamExtractor()),
            in_keys=["obs"],
            out_keys=["loc", "scale"],
        )
        prob = peer.ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"], out_keys=["action"], distribution_class=d.Normal
        )
        post = peer.TensorDictModule(lambda a: a * 2, in_keys=["action"], out_keys=["action2"])
        return net, prob, post

    net, prob, post = peer_parts()
    chain = peer.ProbabilisticTensorDictSequential(net, prob, post)
    assert chain.return_composite
    out = chain(tensordict.TensorDict(obs=torch.zeros(5, 3), batch_size=[5]))
    assert torch.equal(out["action2"], out["action"] * 2)
    named = peer.ProbabilisticTensorDictSequential(OrderedDict(net=net, prob=prob))
    assert isinstance(named.module, nn.ModuleDict)
    assert [kind.value for kind in peer.InteractionType] == [kind.value for kind in InteractionType]
    with peer.set_interaction_type("median"), pytest.raises(NotImplementedError):
        prob(tensordict.TensorDict(loc=torch.ones(2), scale=torch.ones(2), batch_size=[2]))
