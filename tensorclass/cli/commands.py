"""The commands of ``python -m tensorclass``, declared without importing torch.

:func:`tensorclass.cli.build_parser` declares every command from this module and the
command table of :mod:`tensorclass.cli`; a command's module (and torch, which most of them
import) is imported only when that command runs. So ``--help`` answers at once, and the
demo prints its first line before torch's import (a few seconds).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_USAGE",
    "Command",
    "UsageError",
    "add_command",
]

EXIT_OK = 0
"""The command succeeded (the data is readable and conforms)."""
EXIT_PROBLEMS = 1
"""The data has problems (a damaged save, or data that does not conform to the schema)."""
EXIT_USAGE = 2
"""The command was used wrongly: bad arguments or path, not a save, unimportable schema."""


class UsageError(Exception):
    """A mistake in how a command was called; ``main`` prints it and exits with 2."""


@dataclass(frozen=True)
class Command:
    """A command of ``python -m tensorclass``: its name, its line in the list of commands
    (``summary``), its help text, and whether it takes the ``PATH`` of a save."""

    name: str
    summary: str
    description: str
    reads_save: bool = False


def add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    command: Command,
    run: Callable[[argparse.Namespace], int],
    add_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Declare ``command`` on the ``main`` parser's sub-commands: its ``PATH`` (if it reads
    a save), the options ``add_options`` adds, and ``run``, what it runs."""
    parser = commands.add_parser(
        command.name, help=command.summary, description=command.description
    )
    if command.reads_save:
        parser.add_argument(
            "path", metavar="PATH", help="a directory written by memmap/memmap_like"
        )
    add_options(parser)
    parser.set_defaults(run=run)
