"""The README's set-up commands: a venv, the CI script's install steps and test command, and
the demo's (the same installs without the extras)."""

from __future__ import annotations

import re
import shlex

from .fences import ROOT, blocks

CI = ROOT / ".ci" / "run"


Command = list[str]  # a command split into words as the shell does


def ci_commands() -> tuple[list[Command], Command]:
    """The CI script's install commands (without ``--quiet``) and its test command."""
    lines = [shlex.split(line, comments=True) for line in CI.read_text().splitlines()]
    installs = [
        [word for word in line if word != "--quiet"]
        for line in lines
        if line[:4] == ["python", "-m", "pip", "install"]
    ]
    tests = [line for line in lines if line[:3] == ["python", "-m", "pytest"]]
    assert installs and len(tests) == 1, "the CI script changed shape: update this test"
    return installs, tests[0]


def readme_commands() -> list[list[Command]]:
    """Each bash block of the README as its ``&&``-separated commands (a long one is
    continued on the next line with a backslash)."""
    return [
        [shlex.split(part) for part in re.split(r"\s+&&\s+", block.source.replace("\\\n", " "))]
        for block in blocks(ROOT / "README.md")
        if block.language == "bash"
    ]


def without_extras(command: Command) -> Command:
    """An install command with the project's extras dropped (``".[dev]"`` -> ``"."``)."""
    return [re.sub(r"^\.\[[\w,-]+\]$", ".", word) for word in command]


def test_setup_commands_match_the_ci_script() -> None:
    installs, test = ci_commands()
    venv, demo, tests = readme_commands()
    assert venv == [["python", "-m", "venv", ".venv"], [".", ".venv/bin/activate"]]
    # the tests: exactly what CI installs and runs
    assert tests == [*installs, test]
    # the demo: the same installs without the extras (it needs only the core dependencies,
    # tests/cli/test_demo_progress.py checks it imports none of the extras' packages)
    assert demo == [*map(without_extras, installs), ["python", "-m", "tensorclass", "demo"]]
    assert demo[:-1] != installs  # it does install less than CI


def test_the_tour_is_a_python_block_that_runs() -> None:
    # test_docs.py runs it; here: it exists, is short, and shows what the README promises
    (tour,) = [b.source for b in blocks(ROOT / "README.md") if b.language == "python"]
    lines = [line for line in tour.splitlines() if line.strip()]
    assert len(lines) <= 40
    for shown in (
        "class Batch(TensorClass)",
        "[:2]",
        ".reshape(",
        "stack([batch, batch])",  # tensorclass.stack: torch.stack needs the mypy plugin
        "TensorDictModule(",
        ".memmap(",
        "load_memmap(",
    ):
        assert shown in tour
    text = (ROOT / "README.md").read_text()
    assert 'plugins = ["tensorclass.plugins.mypy"]' in text
    assert re.search(r"\]\(docs/getting-started\.md\)", text)
