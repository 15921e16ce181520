"""``docs/architecture.md`` names every module of the package, and no module that is not there.

The page is the map of the code for contributors; these tests keep it from rotting as
modules are added, split, moved or removed.

How the page names a module: a code span holding its path, read relative to the package of
the section it is in. A heading that names a package in a code span (``## nn
(`tensorclass/nn/`)``) sets it for its section and the sections below it; elsewhere it is
``tensorclass/``. So ``base.py`` in the nn section is ``tensorclass/nn/base.py``, and
``memmap/load.py`` in the engine section is ``tensorclass/engine/storage/memmap/load.py``.
A path starting with ``tensorclass/`` or ``tests/`` is read from the repository root.

A package's ``__init__.py`` is named by naming the package (``nn/``, ``memmap/``): it holds
the package's exports, and the package is the concept the page describes (an
``__init__.py`` that holds more, as ``cli/__init__.py`` does, can still have its own row).
``__main__.py`` is a module like any other and must be named.

Every code span that looks like a module path (name characters and ``/``, ending in ``.py``
or ``/``) must name a file or folder that exists, so a removed or renamed module cannot stay
on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .fences import OPEN, ROOT

PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "tensorclass"
FROM_ROOT = ("tensorclass/", "tests/")

HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.*?)\s*$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PATH_LIKE = re.compile(r"^[\w.]+(?:/[\w.]+)*(?:\.py|/)$")


@dataclass(frozen=True)
class Mention:
    """A code span of the page that looks like a module path, and where it points."""

    line: int
    text: str
    section: str
    target: Path


@dataclass(frozen=True)
class Section:
    """A heading of the page and the package its section is about."""

    heading: str
    base: Path
    explicit: bool  # the heading itself names the package


def package_in(title: str) -> Path | None:
    """The package a heading names in a code span (``tensorclass/nn/``), if any."""
    for span in CODE_SPAN.findall(title):
        if span.startswith("tensorclass/") and span.endswith("/"):
            return ROOT / span
    return None


def read_page(page: Path = PAGE) -> tuple[list[Mention], list[Section]]:
    """The path-like code spans of ``page`` (outside code blocks), and its sections."""
    mentions: list[Mention] = []
    sections: list[Section] = []
    # (level, section) of the headings enclosing the current line
    stack: list[tuple[int, Section]] = []
    fence: str | None = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        opening = OPEN.match(line)
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if opening is not None:
            fence = opening["fence"]
            continue
        heading = HEADING.match(line)
        if heading is not None:
            level = len(heading["hashes"])
            while stack and stack[-1][0] >= level:
                stack.pop()
            named = package_in(heading["title"])
            base = named if named is not None else (stack[-1][1].base if stack else PACKAGE)
            section = Section(line.strip(), base, explicit=named is not None)
            stack.append((level, section))
            sections.append(section)
        section = stack[-1][1] if stack else Section("(top of the page)", PACKAGE, False)
        for span in CODE_SPAN.findall(line):
            if not PATH_LIKE.match(span):
                continue
            start = ROOT if span.startswith(FROM_ROOT) else section.base
            target = start / span
            mentions.append(Mention(number, span, section.heading, target))
    return mentions, sections


def modules() -> list[Path]:
    """Every module of the package."""
    return sorted(PACKAGE.rglob("*.py"))


def is_named(module: Path, named: set[Path]) -> bool:
    """Whether the page names ``module`` (an ``__init__.py`` also by naming its package)."""
    return module in named or (module.name == "__init__.py" and module.parent in named)


def where_to_add(module: Path, sections: list[Section]) -> str:
    """The advice for a module the page does not name: its section and its spelling there."""
    home = max(
        (s for s in sections if s.explicit and s.base in module.parents),
        key=lambda s: len(s.base.parts),
        default=None,
    )
    if home is None:
        return "add it to the section about its package"
    spelling = module.relative_to(home.base).as_posix()
    advice = f"add a row `{spelling}` (with what it holds) to the section {home.heading!r}"
    if home.base == PACKAGE:
        advice += " and name it in its layer's row of the table under '## Layers'"
    return advice


def dangling(mentions: list[Mention]) -> list[Mention]:
    """The mentions whose file (``.py``) or folder (``/``) does not exist."""
    return [
        mention
        for mention in mentions
        if not (mention.target.is_dir() if mention.text.endswith("/") else mention.target.is_file())
    ]


def test_every_module_is_named() -> None:
    mentions, sections = read_page()
    named = {mention.target for mention in mentions}
    missing = [module for module in modules() if not is_named(module, named)]
    assert not missing, "docs/architecture.md does not name these modules:\n" + "\n".join(
        f"  {module.relative_to(ROOT).as_posix()}: {where_to_add(module, sections)}"
        for module in missing
    )


def test_every_named_module_exists() -> None:
    mentions, _ = read_page()
    missing = dangling(mentions)
    assert not missing, "docs/architecture.md names paths that do not exist:\n" + "\n".join(
        f"  line {m.line}: `{m.text}` (in {m.section!r}) is "
        f"{m.target.relative_to(ROOT).as_posix()}, which does not exist"
        for m in missing
    )


def test_the_reading_can_fail(tmp_path: Path) -> None:
    """The rules above, on a small page: paths per section, packages, and what is missing."""
    page = tmp_path / "architecture.md"
    page.write_text(
        "# Architecture\n\n"
        "Top: `typed.py`, `tests/docs/fences.py` and `gone.py`.\n\n"
        "## nn (`tensorclass/nn/`)\n\n"
        "| `module.py` | `TensorDictModule` |\n\n"
        "```text\n`skip.py` in a code block is not read\n```\n\n"
        "### More of nn\n\n"
        "`keys.py`, and `tensorclass/cli/` from the root.\n\n"
        "## Other\n\n"
        "`keys.py` again, `memmap/` (not a package of `tensorclass/`).\n",
        encoding="utf-8",
    )
    mentions, sections = read_page(page)
    assert [(m.text, m.target.relative_to(ROOT).as_posix()) for m in mentions] == [
        ("typed.py", "tensorclass/typed.py"),
        ("tests/docs/fences.py", "tests/docs/fences.py"),
        ("gone.py", "tensorclass/gone.py"),
        ("tensorclass/nn/", "tensorclass/nn"),
        ("module.py", "tensorclass/nn/module.py"),
        ("keys.py", "tensorclass/nn/keys.py"),
        ("tensorclass/cli/", "tensorclass/cli"),
        ("keys.py", "tensorclass/keys.py"),
        ("memmap/", "tensorclass/memmap"),
        ("tensorclass/", "tensorclass"),
    ]
    named = {mention.target for mention in mentions}
    assert is_named(PACKAGE / "nn" / "module.py", named)
    assert is_named(PACKAGE / "cli" / "__init__.py", named)  # through its package
    assert not is_named(PACKAGE / "cli" / "common.py", named)
    assert not is_named(PACKAGE / "nn" / "skip.py", named)  # only in a code block
    assert where_to_add(PACKAGE / "nn" / "skip.py", sections).startswith(
        "add a row `skip.py` (with what it holds) to the section '## nn (`tensorclass/nn/`)'"
    )
    assert [mention.text for mention in dangling(mentions)] == ["gone.py", "memmap/"]


def _engine_layers() -> list[str]:
    """The engine's layers, top first, from its import-linter contract in pyproject.toml."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract.get("containers") == ["tensorclass.engine"]:
            return [str(layer) for layer in contract["layers"]]
    raise AssertionError("pyproject.toml has no layers contract for tensorclass.engine")


def test_the_folder_table_lists_the_engine_layers_bottom_to_top() -> None:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("| folder | owns |") :]
    rows = re.findall(r"^\| `([\w.]+)/?` \|", section.split("\n\n")[0], re.MULTILINE)
    names = [row.removesuffix(".py") for row in rows]
    assert names == list(reversed(_engine_layers()))


def test_where_do_i_add_answers_the_common_questions() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("## Where do I add") : text.index("## Layers")]
    for question in (
        "an element-wise op",
        "a new op",
        "a new reduction kind",
        "a storage format",
        "a `torch.*` function",
    ):
        assert question in table, f"{question!r} is not answered under 'Where do I add...'"
