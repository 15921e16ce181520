"""Each private tensordict name of ``tensorclass.compat.private.TABLE`` does what TorchRL
expects of it, reached the way TorchRL reaches it (under the alias, in a fresh interpreter:
``programs/private_checks.py``, one check per entry)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tensorclass.compat.private import TABLE

from .helpers import ROOT, environment, last_json

NAMES = [f"{entry.path}.{entry.name}" for entry in TABLE]


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "compat" / "programs" / "private_checks.py")],
        capture_output=True,
        text=True,
        env=environment(),
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    found: dict[str, Any] = last_json(done.stdout)
    return found


def test_the_table_names_each_entry_once() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert all(entry.meaning and entry.users for entry in TABLE)


@pytest.mark.parametrize("name", NAMES)
def test_each_private_name_behaves(results: dict[str, Any], name: str) -> None:
    assert results[name] is True, results[name]
