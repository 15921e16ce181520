# checkers: plugin
"""Classes from another module with the plugin: keys, decorator spelling, forward refs."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from crossmod import models
from crossmod.models import Forest, Leaf, Tree
from tensorclass import TensorClass

leaf = Leaf(torch.zeros(2), batch_size=[2])
tree = Tree(torch.zeros(2), leaf=leaf, batch_size=[2])
forest = models.Forest(tree, batch_size=[2])

assert_type(leaf.reshape(1, 2), Leaf)
assert_type(leaf.owner, Tree | None)
assert_type(tree["leaf"], Leaf | None)
assert_type(tree["leaf", "x"], torch.Tensor)
assert_type(tree["child", "child", "leaf", "owner", "value"], torch.Tensor)
assert_type(forest["trees", "leaf", "x"], torch.Tensor)
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
