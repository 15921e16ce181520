"""The plugin's static list of torch functions (it imports neither torch nor the library)
is the run-time table of functions dispatched to tensor classes, both ways."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from tensorclass.plugins._mypy_torch_names import (
    C_NN_NAMES,
    FUNCTIONAL_NAMES,
    TORCH_FUNCTIONS,
    TORCH_NAMES,
)
from tensorclass.tensordict_core.torch_functions import HANDLED_FUNCTIONS


def _listed() -> dict[object, str]:
    """The functions the plugin lists, by the spelling they are listed under."""
    found = {getattr(torch, name): f"torch.{name}" for name in TORCH_NAMES}
    found.update({getattr(F, name): f"torch.nn.functional.{name}" for name in FUNCTIONAL_NAMES})
    return found


def test_every_listed_function_is_handled() -> None:
    unhandled = sorted(name for fn, name in _listed().items() if fn not in HANDLED_FUNCTIONS)
    assert unhandled == []


def test_every_handled_function_is_listed() -> None:
    listed = _listed()
    missing = sorted(f"{f.__module__}.{f.__name__}" for f in HANDLED_FUNCTIONS if f not in listed)
    assert missing == []


def test_c_nn_names_are_the_functional_ones() -> None:
    for public, stub in C_NN_NAMES.items():
        assert public in FUNCTIONAL_NAMES
        assert getattr(torch._C._nn, stub) is getattr(F, public)


def test_fullnames_name_the_listed_functions() -> None:
    assert set(TORCH_FUNCTIONS.values()) == TORCH_NAMES | FUNCTIONAL_NAMES
    assert TORCH_FUNCTIONS["torch._C._VariableFunctions.maximum"] == "maximum"
    assert TORCH_FUNCTIONS["torch._C._nn.log_sigmoid"] == "logsigmoid"
