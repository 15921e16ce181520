"""tensordict 0.15.3's public module paths are modules of tensorclass, or docs/migrating.md
says why not.

``from tensordict.X import Y`` ports as ``from tensorclass.X import Y``: for each public module
of the release (``tensordict_0_15_3_modules.json``, written by ``generate.py``), the module
``tensorclass.X`` exists, and each name of tensordict's ``__all__`` is in its ``__all__`` (so
type checkers see it re-exported), unless ``docs/migrating.md`` lists the module
(`` `tensordict.X` ``) or the name (`` `tensordict.X.Y` ``) under "Left out on purpose".
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from types import ModuleType

import pytest

from .gaps import HERE, left_out

MODULES: dict[str, list[str] | None] = json.loads(
    (HERE / "tensordict_0_15_3_modules.json").read_text()
)
LISTED = left_out()


def ours(path: str) -> ModuleType | None:
    """tensorclass's module for tensordict's module path (None if there is none)."""
    try:
        return importlib.import_module("tensorclass" + path.removeprefix("tensordict"))
    except ModuleNotFoundError:
        return None


def test_the_data_lists_the_module_paths_ported_code_uses() -> None:
    for path in ("tensordict.utils", "tensordict.nn.distributions.composite", "tensordict.base"):
        assert path in MODULES


@pytest.mark.parametrize("path", sorted(MODULES))
def test_module_path_exists_or_is_listed(path: str) -> None:
    if path in LISTED:
        assert ours(path) is None, f"docs/migrating.md lists {path} as absent, but it exists"
        return
    module = ours(path)
    assert module is not None, f"{path} is neither a module of tensorclass nor listed"
    exported = set(getattr(module, "__all__", ()))
    missing = [
        name
        for name in MODULES[path] or ()
        if f"{path}.{name}" not in LISTED and (name not in exported or not hasattr(module, name))
    ]
    assert not missing, f"{module.__name__} lacks (in __all__) names of {path}: {missing}"


def test_listed_names_of_module_paths_are_absent() -> None:
    present = []
    for name in LISTED:
        path, _, attr = name.rpartition(".")
        if path in MODULES and path not in LISTED:
            module = ours(path)
            if module is not None and hasattr(module, attr):
                present.append(name)
    assert not present, f"docs/migrating.md lists as absent names tensorclass has: {present}"


def test_functions_keep_their_name_over_submodules_of_that_name() -> None:
    """As in tensordict: ``tensordict.tensorclass`` is the decorator and ``tensordict.memmap``
    the function, though modules of those names exist; the other paths are attributes."""
    script = (
        "import sys\n"
        "from tensorclass.tensorclass import NonTensorData\n"
        "from tensorclass.memmap import MemoryMappedTensor\n"
        "import tensorclass, tensorclass.tensorclass as t\n"
        "assert callable(t) and t is tensorclass.tensorclass, t\n"
        "assert not isinstance(tensorclass.memmap, type(sys)), tensorclass.memmap\n"
        "assert sys.modules['tensorclass.tensorclass'].NonTensorData is NonTensorData\n"
        "assert tensorclass.utils.expand_right is not None\n"
        "assert isinstance(tensorclass.functional, type(sys))\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_side_by_side_with_tensordict() -> None:
    """Every module path of the data is importable from tensordict too (the data is true)."""
    pytest.importorskip("tensordict")
    for path, names in MODULES.items():
        if path in ("tensordict.tabular", "tensordict.testing"):
            continue  # deprecated shims that warn on import
        module = importlib.import_module(path)
        assert sorted(getattr(module, "__all__", None) or []) == sorted(names or [])
