"""Session fixtures: each checker runs once over every snippet file that names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .checkers import (
    CASES,
    REPO,
    Diagnostic,
    docs_snippet,
    mypy_config,
    parse_expectations,
    pyright_command,
    run_mypy,
    run_pyright,
    state_dir,
)


def case_files() -> list[Path]:
    """Every snippet file (``cases/**/*.py`` with a ``# checkers:`` header), and the python
    blocks of ``docs/typing.md``."""
    cases = sorted(
        path for path in CASES.rglob("*.py") if path.read_text().startswith("# checkers:")
    )
    return [*cases, docs_snippet()]


def files_for(checker: str) -> list[Path]:
    """The snippet files one checker runs on."""
    return [path for path in case_files() if checker in parse_expectations(path).checkers]


@pytest.fixture(scope="session")
def root() -> Path:
    """Where ``import tensorclass`` resolves for the checkers: this checkout."""
    return REPO


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory for the checkers' configuration files."""
    return tmp_path_factory.mktemp("typing")


@pytest.fixture(scope="session")
def plugin_results(root: Path, workdir: Path) -> list[Diagnostic]:
    """mypy with the plugin, over every ``plugin`` snippet (and the package through them)."""
    config = mypy_config(workdir, root, plugin=True)
    found, _ = run_mypy(files_for("plugin"), config, state_dir() / "cache-plugin")
    return found


@pytest.fixture(scope="session")
def mypy_results(root: Path, workdir: Path) -> list[Diagnostic]:
    """Plain mypy (no plugin) over every ``mypy`` snippet."""
    config = mypy_config(workdir, root, plugin=False)
    found, _ = run_mypy(files_for("mypy"), config, state_dir() / "cache-plain")
    return found


@pytest.fixture(scope="session")
def pyright_results(root: Path, workdir: Path) -> list[Diagnostic]:
    """basedpyright over every ``pyright`` snippet (skipped if it is not installed)."""
    if pyright_command() is None:
        pytest.skip("basedpyright is not installed (pip install basedpyright)")
    return run_pyright(files_for("pyright"), workdir, root)
