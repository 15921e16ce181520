# checkers: plugin mypy pyright
"""Classes with forward references (to themselves and to a class defined later)."""

from __future__ import annotations

import torch

from tensorclass import TensorClass, tensorclass


class Tree(TensorClass):
    value: torch.Tensor
    child: Tree | None = None
    leaf: Leaf | None = None


@tensorclass
class Leaf:
    x: torch.Tensor
    owner: "Tree | None" = None  # noqa: UP037 (a string forward reference on purpose)


class Forest(TensorClass):
    trees: Tree
    count: int = 0


class Settings(TensorClass, frozen=True):
    scale: torch.Tensor
