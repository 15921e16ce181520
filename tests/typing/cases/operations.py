# checkers: plugin mypy pyright
"""More operations keep the class (subclasses too), arguments are typed, and no Any leaks."""

from __future__ import annotations

import copy

import torch
from typing_extensions import Self, assert_type

import tensorclass
from tensorclass import TensorClass


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor

    def doubled(self) -> Self:
        return self * 2

    def halves(self) -> tuple[Self, ...]:
        return self.split(self.batch_size[0] // 2)


class Sub(Batch):
    extra: torch.Tensor | None = None


b = Batch(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
s = Sub(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
mask = b.labels > 1
t = torch.zeros(4)

# -- devices and dtypes ----------------------------------------------------------------------
assert_type(b.to("cpu", torch.float64), Batch)
assert_type(b.to(device="cpu"), Batch)
assert_type(b.to(dtype=torch.float16, non_blocking=True), Batch)
assert_type(b.to(torch.device("cpu"), non_blocking=True), Batch)
assert_type(b.to(0), Batch)
assert_type(b.to(t), Batch)
assert_type(b.to(s), Batch)
assert_type(b.cuda(), Batch)
assert_type(b.double().half().bfloat16().bool().int().long(), Batch)
b.to(3.5)  # E: call-overload reportCallIssue reportArgumentType
b.to("cpu", "float64")  # E: call-overload reportCallIssue reportArgumentType
b.to(dtype="float64")  # E: call-overload reportCallIssue reportArgumentType

# -- shapes: ints or one sequence of ints ----------------------------------------------------
assert_type(b.reshape([2, 2]), Batch)
assert_type(b.reshape((2, -1)), Batch)
assert_type(b.view(torch.Size([4])), Batch)
assert_type(b.expand(torch.Size([2, 4])), Batch)
assert_type(b.permute([0]), Batch)
assert_type(b.repeat((2,)), Batch)
assert_type(b.roll(1, 0), Batch)
assert_type(b.squeeze(0), Batch)
assert_type(b.expand_as(b), Batch)
assert_type(b.set_batch_size([4]), Batch)
b.reshape("2, 2")  # E: arg-type reportArgumentType
b.view("4")  # E: arg-type reportArgumentType
b.expand(2.0, 4)  # E: arg-type reportArgumentType
b.permute("0")  # E: arg-type reportArgumentType
b.set_batch_size("4")  # E: arg-type reportArgumentType

# -- leaf-wise, in place and reductions ------------------------------------------------------
assert_type(b.abs().sqrt().log().exp().sigmoid().tanh().neg(), Batch)
assert_type(b.empty(), Batch)
assert_type(b.apply_(lambda x: x), Batch)
assert_type(b.masked_fill_(mask, 1.0), Batch)
assert_type(b.add(b, alpha=2.0).sub(1).mul(2).div(2).pow(2), Batch)
assert_type(b.add_(1).sub_(1).mul_(2).div_(2).pow_(1), Batch)
assert_type(b.lerp_(b, 0.5), Batch)
assert_type(b.detach_(), Batch)
assert_type(b.requires_grad_(), Batch)
assert_type(b.share_memory_(), Batch)
assert_type(b.fill_("labels", 0), Batch)
assert_type(b.rename_key_("labels", "images"), Batch)
assert_type(b.del_("labels"), Batch)
assert_type(b.update_(b), Batch)
assert_type(b.filter_non_tensor_data(), Batch)
assert_type(b.amax(), Batch)
assert_type(b.amin(0), Batch)
assert_type(b.std(0), Batch)
assert_type(b.var(), Batch)
assert_type(b.prod(), Batch)
assert_type(b.validate(b), Batch)
assert_type(Batch.validate({"images": t, "labels": t}), Batch)
assert_type(copy.copy(b), Batch)
assert_type(copy.deepcopy(b), Batch)
b.fill_(0, 1.0)  # E: arg-type reportArgumentType

# -- operators -------------------------------------------------------------------------------
assert_type(1 + b, Batch)
assert_type(2 * b, Batch)
assert_type(1 - b, Batch)
assert_type(b / 2, Batch)
assert_type(b**2, Batch)
assert_type(b != b, Batch)
assert_type(b < 1, Batch)
assert_type(b >= b, Batch)
assert_type(b & b, Batch)
assert_type(b | b, Batch)
assert_type(~b, Batch)
assert_type(abs(b), Batch)
c = b
c += 1
c *= b
assert_type(c, Batch)

# -- a subclass keeps its own class; user methods returning Self too -------------------------
assert_type(s[0], Sub)
assert_type(s[1:], Sub)
assert_type(s.reshape(2, 2), Sub)
assert_type(s.to("cpu").clone(), Sub)
assert_type(s.unbind(0), tuple[Sub, ...])
assert_type(s + 1, Sub)
assert_type(s.doubled(), Sub)
assert_type(s.halves(), tuple[Sub, ...])
assert_type(b.doubled(), Batch)
assert_type(tensorclass.stack([s, s]), Sub)
as_batch: Batch = s.reshape(2, 2)
as_sub: Sub = b.reshape(2, 2)  # E: assignment reportAssignmentType

# -- no Any leaks: each result is precise, so a wrong annotation is an error -----------------
q1: int = b.view(-1)  # E: assignment reportAssignmentType
q2: int = b.to("cpu")  # E: assignment reportAssignmentType
q3: int = b.clone()  # E: assignment reportAssignmentType
q4: int = b.apply(lambda x: x)  # E: assignment reportAssignmentType
q5: int = b.unsqueeze(0)  # E: assignment reportAssignmentType
q6: int = b.squeeze()  # E: assignment reportAssignmentType
q7: int = b.permute(0)  # E: assignment reportAssignmentType
q8: int = b.expand(2, 4)  # E: assignment reportAssignmentType
q9: int = b.detach()  # E: assignment reportAssignmentType
q10: int = b.contiguous()  # E: assignment reportAssignmentType
q11: int = b.flatten()  # E: assignment reportAssignmentType
q12: int = b.unflatten(0, [2, 2])  # E: assignment reportAssignmentType
q13: int = b.transpose(0, 0)  # E: assignment reportAssignmentType
q14: int = b.repeat(2)  # E: assignment reportAssignmentType
q15: int = b.flip(0)  # E: assignment reportAssignmentType
q16: int = b.roll(1, 0)  # E: assignment reportAssignmentType
q17: int = b.masked_fill(mask, 0.0)  # E: assignment reportAssignmentType
q18: int = b.where(mask, 0.0)  # E: assignment reportAssignmentType
q19: int = b.select("images")  # E: assignment reportAssignmentType
q20: int = b.exclude("images")  # E: assignment reportAssignmentType
q21: int = b.update({"images": t})  # E: assignment reportAssignmentType
q22: int = b.cpu()  # E: assignment reportAssignmentType
q23: int = b.float()  # E: assignment reportAssignmentType
q24: int = b + 1  # E: assignment reportAssignmentType
q25: int = b.split(2)  # E: assignment reportAssignmentType
q26: int = b.chunk(2)[0]  # E: assignment reportAssignmentType
q27: int = b.shape  # E: assignment reportAssignmentType
q28: int = b.device  # E: assignment reportAssignmentType
q29: int = b.names  # E: assignment reportAssignmentType
q30b: str = b.numel()  # E: assignment reportAssignmentType
q31: int = tensorclass.cat([b, b])  # E: assignment reportAssignmentType
q32: int = b.fields()  # E: assignment reportAssignmentType
q33: int = b.memmap_like("/tmp/never-written")  # E: assignment reportAssignmentType
q34: int = b.keys()  # E: assignment reportAssignmentType
q35b: str = b.is_locked  # E: assignment reportAssignmentType
