"""Reporting: the results table, the geometric means, the targets, and JSON."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from .harness import IMPLS, Result, Settings

__all__ = ["TARGETS", "format_report", "geomeans", "misses", "to_json"]

#: the tensorclass/plain target of each workload kind (``None``: reported only)
TARGETS: dict[str, float | None] = {
    "small": 3.0,
    "batch": 1.3,
    "module": 2.0,
    "limit": 1.25,
    "faster": 1.0,
    "other": None,
}
#: no workload may be slower than tensordict; the geomean must be at most half
PEER_TARGET = 1.0
PEER_GEOMEAN_TARGET = 0.5


# -- numbers ---------------------------------------------------------------------------


def _geomean(values: Sequence[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geomeans(results: Sequence[Result]) -> dict[str, tuple[float | None, int]]:
    """Geometric means of tensorclass/tensordict and tensorclass/plain (value, row count)."""
    peer = [
        r
        for r in (
            res.ratio("tensorclass", "tensordict") for res in results if res.workload.peer_geomean
        )
        if r is not None
    ]
    plain = [r for r in (res.ratio("tensorclass", "plain") for res in results) if r is not None]
    return {"tc/td": (_geomean(peer), len(peer)), "tc/plain": (_geomean(plain), len(plain))}


def misses(result: Result) -> list[str]:
    """The targets this row misses: ``td`` (slower than tensordict), ``plain`` (over its
    plain-PyTorch target)."""
    out = []
    peer = result.ratio("tensorclass", "tensordict")
    if peer is not None and peer > PEER_TARGET:
        out.append("td")
    target = TARGETS[result.workload.kind]
    plain = result.ratio("tensorclass", "plain")
    if target is not None and plain is not None and plain > target:
        out.append("plain")
    return out


# -- the table -------------------------------------------------------------------------


def _us(seconds: float | None) -> str:
    if seconds is None:
        return ""
    us = seconds * 1e6
    if us < 10:
        return f"{us:.2f}"
    if us < 100:
        return f"{us:.1f}"
    return f"{us:,.0f}"


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _cell(result: Result, impl: str) -> str:
    cell = result.cells[impl]
    if cell.status == "ok":
        return _us(cell.seconds)
    return {"missing": "", "n/a": "n/a", "error": "err"}[cell.status]


def _target(result: Result) -> str:
    target = TARGETS[result.workload.kind]
    return "" if target is None else f"{target:g}x"


HEADER = (
    "group",
    "workload",
    "plain is",
    "tc us",
    "td us",
    "plain us",
    "tc/td",
    "tc/plain",
    "target",
    "misses",
)
RIGHT = {3, 4, 5, 6, 7, 8}


def table_rows(results: Sequence[Result]) -> list[tuple[str, ...]]:
    """One row of strings per result, in the order of :data:`HEADER`."""
    rows = []
    for res in results:
        w = res.workload
        plain_ratio = res.ratio("tensorclass", "plain")
        rows.append(
            (
                w.group,
                w.name,
                w.plain,
                _cell(res, "tensorclass"),
                _cell(res, "tensordict"),
                _cell(res, "plain"),
                _ratio(res.ratio("tensorclass", "tensordict")),
                _ratio(plain_ratio),
                _target(res),
                ",".join(misses(res)),
            )
        )
    return rows


def format_table(results: Sequence[Result]) -> str:
    """The results as an aligned text table, with the geomean rows at the bottom."""
    rows = table_rows(results)
    means = geomeans(results)
    (peer, n_peer), (plain, n_plain) = means["tc/td"], means["tc/plain"]
    footer = [
        (
            "",
            f"geomean tc/td ({n_peer} rows)",
            "",
            "",
            "",
            "",
            _ratio(peer),
            "",
            f"{PEER_GEOMEAN_TARGET:g}x",
            "",
        ),
        ("", f"geomean tc/plain ({n_plain} rows)", "", "", "", "", "", _ratio(plain), "", ""),
    ]
    every = [HEADER, *rows, *footer]
    widths = [max(len(row[i]) for row in every) for i in range(len(HEADER))]

    def line(row: Sequence[str]) -> str:
        cells = [
            text.rjust(widths[i]) if i in RIGHT else text.ljust(widths[i])
            for i, text in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    rule = "-" * len(line(HEADER))
    return "\n".join([line(HEADER), rule, *map(line, rows), rule, *map(line, footer)])


def _notes(results: Sequence[Result]) -> list[str]:
    notes = []
    for res in results:
        for impl in IMPLS:
            cell = res.cells[impl]
            if cell.status in ("n/a", "error") and cell.reason != "no equivalent":
                notes.append(f"- {res.workload.name} [{impl}] {cell.status}: {cell.reason}")
    return notes


def format_report(results: Sequence[Result], env: dict[str, Any], settings: Settings) -> str:
    """The full text report: environment, table, notes and a summary of the targets."""
    machine, versions = env["machine"], env["versions"]
    lines = [
        f"command:  {env['command']}",
        f"machine:  {machine['cpu']}, {machine['cores']} cores ({machine['platform']})",
        "versions: " + ", ".join(f"{name} {value}" for name, value in versions.items()),
        f"timing:   {settings.clock} clock, torch threads={env['torch_threads']}, "
        f"~{settings.target_seconds * 1e3:g} ms per measurement, min over {settings.repeat} "
        f"to {settings.max_repeat} repeats (until a second sample is within "
        f"{settings.tolerance:.0%}), implementations interleaved",
        "units:    microseconds per call (tc = tensorclass, td = tensordict 'peer'); "
        "target = tc/plain limit; misses: td = slower than tensordict, plain = over target",
        "",
        format_table(results),
    ]
    notes = _notes(results)
    if notes:
        lines += ["", "not measured:", *notes]
    return "\n".join(lines)


def to_json(results: Sequence[Result], env: dict[str, Any], settings: Settings) -> str:
    """Every figure of the run as JSON (times in microseconds)."""
    means = geomeans(results)
    rows = []
    for res in results:
        w = res.workload
        rows.append(
            {
                "name": w.name,
                "group": w.group,
                "kind": w.kind,
                "plain": w.plain,
                "target_vs_plain": TARGETS[w.kind],
                "in_peer_geomean": w.peer_geomean,
                "us": {impl: _json_us(res.seconds(impl)) for impl in IMPLS},
                "loops": {impl: res.cells[impl].loops for impl in IMPLS},
                "repeats": {impl: res.cells[impl].repeats for impl in IMPLS},
                "status": {impl: res.cells[impl].status for impl in IMPLS},
                "reasons": {
                    impl: res.cells[impl].reason for impl in IMPLS if res.cells[impl].reason
                },
                "code": {impl: res.cells[impl].code for impl in IMPLS if res.cells[impl].code},
                "tc/td": res.ratio("tensorclass", "tensordict"),
                "tc/plain": res.ratio("tensorclass", "plain"),
                "misses": misses(res),
            }
        )
    payload = {
        **env,
        "settings": {
            "repeat": settings.repeat,
            "target_seconds": settings.target_seconds,
            "clock": settings.clock,
            "max_repeat": settings.max_repeat,
            "tolerance": settings.tolerance,
        },
        "geomean": {key: {"value": value, "rows": n} for key, (value, n) in means.items()},
        "results": rows,
    }
    return json.dumps(payload, indent=2)


def _json_us(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e6, 4)


def print_flush(text: str) -> None:
    """Print and flush (progress lines appear while a long run goes on)."""
    print(text, file=sys.stderr, flush=True)
