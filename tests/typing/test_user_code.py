"""The code users read first type-checks cleanly: the README tour and ``examples/``, under
mypy with the plugin (the package's strict settings) and under basedpyright."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .checkers import (
    REPO,
    Diagnostic,
    mypy_config,
    pyright_command,
    run_mypy,
    run_pyright,
    state_dir,
)

_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXAMPLES = sorted((REPO / "examples").glob("*.py"))
#: documentation pages whose python blocks, joined in page order, must type-check
TYPED_PAGES = ("README.md", "docs/getting-started.md")


def _page_snippet(page: str) -> Path:
    """The python blocks of a page as one file (rewritten only when the page changed)."""
    text = "\n".join(_FENCE.findall((REPO / page).read_text(encoding="utf-8")))
    path = state_dir() / "user_code" / (page.replace("/", "_").replace(".", "_") + ".py")
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _files() -> list[Path]:
    return [*(_page_snippet(page) for page in TYPED_PAGES), *EXAMPLES]


def _show(found: list[Diagnostic]) -> str:
    return "\n".join(f"{d.path}:{d.line}: [{d.code}] {d.message}" for d in found)


def test_the_snippets_hold_code() -> None:
    tour = _page_snippet("README.md").read_text()
    assert "TensorDictModule(" in tour and "from_tensordict(" in tour
    assert len(EXAMPLES) >= 3


def test_mypy_with_the_plugin(tmp_path: Path) -> None:
    config = mypy_config(tmp_path, REPO, plugin=True)
    found, _ = run_mypy(_files(), config, state_dir() / "cache-plugin")
    assert not found, _show(found)


def test_basedpyright(tmp_path: Path) -> None:
    if pyright_command() is None:
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    found = run_pyright(_files(), tmp_path, REPO)
    assert not found, _show(found)
