# checkers: plugin mypy pyright
"""Classes from another module, base-class spelling: every checker."""

from __future__ import annotations

import torch
from typing_extensions import assert_type

from crossmod.models import Forest, Leaf, Tree

tree = Tree(torch.zeros(2), Tree(torch.ones(2), batch_size=[2]), batch_size=[2])
forest = Forest(tree, 3, batch_size=[2])
assert_type(tree.child, Tree | None)
assert_type(tree.leaf, Leaf | None)
assert_type(forest.trees, Tree)
assert_type(forest[0], Forest)
assert_type(forest.trees.reshape(1, 2), Tree)
Tree(torch.zeros(2), child=forest)  # E: arg-type
Forest(tree, count="3")  # E: arg-type
