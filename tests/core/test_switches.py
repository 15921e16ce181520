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
    assert before == "TensorDict(b: float32[2, 3], a: float32[2], batch_size=[2])"
    with set_printoptions(sort_keys="alphabetical", show_dtype=False):
        assert repr(td) == "TensorDict(a: [2], b: [2, 3], batch_size=[2])"
        assert get_printoptions()["sort_keys"] == "alphabetical"
        with set_printoptions(show_shape=False, show_dtype=True, show_batch_size=False):
            assert repr(td) == "TensorDict(a: float32, b: float32)"
        assert repr(td) == "TensorDict(a: [2], b: [2, 3], batch_size=[2])"
    assert repr(td) == before and get_printoptions()["sort_keys"] is None


def test_printoptions_compact_verbose_and_callable_sort() -> None:
    td = make_td()
    with set_printoptions(compact=False):
        assert repr(td) == (
            "TensorDict(\n    b: float32[2, 3],\n    a: float32[2],\n    batch_size=[2],\n)"
        )
    with set_printoptions(verbose=False):
        assert repr(td) == "TensorDict(b: [2, 3], a: [2], batch_size=[2])"
    with set_printoptions(sort_keys=len):
        assert repr(td) == "TensorDict(a: float32[2], b: float32[2, 3], batch_size=[2])"


def test_printoptions_reach_typed_nested_and_lazy_stacks() -> None:
    typed = Typed(torch.zeros(2), Inner(torch.zeros(2, 4), batch_size=[2]), batch_size=[2])
    with set_printoptions(show_dtype=False, show_batch_size=False):
        assert repr(typed) == "Typed(a=[2], inner=Inner(z=[2, 4]))"
        stack = lazy_stack([make_td(), make_td()])
        assert "float32" not in repr(stack)
    assert "float32" in repr(lazy_stack([make_td(), make_td()]))


def test_printoptions_as_decorator() -> None:
    @set_printoptions(show_batch_size=False)
    def show() -> str:
        return repr(make_td())

    assert show() == "TensorDict(b: float32[2, 3], a: float32[2])"
    assert "batch_size" in repr(make_td())


def test_printoptions_refuse_what_the_repr_cannot_show() -> None:
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        set_printoptions(colour=True)
    with pytest.raises(ModeError, match="does not show show_grad"):
        set_printoptions(show_grad=True)
    with pytest.raises(ModeError, match="has no HTML display"):
        set_printoptions(html=True)
    with pytest.raises(ModeError, match="sort_keys must be"):
        set_printoptions(sort_keys="reverse")
    with pytest.raises(ModeError, match="must be a bool"):
        set_printoptions(compact="yes")
    with set_printoptions(show_grad=False, html=False, plain=False, show_is_shared=False):
        assert get_printoptions()["show_grad"] is False
    with set_printoptions(**get_printoptions()):  # the options round-trip
        assert repr(make_td()) == "TensorDict(b: float32[2, 3], a: float32[2], batch_size=[2])"
