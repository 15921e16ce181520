# checkers: plugin mypy pyright
"""Reductions return what their arguments say: the receiver's class, a tensor (reduce=True),
a TensorDict (key_transform=), values and indices (max/min along a dim, cummax/cummin)."""

from __future__ import annotations

import torch
from typing_extensions import Self, assert_type

from tensorclass import TensorClass, TensorDict, ValuesIndices, lazy_stack


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor

    def best(self) -> Self:
        return self.max(0).values.softmax(0)


b = Batch(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
td = TensorDict({"a": torch.zeros(4)}, [4])

# -- the receiver's class --------------------------------------------------------------------
assert_type(b.sum(0), Batch)
assert_type(b.sum("feature", dtype=torch.float64), Batch)
assert_type(b.nanmean((0,), True), Batch)
assert_type(b.prod((0,)), Batch)
assert_type(b.std(correction=0), Batch)
assert_type(b.amax(-1, keepdim=True), Batch)
assert_type(b.quantile(0.5, 0), Batch)
assert_type(b.quantile(torch.tensor([0.1, 0.9])), Batch)
assert_type(b.max(), Batch)
assert_type(b.min(0, return_indices=False), Batch)
assert_type(b.logsumexp(), Batch)
assert_type(b.norm(dtype=torch.float64), Batch)
assert_type(b.cumsum(0, dtype=torch.float64), Batch)
assert_type(b.softmax(-1), Batch)
assert_type(b.log_softmax(0, torch.float64), Batch)
assert_type(b.cummax(0, return_indices=False), Batch)
assert_type(b.best(), Batch)
mean_b: Batch = lazy_stack([b, b]).mean(0)  # a lazy stack too: see lazy_stacks.py
assert_type(td.var(0), TensorDict)

# -- one tensor ------------------------------------------------------------------------------
assert_type(b.sum(reduce=True), torch.Tensor)
assert_type(b.mean(0, reduce=True, dtype=torch.float64), torch.Tensor)
assert_type(b.var(reduce=True, correction=0), torch.Tensor)
assert_type(b.amin(reduce=True), torch.Tensor)
assert_type(b.quantile(0.5, reduce=True), torch.Tensor)
assert_type(b.max(reduce=True), torch.Tensor)

# -- renamed keys ----------------------------------------------------------------------------
assert_type(b.mean(key_transform=lambda key: f"avg_{key}"), TensorDict)
assert_type(b.norm(key_transform=lambda key: key.upper()), TensorDict)

# -- values and indices ----------------------------------------------------------------------
assert_type(b.max(0), ValuesIndices[Batch])
assert_type(b.min(0).indices, Batch)
values, indices = b.cummin(0)
assert_type(values, Batch)
assert_type(b.max(0, reduce=True), ValuesIndices[torch.Tensor])
assert_type(b.cummax(0, reduce=True).values, torch.Tensor)

# -- read off the class ----------------------------------------------------------------------
assert_type(Batch.sum(b, 0), Batch)
assert_type(Batch.max(b, 0), ValuesIndices[Batch])

# -- the signatures are checked --------------------------------------------------------------
b.sum(dim="features")  # E: arg-type call-overload reportCallIssue reportArgumentType
b.max((0, 1))  # E: call-overload reportCallIssue reportArgumentType
b.cumsum()  # E: call-arg reportCallIssue
b.softmax((0,))  # E: arg-type reportArgumentType
b.amax(0, dtype=torch.float64)  # E: call-overload reportCallIssue
b.quantile()  # E: call-overload reportCallIssue
b.logsumexp(0, reduce=True)  # E: call-arg reportCallIssue

# -- no Any leaks ----------------------------------------------------------------------------
q1: int = b.sum(0)  # E: assignment reportAssignmentType
q2: int = b.max(0)  # E: assignment reportAssignmentType
q3: int = b.sum(reduce=True)  # E: assignment reportAssignmentType
