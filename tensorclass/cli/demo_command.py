"""The ``demo`` command as the parser sees it: its options, and a ``run`` that says what is
happening before it imports the demo (:mod:`tensorclass.cli.demo`), which imports torch:
a few silent seconds otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from .commands import Command

__all__ = ["COMMAND", "FIRST_LINE", "add_options", "run"]

FIRST_LINE = "tensorclass demo: loading PyTorch..."
"""What the demo prints (to stderr, with its progress) before importing torch."""

COMMAND = Command(
    "demo",
    "build, validate and train on a memory-mapped dataset",
    "Write a synthetic image dataset to disk as a memory-mapped tensor class, validate "
    "it, train a small model and an ensemble on it, and report. "
    "The data is removed at the end unless --keep is given.",
)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of the ``demo`` command."""
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="write the dataset to DIR/dataset (default: a temporary directory)",
    )
    for option, default, what in (
        ("--rows", 32_768, "images"),
        ("--steps", 300, "training steps"),
        ("--members", 4, "models in the ensemble"),
    ):
        parser.add_argument(
            option, type=_positive, metavar="N", default=default, help=f"{what} (default {default})"
        )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--keep", action="store_true", help="keep the dataset on disk")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Print :data:`FIRST_LINE`, then import and run the demo (:func:`tensorclass.cli.demo.run`)."""
    print(FIRST_LINE, file=sys.stderr, flush=True)
    demo: Callable[[argparse.Namespace], int] = importlib.import_module("tensorclass.cli.demo").run
    return demo(args)
