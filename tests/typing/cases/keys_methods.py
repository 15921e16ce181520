# checkers: plugin
"""Every method taking keys has its literal keys checked; receivers typed Self or a TypeVar
(inside methods and generic functions) are tensor classes too."""

from __future__ import annotations

from typing import Literal, TypeVar

import torch
from typing_extensions import Self, assert_type

from tensorclass import TensorClass, TensorDict, tensorclass


class Inner(TensorClass):
    x: torch.Tensor


@tensorclass
class Outer:
    inner: Inner | None
    y: torch.Tensor
    meta: dict[str, int] | None = None
    free: TensorDict | None = None

    def read(self) -> torch.Tensor:
        assert_type(self["inner", "x"], torch.Tensor | None)
        self["nope"]  # E: tensorclass-key
        return self["y"]

    def chained(self) -> Self:
        assert_type(self["y"], torch.Tensor)
        self["yy"]  # E: tensorclass-key
        # mypy calls no method hook on a receiver typed Self (or a TypeVar) for a named method
        # or an item assignment: those keep the engine's types there (untyped, unchecked).
        self.get("meta")
        return self.select("y", "inner")


class Base(TensorClass):
    a: torch.Tensor

    def method(self) -> Self:
        assert_type(self["a"], torch.Tensor)
        self["b"]  # E: tensorclass-key
        return self


OuterT = TypeVar("OuterT", bound=Outer)


def generic(value: OuterT) -> OuterT:
    assert_type(value["y"], torch.Tensor)
    value["z"]  # E: tensorclass-key
    return value.exclude("meta")


o = Outer(Inner(torch.zeros(2), batch_size=[2]), torch.zeros(2), batch_size=[2])
t = torch.zeros(2)

# -- select / exclude: every key ---------------------------------------------------------------
o.select("y", ("inner", "x"))
o.select("y", "nope")  # E: tensorclass-key
o.select(("inner", "nope"), strict=False)  # E: tensorclass-key
o.exclude("meta", ("inner", "x"))
o.exclude("metas")  # E: tensorclass-key
o.exclude(("free", "anything"))

# -- fill_ / rename_key_ / del_ / set / set_ ------------------------------------------------------
o.fill_("y", 1.0)
o.fill_(("inner", "x"), 0)
o.fill_("yy", 1.0)  # E: tensorclass-key
o.rename_key_("y", "y")
o.rename_key_("nope", "y")  # E: tensorclass-key
o.rename_key_("y", "nope")  # E: tensorclass-key
o.del_(("inner", "nope"))  # E: tensorclass-key
o.set_(("inner", "x"), t)

# -- update / update_ with a dict literal: its keys, nested dicts under nested classes -------------
o.update({"y": t, "inner": {"x": t}, "meta": {"any key": 1}, "free": {"any": t}})
o.update({("inner", "x"): t})
o.update({"yy": t})  # E: tensorclass-key
o.update({"inner": {"xx": t}})  # E: tensorclass-key
o.update({("inner", "xx"): t})  # E: tensorclass-key
o.update_({"nope": t})  # E: tensorclass-key
o.update({**{"anything": t}})
o.update(o)
o.update(dict(y=t))

# -- non-literal keys, and dynamic classes, are never flagged ---------------------------------
name: str = "whatever"
o.select(name)
o.exclude(name)
o.update({name: t})
td = TensorDict({"a": t}, batch_size=[2])
td.select("b", strict=False)
td.exclude("b")
td.update({"b": t})
td.rename_key_("a", "c")

# -- keys typed Literal count --------------------------------------------------------------------
bad: Literal["why"] = "why"
o.select(bad)  # E: tensorclass-key
good: Literal["y"] = "y"
o.select(good)

# -- get with a keyword default, and receivers narrowed from Optional ------------------------------
assert_type(o.get("y", default=None), torch.Tensor | None)
maybe: Outer | None = o
if maybe is not None:
    assert_type(maybe["inner"], Inner | None)
    maybe["nope"]  # E: tensorclass-key
either: Outer | Inner = o
either["y"]  # E: tensorclass-key
assert_type(generic(o), Outer)
