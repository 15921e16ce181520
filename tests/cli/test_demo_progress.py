"""The demo's progress (one line per stage, a text bar on a terminal), its start-up in the
total, and that it runs on the core dependencies alone (the README installs no extra for it)."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tensorclass.cli.progress import Stages, seconds_since_process_start

ROOT = Path(__file__).resolve().parents[2]

# the top-level modules of the optional extras (pyproject: dev, docs, formats, progress, bench)
EXTRAS = {
    "tqdm",
    "safetensors",
    "h5py",
    "zarr",
    "pandas",
    "pyarrow",
    "pytest",
    "hypothesis",
    "mypy",
    "jaxtyping",
    "basedpyright",
    "importlinter",
    "mkdocs",
    "build",
    "twine",
    "tensordict",
}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stages_write_one_line_each_when_not_a_terminal() -> None:
    out = io.StringIO()
    stages = Stages(3, stream=out)
    stages.done("start-up", "1.00 s")
    with stages.stage("writing", 10, "rows") as bar:
        for _ in range(5):
            bar.update(2)
        assert out.getvalue().count("\n") == 1  # the stage's line comes when it ends
    with stages.stage("checking"):
        pass
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and "\r" not in out.getvalue()
    assert lines[0] == "[1/3] start-up: 1.00 s"
    assert lines[1].startswith("[2/3] writing: 10 rows in ") and lines[1].endswith(" s")
    assert lines[2].startswith("[3/3] checking: ")


def test_stages_draw_a_bar_on_a_terminal() -> None:
    out = _Terminal()
    stages = Stages(1, stream=out)
    with stages.stage("writing", 4, "rows") as bar:
        bar.update(4)  # the last update is always drawn
        assert "[########################] 4/4 rows" in out.getvalue()
    text = out.getvalue()
    assert text.startswith("\r") and "[1/1] writing [........................] 0/4 rows" in text
    assert text.endswith("\n") and text.count("\n") == 1  # redrawn in place, then one line


def test_disabled_stages_write_nothing() -> None:
    out = _Terminal()
    stages = Stages(2, enabled=False, stream=out)
    stages.done("start-up", "1 s")
    with stages.stage("writing", 3, "rows") as bar:
        bar.update(3)
    assert out.getvalue() == ""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_process_start_counts_what_ran_before() -> None:
    code = (
        "import time; time.sleep(0.3)\n"
        "from tensorclass.cli.progress import seconds_since_process_start as age\n"
        "print(age())"
    )
    before = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - before
    age = float(done.stdout)
    assert 0.3 <= age <= wall + 0.05  # /proc counts in 10 ms ticks
    here = seconds_since_process_start()
    assert here is not None and here > 0


def test_the_demo_reports_stages_and_needs_no_extra() -> None:
    # the extras' packages are made unimportable (as if not installed) before anything runs
    code = (
        "import sys\n"
        f"sys.modules.update(dict.fromkeys({sorted(EXTRAS)!r}))\n"  # None: import fails
        "from tensorclass.cli import main\n"
        "raise SystemExit(main(['demo', '--rows', '400', '--steps', '20', '--members', '2']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    stages = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split(":")[0] for line in stages] == [
        "[1/5] start-up",
        "[2/5] writing dataset",
        "[3/5] loading and validating",
        "[4/5] training",
        "[5/5] training an ensemble of 2",
    ]
    assert "400 rows in" in stages[1] and "20 steps in" in stages[3]
    assert "s of it start-up (python, torch, tensorclass)" in done.stdout
    assert "ensemble" in done.stdout and "accuracy" in done.stdout
