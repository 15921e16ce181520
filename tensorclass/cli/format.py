"""Text formatting shared by the commands: sizes, shapes, short values, aligned tables."""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = ["brief", "format_bytes", "format_shape", "plural", "table"]

_UNITS = ("KiB", "MiB", "GiB", "TiB")


def format_bytes(count: int | None) -> str:
    """``1536`` as ``"1.5 KiB"``; ``None`` (a missing file) as ``"missing"``."""
    if count is None:
        return "missing"
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in _UNITS:
        value /= 1024
        if value < 1024 or unit == _UNITS[-1]:
            break
    return f"{value:.1f} {unit}"


def format_shape(shape: Sequence[int] | None) -> str:
    """A shape as ``[4, 3, 8, 8]``."""
    return "[" + ", ".join(str(size) for size in shape or ()) + "]"


def plural(count: int, noun: str) -> str:
    """``"1 tensor"``, ``"3 tensors"``."""
    return f"{count} {noun}{'s' * (count != 1)}"


def brief(value: object, width: int = 40) -> str:
    """A JSON value as JSON text of at most ``width`` characters (long ones cut)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    """Rows of cells as lines with aligned columns (two spaces apart).

    Columns listed in ``right`` are right-aligned; trailing spaces are removed.
    """
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines
