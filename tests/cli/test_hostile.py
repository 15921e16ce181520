"""``inspect`` and ``validate`` on hostile saves: every failure is an exit status and one
line, never a traceback; nothing is read through a link; reports shorten huge values."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import TensorDict

from .conftest import Run, run_module


def _save(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    path = tmp_path / "save"
    TensorDict(x=torch.zeros(3, 2), batch_size=[3]).memmap(path)
    meta = json.loads((path / "meta.json").read_text())
    text = edit(meta)
    (path / "meta.json").write_text(text if isinstance(text, str) else json.dumps(meta))
    return path


def _deep(tmp_path: Path) -> Path:
    level = {
        "format": "tensorclass-memmap", "version": 1, "kind": "instance",
        "class": "tensorclass:TensorDict", "typed": False, "schema": None, "batch_size": [],
        "device": None, "names": None, "entries": [{"key": "a", "type": "nested", "dir": "a"}],
    }  # fmt: skip
    here = root = tmp_path / "deep"
    for _ in range(700):
        here.mkdir()
        (here / "meta.json").write_text(json.dumps(level))
        here = here / "a"
    here.mkdir()
    (here / "meta.json").write_text(json.dumps({**level, "entries": []}))
    return root


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "huge int": lambda t: _save(
        t,
        lambda m: json.dumps(m).replace('"batch_size": [3]', '"batch_size": [' + "9" * 5000 + "]"),
    ),
    "dtype list": lambda t: _save(t, lambda m: m["entries"][0].update(dtype=["float32"])),
    "surrogate key": lambda t: _save(
        t, lambda m: json.dumps(m).replace('"key": "x"', '"key": "\\ud800"')
    ),
    "700 levels": _deep,
    "names twice": lambda t: _save(t, lambda m: m.update(batch_size=[3, 2], names=["a", "a"])),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["inspect", "validate"])
def test_hostile_saves_end_in_one_line(cli: Run, tmp_path: Path, case: str, command: str) -> None:
    path = HOSTILE[case](tmp_path)
    extra = ["--schema", "tests.cli.schemas:Step"] if command == "validate" else []
    code, out, err = cli(command, path, *extra)
    assert code == 1, (out, err)
    assert "Traceback" not in out + err
    assert "damaged" in out


def test_meta_json_link_is_not_read(cli: Run, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = {"format": "tensorclass-memmap", "secret": "do not read"}
    (outside / "meta.json").write_text(json.dumps(secret))
    save = tmp_path / "save"
    save.mkdir()
    (save / "meta.json").symlink_to(outside / "meta.json")
    for command in ("inspect", "validate"):
        extra = ["--schema", "tests.cli.schemas:Step"] if command == "validate" else []
        code, out, err = cli(command, save, *extra)
        assert code == 1 and "not a regular file" in out, (out, err)
        assert "secret" not in out + err


def test_fifo_meta_json_does_not_block(tmp_path: Path) -> None:
    save = tmp_path / "save"
    save.mkdir()
    os.mkfifo(save / "meta.json")
    result = run_module("inspect", save)  # a 120 s timeout: a blocked read fails the test
    assert result.returncode == 1 and "not a regular file" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_validate_shortens_values(cli: Run, tmp_path: Path) -> None:
    data = TensorDict(batch_size=[])
    data["mode"] = "x" * 1_000_000
    data.memmap(tmp_path / "big")
    code, out, _ = cli("validate", tmp_path / "big", "--schema", "tests.cli.schemas:Step")
    assert code == 1
    assert len(out) < 20_000 and "characters)" in out
    code, out, _ = cli("validate", tmp_path / "big", "--schema", "tests.cli.schemas:Step", "--json")
    assert len(out) < 20_000 and "characters)" in out
