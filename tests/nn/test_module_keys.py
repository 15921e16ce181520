"""Module keys are assignable where tensordict 0.15.3 lets them be: a ``TensorDictModuleBase``
subclass sets ``self.in_keys``/``self.out_keys``, a ``TensorDictModule`` re-keys its reads and
writes, wrappers set the wrapped module's. Each expectation was read from tensordict 0.15.3."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from tensorclass import InvalidKeyError, TensorDict
from tensorclass.nn import (
    EnsembleModule,
    ProbabilisticTensorDictModule,
    TensorDictModule,
    TensorDictModuleBase,
    TensorDictModuleWrapper,
    TensorDictSequential,
    WrapModule,
)


class AddOne(TensorDictModuleBase):
    """A module written as in tensordict's tutorials: keys assigned in ``__init__``."""

    def __init__(self) -> None:
        super().__init__()
        self.in_keys = ["x"]
        self.out_keys = ["y"]

    def forward(self, tensordict: Any) -> Any:
        tensordict["y"] = tensordict["x"] + 1
        return tensordict


def test_a_subclass_assigns_its_keys() -> None:
    module = AddOne()
    assert module.in_keys == ["x"] and module.out_keys == ["y"]
    assert module(TensorDict(x=torch.zeros(2)))["y"].tolist() == [1.0, 1.0]
    module.in_keys = ["x", ("n", ("z",))]  # nested keys are flattened
    assert module.in_keys == ["x", ("n", "z")]
    module.out_keys = "q"  # one key
    assert module.out_keys == ["q"]
    # a tuple of strings is one nested key, as the constructors read it (tensordict's
    # constructors do too; its base-class setter reads it as two keys)
    module.out_keys = ("y", "z")
    assert module.out_keys == [("y", "z")]
    module.out_keys = ["y", "z"]
    assert module.out_keys == ["y", "z"]
    assert "in_keys=['x', ('n', 'z')]" in repr(module)


def test_assigning_out_keys_ends_a_selection() -> None:
    module = AddOne()
    module.out_keys = ["o", "p"]
    module.select_out_keys("o")
    assert module.out_keys == ["o"] and module.out_keys_source == ["o", "p"]
    module.out_keys = ["z"]
    assert module.out_keys == ["z"] and module.out_keys_source == ["z"]


def test_unset_keys_are_an_attribute_error() -> None:
    class Bare(TensorDictModuleBase):
        def forward(self, tensordict: Any) -> Any:
            return tensordict

    bare = Bare()
    with pytest.raises(AttributeError):
        bare.in_keys
    assert not TensorDictModuleBase.is_tdmodule_compatible(bare)


def test_class_attributes_still_work() -> None:
    class Declared(TensorDictModuleBase):
        in_keys = ["x"]  # noqa: RUF012  (tensordict's other spelling)
        out_keys = ["y"]  # noqa: RUF012

        def forward(self, tensordict: Any) -> Any:
            return tensordict

    assert Declared().in_keys == ["x"] and Declared().out_keys == ["y"]


def test_bad_keys_are_refused() -> None:
    module = AddOne()
    with pytest.raises(InvalidKeyError):
        module.in_keys = [1]  # type: ignore[list-item]
    with pytest.raises(InvalidKeyError):
        module.out_keys = [1]  # type: ignore[list-item]
    assert module.in_keys == ["x"] and module.out_keys == ["y"]  # nothing half-written


def test_tensordict_module_reads_and_writes_the_new_keys() -> None:
    module = TensorDictModule(lambda w: w + 1, in_keys=["x"], out_keys=["y"])
    module.in_keys = ["w"]
    module.out_keys = ["z"]
    out = module(TensorDict(w=torch.zeros(1)))
    assert sorted(out.keys()) == ["w", "z"]
    assert module.out_keys_source == ["z"] and module.in_keys == ["w"]
    two = TensorDictModule(lambda x: (x + 1, x + 2), in_keys=["x"], out_keys=["y", "q"])
    two.select_out_keys("y")
    two.out_keys = ["a", "b"]
    assert two.out_keys == ["a", "b"]
    assert sorted(two(TensorDict(x=torch.zeros(1))).keys()) == ["a", "b", "x"]


def test_tensordict_module_refuses_a_wrong_count_of_keyword_keys() -> None:
    module = TensorDictModule(lambda *, a, b: a + b, in_keys={"x": "a", "y": "b"}, out_keys=["s"])
    module.in_keys = ["p", "q"]
    assert module(TensorDict(p=torch.ones(1), q=torch.ones(1)))["s"].item() == 2.0
    with pytest.raises(ValueError, match="keywords"):
        module.in_keys = ["p"]
    with pytest.raises(ValueError, match="twice"):
        module.out_keys = ["s", "s"]


def test_wrappers_set_the_wrapped_module_keys() -> None:
    inner = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    wrapper = TensorDictModuleWrapper(inner)
    wrapper.in_keys = ["w"]
    wrapper.out_keys = ["v"]
    assert inner.in_keys == ["w"] and inner.out_keys == ["v"]
    wrap = WrapModule(lambda td: td, in_keys=["x"], out_keys=["y"])
    wrap.in_keys = ["q"]
    wrap.out_keys = ["r"]
    assert wrap.in_keys == ["q"] and wrap.out_keys == ["r"]
    ensemble = EnsembleModule(
        TensorDictModule(nn.Linear(2, 2), in_keys=["x"], out_keys=["y"]), num_copies=2
    )
    ensemble.out_keys = ["z"]
    assert ensemble.out_keys == ["z"] and ensemble.module.out_keys == ["z"]


def test_derived_keys_refuse_with_a_reason() -> None:
    """Deliberate difference (docs/migrating.md): tensordict stores the assignment on these
    without changing what the module reads or writes; tensorclass says why it cannot."""
    chain = TensorDictSequential(TensorDictModule(lambda x: x + 1, ["x"], ["y"]))
    with pytest.raises(AttributeError, match="derived from its modules"):
        chain.in_keys = ["q"]
    with pytest.raises(AttributeError, match="derived from its modules"):
        chain.out_keys = ["q"]
    prob = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["a"], distribution_class=torch.distributions.Normal
    )
    with pytest.raises(AttributeError):  # tensordict refuses this one too
        prob.out_keys = ["b"]


def test_probabilistic_module_reads_its_parameters_from_new_keys() -> None:
    prob = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["a"],
        distribution_class=torch.distributions.Normal,
        default_interaction_type="mode",
    )
    prob.in_keys = ["m", "s"]  # loc from "m", scale from "s"
    params = TensorDict(m=torch.full((1,), 5.0), s=torch.ones(1), loc=torch.zeros(1))
    assert prob(params)["a"].tolist() == [5.0]
    assert prob.dist_params_keys == ["m", "s"]
    with pytest.raises(ValueError, match="assign 2 keys"):
        prob.in_keys = ["m"]


def test_select_out_keys_refuses_a_list_as_a_key() -> None:
    """tensordict 0.15.3 refuses a list where a key is expected (RuntimeError there, an
    ``InvalidKeyError`` here); a nested key is a tuple."""
    chain = TensorDictSequential(
        TensorDictModule(lambda x: (x + 1, x + 2), in_keys=["x"], out_keys=["y", ("n", "z")])
    )
    with pytest.raises(InvalidKeyError):
        chain.select_out_keys(["n", "z"])
    chain.select_out_keys(("n", "z"))
    assert chain.out_keys == [("n", "z")]


def test_side_by_side_with_tensordict() -> None:
    peer = pytest.importorskip("tensordict.nn")
    import tensordict

    class PeerAddOne(peer.TensorDictModuleBase):
        def __init__(self) -> None:
            super().__init__()
            self.in_keys = ["x"]
            self.out_keys = ["y"]

        def forward(self, tensordict: Any) -> Any:
            tensordict["y"] = tensordict["x"] + 1
            return tensordict

    theirs, ours = PeerAddOne(), AddOne()
    assert theirs.in_keys == ours.in_keys and theirs.out_keys == ours.out_keys
    theirs.out_keys = "q"
    ours.out_keys = "q"
    assert theirs.out_keys == ours.out_keys == ["q"]
    module = peer.TensorDictModule(lambda w: w + 1, in_keys=["x"], out_keys=["y"])
    module.in_keys = ["w"]
    module.out_keys = ["z"]
    out = module(tensordict.TensorDict(w=torch.zeros(1)))
    assert sorted(out.keys()) == ["w", "z"]
