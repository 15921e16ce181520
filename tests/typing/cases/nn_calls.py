# checkers: plugin mypy pyright
"""A module built with schema=X is typed for X: calling it on an X returns an X."""

from __future__ import annotations

import torch
from torch import nn
from typing_extensions import assert_type

from tensorclass import TensorClass
from tensorclass.nn import TensorDictModule, TensorDictSequential


class Obs(TensorClass):
    state: torch.Tensor
    hidden: torch.Tensor | None = None


class Other(TensorClass):
    x: torch.Tensor


obs = Obs(torch.zeros(2, 3), batch_size=[2])
module = TensorDictModule(nn.Linear(3, 4), in_keys=["state"], out_keys=["hidden"], schema=Obs)
chain = TensorDictSequential(module, schema=Obs)
assert_type(module, TensorDictModule[Obs])
assert_type(module(obs), Obs)
assert_type(chain(obs), Obs)
module(Other(torch.zeros(2), batch_size=[2]))  # E: call-overload arg-type
