"""The plugin's static list of torch functions (it imports neither torch nor the library)
is the run-time table of functions dispatched to tensor classes, both ways: the file is
written by ``python -m tensorclass.engine.torch_api.generate_names``, and the table takes
every entry of the leaf-op table named after a torch function."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from tensorclass.engine.leafwise.elementwise_kinds import cast, cast_to
from tensorclass.engine.leafwise.kind import TABLE
from tensorclass.engine.torch_api.functions import HANDLED_FUNCTIONS
from tensorclass.engine.torch_api.generate_names import COMMAND, TARGET, render
from tensorclass.plugins._mypy_torch_names import (
    C_NN_NAMES,
    FUNCTIONAL_NAMES,
    TORCH_FUNCTIONS,
    TORCH_NAMES,
)

from .checkers import run_mypy, state_dir


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


def test_the_plugin_list_is_the_generated_one() -> None:
    assert TARGET.read_text() == render(), f"the plugin's list is out of date: run {COMMAND}"


def test_every_table_entry_named_after_a_torch_function_is_handled() -> None:
    """``torch.<name>(td)`` calls ``td.<name>()`` for every entry of the leaf-op table (casts
    aside: ``torch.float`` is a dtype)."""
    unhandled = sorted(
        name
        for name, entry in TABLE.items()
        if entry.kind not in (cast, cast_to)
        and callable(getattr(torch, name, None))
        and getattr(torch, name) not in HANDLED_FUNCTIONS
    )
    assert unhandled == []


def test_c_nn_names_are_the_functional_ones() -> None:
    for public, stub in C_NN_NAMES.items():
        assert public in FUNCTIONAL_NAMES
        assert getattr(torch._C._nn, stub) is getattr(F, public)


def test_fullnames_name_the_listed_functions() -> None:
    assert set(TORCH_FUNCTIONS.values()) == TORCH_NAMES | FUNCTIONAL_NAMES
    assert TORCH_FUNCTIONS["torch._C._VariableFunctions.maximum"] == "maximum"
    assert TORCH_FUNCTIONS["torch._C._nn.log_sigmoid"] == "logsigmoid"


def test_mypy_names_every_listed_function_as_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each listed function, called as users write it, has a fullname (in torch's stubs, as
    mypy resolves it) that the plugin hooks."""
    # a new text each run: mypy's cache would skip a file whose text it has checked before
    lines = [f"# {uuid.uuid4().hex}", "import torch", "import torch.nn.functional as F"]
    lines.append("t = torch.zeros(2)")
    spellings = [f"torch.{name}" for name in sorted(TORCH_NAMES)]
    spellings += [f"F.{name}" for name in sorted(FUNCTIONAL_NAMES)]
    first = len(lines) + 1
    lines += [f"{spelling}(t)" for spelling in spellings]
    calls = tmp_path / "torch_calls.py"
    calls.write_text("\n".join(lines) + "\n")
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nplugins = {Path(__file__).parent / 'fullname_recorder.py'}\n")
    record = tmp_path / "fullnames.txt"
    record.touch()
    monkeypatch.setenv("TENSORCLASS_FULLNAMES", str(record))
    # the cache holds torch's stubs (a warm run is quick)
    run_mypy([calls], config, state_dir() / "cache-fullnames", allow_log=True)
    found: dict[str, set[str]] = {}
    for row in record.read_text().splitlines():
        where, fullname = row.rsplit(" ", 1)
        path, line = where.rsplit(":", 1)
        if Path(path).resolve() == calls.resolve():
            found.setdefault(spellings[int(line) - first], set()).add(fullname)
    unhooked = sorted(s for s in spellings if not found.get(s, set()) & TORCH_FUNCTIONS.keys())
    assert unhooked == [], {s: found.get(s) for s in unhooked}
