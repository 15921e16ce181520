"""skip_existing / set_skip_existing: scoped to a block or a call, never process-wide."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest
import torch

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.nn import (
    ProbabilisticTensorDictModule,
    TensorDictModule,
    TensorDictModuleBase,
    TensorDictSequential,
    set_skip_existing,
    skip_existing,
)


class Obs(TensorClass):
    x: torch.Tensor
    y: torch.Tensor | None = None
    z: torch.Tensor | None = None


def add_one() -> TensorDictModule:
    return TensorDictModule(lambda x: x + 1, ["x"], ["y"])


def test_context_manager_skips_and_restores() -> None:
    td = TensorDict(x=torch.zeros(2), y=torch.zeros(2))
    assert skip_existing() is False
    with set_skip_existing():
        assert skip_existing() is True
        assert torch.equal(add_one()(td.clone())["y"], torch.zeros(2))
        # absent out key: the module runs
        assert torch.equal(add_one()(TensorDict(x=torch.zeros(2)))["y"], torch.ones(2))
    assert skip_existing() is False
    assert torch.equal(add_one()(td.clone())["y"], torch.ones(2))


def test_typed_and_lazy_inputs() -> None:
    with set_skip_existing(True):
        typed = Obs(x=torch.zeros(2), y=torch.full((2,), 5.0))
        assert torch.equal(add_one()(typed).y, torch.full((2,), 5.0))
        stack = lazy_stack([TensorDict(x=torch.zeros(()), y=torch.zeros(())) for _ in range(3)])
        assert torch.equal(add_one()(stack)["y"], torch.zeros(3))


def test_sequential_skips_only_the_modules_whose_outputs_exist() -> None:
    seq = TensorDictSequential(add_one(), TensorDictModule(lambda y: y * 10, ["y"], ["z"]))
    td = TensorDict(x=torch.zeros(2), y=torch.full((2,), 3.0))
    with set_skip_existing(True):
        out = seq(td)
    assert torch.equal(out["y"], torch.full((2,), 3.0))
    assert torch.equal(out["z"], torch.full((2,), 30.0))


def test_a_list_of_keys_limits_what_is_skipped() -> None:
    seq = TensorDictSequential(add_one(), TensorDictModule(lambda x: x - 1, ["x"], ["z"]))
    td = TensorDict(x=torch.zeros(2), y=torch.full((2,), 3.0), z=torch.full((2,), 3.0))
    with set_skip_existing(["y"]):
        assert skip_existing() == ["y"]
        out = seq(td)
    assert torch.equal(out["y"], torch.full((2,), 3.0))  # skipped
    assert torch.equal(out["z"], -torch.ones(2))  # not in the list: recomputed


def test_modules_that_update_a_key_always_run() -> None:
    update = TensorDictModule(lambda x: x + 1, ["x"], ["x"])
    with set_skip_existing():
        assert torch.equal(update(TensorDict(x=torch.zeros(1)))["x"], torch.ones(1))


def test_probabilistic_module_is_skipped() -> None:
    module = ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"], out_keys=["sample"], distribution_class=torch.distributions.Normal
    )
    td = TensorDict(loc=torch.zeros(2), scale=torch.ones(2), sample=torch.full((2,), 7.0))
    with set_skip_existing():
        assert torch.equal(module(td)["sample"], torch.full((2,), 7.0))


class Double(TensorDictModuleBase):
    in_keys: ClassVar[list[Any]] = ["x"]
    out_keys: ClassVar[list[Any]] = ["y"]

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def _forward_td(self, tensordict: Any, tensordict_out: Any) -> Any:
        raise AssertionError("not used")

    @set_skip_existing(None)
    def forward(self, tensordict: Any) -> Any:
        self.seen.append(skip_existing())
        tensordict["y"] = tensordict["x"] * 2
        return tensordict


class AlwaysSkip(Double):
    @set_skip_existing(True)
    def forward(self, tensordict: Any) -> Any:
        self.seen.append(skip_existing())
        tensordict["y"] = tensordict["x"] * 2
        return tensordict


class NeverSkip(Double):
    @set_skip_existing(False)
    def forward(self, tensordict: Any) -> Any:
        self.seen.append(skip_existing())
        tensordict["y"] = tensordict["x"] * 2
        return tensordict


def test_decorator_modes() -> None:
    td = TensorDict(x=torch.ones(1), y=torch.zeros(1))
    follows = Double()
    assert torch.equal(follows(td.clone())["y"], torch.full((1,), 2.0))
    with set_skip_existing():
        assert torch.equal(follows(td.clone())["y"], torch.zeros(1))
    assert torch.equal(AlwaysSkip()(td.clone())["y"], torch.zeros(1))
    never = NeverSkip()
    with set_skip_existing():
        assert torch.equal(never(td.clone())["y"], torch.full((1,), 2.0))
    assert never.seen == [False]  # the decorator's mode holds inside the call
    assert skip_existing() is False


def test_decorated_function_and_errors() -> None:
    @set_skip_existing(True)
    def inside() -> Any:
        return skip_existing()

    assert inside() is True and skip_existing() is False
    with pytest.raises(RuntimeError, match="only decorates"), set_skip_existing(None):
        pass


def test_other_threads_do_not_see_the_mode() -> None:
    seen = []
    with set_skip_existing(True, thread_local=False):
        thread = threading.Thread(target=lambda: seen.append(skip_existing()))
        thread.start()
        thread.join()
    assert seen == [False]
