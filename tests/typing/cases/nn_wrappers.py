# checkers: plugin
"""The keyed modules of issue 15 check their keys against schema=X like TensorDictModule."""

from __future__ import annotations

import torch

from tensorclass import TensorClass, as_tensordict_module
from tensorclass.nn import (
    TensorClassModuleBase,
    TensorDictModule,
    TensorDictSequential,
    WrapModule,
)


class Inner(TensorClass):
    x: torch.Tensor


class Obs(TensorClass):
    inner: Inner
    y: torch.Tensor | None = None


def same(td: Obs) -> Obs:
    return td


ok = WrapModule(same, in_keys=[("inner", "x")], out_keys=["y"], schema=Obs)
ok = WrapModule(same, in_keys=["anything"], out_keys=["at_all"])  # no schema
WrapModule(same, in_keys=[("inner", "z")], out_keys=["y"], schema=Obs)  # E: tensorclass-key
WrapModule(same, in_keys=["y"], out_keys=["why"], schema=Obs)  # E: tensorclass-key

seq = TensorDictSequential(
    TensorDictModule(lambda x: x, [("inner", "x")], ["y"]),
    WrapModule(same, in_keys=["wy"], out_keys=["y"]),  # E: tensorclass-key
    schema=Obs,
)

double = as_tensordict_module(in_keys=[("inner", "x")], out_keys=["y"], schema=Obs)
as_tensordict_module(in_keys=["x"], out_keys=["y"], schema=Obs)  # E: tensorclass-key


class Result(TensorClass):
    total: torch.Tensor


class Total(TensorClassModuleBase[Obs, Result]):
    def forward(self, x: Obs) -> Result:
        return Result(total=x.inner.x.sum(-1), batch_size=x.batch_size)


result: Result = Total()(Obs(inner=Inner(x=torch.zeros(2))))
wrong: Obs = Total()(Obs(inner=Inner(x=torch.zeros(2))))  # E: assignment
