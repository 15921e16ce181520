"""values() and items() listings: snapshots, unwrapped non-tensor values, sorted keys, and
the count of live non-tensor wrappers that lets an all-tensor listing skip the type check."""

import copy
import gc
import pickle
from typing import Any

import pytest
import torch
from torch import Tensor

from tensorclass import NonTensorData, NonTensorStack, TensorClass, TensorDict
from tensorclass.non_tensor import LIVE_WRAPPERS


class Vectors(TensorClass):
    a: Tensor
    b: Tensor


class Noted(TensorClass):
    a: Tensor
    note: str


class Holder(TensorClass):
    a: Tensor
    inner: TensorDict


def flat() -> TensorDict:
    return TensorDict({"b": torch.zeros(2), "a": torch.ones(2), "c": torch.full((2,), 2.0)}, [2])


def test_live_wrapper_count_follows_every_creation_and_release() -> None:
    gc.collect()
    before = len(LIVE_WRAPPERS)
    value = NonTensorData("x")
    made: list[Any] = [
        value,
        copy.copy(value),
        copy.deepcopy(value),
        pickle.loads(pickle.dumps(value)),
        NonTensorStack.from_list(["a", "b"]),
    ]
    assert len(LIVE_WRAPPERS) == before + 5
    made.clear()
    del value
    gc.collect()
    assert len(LIVE_WRAPPERS) == before


@pytest.mark.parametrize("options", [{}, {"include_nested": True, "leaves_only": True}])
def test_listings_are_snapshots(options: dict[str, bool]) -> None:
    td = flat()
    items, values = td.items(**options), td.values(**options)
    td["d"] = torch.zeros(2)  # adding or removing keys while iterating is fine
    del td["a"]
    assert [key for key, _ in items] == ["b", "a", "c"]
    assert len(list(values)) == 3


@pytest.mark.parametrize("options", [{}, {"include_nested": True, "leaves_only": True}])
def test_non_tensor_values_are_unwrapped(options: dict[str, bool]) -> None:
    td = TensorDict({"x": torch.zeros(2), "s": "text"}, [2])
    assert LIVE_WRAPPERS  # the stored "text" is a wrapper
    assert list(td.values(**options))[1] == "text"
    assert dict(td.items(**options))["s"] == "text"
    nested = TensorDict({"x": torch.zeros(2), "n": {"s": "deep"}}, [2])
    assert dict(nested.items(True, True))[("n", "s")] == "deep"
    assert list(nested.values(True, True)) == [nested["x"], "deep"]


def test_all_tensor_listings_give_the_stored_tensors() -> None:
    gc.collect()
    td = flat()
    stored = list(td._data.values())
    for options in ({}, {"include_nested": True, "leaves_only": True}):
        assert all(a is b for a, b in zip(td.values(**options), stored, strict=True))
        assert all(a is b for (_, a), b in zip(td.items(**options), stored, strict=True))


def test_sorted_listings() -> None:
    td = flat()
    assert [key for key, _ in td.items(sort=True)] == ["a", "b", "c"]
    assert list(td.keys(sort=True)) == ["a", "b", "c"]
    assert list(td.keys(True, True, sort=True)) == ["a", "b", "c"]
    assert next(iter(td.values(sort=True))) is td["a"]
    td["n"] = {"z": torch.zeros(2), "a": torch.zeros(2)}
    assert list(td.keys(True, sort=True)) == ["a", "b", "c", "n", ("n", "a"), ("n", "z")]
    assert list(td.keys(True, True, sort=True)) == ["a", "b", "c", ("n", "a"), ("n", "z")]
    assert list(td.keys(sort=True)) == ["a", "b", "c", "n"]


def test_contains_a_string_key() -> None:
    td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.zeros(2)}}, [2])
    assert "a" in td and "n" in td and "b" not in td
    assert "n" in td.keys() and "n" not in td.keys(leaves_only=True)
    assert "a" in td.keys(leaves_only=True) and "z" not in td.keys(True, True)


def test_classes_whose_values_are_never_wrappers() -> None:
    assert Vectors._no_wrappers and Holder._no_wrappers
    assert not Noted._no_wrappers and not TensorDict._no_wrappers
    noted = Noted(a=torch.zeros(2), note="hello", batch_size=[2])
    assert dict(noted.items())["note"] == "hello"
    holder = Holder(a=torch.zeros(2), inner=TensorDict({"s": "deep"}, [2]), batch_size=[2])
    assert dict(holder.items(True, True))[("inner", "s")] == "deep"


def test_compiled_listing_does_not_recompile_when_wrappers_come_and_go() -> None:
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()

    @torch.compile(backend=counter, fullgraph=True)
    def total(td: TensorDict) -> Tensor:
        out = torch.zeros(())
        for _, value in td.items():
            out = out + value.sum()
        for value in td.values():
            out = out + value.sum()
        return out

    td = flat()
    kept = []
    for i in range(3):
        assert total(td).item() == 12.0
        kept.append(NonTensorData(i))
    assert counter.frame_count == 1
