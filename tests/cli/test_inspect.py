"""``python -m tensorclass inspect``: the tree of a save, from its metadata only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensorclass.engine.storage.memmap.tensor import MemoryMappedTensor

from .conftest import Run, run_module


def test_tree_of_a_typed_nested_save(cli: Run, step_save: Path) -> None:
    code, out, err = cli("inspect", step_save)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == str(step_save)
    assert lines[1].split() == ["class", "Step", "(tests.cli.schemas:Step)"]
    assert lines[2].split() == ["batch", "size", "[4]"]
    rows = [line.split(None, 2) for line in lines[4:12]]
    assert rows == [
        ["key", "type", "shape / value  on disk"],
        ["obs", "Obs", "batch [4]        656 B"],
        ["pixels", "uint8", "[4, 3, 8, 6]     576 B"],
        ["state", "float32", "[4, 5]            80 B"],
        ["action", "float32", "[4, 2]            32 B"],
        ["mask", "bool", "[4, 8, 6]        192 B"],
        ["mode", "str", '"eval"'],
        ["note", "str", '"run 1"'],
    ]
    assert lines[6].startswith("  pixels")  # nested levels are indented
    assert lines[-1] == "4 tensors, 880 B on disk"


def test_json_is_the_tree_with_totals(cli: Run, step_save: Path) -> None:
    code, out, _ = cli("inspect", step_save, "--json")
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is True and result["problems"] == []
    assert result["tensors"] == 4 and result["total_bytes"] == 880
    tree = result["tree"]
    assert tree["class"] == "tests.cli.schemas:Step" and tree["batch_size"] == [4]
    obs = tree["entries"][0]
    assert obs["key"] == "obs" and obs["child"]["class"] == "tests.cli.schemas:Obs"
    pixels = obs["child"]["entries"][0]
    assert (pixels["dtype"], pixels["shape"], pixels["bytes_on_disk"]) == (
        "uint8",
        [4, 3, 8, 6],
        576,
    )
    assert tree["entries"][-1] == {"key": "note", "type": "non_tensor", "value": "run 1"}


def test_stacks(cli: Run, stack_saves: tuple[Path, Path]) -> None:
    tagged, lazy = stack_saves
    code, out, _ = cli("inspect", tagged)
    assert code == 0
    assert ["tag", "str", "stack", '["a",', '"b"]'] in [line.split() for line in out.splitlines()]
    code, out, _ = cli("inspect", lazy)
    assert code == 0
    assert "lazy stack  2 members along dim 0" in out and "batch size  [2, 3]" in out
    assert "[1]  TensorDict  batch [3]         12 B" in out and "\n  a  float32" in out
    assert out.endswith("2 tensors, 24 B on disk\n")


def test_reads_no_tensor_data(cli: Run, step_save: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("inspect mapped a data file")

    monkeypatch.setattr(MemoryMappedTensor, "_open", refuse)
    monkeypatch.setattr(MemoryMappedTensor, "from_filename", refuse)
    assert cli("inspect", step_save)[0] == 0
    assert cli("inspect", step_save, "--json")[0] == 0


def test_a_damaged_save_lists_every_problem(cli: Run, step_save: Path) -> None:
    (step_save / "obs" / "pixels.memmap").write_bytes(b"\0" * 8)  # truncated
    (step_save / "mask.memmap").unlink()  # missing
    with open(step_save / "action.memmap", "ab") as file:  # too long
        file.write(b"\0" * 4)
    code, out, _ = cli("inspect", step_save)
    assert code == 1
    assert "8 B !" in out and "missing !" in out and "36 B !" in out
    problems = out.split("the save is damaged: 3 problems\n")[1].splitlines()
    assert [line.split()[:2] for line in problems] == [
        ["obs.pixels", "file"],
        ["action", "file"],
        ["mask", "file"],
    ]
    assert "holds 8 bytes, the metadata says 576 (uint8[4, 3, 8, 6]): truncated" in problems[0]
    assert "too long" in problems[1] and "is missing" in problems[2]

    code, out, _ = cli("inspect", step_save, "--json")
    result = json.loads(out)
    assert code == 1 and result["ok"] is False
    assert [p["loc"] for p in result["problems"]] == [["obs", "pixels"], ["action"], ["mask"]]
    assert result["tree"]["entries"][2]["bytes_on_disk"] is None


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("{", "the metadata is not valid JSON"),
        ('{"format": "tensorclass-memmap", "version": 99}', "written in format version 99"),
        (None, "holds no meta.json"),
    ],
)
def test_damaged_metadata(cli: Run, step_save: Path, damage: str | None, message: str) -> None:
    meta = step_save / "obs" / "meta.json"
    if damage is None:
        meta.unlink()
    else:
        meta.write_text(damage)
    code, out, err = cli("inspect", step_save)
    assert code == 1 and err == ""
    assert out.startswith(f"{step_save}: the save is damaged\n") and message in out
    code, out, _ = cli("inspect", step_save, "--json")
    result = json.loads(out)
    assert code == 1 and result["ok"] is False and result["tree"] is None
    assert result["problems"][0]["type"] == "metadata" and message in result["problems"][0]["msg"]


def test_usage_errors(cli: Run, tmp_path: Path) -> None:
    code, out, err = cli("inspect", tmp_path / "nowhere")
    assert (code, out) == (2, "") and err.endswith("nowhere: no such file or directory\n")
    assert err.startswith("python -m tensorclass inspect: error: ")
    (tmp_path / "file.txt").write_text("hello")
    code, _, err = cli("inspect", tmp_path / "file.txt")
    assert code == 2 and "not a directory" in err
    code, _, err = cli("inspect", tmp_path)
    assert code == 2 and "not a tensorclass save (no meta.json in it)" in err
    (tmp_path / "meta.json").write_text('{"format": "something-else"}')
    code, _, err = cli("inspect", tmp_path)
    assert code == 2 and "is not 'tensorclass-memmap' metadata" in err
    assert cli("inspect")[0] == 2  # no path


def test_python_dash_m(step_save: Path) -> None:
    done = run_module("inspect", step_save)
    assert done.returncode == 0, done.stderr
    assert "pixels  uint8    [4, 3, 8, 6]     576 B" in done.stdout
