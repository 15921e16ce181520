"""The code users read type-checks cleanly: the README tour, the docs pages' python blocks
and ``examples/``, under mypy with the plugin (the package's strict settings) and under
basedpyright. A page's blocks run in order in one namespace, so each page is one module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ..docs.fences import blocks
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
#: docs pages not (yet) held to the checkers, each with its reason: visible, never silent
EXCLUDED_PAGES = {
    "docs/typing.md": "shows refused code on purpose; checked with its `# E:` markers by test_cases",
    "docs/architecture.md": "no python blocks",
    "docs/benchmarks.md": "no python blocks",
    "docs/torchrl.md": "its one python block imports tensordict and torchrl under the alias",
}
#: every other docs page is checked, so a new page is covered without being listed
DOCS_PAGES = tuple(
    page
    for page in sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))
    if page not in TYPED_PAGES and page not in EXCLUDED_PAGES
)


def _page_snippet(page: str) -> Path:
    """The python blocks of a page as one file (rewritten only when the page changed)."""
    text = "\n".join(_FENCE.findall((REPO / page).read_text(encoding="utf-8")))
    path = state_dir() / "user_code" / (page.replace("/", "_").replace(".", "_") + ".py")
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _docs_page_snippet(page: str, pyright: bool = False) -> Path:
    """A docs page's python blocks (as ``tests/docs/fences.py`` reads them, also indented
    ones) as one module, each block after a comment naming its line on the page. For
    pyright, the blocks marked ``<!-- typed-by-plugin: ... -->`` are left out: their types
    come from the mypy plugin (a later block that needs their names fails pyright, so a
    page keeps what only the plugin types in blocks of their own)."""
    parts = [
        f"# {page}:{block.line}\n{block.source}"
        for block in blocks(REPO / page)
        if block.language == "python"
        and block.no_run is None  # what runs, in its namespace
        and not (pyright and block.typed_by_plugin is not None)
    ]
    text = "\n".join(parts)
    name = page.replace("/", "_").replace(".", "_") + ("_pyright" if pyright else "")
    path = state_dir() / "user_code" / (name + ".py")
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _files(pyright: bool = False) -> list[Path]:
    return [
        *(_page_snippet(page) for page in TYPED_PAGES),
        *(_docs_page_snippet(page, pyright) for page in DOCS_PAGES),
        *EXAMPLES,
    ]


def _show(found: list[Diagnostic]) -> str:
    return "\n".join(f"{d.path}:{d.line}: [{d.code}] {d.message}" for d in found)


def test_the_snippets_hold_code() -> None:
    tour = _page_snippet("README.md").read_text()
    assert "TensorDictModule(" in tour and "from_tensordict(" in tour
    assert len(EXAMPLES) >= 3


def test_every_docs_page_is_checked_or_excluded_with_a_reason() -> None:
    pages = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert set(EXCLUDED_PAGES) <= pages, "an exclusion names a page that is gone"
    assert pages == set(DOCS_PAGES) | set(EXCLUDED_PAGES) | {"docs/getting-started.md"}
    assert all(reason.strip() for reason in EXCLUDED_PAGES.values())
    for page in DOCS_PAGES:
        assert _docs_page_snippet(page).read_text().strip(), f"{page} has no python block"


def test_mypy_with_the_plugin(tmp_path: Path) -> None:
    config = mypy_config(tmp_path, REPO, plugin=True)
    found, _ = run_mypy(_files(), config, state_dir() / "cache-plugin")
    assert not found, _show(found)


def test_basedpyright(tmp_path: Path) -> None:
    if pyright_command() is None:
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    found = run_pyright(_files(pyright=True), tmp_path, REPO)
    assert not found, _show(found)


def _marked_blocks(page: str) -> list[tuple[int, int]]:
    """The line ranges (1-based, in the page's full snippet) of its ``typed-by-plugin``
    blocks."""
    marked = {b.line for b in blocks(REPO / page) if b.typed_by_plugin is not None}
    lines = _docs_page_snippet(page).read_text().splitlines()
    starts = [n for n, line in enumerate(lines, 1) if line.startswith(f"# {page}:")]
    ranges = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(lines)
        if int(lines[start - 1].rpartition(":")[2]) in marked:
            ranges.append((start, end))
    return ranges


def test_each_typed_by_plugin_marker_is_needed(tmp_path: Path) -> None:
    """A block pyright skips must be one pyright cannot check: with the marked blocks in,
    pyright reports an error inside each of them (a marker left on a block that no longer
    needs the plugin fails here)."""
    if pyright_command() is None:
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    pages = [page for page in DOCS_PAGES if _marked_blocks(page)]
    assert pages, "no page marks a block typed-by-plugin: this test checks nothing"
    found = run_pyright([_docs_page_snippet(page) for page in pages], tmp_path, REPO)
    unneeded = []
    for page in pages:
        path = _docs_page_snippet(page).resolve()
        lines = {d.line for d in found if d.path.resolve() == path}
        for start, end in _marked_blocks(page):
            if not any(start <= line <= end for line in lines):
                unneeded.append(f"{page}: the block at snippet lines {start}-{end}")
    assert not unneeded, "typed-by-plugin markers pyright does not need:\n" + "\n".join(unneeded)
