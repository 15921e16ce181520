# checkers: plugin
"""@tensorclass with the mypy plugin: the same class as ``class X(TensorClass)``."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

import tensorclass
from tensorclass import TensorClass, is_tensorclass
from tensorclass import tensorclass as tc_decorator


@tc_decorator
class Pair:
    left: torch.Tensor
    right: torch.Tensor
    name: str = "pair"

    def total(self) -> torch.Tensor:
        return self.left.sum() + self.right.sum()

    def halves(self) -> tuple[Pair, ...]:
        return self.split(self.batch_size[0] // 2)


@tensorclass.tensorclass(frozen=True, validate=True)
class Const:
    value: torch.Tensor


@tc_decorator
class Child(Pair):
    """A decorated subclass of a decorated class: fields accumulate."""

    score: torch.Tensor | None = None


@tc_decorator
class Already(TensorClass):
    """The decorator on a TensorClass subclass changes nothing."""

    x: torch.Tensor


left, right = torch.zeros(4, 2), torch.ones(4)

# -- the full constructor ------------------------------------------------------------------
pair = Pair(left, right, batch_size=[4])
pair = Pair(left, right, "p", batch_size=torch.Size([4]), device="cpu", names=["batch"])
Pair(left, right, [4])  # E: arg-type
Pair(left, right, batch_size="4")  # E: arg-type
Pair(left, right, device=2.5)  # E: arg-type
Pair(left)  # E: call-arg
Pair(left, right, colour="red")  # E: call-arg
child = Child(left, right, "c", torch.zeros(4), batch_size=[4])
Child(left, right, score="high")  # E: arg-type
const = Const(torch.zeros(3), batch_size=[3])
const.value = torch.ones(3)  # E: misc
already = Already(torch.zeros(2), batch_size=[2])

# -- a TensorClass: methods return the class, attributes are typed -------------------------
assert_type(pair.reshape(2, 2), Pair)
assert_type(pair[0], Pair)
assert_type(pair[1:], Pair)
assert_type(pair.to("cpu").clone().detach(), Pair)
assert_type(pair.unbind(0), tuple[Pair, ...])
assert_type(pair.halves(), tuple[Pair, ...])
assert_type(pair.total(), torch.Tensor)
assert_type(child.reshape(2, 2), Child)
assert_type(child.score, torch.Tensor | None)
assert_type(const[0], Const)
assert_type(already[0], Already)
assert_type(pair.batch_size, torch.Size)
assert_type(pair.device, torch.device | None)
assert_type(tensorclass.stack([pair, pair]), Pair)
as_base: TensorClass = pair
as_child_base: Pair = child
assert_type(is_tensorclass(pair), bool)
q: int = pair.reshape(2, 2)  # E: assignment
pair.no_such_method()  # E: attr-defined
pair.batch_size = "4"  # E: assignment
pair.device = "cpu"  # E: arg-type
