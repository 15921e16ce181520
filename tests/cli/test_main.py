"""``main``: the commands, help, and exit status of argument errors."""

from __future__ import annotations

import importlib

import pytest

from tensorclass.cli import build_parser, entry, main

from .conftest import Run


def test_help_lists_the_commands(cli: Run) -> None:
    code, out, _ = cli("--help")
    assert code == 0
    for command in ("inspect", "validate", "demo"):
        assert command in out
    assert "exit status: 0 success, 1 problems found in the data, 2 usage error" in out


@pytest.mark.parametrize("argv", [[], ["nope"], ["inspect", "a", "b"], ["demo", "--rows", "x"]])
def test_argument_errors_exit_with_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


def test_each_command_has_help() -> None:
    parser = build_parser()
    for command in ("inspect", "validate", "demo"):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args([command, "--help"])
        assert stop.value.code == 0


def test_importing_dunder_main_runs_nothing() -> None:
    module = importlib.import_module("tensorclass.__main__")  # as tools walking the package do
    assert module.entry is entry


def test_the_console_entry_runs_main_then_freezes_what_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``entry`` (the console script and ``python -m tensorclass``) returns main's status and
    freezes the objects left, so the interpreter's exit skips collecting them."""
    import gc

    import tensorclass.cli as cli_module

    calls: list[str] = []
    monkeypatch.setattr(cli_module, "main", lambda: calls.append("main") or 3)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    assert cli_module.entry() == 3
    assert calls == ["main", "freeze"]


def test_the_console_scripts_point_at_entry() -> None:
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"tensorclass": "tensorclass.cli:entry"}
    dunder_main = (Path(__file__).parents[2] / "tensorclass" / "__main__.py").read_text()
    assert "raise SystemExit(entry())" in dunder_main
