"""``python -m tensorclass inspect PATH``: what a save holds, from its metadata only.

The tree (class, batch size, each key with its dtype, shape and size on disk, nested levels
indented, non-tensor values in brief) and the totals. No tensor data is read: the command
reads the ``meta.json`` files and the sizes of the data files. A damaged save (missing,
truncated or oversized files, bad metadata) is shown with every problem, and exits with 1.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..engine.storage.memmap.metadata import EntryInfo, MemmapInfo, read_metadata
from ..errors import MemmapFormatError
from .common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Command,
    count_tensors,
    file_problems,
    problem,
    problem_lines,
    save_path,
)
from .format import brief, format_bytes, format_shape, plural, table

__all__ = ["COMMAND", "add_options", "render", "run", "short_class"]

_INDENT = "  "


COMMAND = Command(
    "inspect",
    "show what a save holds (reads metadata only)",
    "Show the tree of a saved tensor class: class, batch size, each key with its dtype, "
    "shape and size on disk, and the totals. Reads metadata only. "
    "Exit status: 0 readable, 1 damaged save, 2 usage error.",
    reads_save=True,
)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of the ``inspect`` command."""
    parser.add_argument("--json", action="store_true", help="print the tree as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the tree of ``args.path``; exit status 0, or 1 when the save is damaged."""
    path = save_path(args.path)
    try:
        info = read_metadata(path)
    except MemmapFormatError as err:
        problems = [problem([], "metadata", str(err))]
        if args.json:
            out = {"path": str(path), "ok": False, "problems": problems, "tensors": None}
            print(json.dumps({**out, "total_bytes": None, "tree": None}, indent=2))
        else:
            print("\n".join([f"{path}: the save is damaged", *problem_lines(problems)]))
        return EXIT_PROBLEMS
    problems = file_problems(info)
    if args.json:
        out = {
            "path": str(path),
            "ok": not problems,
            "problems": problems,
            "tensors": count_tensors(info),
            "total_bytes": info.total_bytes,
            "tree": info.to_dict(),
        }
        print(json.dumps(out, indent=2))
    else:
        print("\n".join(render(info)))
    return EXIT_PROBLEMS if problems else EXIT_OK


def short_class(class_path: str) -> str:
    """The class name of a recorded ``"module:qualname"``."""
    return class_path.rpartition(":")[2]


def render(info: MemmapInfo) -> list[str]:
    """The text ``inspect`` prints for a save: header, tree, totals and problems."""
    header = [("class", f"{short_class(info.class_path)} ({info.class_path})")]
    if info.origin == "tensordict":
        header.append(("saved by", "tensordict's memmap (read as tensorclass reads its own)"))
    if info.tensordict_class is not None:
        note = "loads as the tensor class of that name defined here, else as TensorDict"
        header.append(("tensordict class", f"{info.tensordict_class} ({note})"))
    if info.kind == "lazy_stack":
        header.append(("lazy stack", f"{len(info.members)} members along dim {info.stack_dim}"))
    header.append(("batch size", format_shape(info.batch_size)))
    if info.device is not None:
        header.append(("device", info.device))
    if info.names is not None and any(name is not None for name in info.names):
        header.append(("dim names", ", ".join(str(name) for name in info.names)))
    lines = [str(info.path), *table(header)]
    rows = [("key", "type", "shape / value", "on disk")]
    _rows(info, 0, rows)
    if len(rows) > 1:
        lines += ["", *table(rows, right=(3,))]
    total = format_bytes(info.total_bytes)
    lines += ["", f"{plural(count_tensors(info), 'tensor')}, {total} on disk"]
    problems = file_problems(info)
    if problems:
        lines += ["", f"the save is damaged: {plural(len(problems), 'problem')}"]
        lines += problem_lines(problems)
    return lines


def _rows(info: MemmapInfo, depth: int, rows: list[tuple[str, str, str, str]]) -> None:
    indent = _INDENT * depth
    for index, member in enumerate(info.members):
        batch = f"batch {format_shape(member.batch_size)}"
        size = format_bytes(member.total_bytes)
        rows.append((f"{indent}[{index}]", short_class(member.class_path), batch, size))
        _rows(member, depth + 1, rows)
    for entry in info.entries:
        rows.append(_row(entry, indent))
        if entry.child is not None:
            _rows(entry.child, depth + 1, rows)


def _row(entry: EntryInfo, indent: str) -> tuple[str, str, str, str]:
    key = indent + entry.key
    if entry.type == "tensor":
        size = format_bytes(entry.bytes_on_disk)
        mark = " !" if entry.problem() is not None else ""
        return key, str(entry.dtype), format_shape(entry.shape), size + mark
    if entry.child is not None:
        child = entry.child
        kind = short_class(child.class_path)
        shape = f"batch {format_shape(child.batch_size)}"
        if child.kind == "lazy_stack":
            kind = f"lazy stack of {kind}"
            shape += f", dim {child.stack_dim}"
        return key, kind, shape, format_bytes(child.total_bytes)
    if entry.type == "non_tensor_stack":
        depth = len(entry.shape or ())
        kinds = sorted({_json_type(value) for value in _flat(entry.value, depth)})
        return key, f"{'|'.join(kinds) or 'empty'} stack", brief(entry.value), ""
    return key, _json_type(entry.value), brief(entry.value), ""


def _flat(values: Any, depth: int) -> list[Any]:
    """The elements of a non-tensor stack: ``values`` nests lists ``depth`` deep."""
    if depth == 0:
        return [values]
    return [item for value in values for item in _flat(value, depth - 1)]


def _json_type(value: object) -> str:
    return "null" if value is None else type(value).__name__
