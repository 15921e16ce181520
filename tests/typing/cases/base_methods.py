# checkers: plugin mypy pyright
"""Every operation returns the same class, and no Any leaks out of a precise method."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from typing_extensions import assert_type

import tensorclass
from tensorclass import TensorClass, TensorDict


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor


b = Batch(torch.zeros(4, 3), torch.arange(4), batch_size=[4])
mask = b.labels > 1

# -- indexing the batch: the same class ----------------------------------------------------
assert_type(b[0], Batch)
assert_type(b[1:3], Batch)
assert_type(b[None], Batch)
assert_type(b[...], Batch)
assert_type(b[mask], Batch)
assert_type(b[[0, 2]], Batch)
assert_type(b[range(2)], Batch)
assert_type(b[:, None], Batch)
assert_type(b[..., 0], Batch)
assert_type(b[torch.tensor([0, 1]), None], Batch)

# -- shape, device, dtype and leaf-wise operations -----------------------------------------
assert_type(b.reshape(2, 2), Batch)
assert_type(b.view(-1), Batch)
assert_type(b.flatten(), Batch)
assert_type(b.unflatten(0, [2, 2]), Batch)
assert_type(b.unsqueeze(0), Batch)
assert_type(b.squeeze(), Batch)
assert_type(b.permute(0), Batch)
assert_type(b.transpose(0, 0), Batch)
assert_type(b.expand(2, 4), Batch)
assert_type(b.repeat(2), Batch)
assert_type(b.flip(0), Batch)
assert_type(b.to("cpu"), Batch)
assert_type(b.to(torch.float64), Batch)
assert_type(b.cpu(), Batch)
assert_type(b.clone(), Batch)
assert_type(b.detach(), Batch)
assert_type(b.contiguous(), Batch)
assert_type(b.float(), Batch)
assert_type(b.apply(lambda t: t * 2), Batch)
assert_type(b.named_apply(lambda k, t: t), Batch)
assert_type(b.select("images"), Batch)
assert_type(b.exclude("labels"), Batch)
assert_type(b.update({"labels": torch.ones(4)}), Batch)
assert_type(b.set("labels", torch.ones(4)), Batch)
assert_type(b.masked_fill(mask, 0.0), Batch)
assert_type(b.where(mask, 0.0), Batch)
assert_type(b.zero_(), Batch)
assert_type(b.lock_().unlock_(), Batch)
assert_type(b + 1, Batch)
assert_type(b * b, Batch)
assert_type(-b, Batch)
assert_type(b == b, Batch)
assert_type(b.sum(0), Batch)
assert_type(b.mean(), Batch)
assert_type(b.exp(), Batch)
assert_type(b.clamp(0.0, 1.0), Batch)

# -- sequences of the class ----------------------------------------------------------------
assert_type(b.unbind(0), tuple[Batch, ...])
assert_type(b.split(2), tuple[Batch, ...])
assert_type(b.chunk(2), tuple[Batch, ...])
assert_type(iter(b), Iterator[Batch])
for item in b:
    assert_type(item, Batch)

# -- module-level stack / cat keep the class -----------------------------------------------
assert_type(tensorclass.stack([b, b]), Batch)
assert_type(tensorclass.cat([b, b], dim=0), Batch)
assert_type(tensorclass.stack((b, b), 1), Batch)

# -- other precise results -----------------------------------------------------------------
assert_type(b.batch_size, torch.Size)
assert_type(b.size(), torch.Size)
assert_type(b.size(0), int)
assert_type(b.numel(), int)
assert_type(b.ndim, int)
assert_type(b.batch_dims, int)
assert_type(len(b), int)
assert_type(b.all(), bool)
assert_type(b.any(0), Batch)
assert_type(b.is_empty(), bool)
assert_type(b.to_tensordict(), TensorDict)
assert_type(b.flatten_keys(), TensorDict)
assert_type(b.requires_grad, bool)

# -- a naive implementation leaks Any: each of these must be an error ----------------------
q: int = b.reshape(2, 2)  # E: assignment
r: int = b[0]  # E: assignment
s: int = b[1:3]  # E: assignment
t: str = b.unbind(0)[0]  # E: assignment
u: int = b.batch_size  # E: assignment
v: str = b.to_tensordict()  # E: assignment
w: str = b.size()  # E: assignment
x: str = b.all()  # E: assignment
y: str = tensorclass.stack([b, b])  # E: assignment
z: str = b.images  # E: assignment
b.reshape(2, 2).no_such_method()  # E: attr-defined
b[0].typo  # E: attr-defined
b.apply(lambda t: t.no_such_method())  # E[pyright]  # mypy: the general overload accepts it
assert_type(b.apply(lambda t, o: t + o, b), Batch)
assert_type(b.apply(lambda t: None), Batch)

# -- TensorDict: indexing keeps the class, keys are dynamic (Any) ---------------------------
td = TensorDict({"a": torch.zeros(4)}, batch_size=[4])
assert_type(td[0], TensorDict)
assert_type(td[1:], TensorDict)
assert_type(td.reshape(2, 2), TensorDict)
assert_type(tensorclass.stack([td, td]), TensorDict)
anything = td["any", "key"]
bad: int = td[0]  # E: assignment
