"""state_dict / load_state_dict, and torch.save + torch.load with weights_only=True."""

from __future__ import annotations

import io
import os
import pickle
from collections import OrderedDict
from typing import Any

import pytest
import torch
from torch import nn

from tensorclass import (
    BatchSizeError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)


class Inner(TensorClass):
    b: torch.Tensor


class State(TensorClass):
    a: torch.Tensor
    inner: Inner
    maybe: torch.Tensor | None = None
    label: str = "x"


def make_state() -> State:
    return State(
        a=torch.randn(3, 2),
        inner=Inner(b=torch.randn(3), batch_size=[3]),
        label="run",
        batch_size=[3],
    )


def make_td() -> TensorDict:
    return TensorDict({"a": torch.randn(3, 2), "n": {"b": torch.randn(3)}, "s": "hi"}, [3])


def roundtrip(x: Any) -> Any:
    buffer = io.BytesIO()
    torch.save(x, buffer)
    buffer.seek(0)
    return torch.load(buffer)  # torch's default: weights_only=True


def test_state_dict_is_flat_with_level_metadata() -> None:
    td = make_td()
    state = td.state_dict()
    assert isinstance(state, OrderedDict) and list(state) == ["a", "n.b"]
    assert state._metadata == {
        "": {"batch_size": [3], "device": None},
        "n": {"batch_size": [3], "device": None},
    }
    assert not state["a"].requires_grad


def test_state_dict_detaches_unless_keep_vars() -> None:
    td = TensorDict({"w": torch.ones(2, requires_grad=True)}, [2])
    assert not td.state_dict()["w"].requires_grad
    assert td.state_dict(keep_vars=True)["w"] is td["w"]


def test_nested_format() -> None:
    td = make_td()
    state = td.state_dict(flatten=False)
    assert isinstance(state["n"], OrderedDict) and list(state["n"]) == ["b"]
    target = make_td()
    target.load_state_dict(state)
    assert torch.equal(target["n", "b"], td["n", "b"])


@pytest.mark.parametrize("make", [make_td, make_state], ids=["TensorDict", "typed"])
def test_load_state_dict_copies_into_the_existing_tensors(make: Any) -> None:
    source, target = make(), make()
    before = target.get(("inner", "b") if isinstance(target, State) else ("n", "b"))
    assert target.load_state_dict(source.state_dict()) is target
    after = target.get(("inner", "b") if isinstance(target, State) else ("n", "b"))
    assert after is before and torch.equal(
        after, source.get(("inner", "b") if isinstance(source, State) else ("n", "b"))
    )
    assert (target == source).all()


def test_lazy_stack_round_trip() -> None:
    parts = [make_td()[0], make_td()[1]]
    source = lazy_stack(parts)
    target = lazy_stack([make_td()[0], make_td()[1]])
    target.load_state_dict(source.state_dict())
    assert torch.equal(target["a"], source["a"])


def test_strict_refuses_other_keys_and_changes_nothing() -> None:
    td = make_td()
    snapshot = td.clone()
    state = td.state_dict()
    state["extra"] = torch.zeros(3)
    state["a"] = torch.full((3, 2), 7.0)
    with pytest.raises(StructureMismatchError, match=r"unexpected \['extra'\]"):
        td.load_state_dict(state)
    assert (td == snapshot).all()
    td.load_state_dict(state, strict=False)
    assert torch.equal(td["extra"], torch.zeros(3)) and (td["a"] == 7).all()


def test_wrong_shape_is_refused_before_any_write() -> None:
    td = make_td()
    state = td.state_dict()
    state["a"] = torch.full((3, 2), 5.0)
    state["n.b"] = torch.zeros(3, 4)
    with pytest.raises(StructureMismatchError, match="'n.b' has shape \\(3, 4\\)"):
        td.load_state_dict(state)
    assert not (td["a"] == 5).any()
    td.load_state_dict(state, assign=True)
    assert td["n", "b"].shape == (3, 4)


def test_a_recorded_batch_size_is_applied() -> None:
    td = TensorDict({"a": torch.zeros(4, 2), "n": {"b": torch.zeros(4, 5)}}, [])
    source = TensorDict(
        {"a": torch.ones(4, 2), "n": TensorDict({"b": torch.ones(4, 5)}, [4, 5])}, [4]
    )
    td.load_state_dict(source.state_dict())
    assert td.batch_size == (4,) and td["n"].batch_size == (4, 5)
    assert (td["n", "b"] == 1).all()
    bad = source.state_dict()
    bad._metadata[""]["batch_size"] = [3]
    with pytest.raises(BatchSizeError, match="does not start with the batch size \\[3\\]"):
        td.load_state_dict(bad)


def test_state_dict_nests_in_a_module_checkpoint() -> None:
    class Holder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(2, 2)
            self.stats = make_td()

        def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
            super()._save_to_state_dict(destination, prefix, keep_vars)
            self.stats.state_dict(destination, prefix + "stats.", keep_vars)

    holder = Holder()
    state = holder.state_dict()
    assert {"linear.weight", "stats.a", "stats.n.b"} <= set(state)
    assert state._metadata["stats"] == {"batch_size": [3], "device": None}


@pytest.mark.parametrize(
    "make",
    [make_td, make_state, lambda: lazy_stack([make_td()[0], make_td()[1]])],
    ids=["TensorDict", "typed", "lazy"],
)
def test_torch_save_then_load_with_weights_only(make: Any) -> None:
    x = make()
    y = roundtrip(x)
    assert type(y) is type(x) and y.batch_size == x.batch_size
    assert (y == x).all()


def test_typed_fields_survive_torch_load() -> None:
    x = make_state()
    y = roundtrip(x)
    assert y.label == "run" and y.maybe is None and type(y.inner) is Inner


class Evil:
    def __reduce__(self) -> Any:
        return (os.system, ("echo pwned",))


def test_torch_load_refuses_anything_else() -> None:
    td = make_td()
    td["payload"] = Evil()
    buffer = io.BytesIO()
    torch.save(td, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="system"):
        torch.load(buffer)


def test_internal_layout_classes_are_not_loadable() -> None:
    from torch.serialization import get_safe_globals

    names = {getattr(g, "__qualname__", "") for g in get_safe_globals()}
    assert "_Blank" not in names and "TensorCore" not in names
    # the engine's classes (a lazy stack's pickle names no class, TensorDictBase is
    # abstract); by identity: tensordict, imported by other tests, lists its own of those names
    from tensorclass import LazyStackedTensorDict
    from tensorclass.engine.base import TensorDictBase

    allowed = set(get_safe_globals())
    assert TensorDictBase not in allowed and LazyStackedTensorDict not in allowed
    assert {"TensorDict", "State"} <= names
