"""``python -m tensorclass validate PATH --schema module:Class``: does a save conform?

The save is loaded with the safe loader as plain ``TensorDict``s (nothing named in the save
is imported or unpickled, and keys the schema does not declare load too, so they are
reported instead of stopping the load), then checked with
:func:`tensorclass.validation.validate`, which reports every problem at once. Device specs
are checked against the device the save records (files load on the CPU).

Exit status: 0 when the data conforms; 1 when it does not, or when the save is damaged
(missing or truncated files, bad metadata); 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import torch
from pydantic import ValidationError

from ..engine.core.untrusted import shown
from ..engine.storage.memmap.metadata import MemmapInfo, read_metadata
from ..errors import MemmapFormatError, TensorClassError
from ..loading import load_memmap
from ..schema import FieldKind
from ..validation import validate
from ..validation.compiled import compiled, is_schema_class
from ..validation.tensors import device_ok
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Command,
    Problem,
    count_tensors,
    file_problems,
    problem,
    problem_lines,
    save_path,
)
from .format import format_bytes, format_shape, plural
from .schema_import import import_schema

__all__ = ["Result", "COMMAND", "add_options", "check", "parse_batch_size", "run"]


COMMAND = Command(
    "validate",
    "check a save against a tensor class",
    "Check that the save at PATH conforms to a tensor class: every key, dtype, shape, "
    "symbolic dim and non-tensor value. Lists every problem at once. "
    "Exit status: 0 conforms, 1 problems (or a damaged save), 2 usage error.",
    reads_save=True,
)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of the ``validate`` command."""
    parser.add_argument(
        "--schema",
        required=True,
        metavar="MODULE:CLASS",
        help="the tensor class to check against, e.g. mypkg.data:Batch or schema.py:Batch "
        "(the module is imported; the current directory is searched first)",
    )
    parser.add_argument(
        "--batch-size",
        type=parse_batch_size,
        default=None,
        metavar="SIZES",
        help="the expected batch size, e.g. 1000 or 16,8 ('' for none); "
        "default: the saved batch size",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def parse_batch_size(text: str) -> list[int]:
    """``"16,8"``, ``"16x8"``, ``"[16, 8]"`` or ``"16 8"`` as ``[16, 8]``; ``""`` or
    ``"[]"`` as ``[]``."""
    parts = [part for part in re.split(r"[\s,x]+", text.strip().strip("[]()")) if part]
    if not all(part.isdigit() for part in parts):
        raise argparse.ArgumentTypeError(f"not a batch size: {text!r} (e.g. 1000 or 16,8)")
    return [int(part) for part in parts]


class Result:
    """The outcome of :func:`check`.

    Attributes:
        damaged: whether the save itself is damaged (files or metadata).
        problems: every problem found: the file and metadata problems of a damaged save,
            else every way the data fails the schema.
        summary: ``batch_size``, ``tensors`` and ``total_bytes`` of the save (empty when
            its metadata cannot be read).
    """

    def __init__(self, damaged: bool, problems: list[Problem], summary: dict[str, Any]) -> None:
        self.damaged = damaged
        self.problems = problems
        self.summary = summary

    @property
    def ok(self) -> bool:
        """Whether the save is readable and conforms."""
        return not self.damaged and not self.problems


def check(path: Path, cls: type[Any], batch_size: list[int] | None = None) -> Result:
    """Check the save at ``path`` against the tensor class ``cls`` (see the module doc)."""
    try:
        info = read_metadata(path)
    except MemmapFormatError as err:
        return Result(True, [problem([], "metadata", str(err))], {})
    summary = {
        "batch_size": list(info.batch_size),
        "tensors": count_tensors(info),
        "total_bytes": info.total_bytes,
    }
    files = file_problems(info)
    if files:
        return Result(True, files, summary)
    devices = _device_problems(cls, info, [])
    try:
        data = load_memmap(path, classes="tensordict")
        validate(data, cls, batch_size=batch_size)
    except ValidationError as err:
        found = [_problem(e, cls) for e in err.errors() if e["type"] != "tensor_device"]
        return Result(False, found + devices, summary)
    except MemmapFormatError as err:
        return Result(True, [problem([], "metadata", str(err))], summary)
    except TensorClassError as err:  # data that cannot even be read as the schema's levels
        return Result(False, [problem([], type(err).__name__, str(err))], summary)
    return Result(False, devices, summary)


def run(args: argparse.Namespace) -> int:
    """Validate ``args.path`` against ``args.schema`` and print the result."""
    path = save_path(args.path)
    cls = import_schema(args.schema)
    result = check(path, cls, args.batch_size)
    if args.json:
        out = {"path": str(path), "schema": args.schema, "ok": result.ok}
        out.update(damaged=result.damaged, problems=result.problems, **result.summary)
        print(json.dumps(out, indent=2, default=str))
    elif result.ok:
        summary = result.summary
        print(
            f"OK: {path} conforms to {args.schema} (batch size "
            f"{format_shape(summary['batch_size'])}, {plural(summary['tensors'], 'tensor')}, "
            f"{format_bytes(summary['total_bytes'])})"
        )
    else:
        count = plural(len(result.problems), "problem")
        if result.damaged:
            print(f"{path}: the save is damaged: {count}")
        else:
            print(f"{path} does not conform to {args.schema}: {count}")
        print("\n".join(problem_lines(result.problems)))
    return EXIT_OK if result.ok else EXIT_PROBLEMS


def _device_problems(cls: type[Any], info: MemmapInfo, loc: list[str | int]) -> list[Problem]:
    """Device specs checked against the device the save records for each level.

    Saved tensors are bytes in files that load on the CPU, whatever device they were on, so
    the loaded tensors' devices say nothing. A level that records no device is not checked.
    """
    if info.members:  # a lazy stack: its members share the class
        return _device_problems(cls, info.members[0], loc)
    found: list[Problem] = []
    children = {entry.key: entry.child for entry in info.entries}
    for check in compiled(cls).checks:
        spec, child = check.spec, children.get(check.name)
        nested = check.field.nested_class
        if check.kind is FieldKind.NESTED and child is not None and nested is not None:
            if is_schema_class(nested):
                found += _device_problems(nested, child, [*loc, check.name])
        elif spec is not None and spec.device is not None and info.device is not None:
            if check.name in children and not device_ok(spec.device, torch.device(info.device)):
                message = f"expected device {spec.device}, got {info.device} (recorded in the save)"
                out = problem([*loc, check.name], "tensor_device", message)
                out["ctx"] = {"expected": str(spec.device), "actual": info.device}
                found.append(out)
    return found


def shown_text(message: str, limit: int = 1000) -> str:
    """``message`` cut to ``limit`` characters, with its full length said."""
    if len(message) <= limit:
        return message
    return f"{message[:limit]}... ({len(message)} characters)"


def _problem(error: Any, cls: type[Any]) -> Problem:
    """A pydantic error as a problem whose message says what was expected and found."""
    kind, message, found = error["type"], str(error["msg"]), error.get("input")
    if kind == "missing":
        message = f"required by {cls.__name__}, not in the save"
    elif kind == "extra_forbidden":
        message = f"not a field of {cls.__name__}; the save holds {shown(found, 200)}"
    elif found is not None and not kind.startswith("tensor"):
        message += f"; got {shown(found, 200)}"
    message = shown_text(message)
    out = problem(list(error["loc"]), kind, message)
    if "ctx" in error:
        out["ctx"] = {
            key: shown(value, 200) if len(repr(value)) > 200 else value
            for key, value in error["ctx"].items()
        }
    return out
