# checkers: plugin
"""The other half of the import cycle: a decorated class used as a base across modules."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from crossmod.cycle_a import Alpha
from tensorclass import tensorclass


@tensorclass
class Beta:
    alpha: Alpha
    c: torch.Tensor


@tensorclass
class AlphaPlus(Alpha):
    extra: torch.Tensor | None = None


plus = AlphaPlus(torch.zeros(2), batch_size=[2])
assert_type(plus[0], AlphaPlus)
assert_type(plus["beta", "c"], torch.Tensor | None)
assert_type(plus["extra"], torch.Tensor | None)
beta = Beta(plus, torch.zeros(2), batch_size=[2])
plus["nope"]  # E: tensorclass-key


class AlphaSub(Alpha):
    """The base-class spelling under a decorated class of the other half of the cycle."""

    more: torch.Tensor | None = None


alpha_sub = AlphaSub(torch.zeros(2), None, torch.zeros(2), batch_size=[2])
assert_type(alpha_sub.reshape(2), AlphaSub)
assert_type(alpha_sub["beta", "alpha", "beta", "c"], torch.Tensor | None)
alpha_sub["mores"]  # E: tensorclass-key
