# checkers: plugin
"""Forward references with the plugin: decorated classes naming later classes, keys through
them, classes whose analysis mypy defers (names bound later), local and nested classes."""

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, field, tensorclass


@tensorclass
class Node:
    value: torch.Tensor
    child: "Node | None" = None
    leaf: "Leaf | None" = None
    later: "Later | None" = None


@tensorclass
class Leaf:
    x: torch.Tensor


class Later(TensorClass):
    y: torch.Tensor
    back: "Node | None" = None


t = torch.zeros(2)
node = Node(t, leaf=Leaf(t, batch_size=[2]), batch_size=[2])
assert_type(node.leaf, "Leaf | None")
assert_type(node["leaf", "x"], torch.Tensor | None)
assert_type(node["later", "back", "child", "leaf"], "Leaf | None")
assert_type(node.reshape(-1), Node)
assert_type(node["later"], "Later | None")
node["later", "yy"]  # E: tensorclass-key
node["leaf", "x", "deeper"]  # E: tensorclass-key
Node(t, later=Leaf(t))  # E: arg-type


# -- names bound after the class: mypy analyses it again in a later pass ------------------------
@tensorclass(frozen=True)
class Deferred:
    x: "Alias"
    other: "DeferredChild | None" = None


@tensorclass
class DeferredChild(Deferred):
    y: "AliasList" = field(default_factory=list)


class DeferredGrandChild(DeferredChild):
    z: "Alias | None" = None


Alias = torch.Tensor
AliasList = list[Alias]

grand = DeferredGrandChild(t, None, [t], t, batch_size=[2])
assert_type(grand["other", "y"], list[torch.Tensor] | None)
assert_type(grand[0], DeferredGrandChild)
assert_type(grand.unbind(0), tuple[DeferredGrandChild, ...])
as_tc: TensorClass = grand
grand.z = t  # E: misc
grand["w"]  # E: tensorclass-key


# -- a function using a module variable bound later: mypy checks it in a deferred pass ------------
def uses_later() -> None:
    assert_type(later["y"], torch.Tensor)
    assert_type(torch.stack([later, later])["back"], "Node | None")
    later["nope"]  # E: tensorclass-key
    later.select("y", "nope")  # E: tensorclass-key


later = Later(t, batch_size=[2])


# -- local and nested classes --------------------------------------------------------------------
def local() -> None:
    @tensorclass
    class Local:
        a: torch.Tensor
        nxt: "Local | None" = None

    loc = Local(t, batch_size=[2])
    assert_type(loc["nxt", "nxt", "a"], torch.Tensor | None)
    assert_type(loc[0], Local)
    loc["b"]  # E: tensorclass-key


class Holder:
    @tensorclass
    class Inner:
        q: torch.Tensor

    def make(self) -> "Holder.Inner":
        return self.Inner(t, batch_size=[2])


inner = Holder().make()
assert_type(inner["q"], torch.Tensor)
assert_type(inner[0], Holder.Inner)
inner["r"]  # E: tensorclass-key
