"""Progress of the demo on stderr: one line per stage, a text bar while a stage runs.

On a terminal a stage's line is redrawn in place as a bar (``[#####.....] 12,288/32,768
rows``) and ends as a summary with the stage's time; elsewhere (a pipe, a log) only the
summary line is written, when the stage ends. No dependency: plain text.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TextIO

__all__ = ["Progress", "Stages", "seconds_since_process_start"]

_BAR_WIDTH = 24
_REDRAW_SECONDS = 0.1


class Progress(Protocol):
    """What a stage's work calls as it goes."""

    def update(self, n: int) -> object:
        """Advance by ``n`` units."""


def seconds_since_process_start() -> float | None:
    """How long ago this process started (interpreter start-up and imports included), or
    ``None`` where the system does not tell (read from ``/proc`` on Linux)."""
    try:
        stat = Path("/proc/self/stat").read_text()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    # fields after the command name "(...)": state is field 3, starttime field 22
    start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
    return max(0.0, uptime - start_ticks / ticks)


class _Bar:
    """One stage's counter, drawn as a bar on a terminal."""

    def __init__(self, stages: Stages, label: str, total: int, unit: str) -> None:
        self.stages = stages
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self.drawn = 0.0

    def update(self, n: int) -> object:
        self.done += n
        now = time.perf_counter()
        if self.stages.live and (now - self.drawn >= _REDRAW_SECONDS or self.done >= self.total):
            self.drawn = now
            filled = _BAR_WIDTH * min(self.done, self.total) // max(self.total, 1)
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            self.stages.draw(
                f"{self.label} [{bar}] {self.done:,}/{self.total:,} {self.unit}", final=False
            )
        return None


class Stages:
    """Numbered stages reported on ``stream`` (stderr by default); silent if not ``enabled``."""

    def __init__(self, count: int, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.count = count
        self.number = 0
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.live = enabled and callable(isatty) and bool(isatty())

    def draw(self, text: str, *, final: bool) -> None:
        """Write a stage's line (in place on a terminal; only final lines elsewhere)."""
        if not self.enabled or not (final or self.live):
            return
        if self.live:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, label: str, summary: str) -> None:
        """A stage that ran before it could be reported (e.g. start-up): its line."""
        self.number += 1
        self.draw(f"[{self.number}/{self.count}] {label}: {summary}", final=True)

    @contextmanager
    def stage(self, label: str, total: int = 0, unit: str = "") -> Iterator[Progress]:
        """Run one stage: a bar over ``total`` units while it runs, its time when it ends."""
        self.number += 1
        prefix = f"[{self.number}/{self.count}] {label}"
        bar = _Bar(self, prefix, total, unit)
        start = time.perf_counter()
        if total:
            bar.update(0)
        yield bar
        seconds = time.perf_counter() - start
        counted = f"{bar.done:,} {unit} in " if total else ""
        self.draw(f"{prefix}: {counted}{seconds:.2f} s", final=True)
