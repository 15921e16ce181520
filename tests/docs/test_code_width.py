"""Code blocks of the README and the docs pages fit the page's content width.

A line longer than 88 columns is cut at the right edge of the docs site's content column
(1280 px screen) and scrolls sideways; in the README it wraps on GitHub. Code a reader
types or copies (``python``, ``bash``...) is wrapped at 88 columns. A ``text`` block
shows a program's output as it prints it (an error message, a results table), so it
keeps its lines.
"""

from __future__ import annotations

import pytest

from .fences import PAGES, Block, blocks, shown

WIDTH = 88
#: blocks that show what a program printed, verbatim
VERBATIM = {"text"}


def _code_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if b.language not in VERBATIM]


@pytest.mark.parametrize("page", PAGES, ids=shown)
def test_code_lines_fit_the_content_width(page: object) -> None:
    long = [
        f"{block.where}+{number}: {len(line)} columns"
        for block in _code_blocks()
        if block.page == page
        for number, line in enumerate(block.source.splitlines(), start=1)
        if len(line) > WIDTH
    ]
    assert not long, long


def test_code_blocks_are_found() -> None:
    languages = {block.language for block in _code_blocks()}
    assert {"python", "bash"} <= languages, languages
