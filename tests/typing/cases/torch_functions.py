# checkers: plugin
"""torch.stack / torch.cat of tensor classes return the class (with the plugin)."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, TensorDict, tensorclass


class Step(TensorClass):
    obs: torch.Tensor


@tensorclass
class Frame:
    pixels: torch.Tensor


step = Step(torch.zeros(3, 2), batch_size=[3])
frame = Frame(torch.zeros(3, 4), batch_size=[3])
steps: list[Step] = [step, step]
td = TensorDict({"a": torch.zeros(3)}, batch_size=[3])

assert_type(torch.stack([step, step]), Step)
assert_type(torch.stack((step, step), dim=1), Step)
assert_type(torch.stack(steps, 0), Step)
assert_type(torch.cat([step, step]), Step)
assert_type(torch.cat((frame, frame), 0), Frame)
assert_type(torch.concat([frame]), Frame)
assert_type(torch.concatenate([step]), Step)
assert_type(torch.stack([td, td]), TensorDict)
assert_type(torch.stack([step, step], out=step), Step)
assert_type(torch.stack([frame, frame])[0], Frame)
assert_type(torch.stack([step, step])["obs"], torch.Tensor)

# tensors keep torch's own signature
assert_type(torch.stack([torch.zeros(2), torch.ones(2)]), torch.Tensor)
assert_type(torch.cat((torch.zeros(2),)), torch.Tensor)

# the result is the class, not Any
q: int = torch.stack([step, step])  # E: assignment
torch.stack([step, step], out=frame)  # E: arg-type
torch.stack([step, step], dim="0")  # E: arg-type
