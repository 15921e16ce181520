"""Profile one implementation of the workloads: ``python -m benchmarks.profiling SUBSTR``.

Runs the tensorclass case (``--impl`` to choose another) of every workload whose name or
group contains SUBSTR under ``cProfile`` for about a second and prints the functions with
the most time of their own. cProfile adds a fixed cost to every Python call, so read the
*shares* and the call counts, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections.abc import Sequence

import torch

from .harness import Scale, Settings, _as_case, _timed, calibrate, select
from .workloads import all_workloads

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Profile the selected workloads; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profiling")
    parser.add_argument("filter", help="substring of the workload name or group")
    parser.add_argument("--impl", default="tensorclass", help="tensorclass, tensordict or plain")
    parser.add_argument("--top", type=int, default=15, help="how many functions to show")
    parser.add_argument("--seconds", type=float, default=1.0, help="profiled time per workload")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for workload in select(all_workloads(), args.filter, quick=False):
        builder = workload.builders.get(args.impl)
        if builder is None:
            continue
        case = _as_case(builder(Scale()))
        loops = calibrate(case, Settings(target_seconds=args.seconds / 5))
        per_call = _timed(case, loops, time.thread_time) / loops
        profiler = cProfile.Profile()
        profiler.runcall(_timed, case, loops * 5)
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime")
        stats.print_stats(args.top)
        print(
            f"=== {workload.name} [{args.impl}]: {per_call * 1e6:.2f} us (CPU) per call unprofiled, {loops * 5} calls"
        )
        print(f"    {case.text}")
        print("\n".join(line for line in out.getvalue().splitlines()[4:] if line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
