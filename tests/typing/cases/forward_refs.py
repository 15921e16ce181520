# checkers: plugin mypy pyright
"""Forward references without ``from __future__ import annotations``: string annotations
naming the class itself and classes defined later, base-class spelling."""

from typing import Optional

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass


class Node(TensorClass):
    value: torch.Tensor
    parent: "Node | None" = None
    leaf: "Optional[Leaf]" = None  # noqa: UP045 (a string Optional on purpose)
    pair: "tuple[Leaf, Leaf] | None" = None


class Leaf(TensorClass):
    x: torch.Tensor
    owner: "Node | None" = None


t = torch.zeros(2)
leaf = Leaf(t, batch_size=[2])
node = Node(t, Node(t), leaf, (leaf, leaf), batch_size=[2])
assert_type(node.parent, "Node | None")
assert_type(node.leaf, "Leaf | None")
assert_type(leaf.owner, "Node | None")
assert_type(node[0], Node)
assert_type(node.leaf.reshape(1, 2) if node.leaf is not None else None, "Leaf | None")
Node(t, leaf=node)  # E: arg-type reportArgumentType
Node(t, parent=leaf)  # E: arg-type reportArgumentType
Leaf(t, owner=t)  # E: arg-type reportArgumentType
node.leaf = Node(t)  # E: assignment reportAttributeAccessIssue
