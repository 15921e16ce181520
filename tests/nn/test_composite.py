"""CompositeDistribution, the log-prob aggregation switch, and composite modules."""

import threading

import pytest
import torch
from torch import distributions as d

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.errors import InvalidKeyError
from tensorclass.nn import (
    CompositeDistribution,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    composite_lp_aggregate,
    set_composite_lp_aggregate,
    set_interaction_type,
)

MAP = {"cont": d.Normal, ("nested", "disc"): d.Categorical}


def td_params() -> TensorDict:
    torch.manual_seed(0)
    return TensorDict(
        {
            "cont": {"loc": torch.randn(3, 4), "scale": torch.rand(3, 4) + 0.1},
            ("nested", "disc"): {"logits": torch.randn(3, 5)},
        },
        [3],
    )


class NormalParams(TensorClass):
    loc: torch.Tensor
    scale: torch.Tensor


class CatParams(TensorClass):
    logits: torch.Tensor


class Disc(TensorClass):
    disc: CatParams


class Params(TensorClass):
    cont: NormalParams
    nested: Disc


def typed_params() -> Params:
    p = td_params()
    return Params(
        cont=NormalParams(p["cont", "loc"], p["cont", "scale"], batch_size=[3]),
        nested=Disc(CatParams(p["nested", "disc", "logits"], batch_size=[3]), batch_size=[3]),
        batch_size=[3],
    )


def stacked_params() -> object:
    return lazy_stack(list(td_params().unbind(0)))


def by_hand(params: object) -> tuple[d.Normal, d.Categorical]:
    return (
        d.Normal(params["cont", "loc"], params["cont", "scale"]),  # type: ignore[index]
        d.Categorical(logits=params["nested", "disc", "logits"]),  # type: ignore[index]
    )


@pytest.mark.parametrize("make", [td_params, typed_params, stacked_params])
def test_log_prob_entropy_and_values_match_torch(make: object) -> None:
    params = make()  # type: ignore[operator]
    dist = CompositeDistribution(params, MAP)
    normal, cat = by_hand(params)
    assert dist.batch_shape == (3,) and dist.event_shape == ()
    assert list(dist) == ["cont", ("nested", "disc")] and len(dist) == 2
    assert isinstance(dist["cont"], d.Normal) and dist.get("missing") is None
    sample = dist.sample((4,))
    assert sample.batch_size == (4, 3)
    assert sample["cont"].shape == (4, 3, 4) and sample["nested", "disc"].shape == (4, 3)
    lp = dist.log_prob(sample)
    torch.testing.assert_close(lp["cont_log_prob"], normal.log_prob(sample["cont"]))
    torch.testing.assert_close(
        lp["nested", "disc_log_prob"], cat.log_prob(sample["nested", "disc"])
    )
    ent = dist.entropy()
    torch.testing.assert_close(ent["cont_entropy"], normal.entropy())
    torch.testing.assert_close(ent["nested", "disc_entropy"], cat.entropy())
    with set_composite_lp_aggregate(True):
        total = dist.log_prob(sample)
        expected = normal.log_prob(sample["cont"]).sum(-1) + cat.log_prob(sample["nested", "disc"])
        torch.testing.assert_close(total, expected)
        torch.testing.assert_close(dist.entropy(), normal.entropy().sum(-1) + cat.entropy())
    torch.testing.assert_close(dist.mode["cont"], normal.mode)
    assert torch.equal(dist.mode["nested", "disc"], cat.mode)
    torch.testing.assert_close(dist.mean["cont"], normal.mean)
    det = dist.deterministic_sample
    torch.testing.assert_close(det["cont"], normal.mean)
    assert torch.equal(det["nested", "disc"], cat.mode)  # discrete: the mode, not a nan mean


def test_sum_keys_name_map_extra_kwargs_and_rsample() -> None:
    params = TensorDict({"cont": {"loc": torch.zeros(2, 3, requires_grad=True)}}, [2])
    dist = CompositeDistribution(
        params,
        {"cont": d.Normal},
        name_map={"cont": ("out", "c")},
        extra_kwargs={"cont": {"scale": 2.0}},
        log_prob_key="lp",
        entropy_key="ent",
    )
    assert list(dist) == [("out", "c")] and dist.has_rsample
    value = dist.rsample((5,))
    value["out", "c"].sum().backward()
    assert params["cont", "loc"].grad is not None
    scores = dist.log_prob_composite(value)
    ref = d.Normal(torch.zeros(2, 3), 2.0).log_prob(value["out", "c"].detach())
    torch.testing.assert_close(scores["out", "c_log_prob"].detach(), ref)
    torch.testing.assert_close(scores["lp"].detach(), ref.sum(-1))
    ents = dist.entropy_composite()
    torch.testing.assert_close(ents["ent"], d.Normal(torch.zeros(2, 3), 2.0).entropy().sum(-1))
    with pytest.raises(NotImplementedError, match="disc"):
        CompositeDistribution(td_params(), MAP).rsample()


def test_missing_params_key_is_named() -> None:
    with pytest.raises(KeyError, match="'other'"):
        CompositeDistribution(td_params(), {"other": d.Normal})


def test_switch_is_scoped_decorates_and_is_process_wide() -> None:
    assert composite_lp_aggregate() is False
    with set_composite_lp_aggregate():
        assert composite_lp_aggregate() is True
        with set_composite_lp_aggregate(False):
            assert composite_lp_aggregate() is False
        assert composite_lp_aggregate() is True
        seen: list[bool] = []
        thread = threading.Thread(target=lambda: seen.append(composite_lp_aggregate()))
        thread.start()
        thread.join()
        assert seen == [True]  # process-wide, as tensordict's default
        with set_composite_lp_aggregate(False, thread_local=True):
            thread = threading.Thread(target=lambda: seen.append(composite_lp_aggregate()))
            thread.start()
            thread.join()
            assert composite_lp_aggregate() is False and seen == [True, True]
    with pytest.raises(RuntimeError), set_composite_lp_aggregate(True):
        raise RuntimeError
    assert composite_lp_aggregate() is False

    @set_composite_lp_aggregate(True)
    def inside() -> bool:
        return composite_lp_aggregate()

    assert inside() is True and composite_lp_aggregate() is False


def composite_module(**kwargs: object) -> ProbabilisticTensorDictModule:
    return ProbabilisticTensorDictModule(
        in_keys=["params"],
        distribution_class=CompositeDistribution,
        distribution_kwargs={"distribution_map": MAP},
        return_log_prob=True,
        **kwargs,  # type: ignore[arg-type]
    )


def test_module_writes_each_key_and_its_log_prob() -> None:
    module = composite_module()
    assert module.dist_sample_keys == ["cont", ("nested", "disc")]
    assert module.log_prob_keys == ["cont_log_prob", ("nested", "disc_log_prob")]
    assert module.out_keys == [*module.dist_sample_keys, *module.log_prob_keys]
    with pytest.raises(RuntimeError, match="log_prob_keys"):
        _ = module.log_prob_key
    data = TensorDict({"params": td_params()}, [3])
    with set_interaction_type("random"):
        out = module(data)
    normal, cat = by_hand(data["params"])
    torch.testing.assert_close(out["cont_log_prob"], normal.log_prob(out["cont"]))
    torch.testing.assert_close(out["nested", "disc_log_prob"], cat.log_prob(out["nested", "disc"]))
    lp = module.log_prob(out)
    torch.testing.assert_close(lp["cont_log_prob"], out["cont_log_prob"])
    # deterministic: the mean of the normal, the mode of the categorical
    out = module(TensorDict({"params": td_params()}, [3]))
    torch.testing.assert_close(out["cont"], normal.mean)
    assert torch.equal(out["nested", "disc"], cat.mode)


def test_module_under_aggregation_writes_the_sum_too() -> None:
    with set_composite_lp_aggregate(True):
        module = composite_module()
        assert module.log_prob_keys == ["sample_log_prob"]
        assert module.log_prob_key == "sample_log_prob"
        out = module(TensorDict({"params": td_params()}, [3]))
        normal, cat = by_hand(out["params"])
        expected = normal.log_prob(out["cont"]).sum(-1) + cat.log_prob(out["nested", "disc"])
        torch.testing.assert_close(out["sample_log_prob"], expected)
        torch.testing.assert_close(module.log_prob(out), expected)
    assert "cont_log_prob" in out.keys()


def test_module_custom_keys_and_bad_keys() -> None:
    module = composite_module(
        out_keys=["a", "b"], log_prob_keys=["a_lp", "b_lp"]
    )  # out_keys rename the components
    out = module(TensorDict({"params": td_params()}, [3]))
    assert {"a", "b", "a_lp", "b_lp"} <= set(out.keys())
    with pytest.raises(InvalidKeyError, match="one key per sampled key"):
        composite_module(log_prob_keys=["only_one"])
    with pytest.raises(InvalidKeyError, match="log_prob_keys"):
        composite_module(log_prob_key="x")
    with pytest.raises(InvalidKeyError, match="overwrite"):
        composite_module(log_prob_keys=["cont", "y"])


def test_sequential_return_composite_scores_the_values_given() -> None:
    first = ProbabilisticTensorDictModule(
        ["loc", "scale"], ["x"], distribution_class=d.Normal, return_log_prob=True
    )
    shift = TensorDictModule(lambda x: (x + 1, x.abs() + 1), ["x"], ["loc2", "scale2"])
    second = ProbabilisticTensorDictModule(
        {"loc": "loc2", "scale": "scale2"}, ["y"], distribution_class=d.Normal
    )
    seq = ProbabilisticTensorDictSequential(first, shift, second, return_composite=True)
    assert seq.dist_sample_keys == ["y", "x"]
    data = TensorDict({"loc": torch.zeros(5), "scale": torch.ones(5)}, [5])
    dist = seq.get_dist(data)
    assert isinstance(dist, CompositeDistribution) and list(dist) == ["x", "y"]
    assert set(data.keys()) == {"loc", "scale"}  # the input is left as it was
    with set_interaction_type("random"):
        out = seq(data.clone())
    x, y = out["x"], out["y"]
    lp = seq.log_prob(out)
    torch.testing.assert_close(lp["x_log_prob"], d.Normal(0.0, 1.0).log_prob(x))
    torch.testing.assert_close(lp["y_log_prob"], d.Normal(x + 1, x.abs() + 1).log_prob(y))
    with set_composite_lp_aggregate(True):
        total = seq.log_prob(out)
    torch.testing.assert_close(total, lp["x_log_prob"] + lp["y_log_prob"])
    # with return_composite=False: the last module's distribution
    plain = ProbabilisticTensorDictSequential(first, shift, second, return_composite=False)
    assert isinstance(plain.get_dist(out.clone()), d.Normal)


class Grip(TensorClass):
    disc: torch.Tensor | None = None
    disc_log_prob: torch.Tensor | None = None


class Arm(TensorClass):
    params: Params
    nested: Grip
    cont: torch.Tensor | None = None
    cont_log_prob: torch.Tensor | None = None


def test_composite_module_on_a_typed_class_with_schema() -> None:
    module = composite_module(schema=Arm)
    arm = Arm(params=typed_params(), nested=Grip(batch_size=[3]), batch_size=[3])
    out = module(arm)
    normal, cat = by_hand(arm.params)
    assert out.cont is not None and out.nested.disc is not None
    torch.testing.assert_close(out.cont_log_prob, normal.log_prob(out.cont))
    torch.testing.assert_close(out.nested.disc_log_prob, cat.log_prob(out.nested.disc))
    with pytest.raises(KeyError, match="sample_log_prob"), set_composite_lp_aggregate(True):
        composite_module(schema=Arm)  # the sum's key is not a field


def test_cdf_and_icdf_per_key() -> None:
    params = TensorDict(
        {"a": {"loc": torch.zeros(3, 2), "scale": torch.ones(3, 2)}, "b": {"rate": torch.ones(3)}},
        [3],
    )
    dist = CompositeDistribution(params, {"a": d.Normal, "b": d.Exponential})
    value = dist.sample()
    before = set(value.keys())
    cdf = dist.cdf(value)
    assert set(value.keys()) == before  # the sample is left unchanged
    torch.testing.assert_close(cdf["a_cdf"], d.Normal(0.0, 1.0).cdf(value["a"]))
    torch.testing.assert_close(cdf["b_cdf"], d.Exponential(1.0).cdf(value["b"]))
    back = dist.icdf(cdf)
    torch.testing.assert_close(back["a_icdf"], value["a"], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(back["b_icdf"], value["b"], atol=1e-4, rtol=1e-4)
