"""Tensor classes the CLI tests save and validate against (``tests.cli.schemas:Step``)."""

from __future__ import annotations

from typing import Annotated, Literal

import torch
from torch import Tensor

from tensorclass import Spec, TensorClass


class Obs(TensorClass):
    """What the agent sees."""

    pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
    state: Annotated[Tensor, Spec("*B D", torch.float32)]


class Step(TensorClass):
    """One step of an episode."""

    obs: Obs
    action: Annotated[Tensor, Spec("*B A", torch.float32)]
    mask: Annotated[Tensor, Spec("*B H W", torch.bool)]
    mode: Literal["train", "eval"] = "train"
    note: str = ""


class Tagged(TensorClass):
    """Values that differ along the batch: saved as a non-tensor stack."""

    x: Tensor
    tag: str = ""


def make_step(batch: int = 4, height: int = 8, width: int = 6) -> Step:
    """A conforming ``Step`` of batch size ``[batch]``."""
    return Step(
        obs=Obs(
            pixels=torch.zeros(batch, 3, height, width, dtype=torch.uint8),
            state=torch.zeros(batch, 5),
            batch_size=[batch],
        ),
        action=torch.zeros(batch, 2),
        mask=torch.ones(batch, height, width, dtype=torch.bool),
        mode="eval",
        note="run 1",
        batch_size=[batch],
    )


NOT_A_CLASS = 3
