"""The demo's data: a typed batch schema and a synthetic image dataset on disk.

The dataset is allocated on disk from a one-row template (``expand`` copies nothing,
``memmap_like`` writes nothing) and filled chunk by chunk, so it never has to fit in
memory. Each class has a smooth colour pattern; an image is its class's pattern, faint under
strong noise and a random brightness shift, so a small model learns it to about 90%.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import torch
from torch import Tensor
from torch.nn import functional

from ..specs import Spec
from ..typed import TensorClass
from .progress import Progress, Stages

__all__ = ["CLASSES", "ImageBatch", "Progress", "make_dataset", "make_prototypes", "progress_bar"]

CLASSES = 10
"""The number of classes in the demo dataset."""


class ImageBatch(TensorClass):
    """A batch of labelled images, and what the demo model writes into it."""

    image: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
    label: Annotated[Tensor, Spec("*B", torch.int64)]
    hidden: Annotated[Tensor, Spec("*B D", torch.float32)] | None = None
    logits: Annotated[Tensor, Spec("*B C", torch.float32)] | None = None


class _Silent:
    def update(self, n: int) -> object:
        return None


@contextmanager
def progress_bar(
    total: int, description: str, enabled: bool | Progress = True
) -> Iterator[Progress]:
    """A text progress bar on stderr (:class:`~tensorclass.cli.progress.Stages`): ``True``
    draws one, ``False`` nothing, and a :class:`Progress` given is updated instead."""
    if not isinstance(enabled, bool):
        yield enabled
        return
    if not enabled:
        yield _Silent()
        return
    with Stages(1).stage(description, total, "rows") as bar:
        yield bar


def make_prototypes(size: int, generator: torch.Generator) -> Tensor:
    """One smooth pattern per class: ``float32[CLASSES, 3, size, size]`` in ``[0, 1]``."""
    coarse = torch.rand(CLASSES, 3, 4, 4, generator=generator)
    return functional.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)


def _images(labels: Tensor, prototypes: Tensor, generator: torch.Generator) -> Tensor:
    """Noisy images of the classes ``labels``: ``uint8[n, 3, size, size]``."""
    n = labels.shape[0]
    brightness = torch.randn(n, 1, 1, 1, generator=generator) * 20
    noise = torch.randn((n, *prototypes.shape[1:]), generator=generator) * 60
    pixels = 128 + (prototypes[labels] - 0.5) * 35 + brightness + noise  # a faint signal
    return pixels.clamp_(0, 255).to(torch.uint8)


def make_dataset(
    path: Path,
    rows: int,
    *,
    size: int = 16,
    seed: int = 0,
    chunk: int = 4096,
    progress: bool | Progress = True,
) -> tuple[ImageBatch, dict[str, Any]]:
    """Write ``rows`` labelled images to a memory-mapped :class:`ImageBatch` at ``path``.

    ``progress``: ``True`` draws a bar on stderr, a :class:`Progress` is updated per chunk.
    Returns the file-backed dataset and timings (``seconds``, ``rows_per_second``).
    """
    generator = torch.Generator().manual_seed(seed)
    prototypes = make_prototypes(size, generator)
    template = ImageBatch(
        image=torch.zeros(3, size, size, dtype=torch.uint8),
        label=torch.zeros((), dtype=torch.int64),
        batch_size=[],
    )
    start = time.perf_counter()
    dataset = template.expand(rows).memmap_like(path)  # sparse files: nothing written yet
    with progress_bar(rows, "writing dataset", progress) as bar:
        for begin in range(0, rows, chunk):
            end = min(begin + chunk, rows)
            labels = torch.randint(CLASSES, (end - begin,), generator=generator)
            images = _images(labels, prototypes, generator)
            dataset[begin:end] = ImageBatch(image=images, label=labels, batch_size=[end - begin])
            bar.update(end - begin)
    seconds = time.perf_counter() - start
    return dataset, {"seconds": seconds, "rows_per_second": rows / max(seconds, 1e-9)}
