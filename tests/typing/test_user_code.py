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
    "docs/api.md": "no python blocks (mkdocstrings entries)",
    "docs/architecture.md": "no python blocks",
    "docs/benchmarks.md": "no python blocks",
    # not clean yet (issue 16): the page shows torch.* functions (torch.maximum, F.relu,
    # torch.cumsum, torch.zeros_like...) taking TensorDicts, which torch's stubs type for
    # Tensors only (pyright; the mypy plugin types them), and lazy-stack methods (members,
    # append, get_nestedtensor, get(as_padded_tensor=)) that `lazy_stack`'s `-> T` hides;
    # under mypy + plugin 9 errors remain (those, a reused name, an unannotated def)
    "docs/operations.md": "torch.* functions on TensorDicts (torch's stubs take Tensors only); "
    "lazy_stack typed as returning the members' class hides the lazy-stack methods",
}
#: docs pages checked by mypy (with the plugin) only, each with its reason
PYRIGHT_EXCLUDED_PAGES = {
    "docs/tensorclasses.md": "shows the @tensorclass spelling and torch.stack/torch.cat on "
    "classes, which only the mypy plugin types (docs/typing.md says so)",
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


def _docs_page_snippet(page: str) -> Path:
    """A docs page's python blocks (as ``tests/docs/fences.py`` reads them, also indented
    ones) as one module, each block after a comment naming its line on the page."""
    parts = [
        f"# {page}:{block.line}\n{block.source}"
        for block in blocks(REPO / page)
        if block.language == "python" and block.no_run is None  # what runs, in its namespace
    ]
    text = "\n".join(parts)
    path = state_dir() / "user_code" / (page.replace("/", "_").replace(".", "_") + ".py")
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _files(pyright: bool = False) -> list[Path]:
    pages = [p for p in DOCS_PAGES if not (pyright and p in PYRIGHT_EXCLUDED_PAGES)]
    return [
        *(_page_snippet(page) for page in TYPED_PAGES),
        *(_docs_page_snippet(page) for page in pages),
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
    assert set(PYRIGHT_EXCLUDED_PAGES) <= set(DOCS_PAGES)
    assert all(r.strip() for r in [*EXCLUDED_PAGES.values(), *PYRIGHT_EXCLUDED_PAGES.values()])
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
