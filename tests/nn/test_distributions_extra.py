"""TruncatedNormal, OneHotCategorical, rand_one_hot, AddStateIndependentNormalScale,
NormalParamExtractor options and the named mappings, against torch."""

import math

import pytest
import torch
from torch import distributions as d
from torch.nn import functional as F

from tensorclass import TensorDict
from tensorclass.nn import (
    AddStateIndependentNormalScale,
    NormalParamExtractor,
    OneHotCategorical,
    ProbabilisticTensorDictModule,
    TruncatedNormal,
    add_custom_mapping,
    biased_softplus,
    inv_softplus,
    mappings,
    rand_one_hot,
    set_interaction_type,
)


def truncated() -> TruncatedNormal:
    return TruncatedNormal(torch.tensor([0.0, 1.0, -2.0]), torch.tensor([1.0, 2.0, 0.5]), -1.0, 2.0)


def numeric(dist: TruncatedNormal) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean, variance and entropy by integrating torch's Normal density over [a, b]."""
    grid = torch.linspace(0, 1, 20001, dtype=torch.float64)[:, None]
    a, b = dist.a.double(), dist.b.double()
    x = a + (b - a) * grid
    base = d.Normal(dist.loc.double(), dist.scale.double())
    z = base.cdf(b) - base.cdf(a)
    p = base.log_prob(x).exp() / z
    mean = torch.trapezoid(x * p, x, dim=0)
    var = torch.trapezoid((x - mean) ** 2 * p, x, dim=0)
    ent = -torch.trapezoid(p * p.log(), x, dim=0)
    return mean.float(), var.float(), ent.float()


def test_truncated_normal_matches_the_normal_restricted_to_the_interval() -> None:
    dist = truncated()
    base = d.Normal(dist.loc, dist.scale)
    z = base.cdf(dist.b) - base.cdf(dist.a)
    value = torch.tensor([0.5, 1.5, -0.9])
    torch.testing.assert_close(dist.log_prob(value), base.log_prob(value) - z.log())
    torch.testing.assert_close(dist.cdf(value), (base.cdf(value) - base.cdf(dist.a)) / z)
    torch.testing.assert_close(dist.icdf(dist.cdf(value)), value, atol=1e-4, rtol=1e-4)
    mean, var, ent = numeric(dist)
    torch.testing.assert_close(dist.mean, mean, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dist.variance, var, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(dist.entropy(), ent, atol=1e-4, rtol=1e-4)
    assert dist.mode.tolist() == [0.0, 1.0, -1.0]
    strict = TruncatedNormal(dist.loc, dist.scale, -1.0, 2.0, validate_args=True)
    with pytest.raises(ValueError, match="support"):  # validated, as torch does
        strict.log_prob(torch.tensor([3.0, 0.0, 0.0]))
    loose = TruncatedNormal(dist.loc, dist.scale, -1.0, 2.0, validate_args=False)
    assert loose.log_prob(torch.tensor([3.0, 0.0, 0.0]))[0] == -math.inf


def test_truncated_normal_samples_stay_inside_and_are_reparameterized() -> None:
    torch.manual_seed(0)
    loc = torch.tensor([0.0, 1.0], requires_grad=True)
    dist = TruncatedNormal(loc, torch.ones(2), -1.0, 2.0)
    draws = dist.rsample((20000,))
    assert draws.shape == (20000, 2)
    assert bool((draws >= -1).all() and (draws <= 2).all())
    torch.testing.assert_close(draws.mean(0), dist.mean, atol=0.03, rtol=0)
    draws.sum().backward()
    assert loc.grad is not None and bool((loc.grad > 0).all())
    assert dist.expand(torch.Size([3, 2])).batch_shape == (3, 2)
    with pytest.raises(ValueError, match="smaller than the upper bound"):
        TruncatedNormal(0.0, 1.0, 1.0, 0.0)


def test_truncated_normal_in_a_module() -> None:
    module = ProbabilisticTensorDictModule(
        ["loc", "scale", "a", "b"], ["x"], distribution_class=TruncatedNormal, return_log_prob=True
    )
    data = TensorDict(
        {"loc": torch.zeros(4), "scale": torch.ones(4), "a": -torch.ones(4), "b": torch.ones(4)},
        [4],
    )
    with set_interaction_type("random"):
        out = module(data)
    assert bool((out["x"].abs() <= 1).all())
    base = d.Normal(0.0, 1.0)
    z = base.cdf(torch.tensor(1.0)) - base.cdf(torch.tensor(-1.0))
    torch.testing.assert_close(out["sample_log_prob"], base.log_prob(out["x"]) - z.log())


def test_one_hot_categorical_is_torchs_with_mode_and_rsample() -> None:
    logits = torch.tensor([[0.0, 2.0, 1.0], [3.0, 3.0, 0.0]])
    ours, theirs = OneHotCategorical(logits=logits), d.OneHotCategorical(logits=logits)
    value = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    torch.testing.assert_close(ours.log_prob(value), theirs.log_prob(value))
    torch.testing.assert_close(ours.entropy(), theirs.entropy())
    torch.testing.assert_close(ours.mean, theirs.mean)
    assert ours.event_shape == theirs.event_shape and ours.batch_shape == (2,)
    assert ours.mode.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]  # first on ties
    assert torch.equal(ours.deterministic_sample, ours.mode)
    for method in ("relaxed_one_hot", "pass_through"):
        leaf = logits.clone().requires_grad_()
        draw = OneHotCategorical(logits=leaf, grad_method=method).rsample((7,))
        assert draw.shape == (7, 2, 3) and bool((draw.sum(-1) == 1).all())
        assert set(draw.detach().unique().tolist()) <= {0.0, 1.0}
        (draw * torch.arange(3.0)).sum().backward()
        assert leaf.grad is not None and bool(leaf.grad.abs().sum() > 0)
    with pytest.raises(ValueError, match="grad_method"):
        OneHotCategorical(logits=logits, grad_method="gumbel")


def test_rand_one_hot_draws_from_the_softmax() -> None:
    torch.manual_seed(0)
    values = torch.tensor([0.0, 1.0, 2.0]).expand(20000, 3)
    draws = rand_one_hot(values)
    assert draws.dtype == torch.long and bool((draws.sum(-1) == 1).all())
    torch.testing.assert_close(
        draws.float().mean(0), torch.tensor([0.0, 1.0, 2.0]).softmax(-1), atol=0.02, rtol=0
    )
    probs = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    assert rand_one_hot(probs, do_softmax=False).tolist() == [[0, 1], [1, 0]]


def test_mappings_softplus_family() -> None:
    x = torch.linspace(-5, 5, 11)
    assert torch.equal(mappings("exp")(x), x.exp())
    assert torch.equal(mappings("softplus")(x), F.softplus(x))
    assert torch.equal(mappings("relu")(x), x.relu())
    assert torch.equal(mappings("none")(x), x)
    expln = mappings("expln")(x)
    torch.testing.assert_close(expln, torch.where(x <= 0, x.exp(), x.log1p() + 1))
    torch.testing.assert_close(
        inv_softplus(torch.tensor([0.5, 2.0])), torch.tensor([0.5, 2.0]).expm1().log()
    )
    assert inv_softplus(1.0) == pytest.approx(math.log(math.e - 1))
    f = biased_softplus(2.0, min_val=0.1)
    torch.testing.assert_close(f(torch.zeros(1)), torch.tensor([2.0]))
    torch.testing.assert_close(f(x), F.softplus(x + inv_softplus(1.9)) + 0.1)
    g = mappings("biased_softplus_2.0_0.1")
    torch.testing.assert_close(g(x), f(x))
    torch.testing.assert_close(mappings("biased_softplus")(torch.zeros(1)), torch.ones(1))
    assert mappings("biased_softplus_3.0").min_val == 0.01  # type: ignore[attr-defined]
    with pytest.raises(NotImplementedError, match="unknown mapping 'cube'"):
        mappings("cube")
    with pytest.raises(ValueError, match="biased_softplus_a"):
        mappings("biased_softplus_a")
    add_custom_mapping("test_square", torch.square)
    assert torch.equal(mappings("test_square")(x), x.square())
    with pytest.raises(TypeError, match="callable"):
        add_custom_mapping("bad", 3)  # type: ignore[arg-type]


def test_normal_param_extractor_options() -> None:
    x = torch.tensor([[1.0, -2.0, 0.0, -30.0]])
    loc, scale = NormalParamExtractor(scale_mapping="exp", scale_lb=0.5)(x)
    assert loc.tolist() == [[1.0, -2.0]]
    torch.testing.assert_close(scale, torch.tensor([[1.0, 0.5]]))
    add_custom_mapping("test_abs", torch.abs)
    _, scale = NormalParamExtractor(scale_mapping="test_abs", scale_lb=0.0)(x)
    assert scale.tolist() == [[0.0, 30.0]]
    _, scale = NormalParamExtractor(scale_mapping=torch.sigmoid, scale_lb=0.0)(x)
    torch.testing.assert_close(scale, torch.sigmoid(torch.tensor([[0.0, -30.0]])))


def test_add_state_independent_normal_scale() -> None:
    module = AddStateIndependentNormalScale(3, scale_mapping="softplus", init_value=1.0)
    assert isinstance(module.state_independent_scale, torch.nn.Parameter)
    loc = torch.randn(5, 3)
    extra = torch.ones(2)
    out_loc, scale, rest = module(loc, extra)
    assert out_loc is loc and rest is extra
    torch.testing.assert_close(scale, F.softplus(torch.ones(3)).expand(5, 3))
    scale.sum().backward()
    assert module.state_independent_scale.grad is not None
    buffer = AddStateIndependentNormalScale(make_param=False, init_value=-20.0, scale_lb=0.1)
    assert "state_independent_scale" in dict(buffer.named_buffers())
    torch.testing.assert_close(buffer(torch.zeros(2, 4))[1], torch.full((2, 4), 0.1))
    with pytest.raises(RuntimeError, match=r"shape \(3,\)"):
        module(torch.zeros(5, 4))


def test_same_numbers_and_keys_as_tensordict() -> None:
    peer = pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    ours_nn = __import__("tensorclass.nn", fromlist=["nn"])
    loc, scale = torch.tensor([0.0, 1.0, -2.0]), torch.tensor([1.0, 2.0, 0.5])
    ours = TruncatedNormal(loc, scale, -1.0, 2.0)
    theirs = peer_nn.TruncatedNormal(loc, scale, -1.0, 2.0)
    value = torch.tensor([0.5, 1.5, -0.9])
    # tensordict's closed forms drift by ~5e-5 in the far tail (index 2: a is 2 scales
    # above loc); ours match scipy.stats.truncnorm to 1e-12 in float64
    for name in ("mean", "variance"):
        torch.testing.assert_close(getattr(ours, name), getattr(theirs, name), atol=1e-4, rtol=0)
    torch.testing.assert_close(ours.entropy(), theirs.entropy(), atol=1e-4, rtol=0)
    torch.testing.assert_close(ours.log_prob(value), theirs.log_prob(value), atol=1e-4, rtol=0)
    torch.testing.assert_close(ours.cdf(value), theirs.cdf(value), atol=1e-4, rtol=0)
    x = torch.linspace(-4, 4, 8)
    for key in ("exp", "softplus", "expln", "biased_softplus", "biased_softplus_2.0_0.1"):
        torch.testing.assert_close(mappings(key)(x), peer_nn.mappings(key)(x))
    torch.testing.assert_close(NormalParamExtractor()(x), peer_nn.NormalParamExtractor()(x))
    # a composite module: the same keys and the same deterministic values
    dmap = {"cont": d.Normal, ("nested", "disc"): d.Categorical}
    raw = {
        "cont": {"loc": torch.randn(3, 2), "scale": torch.ones(3, 2)},
        ("nested", "disc"): {"logits": torch.randn(3, 4)},
    }
    results = []
    for lib, lib_nn in ((TensorDict, ours_nn), (peer.TensorDict, peer_nn)):
        module = lib_nn.ProbabilisticTensorDictModule(
            in_keys=["params"],
            distribution_class=lib_nn.CompositeDistribution,
            distribution_kwargs={"distribution_map": dmap},
            return_log_prob=True,
        )
        out = module(lib({"params": lib(raw, [3])}, [3]))
        results.append((module.out_keys, out))
    (our_keys, our_out), (their_keys, their_out) = results
    assert our_keys == their_keys
    for key in their_keys:
        torch.testing.assert_close(our_out[key], their_out[key])
