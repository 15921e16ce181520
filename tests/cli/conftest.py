"""Saves on disk for the command-line tests, and a way to run a command in-process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from tensorclass import TensorDict, lazy_stack
from tensorclass.cli import main

from .schemas import Tagged, make_step

ROOT = Path(__file__).resolve().parents[2]
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """``cli("inspect", path)`` runs ``main`` and returns (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # validate may add the cwd

    def run(*argv: object) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(arg) for arg in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_module(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m tensorclass ARGV`` in a subprocess, importing this worktree."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tensorclass", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=120,
    )


@pytest.fixture
def step_save(tmp_path: Path) -> Path:
    """A conforming ``Step`` (typed, nested, with non-tensor values) saved to disk."""
    make_step().memmap(tmp_path / "step")
    return tmp_path / "step"


@pytest.fixture
def bad_save(tmp_path: Path) -> Path:
    """Data that breaks ``Step`` in five ways at once, saved as a plain TensorDict.

    Wrong dtype (``obs.pixels`` float32), a symbolic dim that disagrees (``mask`` has
    H=7, ``obs.pixels`` H=8), a missing field (``action``), a key that is not a field
    (``reward``) and a non-tensor value outside its ``Literal`` (``mode``).
    """
    data = TensorDict(
        {
            "obs": {"pixels": torch.zeros(4, 3, 8, 6), "state": torch.zeros(4, 5)},
            "mask": torch.ones(4, 7, 6, dtype=torch.bool),
            "reward": torch.zeros(4),
        },
        batch_size=[4],
    )
    data["mode"] = "test"
    data.memmap(tmp_path / "bad")
    return tmp_path / "bad"


@pytest.fixture
def stack_saves(tmp_path: Path) -> tuple[Path, Path]:
    """A non-tensor stack (values differing along the batch) and a lazy stack, saved."""
    tagged = torch.stack([Tagged(torch.zeros(2), tag="a"), Tagged(torch.ones(2), tag="b")])
    tagged.memmap(tmp_path / "tagged")
    members = [TensorDict({"a": torch.zeros(3)}, [3]), TensorDict({"a": torch.ones(3)}, [3])]
    lazy_stack(members, 0).memmap(tmp_path / "lazy")
    return tmp_path / "tagged", tmp_path / "lazy"
