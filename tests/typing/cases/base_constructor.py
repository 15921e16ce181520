# checkers: plugin mypy pyright
"""class X(TensorClass): the constructor, field reads and writes, without any plugin."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, field


class Point(TensorClass):
    xy: torch.Tensor
    label: str = "p"
    weight: torch.Tensor | None = None
    tags: list[str] = field(default_factory=list)
    scale: float = field(default=1.0, kw_only=True)


class Labelled(Point):
    """Inherited fields come first in the constructor."""

    score: torch.Tensor | None = None


class Frozen(TensorClass, frozen=True):
    value: torch.Tensor


class Checked(TensorClass, validate=True, frozen=False):
    """Class keywords of the metaclass are accepted."""

    value: torch.Tensor


xy = torch.zeros(4, 2)

# -- valid constructions -------------------------------------------------------------------
p = Point(xy)
p = Point(xy, "q", None, ["a"], scale=2.0)
p = Point(xy=xy, label="q", batch_size=[4])
p = Point(xy, batch_size=torch.Size([4]), device="cpu", names=["n"])
p = Point(xy, batch_size=4, device=torch.device("cpu"))
p = Point(xy, batch_size=(4,), device=None, names=None)
child = Labelled(xy, "c", None, [], torch.zeros(4), batch_size=[4])
child = Labelled(xy, score=torch.ones(4), scale=0.5)
frozen = Frozen(torch.zeros(3), batch_size=[3])
checked = Checked(torch.zeros(3), batch_size=[3])

# -- invalid constructions -----------------------------------------------------------------
Point()  # E: call-arg
Point(xy, color="red")  # E: call-arg
Point(1.5)  # E: arg-type
Point(xy, label=3)  # E: arg-type
Point(xy, "q", None, [], 2.0)  # E: call-arg
Point(xy, batch_size="4")  # E: arg-type
Point(xy, device=1.5)  # E: arg-type
Point(xy, names=[1])  # E: list-item
Point(xy, [4])  # E: arg-type
Labelled(xy, score="high")  # E: arg-type
Point(xy, tags=[1, 2])  # E: list-item


class BadDefault(TensorClass):
    count: int = field(default="many")  # E: assignment


# -- field reads and writes ----------------------------------------------------------------
assert_type(p.xy, torch.Tensor)
assert_type(p.label, str)
assert_type(p.weight, torch.Tensor | None)
assert_type(p.tags, list[str])
assert_type(p.scale, float)
assert_type(child.score, torch.Tensor | None)
assert_type(child.xy, torch.Tensor)
p.xy = torch.ones(4, 2)
p.weight = None
p.label = "r"
p.label = 3  # E: assignment
p.xy = "tensor"  # E: assignment
frozen.value = torch.ones(3)  # E: misc
p.missing = 1  # E: attr-defined
missing = p.not_a_field  # E: attr-defined

# -- batch_size, device, names -------------------------------------------------------------
assert_type(p.batch_size, torch.Size)
assert_type(p.shape, torch.Size)
assert_type(p.device, torch.device | None)
assert_type(p.names, list[str | None])
p.batch_size = [4]
p.batch_size = torch.Size([4])
p.names = ["n"]
p.batch_size = "4"  # E: assignment
p.device = "cpu"  # E: arg-type misc
