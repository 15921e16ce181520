"""``python -m tensorclass demo`` end to end on tiny sizes: it learns, reports, cleans up."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tensorclass import load_memmap
from tensorclass.cli import demo, demo_train
from tensorclass.cli.demo import format_report, run_demo
from tensorclass.cli.demo_data import ImageBatch

from .conftest import Run, run_module

TINY = ("--rows", "600", "--steps", "40", "--members", "2")


def test_run_demo_learns_and_cleans_up() -> None:
    report = run_demo(rows=600, steps=40, members=3, batch_size=64, progress=False)
    assert report.rows == 600 and report.image_shape == (3, 16, 16)
    assert report.bytes_on_disk == 600 * (3 * 16 * 16 + 8) and report.files == 2
    assert report.validated == "ImageBatch, batch size [600]"
    assert report.refused == "image: expected dtype uint8, got float32"
    assert len(report.losses) == 40 and report.last_loss < report.first_loss
    assert report.test_rows == 60 and 0.0 <= report.accuracy <= 1.0
    assert len(report.member_accuracies) == 3 and 0.0 <= report.ensemble_accuracy <= 1.0
    assert report.accuracy > 0.2  # ten classes: better than chance after 40 steps
    assert not report.dataset.exists() and not report.dataset.parent.exists()
    assert report.kept is False


def test_report_contents() -> None:
    report = run_demo(rows=300, steps=12, members=2, progress=False)
    text = format_report(report)
    topics = [line.split()[0] for line in text.splitlines() if not line.startswith(" ")]
    assert topics == [
        "schema",
        "dataset",
        "validated",
        "training",
        "accuracy",
        "ensemble",
        "data",
        "total",
    ]
    assert "ImageBatch: image uint8[*B 3 H W], label int64[*B]; the model writes" in text
    assert "300 images of 3x16x16 uint8 in 10 classes: 227.3 KiB on disk in 2 files" in text
    assert "12 steps x 128 rows through TensorDictSequential(schema=ImageBatch)" in text
    assert re.search(r"loss \d\.\d{3} \(first 10 steps\) -> \d\.\d{3} \(last 10 steps\)", text)
    assert "2 models (from_modules + torch.vmap): members" in text
    assert "trained together, one vmap call a step: 12 steps x 2 x 128 rows in" in text
    assert report.ensemble_seconds > 0 and report.ensemble_rows_per_second > 0
    assert f"{report.dataset} (removed; --keep keeps it)" in text
    slow_start = format_report(dataclasses.replace(report, setup_seconds=2.0, total_seconds=5.0))
    assert "total      5.0 s, 2.0 s of it torch's one-time set-up of an optimizer" in slow_start
    warm = format_report(dataclasses.replace(report, setup_seconds=0.0, total_seconds=5.0))
    assert warm.endswith("total      5.0 s")


def test_keep_and_out(cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "new" / "place"
    code, text, _ = cli("demo", "--out", out, "--keep", *TINY)
    assert code == 0 and f"{out / 'dataset'} (kept)" in text
    saved = load_memmap(out / "dataset")
    assert type(saved) is ImageBatch and saved.batch_size == (600,)
    validate_line = f"python -m tensorclass validate {out / 'dataset'} --schema {demo.SCHEMA_PATH}"
    assert validate_line in text
    code, text, _ = cli("validate", out / "dataset", "--schema", demo.SCHEMA_PATH)
    assert code == 0 and text.startswith("OK:")
    code, _, err = cli("demo", "--out", out, *TINY)  # the dataset is still there
    assert code == 2 and "already exists" in err


def test_out_without_keep_removes_only_what_it_wrote(cli: Run, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    assert cli("demo", "--out", tmp_path, *TINY)[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    assert cli("demo", "--out", tmp_path / "fresh", *TINY)[0] == 0
    assert not (tmp_path / "fresh").exists()  # created by the demo, so removed


def test_cleans_up_when_a_step_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("training failed")

    monkeypatch.setattr(demo, "train", fail)
    with pytest.raises(RuntimeError, match="training failed"):
        run_demo(out=tmp_path / "out", rows=50, steps=2, progress=False)
    assert not (tmp_path / "out").exists()


def test_the_model_is_checked_against_the_schema() -> None:
    model = demo_train.make_model()
    assert model.in_keys == ["image"] and model.out_keys == ["hidden", "logits"]


def test_usage_errors(cli: Run, tmp_path: Path) -> None:
    assert cli("demo", "--rows", "0")[0] == 2
    assert cli("demo", "--rows", "1")[0] == 2
    (tmp_path / "file").write_text("")
    code, _, err = cli("demo", "--out", tmp_path / "file", *TINY)
    assert code == 2 and "not a directory" in err


def test_python_dash_m() -> None:
    done = run_module("demo", "--rows", "400", "--steps", "20", "--members", "2")
    assert done.returncode == 0, done.stderr
    assert "400 images of 3x16x16" in done.stdout and "ensemble" in done.stdout
    assert "writing dataset" in done.stderr  # the progress bar
    where = re.search(r"^data\s+(\S+) \(removed", done.stdout, re.MULTILINE)
    assert where is not None and not Path(where.group(1)).parent.exists()
