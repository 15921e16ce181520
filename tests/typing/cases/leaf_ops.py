# checkers: plugin mypy pyright
"""Table entries (leaf_ops.py) are precise methods: each kind's signature, the receiver's class."""

from __future__ import annotations

from collections.abc import Callable

import torch
from typing_extensions import Self, assert_type

from tensorclass import TensorClass, TensorDict, lazy_stack


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor

    def normalised(self) -> Self:
        # inside the class, the table's methods return Self
        return self.sub(self.mean(0)).div(self.std(0, correction=0).add(1e-6)).float()


class Sub(Batch):
    extra: torch.Tensor | None = None


b = Batch(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
s = Sub(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
td = TensorDict({"a": torch.zeros(4)}, [4])

# -- each kind, on a tensor class, a subclass and TensorDict ---------------------------------
assert_type(b.exp(), Batch)
assert_type(b.exp_(), Batch)
assert_type(b.mul(2), Batch)
assert_type(b.mul_(b), Batch)
assert_type(b.add(b, alpha=0.5), Batch)
assert_type(b.sub_(1, alpha=2.0), Batch)
assert_type(b.double(), Batch)
assert_type(b.amax(), Batch)
assert_type(b.sum((0,), True, dtype=torch.float64), Batch)
assert_type(b.var(dim=[0], keepdim=True, correction=0), Batch)
assert_type(b.prod(0, keepdim=True), Batch)
assert_type(s.tanh().sigmoid_(), Sub)
assert_type(s.mean(0), Sub)
assert_type(s.normalised(), Sub)
assert_type(td.log().sqrt_(), TensorDict)
assert_type(td.pow(2).half(), TensorDict)
assert_type(td.std(), TensorDict)
exp_b: Batch = lazy_stack([b, b]).exp()  # a lazy stack too: see lazy_stacks.py

# -- element-wise maths and casts ------------------------------------------------------------
assert_type(b.sin().cos_(), Batch)
assert_type(b.maximum(b, default=0), Batch)
assert_type(s.sub(s, alpha=2.0, default="intersection"), Sub)
assert_type(b.rsub(1.0, alpha=0.5), Batch)
assert_type(b.addcmul(b, b, value=0.5), Batch)
assert_type(b.lerp(b, 0.25), Batch)
assert_type(b.nan_to_num(posinf=1.0), Batch)
assert_type(td.float16(cast_filter=lambda key, leaf: key == ("a",)), TensorDict)
assert_type(td.type(torch.int32), TensorDict)
assert_type(td.type("torch.IntTensor"), TensorDict)
assert_type(b.clamp(0.0, max=b), Batch)
assert_type(b.dtype, torch.dtype | None)
assert_type(b.bytes(), int)

# -- a method taken off the instance or the class keeps its signature ------------------------
bound = b.add
assert_type(bound(1, alpha=2.0), Batch)
unbound = Batch.sum
assert_type(unbound(b, 0), Batch)
as_callable: Callable[[], Batch] = b.neg
wrong_callable: Callable[[int], Batch] = b.neg  # E: assignment reportAssignmentType

# -- the signatures are checked --------------------------------------------------------------
b.exp(1)  # E: call-arg reportCallIssue
b.exp_(1)  # E: call-arg reportCallIssue
b.float(torch.float64)  # E: call-arg reportCallIssue
b.mul(2, alpha=2.0)  # E: call-arg reportCallIssue
b.add(1, 2.0)  # E: call-arg reportCallIssue
b.add(1, alpha="2")  # E: arg-type reportArgumentType
b.sum(keepdim=True, dtype="float64")  # E: arg-type call-overload reportArgumentType reportCallIssue
b.sum("0")  # E: arg-type reportArgumentType
b.prod("0")  # E: arg-type reportArgumentType
b.amax(0, correction=1)  # E: call-arg call-overload reportCallIssue
b.std(0, True, 1)  # E: call-arg call-overload reportCallIssue
b.mul()  # E: call-arg reportCallIssue
b.add(b, default="union")  # E: arg-type reportArgumentType
b.addcmul(b, b, 2.0)  # E: call-arg reportCallIssue
b.float16(lambda key, leaf: True)  # E: call-arg reportCallIssue
b.nan_to_num(nan="0")  # E: arg-type reportArgumentType

# -- no Any leaks ----------------------------------------------------------------------------
q1: int = b.exp()  # E: assignment reportAssignmentType
q2: int = b.add_(1)  # E: assignment reportAssignmentType
q3: int = b.sum()  # E: assignment reportAssignmentType
q4: int = td.bool()  # E: assignment reportAssignmentType
q5: int = b.prod  # E: assignment reportAssignmentType
