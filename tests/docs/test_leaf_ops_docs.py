"""``docs/operations.md`` lists every entry of the leaf-op table (``leafwise/table.py``).

The element-wise entries (and casts) are in the table of "Element-wise maths": a method
is listed by name, or an in-place entry ``x_`` by its ``x`` in a row that gives its listed
methods their "`_` forms" (less the ones after "except"). The reductions and scans are
named in the "Reductions" section. Every method the table of the page lists is a method of
the classes, so a name cannot stay there once removed.
"""

from __future__ import annotations

import re

import pytest

from tensorclass import TensorDict
from tensorclass.engine.leafwise import elementwise_kinds, reduction_kinds
from tensorclass.engine.leafwise.kind import TABLE, Kind

from .fences import ROOT

PAGE = ROOT / "docs" / "operations.md"
CODE_SPAN = re.compile(r"`([^`\n]+)`")
METHODS = re.compile(r"^[a-z_][a-z0-9_]*(?: [a-z_][a-z0-9_]*)*$")
EXCEPT = re.compile(r"except `([^`\n]+)`")


def _kinds(module: object) -> set[Kind[..., object]]:
    return {kind for kind in vars(module).values() if isinstance(kind, Kind)}


def _section(title: str) -> str:
    """The text of the ``## title`` section of the page."""
    text = PAGE.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _listed(text: str) -> list[str]:
    """The method names in the code spans of ``text`` (``nan_to_num(nan=, ...)`` is
    ``nan_to_num``; spans that are not lists of names, as ``alpha=``, are skipped)."""
    names = []
    for span in CODE_SPAN.findall(text):
        span = re.sub(r"\([^)]*\)", "", span).strip()
        if METHODS.match(span):
            names += [name for name in span.split() if name != "_"]
    return names


def _table_rows() -> list[str]:
    """The rows of the table of "Element-wise maths" (the header and rule aside)."""
    rows = [line for line in _section("Element-wise maths").splitlines() if line.startswith("|")]
    assert len(rows) > 2, "the table of element-wise methods is gone"
    return rows[2:]


def _documented_elementwise() -> set[str]:
    documented: set[str] = set()
    for row in _table_rows():
        names = _listed(row)
        documented.update(names)
        if "`_` forms" in row:
            excepted = set(EXCEPT.findall(row)[0].split()) if EXCEPT.search(row) else set()
            documented.update(f"{name}_" for name in names if name not in excepted)
    return documented


ELEMENTWISE = sorted(n for n, e in TABLE.items() if e.kind in _kinds(elementwise_kinds))
REDUCTIONS = sorted(n for n, e in TABLE.items() if e.kind in _kinds(reduction_kinds))


def test_every_entry_has_a_kind_of_either_module() -> None:
    assert set(ELEMENTWISE) | set(REDUCTIONS) == set(TABLE)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_the_elementwise_table_lists_the_entry(name: str) -> None:
    assert name in _documented_elementwise(), (
        f"add {name} to the table of docs/operations.md, 'Element-wise maths'"
    )


@pytest.mark.parametrize("name", REDUCTIONS)
def test_the_reductions_section_names_the_entry(name: str) -> None:
    assert name in _listed(_section("Reductions")), (
        f"name {name} in docs/operations.md, 'Reductions'"
    )


def test_every_listed_method_exists() -> None:
    missing = sorted(
        {name for row in _table_rows() for name in _listed(row) if not hasattr(TensorDict, name)}
    )
    assert missing == []
