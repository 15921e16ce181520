"""``ProbabilisticTensorDictSequential.return_composite`` defaults to on when the chain holds
more than one probabilistic module, and the sequential's ``dist_params_keys``,
``dist_sample_keys`` and ``log_prob_keys`` cover every probabilistic module in both modes,
as in tensordict 0.15.3: our behaviour, then side by side with tensordict."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
import torch
from torch import distributions as d

from tensorclass import TensorDict
from tensorclass.nn import (
    CompositeDistribution,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictSequential,
    composite_lp_aggregate,
    set_composite_lp_aggregate,
    set_interaction_type,
)

OURS = __import__("tensorclass.nn", fromlist=["nn"])


def chain(nn_ns: Any, count: int, log_prob_keys: bool = False, **kwargs: Any) -> Any:
    """``count`` (1 or 2) Normal modules, each fed by a deterministic module."""

    def prob(name: str, loc: str, scale: str) -> Any:
        extra = {"log_prob_key": f"lp_{name}"} if log_prob_keys else {}
        return nn_ns.ProbabilisticTensorDictModule(
            in_keys={"loc": loc, "scale": scale},
            out_keys=[name],
            distribution_class=d.Normal,
            return_log_prob=True,
            **extra,
        )

    modules = [
        nn_ns.TensorDictModule(lambda x: (x, x.abs() + 1), ["x"], ["loc0", "scale0"]),
        prob("a", "loc0", "scale0"),
    ]
    if count == 2:
        modules += [
            nn_ns.TensorDictModule(lambda a: (a + 1, a.abs() + 2), ["a"], ["loc1", "scale1"]),
            prob("b", "loc1", "scale1"),
        ]
    return nn_ns.ProbabilisticTensorDictSequential(*modules, **kwargs)


def data(lib: Any = TensorDict) -> Any:
    return lib({"x": torch.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.3]])}, [2])


def normal_lp(loc: torch.Tensor, scale: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    lp: torch.Tensor = d.Normal(loc, scale).log_prob(value)  # type: ignore[no-untyped-call]
    return lp


# -- our behaviour ---------------------------------------------------------------------------


def test_the_default_follows_the_number_of_probabilistic_modules() -> None:
    assert chain(OURS, 1).return_composite is False
    assert chain(OURS, 2).return_composite is True
    assert chain(OURS, 2, return_composite=False).return_composite is False
    assert chain(OURS, 1, return_composite=True).return_composite is True
    first = ProbabilisticTensorDictModule(["loc", "scale"], ["a"], distribution_class=d.Normal)
    second = ProbabilisticTensorDictModule(
        {"loc": "a", "scale": "scale"}, ["b"], distribution_class=d.Normal
    )
    # only direct ProbabilisticTensorDictModule members count
    nested = ProbabilisticTensorDictSequential(ProbabilisticTensorDictSequential(first), second)
    assert nested.return_composite is False
    assert ProbabilisticTensorDictSequential(first, second).return_composite is True


def test_the_keys_cover_every_probabilistic_module_in_both_modes() -> None:
    on, off = chain(OURS, 2), chain(OURS, 2, return_composite=False)
    for seq in (on, off):
        assert seq.dist_params_keys == ["loc1", "scale1", "loc0", "scale0"]
        assert seq.dist_sample_keys == ["b", "a"]
    named = chain(OURS, 2, log_prob_keys=True, return_composite=False)
    assert named.log_prob_keys == ["lp_b", "lp_a"]
    assert chain(OURS, 1).dist_sample_keys == ["a"]


def test_a_nested_probabilistic_sequential_gives_its_keys_and_distributions() -> None:
    first = ProbabilisticTensorDictModule(["loc", "scale"], ["a"], distribution_class=d.Normal)
    second = ProbabilisticTensorDictModule(
        {"loc": "a", "scale": "scale"}, ["b"], distribution_class=d.Normal
    )
    seq = ProbabilisticTensorDictSequential(
        ProbabilisticTensorDictSequential(first), second, return_composite=True
    )
    assert seq.dist_sample_keys == ["b", "a"]
    assert seq.dist_params_keys == ["a", "scale", "loc", "scale"]
    dist = seq.get_dist(TensorDict({"loc": torch.zeros(2), "scale": torch.ones(2)}, [2]))
    assert isinstance(dist, CompositeDistribution) and dist.keys() == ["a", "b"]
    # a nested plain TensorDictSequential is run, not looked into
    hidden = ProbabilisticTensorDictSequential(TensorDictSequential(first), second)
    assert hidden.dist_sample_keys == ["b"]


def test_two_modules_give_a_composite_by_default() -> None:
    seq = chain(OURS, 2)
    source = data()
    dist = seq.get_dist(source)
    assert isinstance(dist, CompositeDistribution) and dist.keys() == ["a", "b"]
    assert list(source.keys()) == ["x"]  # the input is left as it was
    with set_interaction_type("random"):
        out = seq(data())
    lp = seq.log_prob(out)
    assert sorted(lp.keys()) == ["a_log_prob", "b_log_prob"]
    torch.testing.assert_close(lp["a_log_prob"], normal_lp(out["loc0"], out["scale0"], out["a"]))
    # the values given are scored: b under the distribution the drawn a leads to
    torch.testing.assert_close(lp["b_log_prob"], normal_lp(out["loc1"], out["scale1"], out["b"]))
    with set_composite_lp_aggregate(True):
        total = seq.log_prob(out)
    assert isinstance(total, torch.Tensor) and total.shape == (2,)
    torch.testing.assert_close(total, lp["a_log_prob"].sum(-1) + lp["b_log_prob"].sum(-1))


def test_return_composite_false_gives_the_last_distribution() -> None:
    seq = chain(OURS, 2, return_composite=False)
    source = data()
    dist = seq.get_dist(source)
    assert isinstance(dist, d.Normal)
    assert {"a", "loc1", "scale1"} <= set(source.keys())  # the chain ran up to the last
    out = chain(OURS, 2)(data())
    lp = seq.log_prob(out)
    torch.testing.assert_close(lp, normal_lp(out["loc1"], out["scale1"], out["b"]))


def test_forward_writes_the_same_keys_in_both_modes() -> None:
    on = chain(OURS, 2, log_prob_keys=True)
    off = chain(OURS, 2, log_prob_keys=True, return_composite=False)
    out_on, out_off = on(data()), off(data())
    assert sorted(out_on.keys()) == sorted(out_off.keys())
    assert {"a", "b", "lp_a", "lp_b"} <= set(out_on.keys())
    for key in out_on.keys():
        torch.testing.assert_close(out_on[key], out_off[key])


def test_the_aggregate_switch_is_off_by_default() -> None:
    assert composite_lp_aggregate() is False


# -- side by side with tensordict 0.15.3 -----------------------------------------------------


def peer_switch(peer_nn: Any, agg: bool | None) -> Any:
    if agg is None:
        return contextlib.nullcontext()
    return peer_nn.set_composite_lp_aggregate(agg)


def our_switch(agg: bool | None) -> Any:
    return contextlib.nullcontext() if agg is None else set_composite_lp_aggregate(agg)


def test_the_aggregate_default_matches_tensordict() -> None:
    peer_nn = pytest.importorskip("tensordict.nn")
    assert composite_lp_aggregate() is peer_nn.composite_lp_aggregate()


@pytest.mark.parametrize("agg", [None, False, True])
@pytest.mark.parametrize("return_composite", [None, True, False])
@pytest.mark.parametrize("count", [1, 2])
def test_same_modes_as_tensordict(count: int, return_composite: bool | None, agg: Any) -> None:
    peer = pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    kwargs = {} if return_composite is None else {"return_composite": return_composite}
    with our_switch(agg):
        ours = chain(OURS, count, log_prob_keys=True, **kwargs)
    with peer_switch(peer_nn, agg):
        theirs = chain(peer_nn, count, log_prob_keys=True, **kwargs)
    assert ours.return_composite is theirs.return_composite
    for name in ("dist_params_keys", "dist_sample_keys", "out_keys"):
        assert getattr(ours, name) == getattr(theirs, name), name
    if agg is not True:  # tensordict refuses log_prob_keys of a module built aggregating
        assert ours.log_prob_keys == theirs.log_prob_keys
    with our_switch(agg):
        our_in, our_out = data(), ours(data())
        our_dist, our_lp = ours.get_dist(our_in), ours.log_prob(our_out.clone())
    with peer_switch(peer_nn, agg):
        their_in, their_out = data(peer.TensorDict), theirs(data(peer.TensorDict))
        their_dist = theirs.get_dist(their_in)
        their_lp = theirs.log_prob(their_out.clone())
    assert sorted(our_out.keys()) == sorted(their_out.keys())
    for key in our_out.keys():
        torch.testing.assert_close(our_out[key], their_out[key])
    assert sorted(our_in.keys()) == sorted(their_in.keys())  # what get_dist wrote
    assert isinstance(our_dist, CompositeDistribution) is ours.return_composite
    assert type(their_dist).__name__ == type(our_dist).__name__
    assert isinstance(our_lp, torch.Tensor) is isinstance(their_lp, torch.Tensor)
    if isinstance(our_lp, torch.Tensor):
        torch.testing.assert_close(our_lp, their_lp)
    else:
        assert sorted(our_lp.keys()) == sorted(their_lp.keys())
        for key in our_lp.keys():
            torch.testing.assert_close(our_lp[key], their_lp[key])


def test_nested_sequentials_match_tensordict() -> None:
    pytest.importorskip("tensordict")
    peer_nn = pytest.importorskip("tensordict.nn")
    seqs = []
    for nn_ns in (OURS, peer_nn):
        first = nn_ns.ProbabilisticTensorDictModule(
            in_keys={"loc": "loc", "scale": "scale"}, out_keys=["a"], distribution_class=d.Normal
        )
        second = nn_ns.ProbabilisticTensorDictModule(
            in_keys={"loc": "a", "scale": "scale"}, out_keys=["b"], distribution_class=d.Normal
        )
        for outer in (nn_ns.ProbabilisticTensorDictSequential, nn_ns.TensorDictSequential):
            seqs.append(nn_ns.ProbabilisticTensorDictSequential(outer(first), second))
    for ours, theirs in zip(seqs[:2], seqs[2:]):
        assert ours.return_composite is theirs.return_composite
        assert ours.dist_sample_keys == theirs.dist_sample_keys
        assert ours.dist_params_keys == theirs.dist_params_keys


def test_the_composite_log_prob_uses_a_chosen_log_prob_key() -> None:
    seq = chain(OURS, 2, log_prob_keys=True)
    out = seq(data())
    lp = seq.log_prob(out)
    assert sorted(lp.keys()) == ["lp_a", "lp_b"]
    torch.testing.assert_close(lp["lp_a"], out["lp_a"])
    torch.testing.assert_close(lp["lp_b"], out["lp_b"])
    nested = ProbabilisticTensorDictSequential(
        ProbabilisticTensorDictSequential(*list(seq)[:2]), *list(seq)[2:], return_composite=True
    )
    assert sorted(nested.log_prob(out).keys()) == ["lp_a", "lp_b"]
