"""Every documented example runs: fenced ``python`` blocks in the README and docs pages.

The blocks of one page run in order in one namespace (a page reads like one session), in a
temporary working directory. Blocks fenced with another language (``text``, ``toml``,
``bash``...) are not executed.
"""

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    """The fenced python blocks of a page, in order."""
    return FENCE.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    blocks = python_blocks(page)
    if not blocks:
        pytest.skip("no python blocks")
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        for number, block in enumerate(blocks, 1):
            code = compile(block, f"{page.name}[block {number}]", "exec")
            exec(code, namespace)
    finally:
        os.chdir(previous)
