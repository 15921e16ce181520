# checkers: plugin mypy pyright
"""Inherited fields are part of the child's constructor, for both spellings and every checker.

No ``from __future__ import annotations`` here: annotations are evaluated as written.
"""

from typing import ClassVar, Generic, Optional, TypeVar

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, field, tensorclass


# -- the base-class spelling, three levels -------------------------------------------------
class Base(TensorClass):
    a: torch.Tensor
    opt: Optional[torch.Tensor] = None  # noqa: UP045 (the typing.Optional spelling on purpose)
    count: int = 0
    LIMIT: ClassVar[int] = 3  # a class variable, not a field


class Middle(Base):
    b: "torch.Tensor | None" = None


class Leaf(Middle):
    c: list[int] = field(default_factory=list)
    tag: str = field(default="leaf", kw_only=True)


t = torch.zeros(3)
leaf = Leaf(t, t, 1, t, [1], tag="x", batch_size=[3], device="cpu", names=["n"])
leaf = Leaf(a=t, c=[2], batch_size=3)
leaf = Leaf(t)
assert_type(leaf.a, torch.Tensor)
assert_type(leaf.opt, Optional[torch.Tensor])  # noqa: UP045
assert_type(leaf.b, "torch.Tensor | None")
assert_type(leaf.c, list[int])
assert_type(leaf.tag, str)
assert_type(leaf[0], Leaf)
assert_type(leaf.reshape(3), Leaf)
assert_type(leaf.unbind(0), tuple[Leaf, ...])
as_base: Base = leaf
assert_type(Base.LIMIT, int)
Leaf()  # E: call-arg reportCallIssue
Leaf(t, count="1")  # E: arg-type reportArgumentType
Leaf(t, b=1)  # E: arg-type reportArgumentType
Leaf(t, c=["x"])  # E: list-item reportArgumentType
Leaf(t, tag=1)  # E: arg-type reportArgumentType
Leaf(t, t, 1, t, [1], "x")  # E: call-arg reportCallIssue
Leaf(t, LIMIT=4)  # E: call-arg reportCallIssue
Leaf(t, d=1)  # E: call-arg reportCallIssue
wrong: Middle = Base(t)  # E: assignment reportAssignmentType


# -- the decorator spelling: the fields, for every checker ----------------------------------
@tensorclass
class DBase:
    a: torch.Tensor
    opt: Optional[torch.Tensor] = None  # noqa: UP045


@tensorclass
class DChild(DBase):
    c: torch.Tensor | None = None


dchild = DChild(t, None, t)
dchild = DChild(a=t, c=t)
assert_type(dchild.opt, Optional[torch.Tensor])  # noqa: UP045
assert_type(dchild.c, Optional[torch.Tensor])  # noqa: UP045
DChild()  # E: call-arg reportCallIssue
DChild(t, c=1)  # E: arg-type reportArgumentType
DChild(t, opt="x")  # E: arg-type reportArgumentType


# A subclass of a decorated class without the decorator is a tensor class at run time; only
# the plugin sees its own fields (without it, the parent's constructor is inherited as is).
class Mixed(DBase):
    d: torch.Tensor | None = None


Mixed(t, None, t)  # E[mypy,pyright]: call-arg reportCallIssue
Mixed(t, d=t)  # E[mypy,pyright]: call-arg reportCallIssue


# -- generic fields --------------------------------------------------------------------------
T = TypeVar("T")


class Tagged(TensorClass, Generic[T]):
    data: torch.Tensor
    meta: T


class IntTagged(Tagged[int]):
    extra: torch.Tensor | None = None


tagged = Tagged(t, "s", batch_size=[3])
assert_type(tagged, Tagged[str])
assert_type(tagged.meta, str)
assert_type(tagged[0], Tagged[str])
int_tagged = IntTagged(t, 3, t)
assert_type(int_tagged.meta, int)
IntTagged(t, "3")  # E: arg-type reportArgumentType
explicit: Tagged[int] = Tagged(t, "s")  # E: arg-type reportAssignmentType


# -- frozen classes: a subclass is frozen at run time; spell it out for every checker --------
class Frozen(TensorClass, frozen=True):
    value: torch.Tensor


class FrozenChild(Frozen, frozen=True):
    more: torch.Tensor | None = None


@tensorclass(frozen=True)
class DFrozen:
    value: torch.Tensor


@tensorclass(frozen=True)
class DFrozenChild(DFrozen):
    more: torch.Tensor | None = None


frozen_child = FrozenChild(t, t)
frozen_child.more = None  # E: misc reportAttributeAccessIssue
frozen_child.value = t  # E: misc reportAttributeAccessIssue
d_frozen_child = DFrozenChild(t, t)
d_frozen_child.more = None  # E: misc reportAttributeAccessIssue


# Without ``frozen=True`` the subclass is still frozen at run time: the plugin knows, the
# other checkers report a non-frozen class deriving from a frozen one.
class ImplicitChild(Frozen):  # E[mypy,pyright]: misc reportGeneralTypeIssues
    more: torch.Tensor | None = None


@tensorclass  # E[pyright]: reportGeneralTypeIssues
class DImplicitChild(DFrozen):  # E[mypy]: misc
    more: torch.Tensor | None = None


implicit = ImplicitChild(t)
implicit.more = None  # E[plugin]: misc
d_implicit = DImplicitChild(t)
d_implicit.more = None  # E[plugin]: misc


# -- dataclass rules -------------------------------------------------------------------------
class BadOrder(TensorClass):
    a: torch.Tensor | None = None
    b: torch.Tensor  # E: misc reportGeneralTypeIssues


class KwOnly(TensorClass):
    a: torch.Tensor | None = field(default=None, kw_only=True)
    b: torch.Tensor


KwOnly(t, a=t)
KwOnly(t, t)  # E: call-arg reportCallIssue


class NoneDefault(TensorClass):
    a: torch.Tensor = None  # E: assignment reportAssignmentType
