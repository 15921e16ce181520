"""The environment of a run: the machine, the library versions and the command line."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

__all__ = ["environment"]

ROOT = Path(__file__).resolve().parents[1]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "tensorclass"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{rev}{' (modified)' if dirty else ''}"


def environment(argv: Sequence[str]) -> dict[str, Any]:
    """The machine, the library versions and the command line of this run."""
    try:
        import tensordict

        peer = str(tensordict.__version__)
    except ImportError:
        peer = "not installed"
    import tensorclass

    return {
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "platform": platform.platform(),
        },
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "tensordict": peer,
            "tensorclass": f"{tensorclass.__version__} (git {_git_revision()})",
        },
        "torch_threads": torch.get_num_threads(),
        "command": " ".join(["python -m benchmarks", *argv]).strip(),
    }
