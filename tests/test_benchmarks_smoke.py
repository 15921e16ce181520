"""The benchmark runs end to end in ``--quick`` mode (tiny sizes, short timings).

No timing is asserted: this only keeps the harness and every workload from rotting.
A workload whose API is not there yet reports "n/a"; any other failure is an error here.
"""

import json
from pathlib import Path

import pytest

from benchmarks.__main__ import main
from benchmarks.harness import IMPLS, Case, Scale, Settings, Workload, run_workload
from benchmarks.report import format_table, geomeans
from benchmarks.workloads import all_workloads


def test_quick_run_writes_every_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.json"
    assert main(["--quick", "--repeat", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    quick = [w.name for w in all_workloads() if w.quick]
    assert [row["name"] for row in report["results"]] == quick
    errors = [
        f"{row['name']} [{impl}]: {row['reasons'][impl]}"
        for row in report["results"]
        for impl in IMPLS
        if row["status"][impl] == "error"
    ]
    assert not errors, "workloads failed:\n" + "\n".join(errors)
    # every row has its plain-PyTorch baseline (unless an optional package it needs is absent)
    assert all(
        row["us"]["plain"] is not None or row["status"]["plain"] == "n/a"
        for row in report["results"]
    )
    assert set(report["versions"]) == {"python", "torch", "tensordict", "tensorclass"}
    printed = capsys.readouterr().out
    assert "geomean tc/td" in printed and "command:  python -m benchmarks --quick" in printed


def test_unavailable_and_failing_cells_are_reported() -> None:
    from benchmarks.harness import Unavailable

    def missing(scale: Scale) -> Case:
        raise Unavailable("not built yet")

    def broken(scale: Scale) -> Case:
        return Case("1 / 0")

    workload = Workload(
        "demo",
        "demo",
        "small",
        "int",
        {"tensorclass": missing, "tensordict": broken, "plain": lambda s: Case("x + 1", x=1)},
    )
    result = run_workload(
        workload, Scale(quick=True), Settings(repeat=1, target_seconds=1e-4, warmup=1)
    )
    assert result.cells["tensorclass"].status == "n/a"
    assert result.cells["tensordict"].status == "error"
    assert result.seconds("plain") is not None
    assert geomeans([result]) == {"tc/td": (None, 0), "tc/plain": (None, 0)}
    assert "n/a" in format_table([result])


def test_workload_names_are_unique() -> None:
    names = [w.name for w in all_workloads()]
    assert len(names) == len(set(names))


def test_filter_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list", "--filter", "stack"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed and all("stack" in line for line in listed)
    assert main(["--filter", "no-such-workload"]) == 2
