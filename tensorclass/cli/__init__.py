"""The command line: ``python -m tensorclass COMMAND`` (also installed as ``tensorclass``).

``--version`` prints the package's version. Commands:

- ``inspect PATH [--json]``: what a save holds (class, batch size, keys, dtypes, shapes,
  sizes on disk), read from its metadata only.
- ``validate PATH --schema module:Class [--batch-size SIZES] [--json]``: whether a save
  conforms to a tensor class, with every problem listed.
- ``demo``: builds a memory-mapped image dataset, validates it, trains and ensembles small
  models on it, and prints a report.
- ``run-as-tensordict SCRIPT [ARGS...]`` (or ``-m MODULE``): runs a program written for
  tensordict (a TorchRL script) on tensorclass, served as ``tensordict``.

Exit status: 0 success; 1 the data has problems (damaged save, or it does not conform);
2 usage errors (bad arguments or path, not a save, unimportable schema). Every failure ends
in one of these and a one-line message, never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import FormatError
from .commands import EXIT_PROBLEMS, EXIT_USAGE, Command, UsageError, add_command

__all__ = ["COMMANDS", "CommandEntry", "build_parser", "entry", "main"]


@dataclass(frozen=True)
class CommandEntry:
    """A line of :data:`COMMANDS`: a command's name, its line in ``--help``, and the module
    that defines its ``COMMAND``, ``add_options`` and ``run`` (imported on dispatch)."""

    name: str
    summary: str
    module: str


COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "inspect", "show what a save holds (reads metadata only)", "tensorclass.cli.inspect"
    ),
    CommandEntry("validate", "check a save against a tensor class", "tensorclass.cli.validate"),
    CommandEntry(
        "demo",
        "build, validate and train on a memory-mapped dataset",
        "tensorclass.cli.demo_command",
    ),
    CommandEntry(
        "run-as-tensordict",
        "run a tensordict program (a TorchRL script) on tensorclass",
        "tensorclass.cli.run_as",
    ),
)
"""Every command, one line each. Only the module of the command being run is imported
(most import torch), so the parser is built and ``--help`` answers without torch."""

EXIT_INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT, as shells report it)."""


def build_parser(loaded: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``python -m tensorclass``, with every command.

    The commands named in ``loaded`` (all of them by default) have their options and
    ``run``, read from their modules; the others only their name and summary, so building
    the parser for one command imports that command's module alone."""
    parser = argparse.ArgumentParser(
        prog=_program(),
        description="Inspect and validate saved tensor classes, run the demo, or run a tensordict program.",
        epilog="exit status: 0 success, 1 problems found in the data, 2 usage error",
    )
    parser.add_argument("--version", action="version", version=f"tensorclass {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for entry in COMMANDS:
        if loaded is not None and entry.name not in loaded:
            commands.add_parser(entry.name, help=entry.summary, add_help=False)
            continue
        module = importlib.import_module(entry.module)
        command: Command = module.COMMAND
        add_command(commands, command, module.run, module.add_options)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (the main parser's
    own options, ``--help`` and ``--version``, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _program() -> str:
    """How the user called us: the installed ``tensorclass`` script, or ``python -m``."""
    name = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else ""
    return "tensorclass" if name == "tensorclass" else "python -m tensorclass"


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command (``argv`` defaults to ``sys.argv[1:]``) and return its exit status."""
    for stream in (sys.stdout, sys.stderr):  # a key with a lone surrogate still prints
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(loaded=[name] if (name := _command_in(words)) else [])
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help (0) or bad arguments (2)
        return stop.code if isinstance(stop.code, int) else EXIT_USAGE
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except UsageError as err:
        print(f"{parser.prog} {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly
        _silence_stdout()
        return EXIT_PROBLEMS
    except (FormatError, OSError) as err:  # data the checked readers refuse, a file unread
        print(f"{parser.prog} {args.command}: error: {_one_line(err)}", file=sys.stderr)
        return EXIT_PROBLEMS
    except Exception as err:  # anything else still ends in one line and an exit status
        message = f"{type(err).__name__}: {_one_line(err)}"
        print(f"{parser.prog} {args.command}: error: {message}", file=sys.stderr)
        return EXIT_PROBLEMS


def _one_line(err: BaseException) -> str:
    """The message of ``err`` on one line, cut to 500 characters."""
    text = " ".join(str(err).split())
    return text if len(text) <= 500 else f"{text[:500]}... ({len(text)} characters)"


def entry() -> int:
    """The console entry point (``tensorclass`` and ``python -m tensorclass``): run
    :func:`main` on ``sys.argv`` and return its status, the process then ends."""
    status = main()
    # The interpreter's last garbage collections walk every object still alive (torch's
    # among them): about 0.7 s of a command's exit here. Freezing them skips that walk;
    # nothing waits on their collection (each command has closed its files and removed its
    # temporary data).
    gc.freeze()
    return status


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured in tests)
        pass
