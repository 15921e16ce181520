# checkers: plugin
"""torch functions of tensor classes (with the plugin): torch.stack / torch.cat return the
class; the other supported torch and torch.nn.functional functions accept it where torch
takes a tensor and return it where torch returns one."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from typing_extensions import assert_type

from tensorclass import TensorClass, TensorDict, TensorDictParams, ValuesIndices, tensorclass


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


# -- the other torch functions -------------------------------------------------------------
t = torch.zeros(3)
zero = torch.tensor(0.0)
# element-wise, activations, losses (torch._C._VariableFunctions, torch.nn.functional,
# torch._C._nn)
assert_type(torch.maximum(td, zero), TensorDict)
assert_type(torch.maximum(zero, step), Step)
assert_type(torch.exp(step), Step)
assert_type(torch.sigmoid_(step), Step)
assert_type(F.relu(td), TensorDict)
assert_type(F.relu(frame, inplace=True), Frame)
assert_type(F.gelu(step), Step)
assert_type(F.logsigmoid(step), Step)
assert_type(F.mse_loss(td, torch.zeros_like(td), reduction="none"), TensorDict)
assert_type(F.l1_loss(t, step), Step)
assert_type(F.dropout(step, 0.5), Step)
# a union parameter (Tensor | Number): either side
assert_type(torch.add(step, 1.0), Step)
assert_type(torch.sub(1.0, step), Step)
assert_type(torch.clamp(td, min=zero), TensorDict)
assert_type(torch.lerp(step, step, 0.5), Step)
# reductions, scans, shapes, factories
assert_type(torch.sum(td), TensorDict)
assert_type(torch.mean(step, 0, keepdim=True), Step)
assert_type(torch.cumsum(td, 0), TensorDict)
assert_type(F.log_softmax(td, 0), TensorDict)
assert_type(torch.softmax(step, 0), Step)
grid = TensorDict({"a": torch.zeros(2, 2)}, batch_size=[2, 2])
assert_type(torch.rot90(grid, 1, (0, 1)), TensorDict)
assert_type(torch.reshape(step, (3,)), Step)
assert_type(torch.masked_fill(step, t > 0, 0.0), Step)
assert_type(torch.zeros_like(step), Step)
assert_type(torch.full_like(frame, 1.0), Frame)
assert_type(torch.where(t > 0, step, 0.0), Step)
assert_type(torch.where(t > 0, 0.0, step), Step)
# tuple returns: each item is the class
assert_type(torch.unbind(step), tuple[Step, ...])
assert_type(torch.split(td, 1), tuple[TensorDict, ...])
assert_type(torch.chunk(frame, 2, 0), tuple[Frame, ...])
assert_type(torch.tensor_split(step, 3), tuple[Step, ...])
for item in torch.unbind(step):
    assert_type(item, Step)
# max/min/cummax with a dim: values and indices are instances
assert_type(torch.max(td), TensorDict)
assert_type(torch.max(step, t), Step)
assert_type(torch.max(step, 0), ValuesIndices[Step])
assert_type(torch.max(step, 0).values, Step)
assert_type(torch.cummin(td, 0).indices, TensorDict)
values, indices = torch.min(step, dim=0)
assert_type(indices, Step)
# what is not a tensor stays as torch declares it; all/any without dim are a bool
assert_type(torch.allclose(step, step), bool)
assert_type(torch.all(td), bool)
assert_type(torch.all(td, dim=None), bool)
assert_type(torch.any(step, None), bool)
assert_type(torch.any(step, 0), Step)
# TensorDictParams: accepted, the results are TensorDicts (as its operators)
params = TensorDictParams(td)
assert_type(F.relu(params), TensorDict)
assert_type(torch.maximum(params, zero), TensorDict)

# out=: an instance where the run time takes one (clamp, clip, where), a tensor elsewhere
assert_type(torch.clamp(td, 0.0, out=td), TensorDict)
assert_type(torch.where(t > 0, td, td, out=td), TensorDict)
torch.exp(td, out=td)  # E: arg-type
torch.cumsum(step, 0, out=step)  # E: arg-type
# masks, conditions and indices stay tensors
torch.where(td > 0, td, 0.0)  # E: call-overload
torch.masked_fill(step, step, 0.0)  # E: call-overload
torch.gather(td, 0, td)  # E: arg-type
# other argument types stay checked
torch.maximum(td, "0")  # E: arg-type
F.relu(step, inplace="yes")  # E: arg-type
r: int = torch.exp(step)  # E: assignment

# plain tensors keep torch's own types
assert_type(torch.maximum(t, zero), torch.Tensor)
assert_type(F.relu(t), torch.Tensor)
assert_type(torch.unbind(t), tuple[torch.Tensor, ...])
assert_type(torch.max(t, 0), torch.return_types.max)
assert_type(torch.all(t), torch.Tensor)
torch.exp(t, out=t)
