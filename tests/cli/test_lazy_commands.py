"""The command line parses and dispatches without importing torch: the command table names
modules, imported only for the command that runs, and the demo speaks before torch loads."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest

from tensorclass.cli import COMMANDS, CommandEntry
from tensorclass.cli.demo_command import FIRST_LINE


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_building_the_parser_and_help_import_no_torch() -> None:
    done = _python(
        """
        import sys
        import tensorclass.cli as cli

        cli.build_parser(loaded=())
        assert "torch" not in sys.modules, "build_parser imported torch"
        assert cli.main(["--help"]) == 0
        assert "torch" not in sys.modules, "--help imported torch"
        """
    )
    assert done.returncode == 0, done.stderr
    assert "demo" in done.stdout


PROBE = """
    import sys
    from importlib.abc import MetaPathFinder

    class Probe(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch":
                print("<torch import>", file=sys.stderr, flush=True)
                sys.meta_path.remove(self)
            return None

    sys.meta_path.insert(0, Probe())
    from tensorclass.cli import main

    # one row: the demo refuses it once loaded (a usage error), after torch's import
    sys.exit(main(["demo", "--rows", "1"]))
"""


def test_the_demo_prints_its_first_line_before_importing_torch() -> None:
    done = _python(PROBE)
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert lines[0] == FIRST_LINE, lines
    assert "<torch import>" in lines, lines  # the probe saw torch's import, after it
    assert "at least 2 rows" in lines[-1], lines


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda e: e.name)
def test_each_table_line_names_its_module(entry: CommandEntry) -> None:
    module = importlib.import_module(entry.module)
    assert module.COMMAND.name == entry.name
    assert module.COMMAND.summary == entry.summary
    assert callable(module.run) and callable(module.add_options)
