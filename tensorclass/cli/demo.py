"""``python -m tensorclass demo``: the whole idea on a synthetic image dataset.

1. A typed batch schema with specs (:class:`~tensorclass.cli.demo_data.ImageBatch`).
2. A dataset of labelled ``uint8[3, 16, 16]`` images written to disk as a memory-mapped
   ``ImageBatch`` (``memmap_like``, filled in chunks, with a progress bar).
3. Loaded back with the safe loader and validated against the schema.
4. A small model trained through a ``TensorDictSequential(schema=ImageBatch)``, with
   minibatches indexed straight from the memory-mapped files.
5. An ensemble trained and evaluated in one ``torch.vmap`` call over parameters stacked with
   ``from_modules`` (and put in place with ``to_module``).
6. A report: sizes, throughput, loss, accuracy, and where the data lives.

The data goes to ``--out DIR`` (``DIR/dataset``) or a temporary directory, and is removed at
the end unless ``--keep`` is given. Every step is a function, so tests run it on tiny sizes.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from pydantic import ValidationError

from ..engine.storage.memmap.metadata import read_metadata
from ..loading import load_memmap
from ..validation import validate
from .common import EXIT_OK, UsageError
from .demo_data import CLASSES, ImageBatch, make_dataset
from .demo_train import (
    Plan,
    accuracy,
    ensemble_logits,
    logits_of,
    make_model,
    train,
    train_ensemble,
)
from .format import format_bytes, format_shape
from .progress import Stages, seconds_since_process_start

__all__ = ["DemoReport", "format_report", "run", "run_demo"]

SCHEMA_PATH = f"{ImageBatch.__module__}:{ImageBatch.__qualname__}"


@dataclass
class DemoReport:
    """What :func:`run_demo` measured (sizes in bytes, times in seconds)."""

    dataset: Path
    rows: int
    image_shape: tuple[int, ...]
    bytes_on_disk: int
    files: int
    write_seconds: float
    write_rows_per_second: float
    validated: str
    refused: str
    steps: int
    batch_size: int
    train_seconds: float
    train_rows_per_second: float
    losses: list[float]
    test_rows: int
    accuracy: float
    member_accuracies: list[float]
    ensemble_accuracy: float
    ensemble_seconds: float
    ensemble_rows_per_second: float
    kept: bool
    setup_seconds: float = 0.0
    startup_seconds: float = 0.0
    total_seconds: float = 0.0

    @property
    def first_loss(self) -> float:
        """The mean loss of the first 10 steps."""
        head = self.losses[:10]
        return sum(head) / len(head)

    @property
    def last_loss(self) -> float:
        """The mean loss of the last 10 steps."""
        tail = self.losses[-10:]
        return sum(tail) / len(tail)


def run(args: argparse.Namespace) -> int:
    """Run the demo with the command's options and print the report (progress goes to
    stderr as it runs; the total counts the process's start-up, torch's import included)."""
    startup = seconds_since_process_start()
    report = run_demo(
        out=args.out,
        rows=args.rows,
        steps=args.steps,
        members=args.members,
        seed=args.seed,
        keep=args.keep,
        startup_seconds=startup or 0.0,
    )
    print(format_report(report))
    return EXIT_OK


def run_demo(
    *,
    out: Path | None = None,
    rows: int = 32_768,
    steps: int = 300,
    members: int = 4,
    seed: int = 0,
    keep: bool = False,
    batch_size: int = 128,
    size: int = 16,
    progress: bool = True,
    startup_seconds: float = 0.0,
) -> DemoReport:
    """Run every step of the demo and return the report (see the module documentation).

    With ``progress``, each stage writes a line to stderr as it ends (a bar while it runs,
    on a terminal). ``startup_seconds`` is what the process spent before this call (it is
    reported as the first stage and counted in the total).

    ``out`` is the directory that receives ``dataset/`` (created if needed; a ``dataset``
    already there is a :class:`~tensorclass.cli.common.UsageError`). Unless ``keep``, what
    the demo wrote is removed at the end, also when a step fails.
    """
    start = time.perf_counter()
    if rows < 2:
        raise UsageError("the demo needs at least 2 rows (one to train on, one to test)")
    if out is not None and out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    made_dir = out is None or not out.exists()
    root = Path(tempfile.mkdtemp(prefix="tensorclass-demo-")) if out is None else out.resolve()
    path = root / "dataset"
    if path.exists():
        raise UsageError(f"{path} already exists: remove it or choose another --out")
    root.mkdir(parents=True, exist_ok=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: more threads only contend for busy cores
    stages = Stages(5 if startup_seconds else 4, enabled=progress)
    if startup_seconds:
        stages.done("start-up", f"python, torch and tensorclass loaded in {startup_seconds:.2f} s")
    try:
        report = _steps(path, rows, steps, members, seed, batch_size, size, stages)
    finally:
        torch.set_num_threads(threads)
        if not keep:
            shutil.rmtree(root if made_dir else path, ignore_errors=True)
    report.kept = keep
    report.startup_seconds = startup_seconds
    report.total_seconds = startup_seconds + time.perf_counter() - start
    return report


def _steps(
    path: Path,
    rows: int,
    steps: int,
    members: int,
    seed: int,
    batch_size: int,
    size: int,
    stages: Stages,
) -> DemoReport:
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # the models' initial parameters
    with stages.stage("writing dataset", rows, "rows") as bar:
        _, written = make_dataset(path, rows, size=size, seed=seed, progress=bar)
    info = read_metadata(path)  # what is on disk, from the metadata alone

    with stages.stage("loading and validating"):
        plain = load_memmap(path, classes="tensordict")  # safe: JSON and raw files only
        data = validate(plain, ImageBatch)  # every key, dtype, shape and symbolic dim checked
        validated = f"{type(data).__name__}, batch size {format_shape(data.batch_size)}"
        refused = _refused(data)

    test_rows = max(1, min(rows // 10, 4096))
    train_rows = rows - test_rows
    test = data[torch.arange(train_rows, rows)]  # rows read from the files into memory
    model = make_model(size)
    plan = Plan(data, train_rows, steps, batch_size, generator)
    with stages.stage("training", steps, "steps") as bar:
        trained = train(model, plan, progress=bar)
        with torch.no_grad():
            single = accuracy(logits_of(model(test)), test.label)
    with stages.stage(f"training an ensemble of {members}", steps, "steps") as bar:
        ensemble_start = time.perf_counter()
        params, base = train_ensemble(members, plan, progress=bar)
        ensemble_seconds = time.perf_counter() - ensemble_start
        logits = ensemble_logits(params, base, test)
        ensemble = accuracy(logits.softmax(-1).mean(0), test.label)
    return DemoReport(
        dataset=path,
        rows=rows,
        image_shape=tuple(data.image.shape[1:]),
        bytes_on_disk=info.total_bytes,
        files=len(info.entries),
        write_seconds=written["seconds"],
        write_rows_per_second=written["rows_per_second"],
        validated=validated,
        refused=refused,
        steps=steps,
        batch_size=batch_size,
        train_seconds=trained["seconds"],
        train_rows_per_second=trained["rows_per_second"],
        losses=trained["losses"],
        test_rows=test_rows,
        accuracy=single,
        member_accuracies=[accuracy(member, test.label) for member in logits],
        ensemble_accuracy=ensemble,
        ensemble_seconds=ensemble_seconds,
        ensemble_rows_per_second=steps * members * batch_size / max(ensemble_seconds, 1e-9),
        kept=False,
        setup_seconds=trained["setup_seconds"],
    )


def _refused(data: ImageBatch) -> str:
    """What validation says about float images: the first problem's location and message."""
    sample = {"image": data.image[:4].float(), "label": data.label[:4]}
    try:
        validate(sample, ImageBatch)
    except ValidationError as err:
        error = err.errors()[0]
        return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"
    return "nothing (unexpected)"


def _schema_line() -> str:
    """The demo schema in one line: each field with its dtype and shape spec."""
    given: list[str] = []
    written: list[str] = []
    for spec_field in ImageBatch.fields():
        spec = spec_field.spec
        assert spec is not None and spec.dtype is not None
        text = f"{spec_field.name} {str(spec.dtype[0]).removeprefix('torch.')}[{spec.shape}]"
        (written if spec_field.optional else given).append(text)
    return f"{ImageBatch.__name__}: {', '.join(given)}; the model writes {', '.join(written)}"


def format_report(report: DemoReport) -> str:
    """The report ``demo`` prints: one topic a line, in the order the steps ran."""
    members = report.member_accuracies
    shape = "x".join(map(str, report.image_shape))
    rows = [
        ("schema", _schema_line()),
        (
            "dataset",
            f"{report.rows:,} images of {shape} uint8 in {CLASSES} classes: "
            f"{format_bytes(report.bytes_on_disk)} on disk in {report.files} files",
        ),
        (
            "",
            f"written in {report.write_seconds:.2f} s ({report.write_rows_per_second:,.0f} "
            "rows/s) by memmap_like + chunked writes",
        ),
        ("validated", f"OK: {report.validated} (loaded with load_memmap, nothing unpickled)"),
        ("", f"float images would be refused: {report.refused}"),
        (
            "training",
            f"{report.steps} steps x {report.batch_size} rows through "
            f"TensorDictSequential(schema=ImageBatch): {report.train_seconds:.2f} s, "
            f"{report.train_rows_per_second:,.0f} rows/s",
        ),
        (
            "",
            f"loss {report.first_loss:.3f} (first 10 steps) -> {report.last_loss:.3f} "
            "(last 10 steps)",
        ),
        ("accuracy", f"{report.accuracy:.1%} on {report.test_rows:,} held-out rows"),
        (
            "ensemble",
            f"{len(members)} models (from_modules + torch.vmap): members "
            f"{min(members):.1%} to {max(members):.1%}, ensemble {report.ensemble_accuracy:.1%}",
        ),
        (
            "",
            f"trained together, one vmap call a step: {report.steps} steps x {len(members)} "
            f"x {report.batch_size} rows in {report.ensemble_seconds:.2f} s, "
            f"{report.ensemble_rows_per_second:,.0f} rows/s",
        ),
    ]
    if report.kept:
        rows += [
            ("data", f"{report.dataset} (kept)"),
            ("", f"python -m tensorclass inspect {report.dataset}"),
            ("", f"python -m tensorclass validate {report.dataset} --schema {SCHEMA_PATH}"),
        ]
    else:
        rows.append(("data", f"{report.dataset} (removed; --keep keeps it)"))
    total = f"{report.total_seconds:.1f} s"
    if report.startup_seconds:
        total += f", {report.startup_seconds:.1f} s of it start-up (python, torch, tensorclass)"
    if report.setup_seconds >= 0.1:  # only the first optimizer of a process pays it
        total += f", {report.setup_seconds:.1f} s of it torch's one-time set-up of an optimizer"
    rows.append(("total", total))
    width = max(len(topic) for topic, _ in rows)
    return "\n".join(f"{topic:<{width}}  {text}" for topic, text in rows)
