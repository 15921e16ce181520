# checkers: plugin
"""Keys of typed classes: reads get the field's type; unknown keys are tensorclass-key errors."""

from __future__ import annotations

from typing import Final, Generic, Literal, TypeVar

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, TensorDict, tensorclass


class Pixels(TensorClass):
    rgb: torch.Tensor
    depth_map: torch.Tensor | None = None


@tensorclass
class Observation:
    pixels: Pixels
    step: torch.Tensor
    note: str = ""
    extras: TensorDict | None = None


class Episode(TensorClass):
    obs: Observation
    reward: torch.Tensor
    done: bool = False


T = TypeVar("T")


class Tagged(TensorClass, Generic[T]):
    """Generic fields are expanded for the instance's type arguments."""

    data: torch.Tensor
    tag: T


pixels = Pixels(torch.zeros(2, 3), batch_size=[2])
obs = Observation(pixels, torch.arange(2), batch_size=[2])
ep = Episode(obs, torch.zeros(2), batch_size=[2])

# -- reads: the field's type ---------------------------------------------------------------
assert_type(ep["reward"], torch.Tensor)
assert_type(ep["done"], bool)
assert_type(ep["obs"], Observation)
assert_type(ep["obs", "step"], torch.Tensor)
assert_type(ep["obs", "pixels", "rgb"], torch.Tensor)
assert_type(ep["obs", ("pixels", "depth_map")], torch.Tensor | None)
assert_type(ep[("obs", "note")], str)
assert_type(obs["pixels"], Pixels)
assert_type(ep.get("reward"), torch.Tensor)
assert_type(ep.get(("obs", "pixels")), Pixels)
assert_type(ep.get("done", None), bool | None)
assert_type(pixels.get("depth_map", 0), torch.Tensor | int | None)
assert_type(ep.pop("reward"), torch.Tensor)
assert_type(ep.setdefault("reward", torch.zeros(2)), torch.Tensor)

tagged: Tagged[int] = Tagged(torch.zeros(2), 3, batch_size=[2])
assert_type(tagged["tag"], int)
assert_type(tagged.get("tag"), int)
tagged["tags"]  # E: tensorclass-key

# -- keys held in Literal-typed names are literal keys too ---------------------------------
REWARD: Final = "reward"
key: Literal["done"] = "done"
path: tuple[Literal["obs"], Literal["step"]] = ("obs", "step")
assert_type(ep[REWARD], torch.Tensor)
assert_type(ep[key], bool)
assert_type(ep[path], torch.Tensor)



def either_key(which: Literal["reward", "done"], typo: Literal["reward", "dones"]) -> None:
    """A union of literal keys reads the union of their fields; each member is checked."""
    assert_type(ep[which], torch.Tensor | bool)
    assert_type(ep.get(which, None), torch.Tensor | bool | None)
    ep.select(which)
    ep[typo]  # E: tensorclass-key
    ep.exclude(typo)  # E: tensorclass-key


# -- dynamic levels and non-literal keys stay untyped, and are not flagged ------------------
assert_type(ep["obs", "extras", "anything"], torch.Tensor)  # E: assert-type
anything = ep["obs", "extras", "anything", "deeper"]
name: str = "reward"
dynamic = ep[name]
td = TensorDict({"a": torch.zeros(2)}, batch_size=[2])
unknown_is_fine = td["not", "declared"]
also_fine = td.get("whatever")

# -- unknown keys --------------------------------------------------------------------------
ep["rewards"]  # E: tensorclass-key
ep["obs", "stp"]  # E: tensorclass-key
ep["obs", "pixels", "rgba"]  # E: tensorclass-key
ep["reward", "x"]  # E: tensorclass-key
ep["done", "x"]  # E: tensorclass-key
ep.get("rewards")  # E: tensorclass-key
ep.get(("obs", "nope"), None)  # E: tensorclass-key
ep.pop("nope")  # E: tensorclass-key
obs["pixel"]  # E: tensorclass-key
bad_key: Literal["rewrd"] = "rewrd"
ep[bad_key]  # E: tensorclass-key

# -- writes: unknown keys are flagged too ---------------------------------------------------
ep["reward"] = torch.ones(2)
ep["obs", "step"] = torch.ones(2)
ep.set("reward", torch.ones(2))
ep.set_(("obs", "pixels", "rgb"), torch.ones(2, 3))
ep["rewardz"] = torch.ones(2)  # E: tensorclass-key
ep["obs", "stepz"] = torch.ones(2)  # E: tensorclass-key
ep.set("nope", 1)  # E: tensorclass-key
ep.set_(("obs", "nope"), 1)  # E: tensorclass-key
del ep["nope"]  # E: tensorclass-key

# -- batch indices are not keys ------------------------------------------------------------
assert_type(ep[0], Episode)
assert_type(ep[0]["obs", "step"], torch.Tensor)
assert_type(ep[:, None], Episode)

# -- a key read is typed, so using it wrongly is an error -----------------------------------
wrong: str = ep["reward"]  # E: assignment

# -- the error code can be silenced like any other ------------------------------------------
ep["ignored"]  # type: ignore[tensorclass-key]
