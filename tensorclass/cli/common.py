"""What the commands share: exit codes, usage errors, finding a save, and problems."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..engine.core.untrusted import json_value, read_no_follow
from ..engine.storage.memmap.foreign import is_tensordict_meta
from ..engine.storage.memmap.metadata import FORMAT, META_NAME, MemmapInfo
from ..errors import FormatError
from .commands import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Command, UsageError, add_command
from .format import table

__all__ = [
    "EXIT_OK",
    "EXIT_PROBLEMS",
    "EXIT_USAGE",
    "Problem",
    "Command",
    "UsageError",
    "add_command",
    "count_tensors",
    "file_problems",
    "problem",
    "problem_lines",
    "save_path",
]

Problem = dict[str, Any]
"""One problem, as JSON: ``loc`` (the key path, a list), ``type`` and ``msg``, maybe ``ctx``."""


def save_path(path: str) -> Path:
    """``path`` as an absolute path, if it holds a tensorclass save; else :class:`UsageError`.

    A save is a directory with a ``meta.json`` of the tensorclass format (or of tensordict's
    ``memmap``, which is read as well). A ``meta.json``
    that is not valid JSON is left to the reader, which reports a damaged save.
    """
    found = Path(os.path.abspath(path))
    if not found.exists():
        raise UsageError(f"{path}: no such file or directory")
    if not found.is_dir():
        raise UsageError(f"{path}: not a directory (a save is a directory holding {META_NAME})")
    meta = found / META_NAME
    try:
        content = json_value(read_no_follow(meta), meta)
    except FileNotFoundError:
        raise UsageError(f"{path}: not a tensorclass save (no {META_NAME} in it)") from None
    except (OSError, FormatError):  # a link, a FIFO, bad JSON: the checked reader reports it
        return found  # a damaged save: the reader reports it
    if not isinstance(content, dict) or (
        content.get("format") != FORMAT and not is_tensordict_meta(content)
    ):
        raise UsageError(f"{path}: {META_NAME} is not {FORMAT!r} metadata (not a tensorclass save)")
    return found


def problem(loc: list[str | int], kind: str, message: str) -> Problem:
    """A problem at the key path ``loc``."""
    return {"loc": loc, "type": kind, "msg": message}


def file_problems(info: MemmapInfo, prefix: tuple[str | int, ...] = ()) -> list[Problem]:
    """Every missing, truncated or oversized data file of a save (type ``"file"``)."""
    found: list[Problem] = []
    for index, member in enumerate(info.members):
        found += file_problems(member, (*prefix, index))
    for entry in info.entries:
        message = entry.problem()
        if message is not None:
            found.append(problem([*prefix, entry.key], "file", message))
        if entry.child is not None:
            found += file_problems(entry.child, (*prefix, entry.key))
    return found


def problem_lines(problems: list[Problem], indent: str = "  ") -> list[str]:
    """Problems as aligned lines: location, type, message."""
    rows = [(".".join(map(str, p["loc"])) or "-", p["type"], p["msg"]) for p in problems]
    return [indent + line for line in table(rows)]


def count_tensors(info: MemmapInfo) -> int:
    """The number of tensors in a saved tree."""
    own = sum(1 for entry in info.entries if entry.type == "tensor")
    nested = sum(count_tensors(entry.child) for entry in info.entries if entry.child is not None)
    return own + nested + sum(count_tensors(member) for member in info.members)
