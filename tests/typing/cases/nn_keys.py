# checkers: plugin
"""Module keys given with schema=X are checked against X's fields (nested classes followed)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from tensorclass import TensorClass, TensorDict, tensorclass
from tensorclass.nn import (
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    TensorDictSequential,
)


class Pixels(TensorClass):
    rgb: torch.Tensor


class Obs(TensorClass):
    pixels: Pixels
    state: torch.Tensor
    hidden: torch.Tensor | None = None
    action: torch.Tensor | None = None
    value: torch.Tensor | None = None
    info: TensorDict | None = None
    loc: torch.Tensor | None = None
    scale: torch.Tensor | None = None


def policy(state: torch.Tensor) -> torch.Tensor:
    return state * 2


# -- TensorDictModule ----------------------------------------------------------------------
ok = TensorDictModule(nn.Linear(3, 4), in_keys=["state"], out_keys=["hidden"], schema=Obs)
ok = TensorDictModule(nn.Linear(3, 4), ["state"], ["hidden"], schema=Obs)
ok = TensorDictModule(policy, in_keys="state", out_keys="action", schema=Obs)
ok = TensorDictModule(policy, in_keys=[("pixels", "rgb")], out_keys=["_"], schema=Obs)
ok = TensorDictModule(policy, in_keys=("pixels", "rgb"), out_keys=("value",), schema=Obs)
ok = TensorDictModule(policy, in_keys={"state": "state"}, out_keys=["action"], schema=Obs)
ok = TensorDictModule(policy, {("pixels", "rgb"): "state"}, ["action"], schema=Obs)
ok = TensorDictModule(policy, in_keys=[("info", "anything")], out_keys=["value"], schema=Obs)
ok = TensorDictModule(policy, in_keys=["undeclared"], out_keys=["elsewhere"])  # no schema

TensorDictModule(policy, in_keys=["stat"], out_keys=["action"], schema=Obs)  # E: tensorclass-key
TensorDictModule(policy, ["state"], ["actions"], schema=Obs)  # E: tensorclass-key
TensorDictModule(
    policy,
    in_keys=[
        "state",
        ("pixels", "rgba"),  # E: tensorclass-key
    ],
    out_keys=["action"],
    schema=Obs,
)
TensorDictModule(policy, in_keys={"stat": "x"}, out_keys=["action"], schema=Obs)  # E: tensorclass-key
TensorDictModule(policy, in_keys=[("state", "x")], out_keys="action", schema=Obs)  # E: tensorclass-key
TensorDictModule(policy, in_keys="pixel", out_keys="action", schema=Obs)  # E: tensorclass-key
TensorDictModule(policy, in_keys=["_"], out_keys="action", schema=Obs)  # E: tensorclass-key

# -- TensorDictSequential: inline modules without their own schema are checked --------------
seq = TensorDictSequential(
    TensorDictModule(policy, in_keys=["state"], out_keys=["hidden"]),
    TensorDictModule(policy, ["hidden"], ["action"]),
    schema=Obs,
)
seq = TensorDictSequential(
    TensorDictModule(policy, in_keys=["state"], out_keys=["hidden"]),
    TensorDictSequential(TensorDictModule(policy, ["hidden"], ["value"])),
    selected_out_keys=["value"],
    schema=Obs,
)
TensorDictSequential(
    TensorDictModule(policy, in_keys=["state"], out_keys=["hiden"]),  # E: tensorclass-key
    TensorDictModule(policy, ["hidden"], ["action"]),
    schema=Obs,
)
TensorDictSequential(
    TensorDictSequential(
        TensorDictModule(policy, ["hidden"], ["acton"]),  # E: tensorclass-key
    ),
    schema=Obs,
)
TensorDictSequential(
    TensorDictModule(policy, ["state"], ["value"]),
    selected_out_keys=["values"],  # E: tensorclass-key
    schema=Obs,
)
untyped: TensorDictSequential[TensorDict] = TensorDictSequential(
    TensorDictModule(policy, ["a"], ["b"])
)

# -- probabilistic modules: in_keys come first; a dict is {keyword: key} ----------------------
Normal = torch.distributions.Normal
dist = ProbabilisticTensorDictModule(["loc", "scale"], "action", distribution_class=Normal, schema=Obs)
dist = ProbabilisticTensorDictModule(in_keys={"loc": "loc"}, out_keys=["action"], distribution_class=Normal, schema=Obs)
ProbabilisticTensorDictModule(["loc", "scal"], "action", distribution_class=Normal, schema=Obs)  # E: tensorclass-key
# a dict maps the distribution's keyword names to keys (as tensordict): its values are checked
dist = ProbabilisticTensorDictModule({"loc": "state", "scale": ("pixels", "rgb")}, "action", distribution_class=Normal, schema=Obs)
dist = ProbabilisticTensorDictModule(in_keys={"not_a_field": "loc"}, out_keys="action", distribution_class=Normal, schema=Obs)
ProbabilisticTensorDictModule(in_keys={"loc": "stat"}, out_keys="action", distribution_class=Normal, schema=Obs)  # E: tensorclass-key
ProbabilisticTensorDictModule(
    in_keys={
        "loc": "loc",
        "scale": ("pixels", "rgba"),  # E: tensorclass-key
    },
    out_keys="action",
    distribution_class=Normal,
    schema=Obs,
)
ProbabilisticTensorDictModule(["loc"], out_keys="actions", distribution_class=Normal, schema=Obs)  # E: tensorclass-key
ProbabilisticTensorDictSequential(
    TensorDictModule(policy, ["state"], ["loc"]),
    ProbabilisticTensorDictModule(["loc", "scale"], "action", distribution_class=Normal),
    schema=Obs,
)
ProbabilisticTensorDictSequential(
    TensorDictModule(policy, ["state"], ["loc"]),
    ProbabilisticTensorDictModule(["loc", "sigma"], "action", distribution_class=Normal),  # E: tensorclass-key
    schema=Obs,
)
ProbabilisticTensorDictSequential(
    TensorDictModule(policy, ["state"], ["loc"]),
    ProbabilisticTensorDictModule({"loc": "loc", "sigma": "scale"}, "action", distribution_class=Normal),
    schema=Obs,
)
ProbabilisticTensorDictSequential(
    TensorDictModule(policy, ["state"], ["loc"]),
    ProbabilisticTensorDictModule({"loc": "loc", "scale": "sigma"}, "action", distribution_class=Normal),  # E: tensorclass-key
    schema=Obs,
)


# -- decorated schemas, optional nested classes, aliases and user subclasses -----------------------
@tensorclass
class Camera:
    rgb: torch.Tensor


@tensorclass
class Robot:
    camera: Camera | None
    joints: torch.Tensor
    command: torch.Tensor | None = None


class MyModule(TensorDictModule[Any]):
    """A user subclass keeps the keys check of its base."""


RobotAlias = Robot
ok_robot = TensorDictModule(policy, [("camera", "rgb")], ["command"], schema=Robot)
ok_robot = TensorDictModule(module=policy, in_keys=["joints"], out_keys=["command"], schema=Robot)
TensorDictModule(policy, [("camera", "rbg")], ["command"], schema=Robot)  # E: tensorclass-key
TensorDictModule(policy, ["joints"], [("command", "x")], schema=Robot)  # E: tensorclass-key
TensorDictModule(policy, ["joint"], ["command"], schema=RobotAlias)  # E: tensorclass-key
MyModule(policy, in_keys=["joint"], out_keys=["command"], schema=Robot)  # E: tensorclass-key
TensorDictSequential(MyModule(policy, ["joints"], ["comand"]), schema=Robot)  # E: tensorclass-key
keys_in_a_variable = ["not", "checked"]
TensorDictModule(policy, keys_in_a_variable, ["command"], schema=Robot)
TensorDictModule(policy, ["joints"], ["command"], schema=TensorDict)  # dynamic: not checked
