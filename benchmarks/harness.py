"""Timing: workloads, cases, calibration and the interleaved measurement loop.

A :class:`Workload` names one operation and, for each implementation (``tensorclass``,
``tensordict``, ``plain``), a builder that prepares the data and returns a :class:`Case`:
the zero-argument call to time, plus an optional untimed ``prepare`` run before each call
(for operations that consume their input, such as saving into a fresh directory).

Measurement is interleaved: every implementation of a workload is calibrated, then the
repeats run round-robin (the order rotates each repeat), so machine noise affects all of
them alike. The figure kept is the minimum over repeats of ``total time / inner loops``.
"""

from __future__ import annotations

import gc
import itertools
import math
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = [
    "IMPLS",
    "PEER_MISSING",
    "Case",
    "Measurement",
    "Result",
    "Scale",
    "Settings",
    "Unavailable",
    "Workload",
    "run_workload",
    "CLOCKS",
]

#: the implementations, in table order
IMPLS = ("tensorclass", "tensordict", "plain")

#: the reason given when the peer library is not installed (its column stays blank)
PEER_MISSING = "tensordict is not installed"


class Unavailable(Exception):
    """Raised by a builder when its implementation cannot run (API not there yet)."""


@dataclass(frozen=True)
class Scale:
    """The problem sizes: full (the documented table) or ``quick`` (a smoke run)."""

    quick: bool = False

    def pick(self, full: Any, quick: Any) -> Any:
        """``full`` normally, ``quick`` in a smoke run."""
        return quick if self.quick else full


class Case:
    """One prepared measurement.

    Either a statement timed inline, as ``timeit`` does (``Case("td[3]", td=td)``: no
    function call around it, so the per-call figure is the statement's own cost), or a
    callable (``Case(fn)``) for heavier work. ``prepare`` (callables only) runs untimed
    before each call; ``cleanup`` runs once at the end.
    """

    def __init__(
        self,
        code: str | Callable[[], Any],
        prepare: Callable[[], Any] | None = None,
        cleanup: Callable[[], Any] | None = None,
        **env: Any,
    ) -> None:
        if isinstance(code, str) and prepare is not None:
            raise ValueError("prepare needs a callable case")
        self.code = code
        self.prepare = prepare
        self.cleanup = cleanup
        self.env = env
        self._inner = _compile(code, env) if isinstance(code, str) else None

    @property
    def text(self) -> str:
        """The timed code, for the report."""
        if isinstance(self.code, str):
            return self.code
        return getattr(self.code, "__qualname__", repr(self.code))

    def run_once(self) -> None:
        """One untimed call (warm-up)."""
        if self._inner is not None:
            self._inner(1, time.perf_counter, self.env)
            return
        if self.prepare is not None:
            self.prepare()
        self.code()  # type: ignore[operator]


def _compile(stmt: str, env: dict[str, Any]) -> Callable[..., float]:
    """A function timing ``loops`` runs of ``stmt`` with ``env`` bound to fast locals."""
    bind = "".join(f"    {name} = _env[{name!r}]\n" for name in env)
    body = "".join(f"        {line}\n" for line in stmt.splitlines())
    source = (
        "def _inner(_loops, _timer, _env):\n"
        f"{bind}"
        "    _t0 = _timer()\n"
        "    for _ in _repeat(None, _loops):\n"
        f"{body}"
        "    return _timer() - _t0\n"
    )
    namespace: dict[str, Any] = {"_repeat": itertools.repeat, "torch": torch}
    exec(compile(source, f"<case {stmt!r}>", "exec"), namespace)
    return namespace["_inner"]  # type: ignore[no-any-return]


Builder = Callable[[Scale], "Case | Callable[[], Any]"]


@dataclass(frozen=True)
class Workload:
    """One operation measured for several implementations.

    Attributes:
        name: the row label.
        group: the section it belongs to (``construct``, ``keys``, ``index``...).
        kind: which tensorclass/plain target applies (see ``report.TARGETS``):
            ``small`` (3x), ``batch`` (1.3x), ``module`` (2x), ``limit`` (1.25x of the
            physical limit), ``faster`` (1x), or ``other`` (reported only).
        plain: what the plain column runs (shown in the table).
        builders: implementation name -> builder.
        peer_geomean: whether the row counts in the tensorclass/tensordict geomean (off
            for rows that repeat another row's tensor-class measurement with a second
            baseline).
        quick: whether the row runs in ``--quick`` mode (off for ``torch.compile``).
    """

    name: str
    group: str
    kind: str
    plain: str
    builders: Mapping[str, Builder]
    peer_geomean: bool = True
    quick: bool = True


@dataclass
class Measurement:
    """The outcome for one implementation of one workload."""

    seconds: float | None = None  # per call (min over repeats)
    loops: int = 0  # calls per repeat
    repeats: int = 0  # measurements taken
    status: str = "ok"  # ok | n/a | missing | error
    reason: str = ""
    code: str = ""  # what was timed


@dataclass
class Result:
    """All implementations of one workload."""

    workload: Workload
    cells: dict[str, Measurement] = field(default_factory=dict)

    def seconds(self, impl: str) -> float | None:
        """The per-call time of ``impl`` in seconds, or ``None`` if it did not run."""
        cell = self.cells.get(impl)
        return cell.seconds if cell is not None else None

    def ratio(self, impl: str, baseline: str) -> float | None:
        """``impl`` time over ``baseline`` time, when both ran."""
        a, b = self.seconds(impl), self.seconds(baseline)
        if a is None or b is None or b <= 0:
            return None
        return a / b


#: the clocks a run can use: ``cpu`` is the CPU time of the measuring thread (user +
#: system, so file writes count; time spent descheduled by other processes does not),
#: ``wall`` is elapsed time
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}


@dataclass(frozen=True)
class Settings:
    """How long and how often to measure, and on which clock."""

    repeat: int = 10
    target_seconds: float = 0.03  # one measurement (inner loop) lasts about this long
    max_loops: int = 1_000_000
    warmup: int = 3
    clock: str = "cpu"
    max_repeat: int = 30  # more rounds while a minimum is not confirmed...
    tolerance: float = 0.05  # ...by a second sample within this fraction

    @property
    def timer(self) -> Callable[[], float]:
        """The clock function."""
        return CLOCKS[self.clock]


def _timed(case: Case, loops: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Total seconds on ``clock`` for ``loops`` runs (``prepare`` excluded)."""
    if case._inner is not None:
        return case._inner(loops, clock, case.env)
    call: Callable[[], Any] = case.code  # type: ignore[assignment]
    if case.prepare is None:
        start = clock()
        for _ in itertools.repeat(None, loops):
            call()
        return clock() - start
    prepare = case.prepare
    total = 0.0
    for _ in itertools.repeat(None, loops):
        prepare()
        start = clock()
        call()
        total += clock() - start
    return total


def _measure(case: Case, loops: int, clock: Callable[[], float]) -> float:
    """Per-call seconds of one measurement, with the garbage collector paused."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _timed(case, loops, clock) / loops
    finally:
        if enabled:
            gc.enable()


def calibrate(case: Case, settings: Settings) -> int:
    """The number of inner loops that makes one measurement last about the target time."""
    for _ in range(settings.warmup):
        case.run_once()
    loops = 1
    while True:
        elapsed = _timed(case, loops, settings.timer)
        if elapsed >= settings.target_seconds or loops >= settings.max_loops:
            return loops
        if elapsed <= 0:
            loops *= 10
            continue
        # Aim a little over the target; grow at most 100x per step (estimates of very
        # fast calls from one loop are dominated by timer overhead).
        wanted = math.ceil(loops * settings.target_seconds * 1.1 / elapsed)
        loops = min(max(wanted, loops + 1), loops * 100, settings.max_loops)


def _as_case(built: Case | Callable[[], Any]) -> Case:
    return built if isinstance(built, Case) else Case(built)


def _describe(err: BaseException) -> str:
    """The error's type and the start of its message, on one line."""
    text = " ".join(f"{type(err).__name__}: {err}".split())
    return text if len(text) <= 240 else text[:237] + "..."


def _build(workload: Workload, scale: Scale) -> tuple[dict[str, Case], dict[str, Measurement]]:
    cases: dict[str, Case] = {}
    cells: dict[str, Measurement] = {}
    for impl in IMPLS:
        builder = workload.builders.get(impl)
        if builder is None:
            cells[impl] = Measurement(status="n/a", reason="no equivalent")
            continue
        try:
            cases[impl] = _as_case(builder(scale))
            cells[impl] = Measurement(code=cases[impl].text)
        except Unavailable as err:
            status = "missing" if str(err) == PEER_MISSING else "n/a"
            cells[impl] = Measurement(status=status, reason=str(err))
        except Exception as err:
            cells[impl] = Measurement(status="error", reason=f"setup: {_describe(err)}")
    return cases, cells


def _confirmed(values: list[float], tolerance: float) -> bool:
    """Whether the minimum is confirmed: the second-best sample is within ``tolerance``."""
    if len(values) < 2:
        return True
    first, second = sorted(values)[:2]
    return second <= first * (1 + tolerance)


def _interleaved(
    cases: dict[str, Case], cells: dict[str, Measurement], settings: Settings
) -> dict[str, list[float]]:
    """Per-call samples of every case, measured round-robin (the order rotates).

    After ``settings.repeat`` rounds, rounds go on (up to ``settings.max_repeat``) while
    some implementation's minimum is not confirmed by a second sample within
    ``settings.tolerance``: a minimum hit by a burst of load elsewhere on the machine
    is not trusted until a second measurement agrees with it.
    """
    samples: dict[str, list[float]] = {impl: [] for impl in cases}
    order = list(cases)
    for rep in range(max(settings.repeat, settings.max_repeat)):
        if rep >= settings.repeat and all(
            _confirmed(values, settings.tolerance) for values in samples.values()
        ):
            break
        shift = rep % len(order) if order else 0
        for impl in order[shift:] + order[:shift]:
            samples[impl].append(_measure(cases[impl], cells[impl].loops, settings.timer))
    return samples


def run_workload(
    workload: Workload, scale: Scale, settings: Settings, debug: bool = False
) -> Result:
    """Build, calibrate and measure every implementation of ``workload``, interleaved."""
    built, cells = _build(workload, scale)
    cases = dict(built)
    try:
        for impl, case in built.items():
            try:
                cells[impl].loops = calibrate(case, settings)
            except Exception as err:
                if debug:
                    traceback.print_exc()
                cells[impl] = Measurement(status="error", reason=_describe(err), code=case.text)
                del cases[impl]
        samples = _interleaved(cases, cells, settings)
        for impl, values in samples.items():
            cells[impl].seconds = min(values)
            cells[impl].repeats = len(values)
    finally:
        for case in built.values():
            if case.cleanup is not None:
                case.cleanup()
    return Result(workload, cells)


def select(workloads: Iterable[Workload], pattern: str | None, quick: bool) -> list[Workload]:
    """The workloads whose name or group contains ``pattern`` (case-insensitive).

    In quick mode, workloads marked ``quick=False`` run only when named by the filter.
    """
    chosen = []
    for workload in workloads:
        text = f"{workload.group} {workload.name}".lower()
        if pattern is not None and pattern.lower() not in text:
            continue
        if quick and not workload.quick and pattern is None:
            continue
        chosen.append(workload)
    return chosen
