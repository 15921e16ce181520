# checkers: plugin mypy pyright
"""@tensorclass: fields and constructor for every checker; the rest needs the mypy plugin.

Without the plugin (pyright, plain mypy) ``dataclass_transform`` on the decorator gives the
fields and a constructor of the fields, but the decorated class does not derive from
TensorClass for them: ``batch_size=`` and the methods are errors there. The markers
``E[mypy,pyright]`` show exactly that; with the plugin the same lines are clean.
"""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, field, tensorclass


@tensorclass
class Pair:
    left: torch.Tensor
    right: torch.Tensor
    name: str = "pair"
    extra: list[int] = field(default_factory=list)


@tensorclass(frozen=True)
class Const:
    value: torch.Tensor


@tensorclass(validate=True)
class Checked:
    value: torch.Tensor


left, right = torch.zeros(4, 2), torch.ones(4)

# -- every checker: the fields and a typed constructor of the fields ------------------------
pair = Pair(left, right)
pair = Pair(left=left, right=right, name="p", extra=[1])
assert_type(pair, Pair)
assert_type(pair.left, torch.Tensor)
assert_type(pair.name, str)
assert_type(pair.extra, list[int])
pair.right = torch.zeros(4)
Pair(left)  # E: call-arg
Pair(left, right, nome="p")  # E: call-arg
Pair(left, 1.5)  # E: arg-type
pair.name = 1  # E: assignment
const = Const(torch.zeros(2))
checked = Checked(torch.zeros(2))
const.value = torch.ones(2)  # E: misc

# -- the mypy plugin only: keyword-only batch_size/device/names and every method -----------
pair = Pair(left, right, batch_size=[4])  # E[mypy,pyright]: call-arg
pair = Pair(left, right, device="cpu", names=["n"])  # E[mypy,pyright]: call-arg
halves = pair.reshape(2, 2)  # E[mypy,pyright]: attr-defined
first = pair[0]  # E[mypy,pyright]: index
as_base: TensorClass = pair  # E[mypy,pyright]: assignment
