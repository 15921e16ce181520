"""The demo's models: a pipeline checked against the schema, and a vmapped ensemble.

Minibatches are indexed straight out of the memory-mapped dataset: indexing with a tensor
of row numbers reads only those rows from the files.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

import torch
from torch import Tensor, nn
from torch.nn import functional

from ..engine.params.extract import from_modules
from ..nn import TensorDictModule, TensorDictSequential
from ..tensordict import TensorDict
from .demo_data import CLASSES, ImageBatch
from .progress import Progress

__all__ = [
    "Pixels",
    "Plan",
    "TrainResult",
    "accuracy",
    "ensemble_logits",
    "logits_of",
    "make_model",
    "train",
    "train_ensemble",
]


class Pixels(nn.Module):
    """``uint8`` images to centred ``float32`` features, one row per image."""

    def forward(self, image: Tensor) -> Tensor:
        """Scale to ``[-0.5, 0.5]`` and flatten every dim but the first."""
        return (image.float() / 255 - 0.5).flatten(-3)


def make_model(size: int = 16, hidden: int = 64) -> TensorDictSequential:
    """Image to hidden features to logits, chained by key; ``schema=ImageBatch`` checks
    every key (and that each module's inputs exist) when the pipeline is built."""
    return TensorDictSequential(
        TensorDictModule(
            nn.Sequential(Pixels(), nn.Linear(3 * size * size, hidden), nn.ReLU()),
            in_keys=["image"],
            out_keys=["hidden"],
        ),
        TensorDictModule(nn.Linear(hidden, CLASSES), in_keys=["hidden"], out_keys=["logits"]),
        schema=ImageBatch,
    )


@dataclass(frozen=True)
class Plan:
    """What the demo's training runs share: minibatches of ``batch_size`` rows drawn by
    ``generator`` from the first ``train_rows`` rows of ``data``, ``steps`` times."""

    data: ImageBatch
    train_rows: int
    steps: int
    batch_size: int
    generator: torch.Generator

    def minibatch(self, *leading: int) -> ImageBatch:
        """Random training rows, shaped ``[*leading, batch_size]`` (read from the files)."""
        rows = torch.randint(self.train_rows, (*leading, self.batch_size), generator=self.generator)
        return self.data[rows]


class TrainResult(TypedDict):
    """The losses and timings of :func:`train`."""

    losses: list[float]
    seconds: float
    rows_per_second: float
    setup_seconds: float


def train(model: TensorDictSequential, plan: Plan, progress: Progress | None = None) -> TrainResult:
    """Train ``model`` on the minibatches of ``plan``.

    Returns the losses and timings (``losses``, ``seconds``, ``rows_per_second`` of the
    steps, and ``setup_seconds``: building the optimizer, which the first time in a process
    includes torch's one-time import of its compiler stack). ``progress`` advances a step
    at a time.
    """
    start = time.perf_counter()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    setup_seconds = time.perf_counter() - start
    losses = []
    start = time.perf_counter()
    for _ in range(plan.steps):
        batch = model(plan.minibatch())  # writes "hidden" and "logits"
        loss = functional.cross_entropy(logits_of(batch), batch.label)
        optimizer.zero_grad()
        torch.autograd.backward(loss)
        optimizer.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
    seconds = time.perf_counter() - start
    rate = plan.steps * plan.batch_size / max(seconds, 1e-9)
    return {
        "losses": losses,
        "seconds": seconds,
        "rows_per_second": rate,
        "setup_seconds": setup_seconds,
    }


def logits_of(batch: ImageBatch) -> Tensor:
    """The logits the model wrote into ``batch``."""
    if batch.logits is None:
        raise ValueError("the model wrote no logits")
    return batch.logits


def accuracy(logits: Tensor, labels: Tensor) -> float:
    """The fraction of rows whose largest logit is the label."""
    return (logits.argmax(-1) == labels).float().mean().item()


def train_ensemble(
    members: int, plan: Plan, size: int = 16, progress: Progress | None = None
) -> tuple[TensorDict, nn.Module]:
    """Train ``members`` models at once on the minibatches of ``plan``: parameters stacked
    by ``from_modules``, one ``torch.vmap`` call runs every member on its own minibatch.

    Returns the stacked parameters and the stateless (``meta``) model they go into.
    """
    models = [make_model(size) for _ in range(members)]
    params = from_modules(*models)  # new leaf parameters, stacked along dim 0
    base = copy.deepcopy(models[0]).to("meta")  # the structure only: holds no memory
    optimizer = torch.optim.Adam(list(params.values(True, True)), lr=3e-3)
    for _ in range(plan.steps):
        batch = plan.minibatch(members)
        logits = torch.vmap(_call(base))(params, batch.image, batch.label)
        loss = functional.cross_entropy(logits.flatten(0, 1), batch.label.flatten())
        optimizer.zero_grad()
        torch.autograd.backward(loss)
        optimizer.step()
        if progress is not None:
            progress.update(1)
    return params, base


def ensemble_logits(params: TensorDict, base: nn.Module, data: ImageBatch) -> Tensor:
    """Every member's logits for every row of ``data``: ``float32[members, rows, C]``."""
    with torch.no_grad():
        logits: Tensor = torch.vmap(_call(base), (0, None, None))(params, data.image, data.label)
        return logits


def _call(base: nn.Module) -> Callable[[TensorDict, Tensor, Tensor], Tensor]:
    """The function ``vmap`` maps: one member's parameters and a batch to logits."""

    def call(member: TensorDict, image: Tensor, label: Tensor) -> Tensor:
        with member.to_module(base):
            out: ImageBatch = base(ImageBatch(image=image, label=label, batch_size=label.shape))
            return logits_of(out)

    return call
