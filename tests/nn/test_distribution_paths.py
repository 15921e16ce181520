"""tensordict's ``tensordict.nn`` module paths (``nn.distributions`` and its modules,
``nn.common``, ``nn.sequence``, ``nn.utils``, ``nn.probabilistic``) hold the same objects as
``tensorclass.nn``, and ``Delta``/``TruncatedStandardNormal`` behave as tensordict 0.15.3's."""

from __future__ import annotations

import pytest
import torch

import tensorclass.nn as tnn
from tensorclass.nn.common import TensorDictModule, TensorDictModuleBase, dispatch
from tensorclass.nn.distributions import Delta, NormalParamExtractor, continuous, discrete
from tensorclass.nn.distributions.composite import CompositeDistribution
from tensorclass.nn.distributions.truncated_normal import (
    TruncatedNormal,
    TruncatedStandardNormal,
)
from tensorclass.nn.probabilistic import InteractionType, set_interaction_type
from tensorclass.nn.sequence import TensorDictSequential
from tensorclass.nn.utils import expln, mappings, set_skip_existing


def test_paths_hold_the_objects_of_tensorclass_nn() -> None:
    assert CompositeDistribution is tnn.CompositeDistribution
    assert NormalParamExtractor is tnn.NormalParamExtractor is continuous.NormalParamExtractor
    assert discrete.OneHotCategorical is tnn.OneHotCategorical
    assert TruncatedNormal is tnn.TruncatedNormal
    assert TensorDictModule is tnn.TensorDictModule
    assert TensorDictModuleBase is tnn.TensorDictModuleBase and dispatch is tnn.dispatch
    assert TensorDictSequential is tnn.TensorDictSequential
    assert InteractionType is tnn.InteractionType
    assert set_interaction_type is tnn.set_interaction_type
    assert mappings is tnn.mappings and set_skip_existing is tnn.set_skip_existing
    assert expln(torch.zeros(1)).tolist() == [1.0]
    assert not hasattr(tnn, "Delta")  # as tensordict.nn: only in nn.distributions


def test_delta_shapes_and_draws() -> None:
    param = torch.tensor([1.0, 2.0], requires_grad=True)
    dist = Delta(param)
    assert dist.batch_shape == () and dist.event_shape == (2,)
    assert dist.sample().tolist() == [1.0, 2.0]
    assert dist.sample((3,)).shape == (3, 2)
    assert dist.rsample((2,)).shape == (2, 2) and dist.rsample().requires_grad
    assert dist.mean is param and dist.mode is param and dist.deterministic_sample is param
    assert Delta(torch.zeros(4, 3)).batch_shape == (4,)


def test_delta_log_prob_is_plus_or_minus_infinity() -> None:
    dist = Delta(torch.tensor([1.0, 2.0]))
    assert dist.log_prob(torch.tensor([1.0, 2.0])).item() == float("inf")
    assert dist.log_prob(torch.tensor([1.0, 3.0])).item() == float("-inf")
    # within atol + rtol * |param|
    assert dist.log_prob(torch.tensor([1.0, 2.0 + 1e-7])).item() == float("inf")
    # given shapes are taken as they are: no event dim, one log-prob per element
    per_element = Delta(torch.zeros(3, 2), batch_shape=(3,))
    assert per_element.log_prob(torch.zeros(3, 2)).shape == (3, 2)
    events = Delta(torch.zeros(3, 2), event_shape=(2,))
    assert events.log_prob(torch.zeros(3, 2)).tolist() == [float("inf")] * 3


def test_delta_update_moves_the_mass() -> None:
    dist = Delta(torch.zeros(2))
    dist.update(torch.ones(2))
    assert dist.sample().tolist() == [1.0, 1.0]


def test_truncated_standard_normal() -> None:
    dist = TruncatedStandardNormal(torch.tensor(-1.0), torch.tensor(2.0))
    assert isinstance(dist, TruncatedNormal)
    assert dist.mean.item() == pytest.approx(0.2296, abs=1e-4)
    assert dist.variance.item() == pytest.approx(0.5198, abs=1e-4)
    assert dist.log_prob(torch.tensor(0.5)).item() == pytest.approx(-0.8438, abs=1e-4)
    assert dist.entropy().item() == pytest.approx(1.0050, abs=1e-4)


def test_side_by_side_with_tensordict() -> None:
    peer = pytest.importorskip("tensordict.nn.distributions")
    from tensordict.nn.distributions.truncated_normal import TruncatedStandardNormal as PeerStd

    for param in (torch.tensor([1.0, 2.0]), torch.zeros(4, 3)):
        ours, theirs = Delta(param), peer.Delta(param)
        assert ours.batch_shape == theirs.batch_shape
        assert ours.event_shape == theirs.event_shape
        value = param.clone()
        assert torch.equal(ours.log_prob(value), theirs.log_prob(value))
        value[..., 0] += 1
        assert torch.equal(ours.log_prob(value), theirs.log_prob(value))
    a, b = torch.tensor(-1.0), torch.tensor(2.0)
    assert torch.allclose(TruncatedStandardNormal(a, b).mean, PeerStd(a, b).mean)
    assert torch.allclose(TruncatedStandardNormal(a, b).entropy(), PeerStd(a, b).entropy())
