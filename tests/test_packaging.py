"""The installed package as users get it: seen by mypy and pyright, one version everywhere.

The typing tests (tests/typing) point the checkers at this checkout themselves; here nothing
does. A snippet in a directory outside the checkout is checked with no search-path settings
(no ``mypy_path``, ``MYPYPATH``, ``PYTHONPATH`` or ``extraPaths``), so ``import tensorclass``
resolves only if the installed package is visible to static checkers: an editable install
must be a path entry (a ``.pth`` line), not an import hook that only the interpreter runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import tensorclass

ROOT = Path(__file__).resolve().parents[1]

# The one line each checker must flag: it shows the package's types are known (an
# unresolved module would be an import error and `Any`, which accepts the assignment).
SNIPPET = """\
import tensorclass
from tensorclass import TensorDict

reveal_type(tensorclass.__version__)
reveal_type(TensorDict.from_dict)
wrong: int = tensorclass.__version__
"""
WRONG_LINE = 6


def _editable_location() -> Path | None:
    """Where the installed ``tensorclass`` is installed editable from (``None``: not editable)."""
    # the installed one records how it was installed (a build's *.egg-info in the checkout,
    # found first when the checkout is on sys.path, does not)
    texts = [d.read_text("direct_url.json") for d in metadata.distributions(name="tensorclass")]
    text = next((text for text in texts if text), None)
    if text is None:
        return None
    info = json.loads(text)
    if not info.get("dir_info", {}).get("editable", False):
        return None
    url = urlparse(info["url"])
    return Path(unquote(url.path)).resolve() if url.scheme == "file" else None


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory outside the checkout holding the snippet; skips unless the installed
    package is an editable install of this very checkout (else it checks another copy)."""
    location = _editable_location()
    if location != ROOT:
        where = location or "not an editable install"
        pytest.skip(
            f"tensorclass is installed from {where}, not editable from {ROOT}: "
            f'run pip install -e "{ROOT}" to check what static checkers see of it'
        )
    directory = tmp_path_factory.mktemp("outside")
    assert ROOT not in directory.resolve().parents
    (directory / "snippet.py").write_text(SNIPPET)
    return directory


def _clean_env() -> dict[str, str]:
    """The environment less every variable that adds to a checker's search path."""
    drop = {"PYTHONPATH", "MYPYPATH"}
    return {key: value for key, value in os.environ.items() if key not in drop}


_NOT_SEEN = (
    "the installed tensorclass is invisible to {checker}: {detail}\n"
    "(an editable install must be a .pth path entry: reinstall with "
    'pip install -e "{root}" if it predates the hatchling build backend)'
)


def test_mypy_sees_the_installed_package(outside: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-error-summary",
            "--cache-dir",
            str(outside / ".mypy_cache"),
            "snippet.py",
        ],
        cwd=outside,
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert errors and all(line.startswith(f"snippet.py:{WRONG_LINE}:") for line in errors), (
        _NOT_SEEN.format(checker="mypy", detail=output, root=ROOT)
    )
    assert "[assignment]" in errors[0]
    assert re.search(r'snippet.py:4: note: Revealed type is "(builtins\.)?str"', output), output


def test_pyright_sees_the_installed_package(outside: Path) -> None:
    pytest.importorskip("basedpyright", reason="basedpyright is not installed (the dev extra)")
    # only the checking mode is set: the interpreter is this one, as an IDE would pick it
    (outside / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "standard"}))
    done = subprocess.run(
        [sys.executable, "-m", "basedpyright", "--outputjson", "--pythonpath", sys.executable],
        cwd=outside,
        env=_clean_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    report = json.loads(done.stdout)
    diagnostics = report["generalDiagnostics"]
    errors = [d for d in diagnostics if d["severity"] == "error"]
    lines = sorted({d["range"]["start"]["line"] + 1 for d in errors})
    assert lines == [WRONG_LINE], _NOT_SEEN.format(
        checker="pyright", detail=json.dumps(errors, indent=1), root=ROOT
    )
    assert errors[0]["rule"] == "reportAssignmentType"
    revealed = [d["message"] for d in diagnostics if "Type of" in d["message"]]
    assert any('"str"' in message for message in revealed), revealed


def test_the_version_is_written_once() -> None:
    # pyproject reads it from tensorclass/__init__.py (dynamic) and writes no other copy
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert "\nversion =" not in pyproject
    if _editable_location() == ROOT:  # the installed metadata was built from this checkout
        assert metadata.version("tensorclass") == tensorclass.__version__


def test_python_m_tensorclass_version_prints_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorclass", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"tensorclass {tensorclass.__version__}"


def test_the_readme_test_command_prints_its_counts() -> None:
    """pytest prints the passed/skipped counts at one ``-q``, none at two: the README's
    test command (and CI's, which runs it) plus the configured ``addopts`` stay at one."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads TOML")

    root = ROOT
    readme = (root / "README.md").read_text(encoding="utf-8")
    command = re.search(r"python -m pytest[^\n`]*", readme)
    assert command is not None, "the README names no test command"
    options = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = options["tool"]["pytest"]["ini_options"].get("addopts", "")
    words = f"{command.group(0)} {addopts}".split()
    quiet = sum(w.count("q") for w in words if re.fullmatch(r"-q+", w)) + words.count("--quiet")
    assert quiet <= 1, f"pytest would run as -{'q' * quiet}, which hides the counts: {words}"
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    assert command.group(0) in ci, "CI must run the README's test command"
