"""Probabilistic modules, interaction types and NormalParamExtractor (seed 001)."""

import threading

import pytest
import torch
from torch import vmap
from torch.distributions import Categorical, Normal

from tensorclass import TensorDict
from tensorclass.nn import (
    InteractionType,
    NormalParamExtractor,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
    interaction_type,
    set_interaction_type,
)
from tensorclass.nn.distributions import NormalParamExtractor as FromDistributions

SEED_KEYS = ["hidden", "input", "loc", "output", "params", "sample_log_prob", "scale"]


def seed_model() -> TensorDictSequential:
    net1 = torch.nn.Linear(4, 8)
    module1 = TensorDictModule(net1, in_keys=["input"], out_keys=["params"])
    normal_params = TensorDictModule(
        NormalParamExtractor(), in_keys=["params"], out_keys=["loc", "scale"]
    )
    td_module1 = ProbabilisticTensorDictSequential(
        module1,
        normal_params,
        ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"],
            out_keys=["hidden"],
            distribution_class=Normal,
            return_log_prob=True,
        ),
    )
    module2 = torch.nn.Linear(4, 8)
    td_module2 = TensorDictModule(module=module2, in_keys=["hidden"], out_keys=["output"])
    return TensorDictSequential(td_module1, td_module2)


def test_seed_functional_probabilistic_chain() -> None:
    td = TensorDict({"input": torch.randn(3, 4)}, [3])
    td_module = seed_model()
    params = TensorDict.from_module(td_module)
    with params.to_module(td_module):
        _ = td_module(td)
    assert sorted(td.keys()) == SEED_KEYS
    shapes = {key: list(td[key].shape) for key in SEED_KEYS}
    assert shapes == {
        "hidden": [3, 4],
        "input": [3, 4],
        "loc": [3, 4],
        "output": [3, 8],
        "params": [3, 8],
        "sample_log_prob": [3, 4],
        "scale": [3, 4],
    }
    # deterministic by default: the sample is the mean
    torch.testing.assert_close(td["hidden"], td["loc"])


def test_seed_vmap_over_expanded_params() -> None:
    td = TensorDict({"input": torch.randn(3, 4)}, [3])
    td_module = seed_model()
    params = TensorDict.from_module(td_module).expand(4)

    def func(td: TensorDict, params: TensorDict) -> TensorDict:
        with params.to_module(td_module):
            return td_module(td)

    td_vmap = vmap(func, (None, 0))(td, params)
    assert td_vmap.batch_size == (4, 3)
    assert sorted(td_vmap.keys()) == SEED_KEYS
    assert td_vmap["output"].shape == (4, 3, 8) and td_vmap["input"].shape == (4, 3, 4)
    expected = td_module(td.clone())["output"]
    for i in range(4):
        torch.testing.assert_close(td_vmap["output"][i], expected)


def test_interaction_types() -> None:
    module = ProbabilisticTensorDictModule(
        ["loc", "scale"], ["x"], distribution_class=Normal, return_log_prob=True
    )
    td = TensorDict({"loc": torch.full((1000,), 2.0), "scale": torch.ones(1000)}, [1000])
    assert interaction_type() is None
    with set_interaction_type(InteractionType.MODE):
        assert interaction_type() is InteractionType.MODE
        assert module(td)["x"].eq(2).all()
    with set_interaction_type("mean"):
        assert module(td)["x"].eq(2).all()
    with set_interaction_type("RANDOM"):
        sample = module(td)["x"]
        assert not sample.eq(2).all() and abs(sample.mean().item() - 2) < 0.2
        torch.testing.assert_close(td["sample_log_prob"], Normal(2.0, 1.0).log_prob(sample))
    assert interaction_type() is None

    @set_interaction_type(InteractionType.MODE)
    def decorated() -> torch.Tensor:
        return module(td.clone())["x"]

    assert decorated().eq(2).all()
    with pytest.raises(ValueError, match="is not a valid InteractionType"):
        set_interaction_type("medoid")


def test_default_interaction_type_and_mode_for_discrete() -> None:
    logits = torch.tensor([[0.0, 3.0, 0.0], [5.0, 0.0, 0.0]])
    module = ProbabilisticTensorDictModule(
        ["logits"],
        ["action"],
        distribution_class=Categorical,
        default_interaction_type="mode",
    )
    td = module(TensorDict({"logits": logits}, [2]))
    assert td["action"].tolist() == [1, 0]
    assert module.out_keys == ["action"]


def test_get_dist_and_log_prob() -> None:
    seq = ProbabilisticTensorDictSequential(
        TensorDictModule(NormalParamExtractor(), ["params"], ["loc", "scale"]),
        ProbabilisticTensorDictModule(["loc", "scale"], ["x"], distribution_class=Normal),
    )
    td = TensorDict({"params": torch.zeros(5, 4)}, [5])
    dist = seq.get_dist(td.clone())
    assert isinstance(dist, Normal) and dist.batch_shape == (5, 2)
    seq(td)
    torch.testing.assert_close(seq.log_prob(td), Normal(0.0, 1.0).log_prob(td["x"]))
    torch.testing.assert_close(seq.last.log_prob(td), seq.log_prob(td))
    assert seq.last.sample_key == "x"


def test_probabilistic_sequential_must_end_with_a_probabilistic_module() -> None:
    # without return_composite=False, a chain may end with a plain module (tensordict
    # 0.15.3; tests/nn/test_probabilistic_forms.py)
    with pytest.raises(TypeError, match="must end with"):
        ProbabilisticTensorDictSequential(
            TensorDictModule(lambda x: x, ["x"], ["y"]), return_composite=False
        )


def test_distribution_kwargs_nested_and_dict_in_keys() -> None:
    module = ProbabilisticTensorDictModule(
        {"loc": ("dist", "mu")},
        ("out", "sample"),
        distribution_class=Normal,
        distribution_kwargs={"scale": 1.0},
    )
    td = module(TensorDict({"dist": {"mu": torch.ones(2)}}, [2]))
    assert td["out", "sample"].tolist() == [1.0, 1.0]
    listed = ProbabilisticTensorDictModule(
        [("dist", "loc")], distribution_class=Normal, distribution_kwargs={"scale": 1.0}
    )
    assert listed(TensorDict({"dist": {"loc": torch.ones(2)}}, [2]))["sample"].tolist() == [1, 1]


def test_normal_param_extractor() -> None:
    assert FromDistributions is NormalParamExtractor
    loc, scale = NormalParamExtractor()(torch.tensor([[1.0, -2.0, 0.0, -30.0]]))
    assert loc.tolist() == [[1.0, -2.0]]
    assert scale[0, 0].item() == pytest.approx(1.0, abs=1e-4)
    # biased_softplus_1.0 stays above its min_val 0.01, as in tensordict
    assert scale[0, 1].item() == pytest.approx(1e-2)
    loc, scale = NormalParamExtractor("exp", scale_lb=0.0)(torch.zeros(2), torch.zeros(2))
    assert scale.tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="unknown mapping"):
        NormalParamExtractor("cube")


def test_interaction_type_is_restored_on_error_nests_and_stays_in_its_thread() -> None:
    with pytest.raises(RuntimeError, match="boom"), set_interaction_type("mode"):
        raise RuntimeError("boom")
    assert interaction_type() is None
    seen: list[object] = []
    with set_interaction_type("mode"):
        with set_interaction_type(InteractionType.RANDOM):
            assert interaction_type() is InteractionType.RANDOM
        assert interaction_type() is InteractionType.MODE
        worker = threading.Thread(target=lambda: seen.append(interaction_type()))
        worker.start()
        worker.join()
    assert seen == [None]  # another thread does not see this thread's setting


def test_log_prob_key_and_selected_out_keys() -> None:
    module = ProbabilisticTensorDictModule(
        ["loc", "scale"],
        ["a"],
        distribution_class=Normal,
        return_log_prob=True,
        log_prob_key=("lp", "a"),
    )
    assert module.out_keys == ["a", ("lp", "a")]
    td = module(TensorDict({"loc": torch.zeros(2), "scale": torch.ones(2)}, [2]))
    torch.testing.assert_close(td["lp", "a"], Normal(0.0, 1.0).log_prob(torch.zeros(2)))
    module.select_out_keys("a")
    td = module(TensorDict({"loc": torch.zeros(2), "scale": torch.ones(2)}, [2]))
    assert sorted(td.keys()) == ["a", "loc", "scale"]
    module.reset_out_keys()
    # tensors in, tensors out: the sample and its log-probability
    sample, log_prob = module(torch.zeros(2), scale=torch.ones(2))
    assert sample.tolist() == [0.0, 0.0]
    torch.testing.assert_close(log_prob, Normal(0.0, 1.0).log_prob(sample))


def test_missing_distribution_parameter_is_a_key_error() -> None:
    module = ProbabilisticTensorDictModule(["loc", "scale"], ["a"], distribution_class=Normal)
    with pytest.raises(KeyError, match="reads 'scale'"):
        module(TensorDict({"loc": torch.zeros(2)}, [2]))


def test_cuts_of_a_probabilistic_sequential_keep_its_class_while_they_end_with_the_sample() -> None:
    seq = ProbabilisticTensorDictSequential(
        TensorDictModule(lambda x: x * 2, ["x"], ["p"]),
        TensorDictModule(NormalParamExtractor(), ["p"], ["loc", "scale"]),
        ProbabilisticTensorDictModule(["loc", "scale"], ["a"], distribution_class=Normal),
    )
    sub = seq.select_subsequence(in_keys=["p"])
    assert isinstance(sub, ProbabilisticTensorDictSequential) and len(sub) == 2
    assert isinstance(sub.get_dist(TensorDict({"p": torch.zeros(3, 4)}, [3])), Normal)
    assert isinstance(seq[1:], ProbabilisticTensorDictSequential)
    head = seq[:2]
    assert type(head) is TensorDictSequential and head.out_keys == ["p", "loc", "scale"]
    cut = seq.select_subsequence(out_keys=["loc"])
    assert type(cut) is TensorDictSequential and len(cut) == 2
    nested = TensorDictSequential(seq, TensorDictModule(lambda a: a + 1, ["a"], ["b"]))
    inner = nested.select_subsequence(in_keys=["p"], out_keys=["a"])[0]
    assert isinstance(inner, ProbabilisticTensorDictSequential) and len(inner) == 2
