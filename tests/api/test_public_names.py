"""The public top-level names are written once, in ``tensorclass/_api.py``: the package agrees.

``tensorclass/__init__.py`` reads ``__all__`` from the source of ``_api.py`` (its
``from .module import Name as Name`` imports) and type checkers read ``from ._api import *``;
these tests check the two views give the same names and objects.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tensorclass
from tensorclass import _api

API_SOURCE = Path(_api.__file__).read_text(encoding="utf-8")


def test_all_is_what_api_exports() -> None:
    exported = [name for name in vars(_api) if not name.startswith("_") and name != "nn"]
    assert sorted(tensorclass.__all__) == sorted(exported)
    assert len(set(tensorclass.__all__)) == len(tensorclass.__all__)
    for name in tensorclass.__all__:
        assert getattr(tensorclass, name) is getattr(_api, name), name


def test_every_api_import_is_a_re_export() -> None:
    """``Name as Name``: mypy (no implicit re-export) and pyright see it as an export."""
    for node in ast.parse(API_SOURCE).body:
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            for alias in node.names:
                assert alias.asname == alias.name or (alias.asname or "").startswith("_"), (
                    f"line {node.lineno}: write `{alias.name} as {alias.name}`"
                )


def test_star_import_and_dir() -> None:
    namespace: dict[str, object] = {}
    exec("from tensorclass import *", namespace)
    assert set(tensorclass.__all__) <= set(namespace)
    assert set(tensorclass.__all__) <= set(dir(tensorclass))


def test_names_known_before_the_library_loads() -> None:
    """``__all__`` and ``dir()`` come from the source of ``_api.py``: torch stays unloaded."""
    code = (
        "import sys, tensorclass\n"
        "names = list(tensorclass.__all__)\n"
        "assert 'TensorDict' in names and 'TensorDict' in dir(tensorclass), names\n"
        "assert 'torch' not in sys.modules\n"
        "assert 'tensorclass._api' not in sys.modules\n"
        "print(len(names))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(tensorclass.__all__)
