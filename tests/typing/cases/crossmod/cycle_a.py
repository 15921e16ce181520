# checkers: plugin
"""An import cycle (mypy analyses both modules together, over several passes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from typing_extensions import assert_type

from tensorclass.decorator import tensorclass

if TYPE_CHECKING:
    from crossmod.cycle_b import Beta


@tensorclass
class Alpha:
    a: torch.Tensor
    beta: Beta | None = None


def use(alpha: Alpha) -> None:
    assert_type(alpha["beta", "alpha", "a"], torch.Tensor | None)
    assert_type(alpha.reshape(-1), Alpha)
    alpha["beta", "b"]  # E: tensorclass-key
