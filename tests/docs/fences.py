"""Fenced code blocks of the README and the docs pages, read the way a Markdown renderer does.

Every fence is found, also indented ones (inside lists and admonitions) and ``~~~`` fences,
so a block cannot escape the docs tests by its layout. A python block that cannot run in
the tests (it needs several processes, say) is marked by an HTML comment, invisible on the
rendered page, on the line right above its fence::

    <!-- no-run: needs two processes -->
    ```python
    ...
    ```

A block that runs, but whose types only the mypy plugin knows (``torch.stack`` of tensor
classes, the ``@tensorclass`` spelling...), is marked the same way with
``<!-- typed-by-plugin: reason -->``: mypy with the plugin checks it, pyright skips it
(``tests/typing/test_user_code.py``).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]

OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>no-run|typed-by-plugin):(?P<reason>.*?)-->\s*$")
ANY_MARKER = re.compile(r"<!--\s*(no-run|typed-by-plugin)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it starts, its language, its text, and why it does not run."""

    page: Path
    line: int  # 1-based line of the opening fence
    language: str  # the first word of the info string ("" for a bare fence)
    source: str  # dedented by the fence's indentation
    no_run: str | None  # the reason given by a ``<!-- no-run: ... -->`` marker
    #: the reason given by a ``<!-- typed-by-plugin: ... -->`` marker (pyright skips it)
    typed_by_plugin: str | None = None

    @property
    def where(self) -> str:
        return f"{shown(self.page)}:{self.line}"


def shown(page: Path) -> str:
    """``page`` relative to the repository when it is inside it."""
    return str(page.relative_to(ROOT)) if ROOT in page.parents else str(page)


def _language(info: str) -> str:
    words = info.strip().lstrip("{").split()
    return words[0].lstrip(".").rstrip("}").lower() if words else ""


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order.

    Raises ``ValueError`` for a fence that is never closed (a renderer would swallow the
    rest of the page into it).
    """
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = OPEN.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        if end == len(lines):
            raise ValueError(f"{shown(page)}:{index + 1}: the fence is never closed")
        body = [
            line[len(indent) :] if line.startswith(indent) else line
            for line in lines[index + 1 : end]
        ]
        previous = lines[index - 1] if index else ""
        marker = MARKER.match(previous)
        kind = marker["kind"] if marker else None
        found.append(
            Block(
                page=page,
                line=index + 1,
                language=_language(opening["info"]),
                source=textwrap.dedent("\n".join(body)) + "\n",
                no_run=marker["reason"].strip() if marker and kind == "no-run" else None,
                typed_by_plugin=marker["reason"].strip()
                if marker and kind == "typed-by-plugin"
                else None,
            )
        )
        index = end + 1
    return found


def markers(page: Path) -> list[int]:
    """The 1-based lines of every ``no-run`` or ``typed-by-plugin`` marker on ``page``."""
    text = page.read_text(encoding="utf-8").splitlines()
    return [number for number, line in enumerate(text, 1) if ANY_MARKER.search(line)]
