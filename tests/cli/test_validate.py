"""``python -m tensorclass validate``: exit 0 conforms, 1 problems, 2 usage errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from tensorclass.cli.validate import check, parse_batch_size

from .conftest import Run, run_module
from .schemas import Step

SCHEMA = "tests.cli.schemas:Step"


def test_conforming_save(cli: Run, step_save: Path) -> None:
    code, out, err = cli("validate", step_save, "--schema", SCHEMA)
    assert (code, err) == (0, "")
    assert out == f"OK: {step_save} conforms to {SCHEMA} (batch size [4], 4 tensors, 880 B)\n"
    assert cli("validate", step_save, "--schema", SCHEMA, "--batch-size", "4")[0] == 0


def test_every_problem_is_listed(cli: Run, bad_save: Path) -> None:
    code, out, err = cli("validate", bad_save, "--schema", SCHEMA)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"{bad_save} does not conform to {SCHEMA}: 5 problems"
    assert [line.split(None, 2) for line in lines[1:]] == [
        ["obs.pixels", "tensor_dtype", "expected dtype uint8, got float32"],
        ["action", "missing", "required by Step, not in the save"],
        [
            "mask",
            "tensor_binding",
            "H=8 from obs.pixels, 7 here (dim 1 of '*B H W', shape [4, 7, 6])",
        ],
        ["mode", "literal_error", "Input should be 'train' or 'eval'; got 'test'"],
        [
            "reward",
            "extra_forbidden",
            "not a field of Step; the save holds tensor(float32[4], device=cpu)",
        ],
    ]


def test_json(cli: Run, bad_save: Path, step_save: Path) -> None:
    code, out, _ = cli("validate", bad_save, "--schema", SCHEMA, "--json")
    result = json.loads(out)
    assert code == 1 and result["ok"] is False and result["damaged"] is False
    assert result["batch_size"] == [4] and result["tensors"] == 4
    by_loc = {tuple(p["loc"]): p for p in result["problems"]}
    assert by_loc[("obs", "pixels")]["ctx"] == {"expected": "uint8", "actual": "float32"}
    binding = by_loc[("mask",)]["ctx"]
    assert (binding["name"], binding["bound"], binding["bound_at"], binding["actual"]) == (
        "H",
        8,
        "obs.pixels",
        7,
    )
    assert by_loc[("action",)]["type"] == "missing"
    code, out, _ = cli("validate", step_save, "--schema", SCHEMA, "--json")
    assert code == 0 and json.loads(out)["ok"] is True and json.loads(out)["problems"] == []


def test_batch_size_option(cli: Run, step_save: Path) -> None:
    code, out, _ = cli("validate", step_save, "--schema", SCHEMA, "--batch-size", "2,4")
    assert code == 1 and "3 problems" in out
    assert (
        "obs     tensor_batch  the batch size [4] does not start with the enclosing one [2, 4]"
        in out
    )
    assert parse_batch_size("[16, 8]") == parse_batch_size("16x8") == [16, 8]
    assert parse_batch_size("") == parse_batch_size("[]") == []
    code, _, err = cli("validate", step_save, "--schema", SCHEMA, "--batch-size", "four")
    assert code == 2 and "not a batch size: 'four'" in err


def test_a_damaged_save(cli: Run, step_save: Path) -> None:
    (step_save / "obs" / "state.memmap").write_bytes(b"")
    (step_save / "mask.memmap").unlink()
    code, out, _ = cli("validate", step_save, "--schema", SCHEMA)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{step_save}: the save is damaged: 2 problems"
    assert lines[1].split()[:2] == ["obs.state", "file"] and "truncated" in lines[1]
    assert lines[2].split()[:2] == ["mask", "file"] and "missing" in lines[2]
    (step_save / "meta.json").write_text("{")
    code, out, _ = cli("validate", step_save, "--schema", SCHEMA, "--json")
    result = json.loads(out)
    assert code == 1 and result["damaged"] is True
    assert "not valid JSON" in result["problems"][0]["msg"]


def test_saved_stacks(cli: Run, stack_saves: tuple[Path, Path], tmp_path: Path) -> None:
    tagged, lazy = stack_saves
    assert cli("validate", tagged, "--schema", "tests.cli.schemas:Tagged")[0] == 0
    (tmp_path / "lazy_schema.py").write_text(
        "from typing import Annotated\nfrom torch import Tensor\nfrom tensorclass import TensorClass\n"
        "class A(TensorClass):\n    a: Annotated[Tensor, '*B']\n"
        "class B(TensorClass):\n    b: Tensor\n"
    )
    assert cli("validate", lazy, "--schema", f"{tmp_path / 'lazy_schema.py'}:A")[0] == 0
    code, out, _ = cli("validate", lazy, "--schema", f"{tmp_path / 'lazy_schema.py'}:B")
    assert code == 1 and "b  missing" in out and "a  extra_forbidden" in out


def test_schema_from_the_current_directory(
    cli: Run, step_save: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cwd_schema_mod.py").write_text("from tests.cli.schemas import Step as Mine\n")
    monkeypatch.chdir(tmp_path)
    assert cli("validate", step_save, "--schema", "cwd_schema_mod:Mine")[0] == 0
    assert cli("validate", step_save, "--schema", "cwd_schema_mod.py:Mine")[0] == 0


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            "no_such_module_xyz:Step",
            "cannot import the schema module 'no_such_module_xyz': "
            "ModuleNotFoundError: No module named 'no_such_module_xyz'",
        ),
        ("tests.cli.schemas:Nope", "'tests.cli.schemas' has no attribute 'Nope'"),
        ("tests.cli.schemas:NOT_A_CLASS", "int is not a tensor class with declared fields"),
        ("tensorclass:TensorDict", "TensorDict is not a tensor class with declared fields"),
        ("tests.cli.schemas", "expected 'module:Class'"),
        ("missing_file.py:Step", "no such file 'missing_file.py'"),
    ],
)
def test_unusable_schema(cli: Run, step_save: Path, schema: str, message: str) -> None:
    code, out, err = cli("validate", step_save, "--schema", schema)
    assert (code, out) == (2, "")
    assert err.startswith("python -m tensorclass validate: error: ") and message in err


def test_schema_module_that_fails(cli: Run, step_save: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken_schema.py"
    broken.write_text("raise RuntimeError('boom')\n")
    code, _, err = cli("validate", step_save, "--schema", f"{broken}:X")
    assert code == 2 and "RuntimeError: boom" in err


def test_usage_errors(cli: Run, step_save: Path, tmp_path: Path) -> None:
    code, _, err = cli("validate", tmp_path / "nowhere", "--schema", SCHEMA)
    assert code == 2 and "no such file or directory" in err
    code, _, err = cli("validate", tmp_path, "--schema", SCHEMA)
    assert code == 2 and "not a tensorclass save" in err
    code, _, err = cli("validate", step_save)
    assert code == 2 and "--schema" in err  # required


def test_check_in_process(step_save: Path, bad_save: Path) -> None:
    assert check(step_save, Step).ok
    result = check(bad_save, Step)
    assert not result.ok and not result.damaged and len(result.problems) == 5


def test_python_dash_m(bad_save: Path, step_save: Path) -> None:
    done = run_module("validate", bad_save, "--schema", SCHEMA)
    assert done.returncode == 1, done.stderr
    assert "5 problems" in done.stdout and "obs.pixels  tensor_dtype" in done.stdout
    done = run_module("validate", step_save, "--schema", "no_such_module_xyz:Step")
    assert done.returncode == 2 and "No module named 'no_such_module_xyz'" in done.stderr


def test_schema_file_named_like_a_module(cli: Run, step_save: Path, tmp_path: Path) -> None:
    shadow = tmp_path / "json.py"
    shadow.write_text("from tests.cli.schemas import Step\n")
    assert cli("validate", step_save, "--schema", f"{shadow}:Step")[0] == 0
    assert sys.modules["json"] is json  # the standard module is still the one imported


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (  # a bad spec string fails when the class is defined, i.e. on import
            "class Bad(TensorClass):\n    x: Annotated[Tensor, Spec('*B H-1')]\n",
            "'bad_schema': SchemaError: cannot read 'H-1' in the shape spec '*B H-1'",
        ),
        (  # a forward reference that cannot be resolved
            "class Bad(TensorClass):\n    x: 'Undefined'\n",
            "cannot use Bad as a schema: NameError: cannot resolve the annotation 'Undefined'",
        ),
        ("Bad = TensorClass\n", "TensorClass is not a tensor class with declared fields"),
    ],
)
def test_schemas_that_cannot_be_used(
    step_save: Path, tmp_path: Path, source: str, message: str
) -> None:
    header = "from typing import Annotated\nfrom torch import Tensor\nfrom tensorclass import Spec, TensorClass\n"
    (tmp_path / "bad_schema.py").write_text(header + source)
    done = run_module("validate", step_save, "--schema", "bad_schema:Bad", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("python -m tensorclass validate: error: ")
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1
    if "import" in done.stderr:  # the line of the schema module that failed
        assert done.stderr.endswith(f"(at {tmp_path / 'bad_schema.py'}, line 5)\n")


def test_nothing_recorded_in_a_save_is_imported(step_save: Path, tmp_path: Path) -> None:
    """inspect and validate never import the module a save records its class from."""
    (tmp_path / "recorded_mod.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('IMPORTED').write_text('')\n"
        "from tests.cli.schemas import Step as Recorded\n"
    )
    meta = json.loads((step_save / "meta.json").read_text())
    meta["class"] = "recorded_mod:Recorded"  # as if saved from recorded_mod (importable)
    (step_save / "meta.json").write_text(json.dumps(meta))
    done = run_module("inspect", step_save, cwd=tmp_path)
    assert done.returncode == 0 and "Recorded (recorded_mod:Recorded)" in done.stdout
    done = run_module("validate", step_save, "--schema", SCHEMA, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "IMPORTED").exists()
    assert (
        run_module(
            "validate", step_save, "--schema", "recorded_mod:Recorded", cwd=tmp_path
        ).returncode
        == 0
    )
    assert (tmp_path / "IMPORTED").exists()  # named by --schema: imported, as asked


def test_device_specs_are_checked_against_the_recorded_device(
    cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "device_schema.py").write_text(
        "from typing import Annotated\nfrom torch import Tensor\n"
        "from tensorclass import Spec, TensorClass\n"
        "class Inner(TensorClass):\n    y: Annotated[Tensor, Spec('*B', device='cuda')]\n"
        "class OnCuda(TensorClass):\n    x: Annotated[Tensor, Spec('*B', device='cuda')]\n"
        "    inner: Inner\n"
        "class OnCpu(TensorClass):\n    x: Annotated[Tensor, Spec('*B', device='cpu')]\n"
        "    inner: Inner\n"
    )
    monkeypatch.chdir(tmp_path)
    from tensorclass import TensorDict

    TensorDict({"x": torch.zeros(2), "inner": {"y": torch.zeros(2)}}, [2]).memmap("save")
    # saved from the CPU without a recorded device: files have no device, nothing to check
    assert cli("validate", "save", "--schema", "device_schema:OnCuda")[0] == 0
    for meta in (tmp_path / "save" / "meta.json", tmp_path / "save" / "inner" / "meta.json"):
        recorded = json.loads(meta.read_text())
        recorded["device"] = "cuda:1"  # as if saved from a GPU
        meta.write_text(json.dumps(recorded))
    code, out, _ = cli("validate", "save", "--schema", "device_schema:OnCuda")
    assert code == 0, out
    code, out, _ = cli("validate", "save", "--schema", "device_schema:OnCpu", "--json")
    assert code == 1
    (only,) = json.loads(out)["problems"]
    assert (only["loc"], only["type"]) == (["x"], "tensor_device")
    assert only["ctx"] == {"expected": "cpu", "actual": "cuda:1"}
    assert only["msg"] == "expected device cpu, got cuda:1 (recorded in the save)"
