"""The shared inputs: flat, nested and chained sources of tensors, and plain-dict helpers.

The shapes follow the peer's own benchmarks: flat leaves of ``(64, 8)`` with batch
``[64]``; the 19-level chain is the peer's ``big_nested_td`` (level ``i`` holds a leaf
``"t"`` and the next level, leaves ``(3, 4)`` with batch ``[3, 4]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "CHAIN_BATCH",
    "CHAIN_LEAF",
    "FLAT_BATCH",
    "NESTED_KEY",
    "chain_source",
    "copy_tree",
    "deep_get",
    "flat_source",
    "leaf_items",
    "leaf_keys",
    "nested_source",
]

FLAT_BATCH = [64]
CHAIN_BATCH = [3, 4]
#: the deepest leaf of the 19-level chain
CHAIN_LEAF = (*(str(i) for i in range(19)), "t")
#: a key three levels down in :func:`nested_source`
NESTED_KEY = ("n1", "n2", "a")


def flat_source(count: int, shape: tuple[int, ...] = (64, 8)) -> dict[str, Tensor]:
    """``count`` keys ``k0, k1...`` of random tensors of ``shape``."""
    return {f"k{i}": torch.randn(shape) for i in range(count)}


def nested_source(depth: int = 3, shape: tuple[int, ...] = (64, 8)) -> dict[str, Any]:
    """Two leaves per level and ``depth`` nested levels: ``{"a", "b", "n1": {"a", "b",
    "n2": {...}}}``."""
    node: dict[str, Any] = {"a": torch.randn(shape), "b": torch.randn(shape)}
    for level in range(depth, 0, -1):
        node = {"a": torch.randn(shape), "b": torch.randn(shape), f"n{level}": node}
    return node


def chain_source(levels: int = 19, shape: tuple[int, ...] = (3, 4)) -> dict[str, Any]:
    """The peer's ``big_nested_td`` as a nested dict: level ``i`` holds ``"t"`` (a tensor)
    and ``str(i + 1)`` (the next level)."""
    root: dict[str, Any] = {}
    node = root
    for i in range(levels):
        child: dict[str, Any] = {"t": torch.zeros(shape) + i + 1}
        node[str(i)] = child
        node = child
    return root


def copy_tree(tree: dict[str, Any]) -> dict[str, Any]:
    """A new nested dict holding the same tensors (the plain "construction")."""
    return {k: copy_tree(v) if type(v) is dict else v for k, v in tree.items()}


def deep_get(tree: Any, key: tuple[str, ...]) -> Any:
    """``tree[key[0]][key[1]]...`` for a nested dict."""
    for part in key:
        tree = tree[part]
    return tree


def leaf_keys(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[Any]:
    """The leaf keys of a nested dict (tuples below the top level), depth first."""
    for key, value in tree.items():
        if type(value) is dict:
            yield from leaf_keys(value, (*prefix, key))
        else:
            yield (*prefix, key) if prefix else key


def leaf_items(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[Any]:
    """The ``(key, leaf)`` pairs of a nested dict (keys as :func:`leaf_keys` gives them)."""
    for key, value in tree.items():
        if type(value) is dict:
            yield from leaf_items(value, (*prefix, key))
        else:
            yield ((*prefix, key) if prefix else key), value
