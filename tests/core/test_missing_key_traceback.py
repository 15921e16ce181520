"""A missing key raises ``KeyNotFoundError`` with no internal ``KeyError`` chained under it
(``td[key]`` always; ``get`` under ``set_get_defaults_to_none(False)``, else it gives
``None``)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, set_get_defaults_to_none
from tensorclass.errors import KeyNotFoundError


class Inner(TensorClass):
    b: torch.Tensor


class Outer(TensorClass):
    a: torch.Tensor
    inner: Inner


def _instances() -> list[Any]:
    td = TensorDict({"a": torch.zeros(2), "inner": {"b": torch.zeros(2)}}, [2])
    typed = Outer(torch.zeros(2), Inner(torch.zeros(2), batch_size=[2]), batch_size=[2])
    return [td, typed, LazyStackedTensorDict.lazy_stack([td, td.clone()])]


READS: dict[str, Callable[[Any], object]] = {
    "get": lambda obj: obj.get("missing"),
    "getitem": lambda obj: obj["missing"],
    "get-nested": lambda obj: obj.get(("inner", "missing")),
    "getitem-nested": lambda obj: obj["inner", "missing"],
    "get-missing-level": lambda obj: obj.get(("missing", "x")),
}


@pytest.mark.parametrize("read", list(READS.values()), ids=list(READS))
@pytest.mark.parametrize("which", range(3), ids=["TensorDict", "typed", "lazy-stack"])
def test_missing_key_has_no_chained_key_error(which: int, read: Callable[[Any], object]) -> None:
    obj = _instances()[which]
    with pytest.warns(DeprecationWarning), set_get_defaults_to_none(False):
        with pytest.raises(KeyNotFoundError, match="missing") as info:
            read(obj)
    err = info.value
    assert err.__cause__ is None
    # nothing is shown above the real error: no context, or a suppressed one
    assert err.__context__ is None or err.__suppress_context__
    shown = "".join(traceback.format_exception(err))
    assert "During handling of the above exception" not in shown
    assert "The above exception was the direct cause" not in shown


def test_default_is_returned_for_a_missing_key() -> None:
    for obj in _instances():
        assert obj.get("missing", 3) == 3
        assert obj.get("missing") is None and obj.get(("inner", "missing")) is None
        assert not obj.get("a").any()
