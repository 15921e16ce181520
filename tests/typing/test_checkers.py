"""The snippet harness itself: markers are read right and mismatches are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from .checkers import Diagnostic, compare, parse_expectations, parse_mypy

SNIPPET = """# checkers: plugin pyright
a = 1
b = 2  # E: assignment reportAssignmentType
c = 3  # E[plugin]: tensorclass-key
d = 4  # E[pyright]
"""


@pytest.fixture()
def snippet(tmp_path: Path) -> Path:
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    return path


def test_markers_are_read_per_checker(snippet: Path) -> None:
    expected = parse_expectations(snippet)
    assert expected.checkers == ("plugin", "pyright")
    assert expected.errors == {
        ("plugin", 3): {"assignment"},
        ("pyright", 3): {"reportAssignmentType"},
        ("plugin", 4): {"tensorclass-key"},
        ("pyright", 5): set(),
    }


def test_matching_errors_pass(snippet: Path) -> None:
    found = [
        Diagnostic(snippet, 3, "assignment", "x"),
        Diagnostic(snippet, 4, "tensorclass-key", "y"),
    ]
    assert compare(snippet, parse_expectations(snippet), "plugin", found) == []


def test_missing_wrong_and_unexpected_errors_are_reported(snippet: Path) -> None:
    found = [
        Diagnostic(snippet, 2, "misc", "surprise"),
        Diagnostic(snippet, 3, "arg-type", "wrong code"),
    ]
    problems = compare(snippet, parse_expectations(snippet), "plugin", found)
    assert problems == [
        "snippet.py:3: expected ['assignment'], got [arg-type] wrong code",
        "snippet.py:4: expected an error (tensorclass-key)",
        "snippet.py:2: unexpected error [misc] surprise",
    ]


def test_a_header_is_required(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("x = 1\n")
    with pytest.raises(ValueError, match="checkers"):
        parse_expectations(path)


def test_mypy_output_is_parsed(tmp_path: Path) -> None:
    output = (
        f"{tmp_path}/a.py:3: error: Bad thing  [tensorclass-key]\n"
        f'{tmp_path}/a.py:4: note: Revealed type is "int"\n'
    )
    assert parse_mypy(output) == [
        Diagnostic((tmp_path / "a.py").resolve(), 3, "tensorclass-key", "Bad thing")
    ]
