"""The plugin in mypy's incremental mode: classes loaded from the cache keep everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from .checkers import Diagnostic, mypy_config, run_mypy, state_dir

MODELS = """
from __future__ import annotations

import torch

from tensorclass import TensorClass, tensorclass


@tensorclass
class IncrInner:
    x: torch.Tensor


class IncrOuter(TensorClass):
    inner: IncrInner
    y: torch.Tensor


@tensorclass(frozen=True)
class IncrFrozen:
    z: torch.Tensor
"""

USE = """
from __future__ import annotations

import torch
from typing_extensions import assert_type

from incr_models import IncrFrozen, IncrInner, IncrOuter


class IncrFrozenChild(IncrFrozen):
    w: torch.Tensor | None = None


inner = IncrInner(torch.zeros(2), batch_size=[2])
outer = IncrOuter(inner, torch.zeros(2), batch_size=[2])
child = IncrFrozenChild(torch.zeros(2), batch_size=[2])
assert_type(inner.reshape(1, 2), IncrInner)
assert_type(outer["inner", "x"], torch.Tensor)
assert_type(torch.stack([inner, inner]), IncrInner)
assert_type(torch.maximum(inner, torch.zeros(2)), IncrInner)
assert_type(torch.unbind(outer), tuple[IncrOuter, ...])
assert_type(child[0], IncrFrozenChild)
child.w = None
outer.select(("inner", "x"), "y")
outer["inner", "nope"]
"""


def _errors(found: list[Diagnostic], path: Path) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in found if d.path == path.resolve())


@pytest.fixture()
def project(tmp_path: Path, root: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "incr_models.py").write_text(MODELS)
    (tmp_path / "incr_use.py").write_text(USE)
    config = mypy_config(tmp_path, root, plugin=True)
    text = config.read_text().replace("mypy_path = ", f"mypy_path = {tmp_path}:")
    config.write_text(text)
    return tmp_path, tmp_path / "incr_models.py", tmp_path / "incr_use.py"


def test_cached_classes_keep_constructor_methods_and_keys(
    project: tuple[Path, Path, Path],
) -> None:
    workdir, models, use = project
    config, cache = workdir / "mypy-plugin.ini", state_dir() / "cache-plugin"
    lines = USE.splitlines()
    unknown_key = lines.index('outer["inner", "nope"]') + 1
    frozen = lines.index("child.w = None") + 1

    found, _ = run_mypy([models, use], config, cache)
    assert _errors(found, use) == [(frozen, "misc"), (unknown_key, "tensorclass-key")]
    assert _errors(found, models) == []

    # Change only the user: the models come from the cache, and still work (the decorated
    # classes, keys, and frozen read from the cached dataclass metadata).
    use.write_text(USE + 'outer["nope"]\nouter.select("y", "nope")\n')
    found, log = run_mypy([models, use], config, cache, extra=("--verbose",), allow_log=True)
    assert "Metadata fresh for incr_models" in log
    last = len(lines) + 1
    assert _errors(found, use) == [
        (frozen, "misc"),
        (unknown_key, "tensorclass-key"),
        (last, "tensorclass-key"),
        (last + 1, "tensorclass-key"),
    ]

    # Change the models: the user is re-checked against the new fields.
    models.write_text(
        MODELS.replace("    x: torch.Tensor", "    x: torch.Tensor\n    nope: int = 0")
    )
    found, _ = run_mypy([models, use], config, cache)
    assert _errors(found, use) == [
        (frozen, "misc"),
        (last, "tensorclass-key"),
        (last + 1, "tensorclass-key"),
    ]


STACKS = """
from __future__ import annotations

import torch

from tensorclass import TensorClass, lazy_stack


class IncrStep(TensorClass):
    obs: torch.Tensor


steps = lazy_stack([IncrStep(torch.zeros(2)), IncrStep(torch.zeros(3))])
"""

STACKS_USE = """
from __future__ import annotations

from typing import Any

import torch
from typing_extensions import assert_type

from incr_stacks import IncrStep, steps
from tensorclass import LazyStackedTensorDict


def step_of(step: IncrStep) -> None: ...
def stack_of(stack: LazyStackedTensorDict) -> None: ...


step_of(steps)
stack_of(steps)
assert_type(steps.obs, torch.Tensor)
assert_type(steps.members, tuple[Any, ...])
assert_type(steps.get("obs", as_padded_tensor=True), torch.Tensor)
steps.append(IncrStep(torch.zeros(4)))
steps["nope"]
"""


def test_cached_lazy_stacks_keep_both_classes(tmp_path: Path, root: Path) -> None:
    """A lazy stack's type (an intersection the plugin builds in the module that stacks)
    is read back from the cache with its fields and the lazy-stack API."""
    (tmp_path / "incr_stacks.py").write_text(STACKS)
    use = tmp_path / "incr_stacks_use.py"
    use.write_text(STACKS_USE)
    config = mypy_config(tmp_path, root, plugin=True)
    config.write_text(config.read_text().replace("mypy_path = ", f"mypy_path = {tmp_path}:"))
    cache = state_dir() / "cache-plugin"
    files = [tmp_path / "incr_stacks.py", use]
    unknown_key = STACKS_USE.splitlines().index('steps["nope"]') + 1

    found, _ = run_mypy(files, config, cache)
    assert _errors(found, use) == [(unknown_key, "tensorclass-key")]

    use.write_text(STACKS_USE + 'steps.get("nope", as_list=True)\n')
    found, log = run_mypy(files, config, cache, extra=("--verbose",), allow_log=True)
    assert "Metadata fresh for incr_stacks" in log
    last = len(STACKS_USE.splitlines()) + 1
    assert _errors(found, use) == [(unknown_key, "tensorclass-key"), (last, "tensorclass-key")]
    assert _errors(found, tmp_path / "incr_stacks.py") == []
