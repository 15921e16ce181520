"""Behaviour switches: context managers and decorators, scoped; values that match
tensorclass's behaviour accepted, others refused with what tensorclass does instead."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import (
    KeyNotFoundError,
    TensorClass,
    TensorDict,
    capture_non_tensor_stack,
    get_defaults_to_none,
    get_printoptions,
    lazy_legacy,
    lazy_stack,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
    set_printoptions,
)
from tensorclass.switches import ModeError

SWITCHES: list[tuple[Callable[..., Any], Callable[..., Any], bool, str]] = [
    (set_lazy_legacy, lazy_legacy, False, "lazy_stack"),
    (set_list_to_stack, list_to_stack, False, "NonTensorStack.from_list"),
    (set_capture_non_tensor_stack, capture_non_tensor_stack, True, "one shared value"),
]


class Inner(TensorClass):
    z: torch.Tensor


class Typed(TensorClass):
    a: torch.Tensor
    inner: Inner


def make_td() -> TensorDict:
    return TensorDict({"b": torch.zeros(2, 3), "a": torch.zeros(2)}, [2])


@pytest.mark.parametrize(("setter", "getter", "accepted", "hint"), SWITCHES)
def test_accepted_value_is_scoped_to_the_block(
    setter: Callable[..., Any], getter: Callable[..., Any], accepted: bool, hint: str
) -> None:
    assert getter() is accepted and getter(allow_none=True) is None
    with setter(accepted):
        assert getter() is accepted and getter(allow_none=True) is accepted
        with setter(accepted):
            assert getter(allow_none=True) is accepted
        assert getter(allow_none=True) is accepted
    assert getter(allow_none=True) is None


@pytest.mark.parametrize(("setter", "getter", "accepted", "hint"), SWITCHES)
def test_other_value_is_an_error_naming_what_tensorclass_does(
    setter: Callable[..., Any], getter: Callable[..., Any], accepted: bool, hint: str
) -> None:
    with pytest.raises(ModeError, match=hint) as info:
        setter(not accepted)
    assert isinstance(info.value, ValueError)
    assert f"{setter.__name__}({not accepted})" in str(info.value)
    assert getter(allow_none=True) is None


@pytest.mark.parametrize(("setter", "getter", "accepted", "hint"), SWITCHES)
def test_switch_as_decorator_and_after_an_exception(
    setter: Callable[..., Any], getter: Callable[..., Any], accepted: bool, hint: str
) -> None:
    @setter(accepted)
    def inside(depth: int) -> Any:
        if depth:
            return inside(depth - 1)  # the same decorator re-entered
        return getter(allow_none=True)

    assert inside(2) is accepted
    assert getter(allow_none=True) is None
    with pytest.raises(RuntimeError), setter(accepted):
        raise RuntimeError("boom")
    assert getter(allow_none=True) is None


def test_switches_describe_real_behaviour() -> None:
    with set_lazy_legacy(False):
        assert type(torch.stack([make_td(), make_td()])) is TensorDict
    with set_list_to_stack(False):
        td = make_td()
        td["tags"] = ["x", "y"]
        assert td["tags"] == ["x", "y"] and td[0]["tags"] == ["x", "y"]
    with set_capture_non_tensor_stack(True):
        a = make_td()
        a["name"] = "run"
        assert torch.stack([a, a.clone()])["name"] == "run"


def test_get_defaults_to_none_matches_get() -> None:
    assert get_defaults_to_none() is False
    with set_get_defaults_to_none(False):
        assert get_defaults_to_none() is False
        with pytest.raises(KeyNotFoundError):
            make_td().get("missing")
        assert make_td().get("missing", None) is None
    with pytest.raises(ModeError, match=r"get\(key, None\)"):
        set_get_defaults_to_none()  # tensordict's default argument is True
    with pytest.raises(ModeError):
        set_get_defaults_to_none(True)


def test_switch_values_are_per_thread() -> None:
    seen: list[Any] = []
    entered, release = threading.Event(), threading.Event()

    def worker() -> None:
        with set_lazy_legacy(False):
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    seen.append(lazy_legacy(allow_none=True))
    release.set()
    thread.join()
    assert seen == [None]


# -- print options ------------------------------------------------------------------------


def test_printoptions_change_printing_inside_the_block_only() -> None:
    td = make_td()
    before = repr(td)
    assert before == "TensorDict(batch_size=[2], fields={a: f32[], b: f32[3]})"
    with set_printoptions(sort_keys=None, show_dtype=False):
        assert repr(td) == "TensorDict(batch_size=[2], fields={b: [3], a: []})"
        assert get_printoptions()["sort_keys"] is None
        with set_printoptions(show_dtype=True, show_batch_size=False):
            assert repr(td) == "TensorDict(fields={b: f32[3], a: f32[]})"
        assert repr(td) == "TensorDict(batch_size=[2], fields={b: [3], a: []})"
    assert repr(td) == before and get_printoptions()["sort_keys"] == "alphabetical"


def test_printoptions_compact_verbose_and_callable_sort() -> None:
    td = make_td()
    with set_printoptions(compact=False):
        assert repr(td) == (
            "TensorDict(\n    fields={\n"
            "        a: Tensor(shape=torch.Size([2]), device=cpu, dtype=torch.float32, "
            "is_shared=False),\n"
            "        b: Tensor(shape=torch.Size([2, 3]), device=cpu, dtype=torch.float32, "
            "is_shared=False)},\n"
            "    batch_size=torch.Size([2]),\n    device=None,\n    is_shared=False)"
        )
    # an option of the detailed form alone turns the compact form off
    with set_printoptions(show_shape=False, show_batch_size=False):
        assert get_printoptions()["compact"] is False
        assert "a: Tensor(device=cpu, dtype=torch.float32, is_shared=False)" in repr(td)
        assert "batch_size" not in repr(td)
    with set_printoptions(verbose=False):
        assert repr(td) == "TensorDict(batch_size=[2], fields={a: [], b: [3]})"
    with set_printoptions(sort_keys=lambda text: -len(text)):
        assert repr(td) == "TensorDict(batch_size=[2], fields={b: f32[3], a: f32[]})"


def test_printoptions_reach_typed_nested_and_lazy_stacks() -> None:
    typed = Typed(torch.zeros(2), Inner(torch.zeros(2, 4), batch_size=[2]), batch_size=[2])
    with set_printoptions(show_dtype=False, show_batch_size=False):
        assert repr(typed) == "Typed(fields={a: [], inner: Inner{z: [4]}})"
        stack = lazy_stack([make_td(), make_td()])
        assert "f32" not in repr(stack)
    assert "f32" in repr(lazy_stack([make_td(), make_td()]))


def test_printoptions_as_decorator() -> None:
    @set_printoptions(show_batch_size=False)
    def show() -> str:
        return repr(make_td())

    assert show() == "TensorDict(fields={a: f32[], b: f32[3]})"
    assert "batch_size" in repr(make_td())


def test_printoptions_refuse_bad_values() -> None:
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        set_printoptions(colour=True)
    with pytest.raises(ModeError, match="sort_keys must be"):
        set_printoptions(sort_keys="reverse")
    with pytest.raises(ModeError, match="must be a bool"):
        set_printoptions(compact="yes")
    with set_printoptions(show_grad=True, html=False, plain=False, show_is_shared=False):
        assert get_printoptions()["show_grad"] is True
    with set_printoptions(**get_printoptions()):  # the options round-trip
        assert repr(make_td()) == "TensorDict(batch_size=[2], fields={a: f32[], b: f32[3]})"
