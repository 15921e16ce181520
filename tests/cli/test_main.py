"""``main``: the commands, help, and exit status of argument errors."""

from __future__ import annotations

import importlib

import pytest

from tensorclass.cli import build_parser, main

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
    assert module.main is main
