"""Every documented example runs: fenced ``python`` blocks in the README and docs pages.

The blocks of one page run in order in one namespace (a page reads like one session), in a
temporary working directory. Blocks in other languages (``text`` output, ``bash``
commands, ``toml``/``ini`` configuration) are not executed, so the fences themselves are
checked too: every fence names a known language, Python is never fenced as something else,
and a python block that cannot run here carries a ``<!-- no-run: reason -->`` marker and
must still compile (see ``fences.py``).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from .extras import missing_extra
from .fences import PAGES, ROOT, Block, blocks, markers, shown

# Languages that are shown, never run. Anything else (``py``, ``python3``, ``pycon``, a bare
# fence...) is refused, so a Python example cannot slip past the tests under another name.
NOT_RUN = {"text", "bash", "console", "toml", "ini", "json", "yaml"}
PAGE_IDS = [str(page.relative_to(ROOT)) for page in PAGES]


def looks_like_python(source: str) -> bool:
    """Whether a non-python block is a Python program (parses, and imports or defines)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    program = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.With, ast.For)
    return any(isinstance(node, program) for node in ast.walk(tree))


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_fences_are_classified(page: Path) -> None:
    problems = []
    marked_blocks = set()
    for block in blocks(page):
        if block.language == "python":
            if block.typed_by_plugin is not None:
                marked_blocks.add(block.line - 1)
                if not block.typed_by_plugin:
                    problems.append(f"{block.where}: a typed-by-plugin marker needs a reason")
            if block.no_run is not None:
                marked_blocks.add(block.line - 1)
                if not block.no_run:
                    problems.append(f"{block.where}: a no-run marker needs a reason")
                try:
                    compile(block.source, block.where, "exec")
                except SyntaxError as err:
                    problems.append(f"{block.where}: a no-run block must still compile: {err}")
        elif block.language not in NOT_RUN:
            problems.append(
                f"{block.where}: fence language {block.language!r} is neither 'python' (run) "
                f"nor one of {sorted(NOT_RUN)} (shown only)"
            )
        elif looks_like_python(block.source):
            problems.append(
                f"{block.where}: a {block.language!r} block holds Python: fence it as python "
                "(with a <!-- no-run: reason --> marker if it cannot run in the tests)"
            )
    for line in markers(page):
        if line not in marked_blocks:
            where = f"{shown(page)}:{line}"
            problems.append(f"{where}: a marker must be right above a python fence")
    assert not problems, "\n".join(problems)


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.language == "python" and b.no_run is None]


@pytest.mark.parametrize("page", PAGES, ids=PAGE_IDS)
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    code_blocks = runnable(page)
    if not code_blocks:
        pytest.skip("no python blocks on this page")
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        for block in code_blocks:
            exec(compile(block.source, block.where, "exec"), namespace)
    except ImportError as error:
        extra = missing_extra(error)
        if extra is None:
            raise
        pytest.skip(f"the page's examples need the optional extra {extra!r} (not installed)")
    finally:
        os.chdir(previous)


def test_the_parser_finds_what_a_renderer_shows(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```python\na = 1\n```\n\n"
        "- a list item:\n\n    ```python\n    b = a + 1\n    ```\n\n"
        "~~~python\nc = 3\n~~~\n\n"
        "````markdown\n```python\nnot_a_block = 1\n```\n````\n\n"
        "<!-- no-run: needs two processes -->\n```python\nd = 4\n```\n\n"
        '```{.python title="x"}\ne = 5\n```\n\n'
        "<!-- typed-by-plugin: torch.stack -->\n```python\nf = 6\n```\n\n"
        "```\nbare\n```\n",
        encoding="utf-8",
    )
    found = [(b.language, b.source, b.no_run, b.typed_by_plugin) for b in blocks(page)]
    assert found == [
        ("python", "a = 1\n", None, None),
        ("python", "b = a + 1\n", None, None),
        ("python", "c = 3\n", None, None),
        ("markdown", "```python\nnot_a_block = 1\n```\n", None, None),
        ("python", "d = 4\n", "needs two processes", None),
        ("python", "e = 5\n", None, None),
        ("python", "f = 6\n", None, "torch.stack"),
        ("", "bare\n", None, None),
    ]
    page.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="never closed"):
        blocks(page)


def test_python_in_disguise_is_recognised() -> None:
    assert looks_like_python("import torch\nx = torch.zeros(3)\n")
    assert not looks_like_python("error: 'stp' is not a field of Obs\n")
    assert not looks_like_python('[tool.mypy]\nplugins = ["tensorclass.plugins.mypy"]\n')
    assert not looks_like_python("pip install -e .[dev] && python -m pytest -x -q\n")
