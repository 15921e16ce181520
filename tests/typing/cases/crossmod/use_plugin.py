# checkers: plugin
"""Classes from another module with the plugin: keys, decorator spelling, forward refs."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from crossmod import models
from crossmod.models import Forest, Leaf, Settings, Tree
from tensorclass import TensorClass

leaf = Leaf(torch.zeros(2), batch_size=[2])
tree = Tree(torch.zeros(2), leaf=leaf, batch_size=[2])
forest = models.Forest(tree, batch_size=[2])

assert_type(leaf.reshape(1, 2), Leaf)
assert_type(leaf.owner, Tree | None)
assert_type(tree["leaf"], Leaf | None)
assert_type(tree["leaf", "x"], torch.Tensor | None)
assert_type(tree["child", "child", "leaf", "owner", "value"], torch.Tensor | None)
assert_type(forest["trees", "leaf", "x"], torch.Tensor | None)
assert_type(forest["count"], int)
assert_type(torch.stack([leaf, leaf]), Leaf)
assert_type(torch.cat([forest, forest]), Forest)

tree["leaf", "y"]  # E: tensorclass-key
forest["trees", "child", "lef"]  # E: tensorclass-key
leaf["owner", "nope"]  # E: tensorclass-key
Leaf(torch.zeros(2), batch_size="2")  # E: arg-type


def local_class() -> None:
    """A class defined in a function is a tensor class too."""

    class Local(TensorClass):
        a: torch.Tensor

    local = Local(torch.zeros(1), batch_size=[1])
    assert_type(local["a"], torch.Tensor)
    local["b"]  # E: tensorclass-key


class TaggedLeaf(Leaf):
    """The base-class spelling under a decorated class of another module."""

    tag: torch.Tensor | None = None


class LocalSettings(Settings):
    """A subclass of a frozen class of another module is frozen too."""

    offset: torch.Tensor | None = None


tagged = TaggedLeaf(torch.zeros(2), None, torch.zeros(2), batch_size=[2])
assert_type(tagged[0], TaggedLeaf)
assert_type(tagged["owner", "leaf", "x"], torch.Tensor | None)
assert_type(tagged["tag"], torch.Tensor | None)
tagged["tags"]  # E: tensorclass-key
TaggedLeaf(torch.zeros(2), tag="t")  # E: arg-type
settings = LocalSettings(torch.ones(2), batch_size=[2])
settings.offset = None  # E: misc
