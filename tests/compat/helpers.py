"""Running code in a fresh interpreter: the alias must never be installed in the test process
(the real tensordict may be imported there, and tensorclass must not shadow it)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

HAS_TENSORDICT = importlib.util.find_spec("tensordict") is not None
HAS_TORCHRL = (
    importlib.util.find_spec("torchrl") is not None
    and importlib.util.find_spec("gymnasium") is not None
)

needs_torchrl = pytest.mark.skipif(
    not HAS_TORCHRL, reason="torchrl and gymnasium are not installed (the rl extra)"
)
needs_tensordict = pytest.mark.skipif(
    not HAS_TENSORDICT, reason="the real tensordict is not installed (the bench extra)"
)

PRELUDE = "import tensorclass\ntensorclass.install_as_tensordict()\n"
"""What a program run on tensorclass starts with."""


def environment() -> dict[str, str]:
    """The test process's environment, with this checkout first on the import path, two
    threads, and TorchRL's optional warnings off."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("OMP_NUM_THREADS", "2")
    env["PYTHONWARNINGS"] = "ignore"
    return env


def run_python(
    code: str, *args: str, alias: bool = True, timeout: float = 300, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` (dedented; after :data:`PRELUDE` when ``alias``) in a new interpreter."""
    source = (PRELUDE if alias else "") + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", source, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(),
        cwd=cwd,
    )


def check_output(code: str, *, alias: bool = True, timeout: float = 300) -> str:
    """The stdout of ``code`` run by :func:`run_python`; a failure shows its stderr."""
    done = run_python(code, alias=alias, timeout=timeout)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def last_json(out: str) -> Any:
    """The JSON on the last line of a program's output (TorchRL logs lines before it)."""
    return json.loads(out.strip().splitlines()[-1])
