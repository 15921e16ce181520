# checkers: plugin
"""@tensorclass with the plugin: every operation of the base-class spelling, same results."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from typing_extensions import Self, assert_type

import tensorclass
from tensorclass import TensorClass, TensorDict
from tensorclass import tensorclass as tc


@tc
class Pair:
    left: torch.Tensor
    right: torch.Tensor

    def doubled(self) -> Self:
        return self * 2


@tc
class SubPair(Pair):
    extra: torch.Tensor | None = None


@tc(frozen=True)
class FrozenPair:
    left: torch.Tensor


@tc
class FrozenPairChild(FrozenPair):
    """A subclass of a frozen class is frozen (as at run time): the plugin knows."""

    more: torch.Tensor | None = None


class BaseSpelled(Pair):
    """The base-class spelling under a decorated class: a tensor class with its own fields."""

    third: torch.Tensor | None = None


p = Pair(torch.zeros(4, 2), torch.ones(4), batch_size=[4], device="cpu", names=["n"])
sp = SubPair(torch.zeros(4, 2), torch.ones(4), torch.ones(4), batch_size=[4])
mask = p.right > 0

# -- indexing and every operation returning the class ----------------------------------------
assert_type(p[0], Pair)
assert_type(p[1:3], Pair)
assert_type(p[mask], Pair)
assert_type(p[None], Pair)
assert_type(p[..., 0], Pair)
assert_type(p[[0, 1]], Pair)
assert_type(p.reshape(2, 2), Pair)
assert_type(p.view(-1), Pair)
assert_type(p.flatten(), Pair)
assert_type(p.unflatten(0, [2, 2]), Pair)
assert_type(p.unsqueeze(0), Pair)
assert_type(p.squeeze(), Pair)
assert_type(p.permute(0), Pair)
assert_type(p.transpose(0, 0), Pair)
assert_type(p.expand(2, 4), Pair)
assert_type(p.repeat(2), Pair)
assert_type(p.flip(0), Pair)
assert_type(p.roll(1, 0), Pair)
assert_type(p.to("cpu"), Pair)
assert_type(p.to(torch.float64), Pair)
assert_type(p.cpu(), Pair)
assert_type(p.clone(), Pair)
assert_type(p.detach(), Pair)
assert_type(p.contiguous(), Pair)
assert_type(p.float(), Pair)
assert_type(p.apply(lambda x: x * 2), Pair)
assert_type(p.select("left"), Pair)
assert_type(p.exclude("right"), Pair)
assert_type(p.update({"left": torch.ones(4, 2)}), Pair)
assert_type(p.masked_fill(mask, 0.0), Pair)
assert_type(p.where(mask, 0.0), Pair)
assert_type(p.lock_().unlock_(), Pair)
assert_type(p + 1, Pair)
assert_type(p == p, Pair)
assert_type(p.sum(0), Pair)
assert_type(p.doubled(), Pair)
assert_type(p.unbind(0), tuple[Pair, ...])
assert_type(p.split(2), tuple[Pair, ...])
assert_type(p.chunk(2), tuple[Pair, ...])
assert_type(iter(p), Iterator[Pair])
assert_type(tensorclass.stack([p, p]), Pair)
assert_type(tensorclass.cat([p, p]), Pair)
assert_type(torch.stack([p, p]), Pair)
assert_type(p.batch_size, torch.Size)
assert_type(p.names, list[str | None])
assert_type(p.all(), bool)
assert_type(p.to_tensordict(), TensorDict)
assert_type(Pair.fields(), tuple[tensorclass.Field, ...])

# -- subclasses keep their class ------------------------------------------------------------
assert_type(sp[0], SubPair)
assert_type(sp.reshape(2, 2), SubPair)
assert_type(sp.doubled(), SubPair)
assert_type(sp.unbind(0), tuple[SubPair, ...])
assert_type(sp["extra"], torch.Tensor | None)
base_spelled = BaseSpelled(torch.zeros(2), torch.zeros(2), torch.zeros(2), batch_size=[2])
assert_type(base_spelled[0], BaseSpelled)
assert_type(base_spelled["third"], torch.Tensor | None)
as_tc: TensorClass = sp
as_pair: Pair = sp
BaseSpelled(torch.zeros(2), torch.zeros(2), third=1)  # E: arg-type
base_spelled["fourth"]  # E: tensorclass-key

# -- frozen is inherited ----------------------------------------------------------------------
frozen_child = FrozenPairChild(torch.zeros(2), batch_size=[2])
frozen_child.more = None  # E: misc
frozen_child.left = torch.zeros(2)  # E: misc

# -- arguments are checked ------------------------------------------------------------------
p.reshape("2")  # E: arg-type
p.to(3.5)  # E: call-overload
p.unsqueeze("0")  # E: arg-type
p.masked_fill(0, 0.0)  # E: arg-type
Pair(torch.zeros(2), torch.zeros(2), names=[1])  # E: list-item

# -- no Any leaks -----------------------------------------------------------------------------
q1: int = p.reshape(2, 2)  # E: assignment
q2: int = p[0]  # E: assignment
q3: int = p.to("cpu")  # E: assignment
q4: int = p.apply(lambda x: x)  # E: assignment
q5: int = p.unbind(0)  # E: assignment
q6: int = p.batch_size  # E: assignment
q7: int = p.left  # E: assignment
q8: int = p["left"]  # E: assignment
q9: int = p.get("right")  # E: assignment
q10: int = torch.cat([p, p])  # E: assignment
q11: int = sp.clone()  # E: assignment
q12: int = p.device  # E: assignment
