"""``python -m tensorclass run-as-tensordict SCRIPT [ARGS...]``: run an unmodified program
written for tensordict (a TorchRL training script) on tensorclass.

The command installs :func:`~tensorclass.install_as_tensordict`, then runs ``SCRIPT`` as
``__main__`` with ``ARGS`` as its ``sys.argv[1:]`` (``-m MODULE`` runs a module instead, as
``python -m`` does). The exit status is the program's.
"""

from __future__ import annotations

import argparse
import runpy
import sys

from ..compat.alias import install_as_tensordict
from .commands import Command

__all__ = ["COMMAND", "add_options", "run"]

COMMAND = Command(
    name="run-as-tensordict",
    summary="run a tensordict program (a TorchRL script) on tensorclass",
    description=(
        "Serve tensorclass as `tensordict` (tensorclass.install_as_tensordict()), then run "
        "SCRIPT as __main__ with ARGS, or a module with -m MODULE. The exit status is the "
        "program's."
    ),
)


def add_options(parser: argparse.ArgumentParser) -> None:
    """``SCRIPT`` (or ``-m MODULE``) and the program's own arguments, passed on untouched."""
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS...]")


def run(args: argparse.Namespace) -> int:
    """Install the alias and run the program; return its exit status."""
    program: list[str] = list(args.program)
    module: str | None = args.module
    if module is None and not program:
        print("run-as-tensordict: give SCRIPT or -m MODULE", file=sys.stderr)
        return 2
    install_as_tensordict()
    saved = sys.argv
    sys.argv = [module if module is not None else program[0], *program[int(module is None) :]]
    try:
        if module is not None:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(program[0], run_name="__main__")
    except SystemExit as stop:
        code = stop.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    finally:
        sys.argv = saved
    return 0
