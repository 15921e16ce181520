"""Each snippet file, through each checker it names: errors exactly on the marked lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from .checkers import CASES, Diagnostic, compare, parse_expectations
from .conftest import case_files


def _params() -> list[object]:
    params = []
    for path in case_files():
        for checker in parse_expectations(path).checkers:
            where = path.relative_to(CASES) if CASES in path.parents else "docs/typing.md"
            name = f"{str(where).removesuffix('.py')}-{checker}"
            params.append(pytest.param(path, checker, id=name))
    return params


@pytest.mark.parametrize(("path", "checker"), _params())
def test_snippet(path: Path, checker: str, request: pytest.FixtureRequest) -> None:
    found: list[Diagnostic] = request.getfixturevalue(f"{checker}_results")
    problems = compare(path.resolve(), parse_expectations(path), checker, found)
    assert not problems, "\n".join(problems)


def test_package_is_clean_through_the_snippets(plugin_results: list[Diagnostic]) -> None:
    """Errors outside the snippets (in the package as imported) would be a regression."""
    snippets = set(case_files())
    outside = [d for d in plugin_results if d.path not in snippets]
    assert not outside, "\n".join(f"{d.path}:{d.line}: [{d.code}] {d.message}" for d in outside)
