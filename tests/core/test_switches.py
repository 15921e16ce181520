"""Print options: a context manager and a decorator, scoped to the block. (The behaviour
switches of tensordict, with both of their values, are tested in tests/parity/test_switches.py.)"""

from __future__ import annotations

import pytest
import torch

from tensorclass import (
    TensorClass,
    TensorDict,
    get_printoptions,
    lazy_stack,
    set_printoptions,
)
from tensorclass.switches import ModeError


class Inner(TensorClass):
    z: torch.Tensor


class Typed(TensorClass):
    a: torch.Tensor
    inner: Inner


def make_td() -> TensorDict:
    return TensorDict({"b": torch.zeros(2, 3), "a": torch.zeros(2)}, [2])


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
