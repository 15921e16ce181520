"""``python -m benchmarks``: run the workloads and print the side-by-side table.

Every workload runs for tensorclass, tensordict (blank when not installed) and plain
PyTorch, interleaved in this one process with single-threaded torch.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from .environment import environment
from .harness import CLOCKS, Result, Scale, Settings, run_workload, select
from .report import format_report, print_flush, to_json
from .workloads import all_workloads
from .workloads._libs import remove_scratch

__all__ = ["main"]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="tensorclass vs tensordict vs plain PyTorch, per-op microseconds.",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, short timings")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to PATH as JSON")
    parser.add_argument(
        "--filter", metavar="SUBSTR", help="only workloads whose group or name contains SUBSTR"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="repeats per implementation, min kept (default 10, 2 with --quick); up to 3N "
        "while a minimum is not confirmed by a second sample within 5%%",
    )
    parser.add_argument(
        "--target-ms",
        type=float,
        metavar="MS",
        help="length of one measurement (default 30 ms, 1 ms with --quick)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: CPU time of the measuring thread (default; robust to other processes on "
        "the machine); wall: elapsed time",
    )
    parser.add_argument("--list", action="store_true", help="list the selected workloads and exit")
    parser.add_argument(
        "--debug", action="store_true", help="print tracebacks of failing workloads"
    )
    return parser.parse_args(argv)


def settings_for(args: argparse.Namespace) -> Settings:
    """Timing settings from the options (``--quick`` shortens everything)."""
    repeat = args.repeat if args.repeat is not None else (2 if args.quick else 10)
    target_ms = args.target_ms if args.target_ms is not None else (1.0 if args.quick else 30.0)
    return Settings(
        clock=args.clock,
        repeat=max(1, repeat),
        max_repeat=max(1, repeat) if args.quick else 3 * max(1, repeat),
        target_seconds=target_ms / 1e3,
        warmup=1 if args.quick else 3,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    workloads = select(all_workloads(), args.filter, args.quick)
    skipped = len(select(all_workloads(), args.filter, False)) - len(workloads)
    if skipped:
        print_flush(
            f"--quick: skipping {skipped} slow workloads (torch.compile); --filter names them"
        )
    if args.list:
        for workload in workloads:
            print(f"{workload.group:10} {workload.name}")
        return 0
    if not workloads:
        print(f"no workload matches {args.filter!r}", file=sys.stderr)
        return 2
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    settings = settings_for(args)
    scale = Scale(quick=args.quick)
    env = environment(argv)  # imports both libraries
    # Move everything imported so far out of the collector's way: each measurement
    # starts with a gc.collect(), which then only walks the objects made since.
    gc.collect()
    gc.freeze()
    results: list[Result] = []
    start = time.perf_counter()
    try:
        for number, workload in enumerate(workloads, 1):
            print_flush(f"[{number}/{len(workloads)}] {workload.group}: {workload.name}")
            results.append(run_workload(workload, scale, settings, debug=args.debug))
    finally:
        remove_scratch()
        gc.unfreeze()
        torch.set_num_threads(threads)
    print_flush(f"done in {time.perf_counter() - start:.1f} s")
    print(format_report(results, env, settings))
    if args.json:
        Path(args.json).write_text(to_json(results, env, settings) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
