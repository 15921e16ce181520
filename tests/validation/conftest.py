"""Tensor classes shared by the validation tests."""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import torch
from pydantic import BaseModel
from torch import Tensor

from tensorclass import Spec, TensorClass


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Meta(BaseModel):
    source: str
    fps: int = 30


class Obs(TensorClass):
    """What the agent sees."""

    pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
    state: Annotated[Tensor, Spec("*B D", torch.float32)]


class Step(TensorClass):
    """One step of an episode."""

    obs: Obs
    action: Annotated[Tensor, Spec("*B A", (torch.float32, torch.float64))]
    mask: Annotated[Tensor, "*B H W"]
    reward: Tensor | None = None
    mode: Literal["train", "eval"] = "train"
    step: int = 0
    color: Color = Color.RED
    meta: Meta | None = None


def step_data(batch: tuple[int, ...] = (4,), h: int = 84) -> dict[str, object]:
    """A valid nested mapping for :class:`Step`."""
    return {
        "obs": {
            "pixels": torch.zeros(*batch, 3, h, 84, dtype=torch.uint8),
            "state": torch.zeros(*batch, 7),
        },
        "action": torch.zeros(*batch, 2),
        "mask": torch.ones(*batch, h, 84, dtype=torch.bool),
    }
