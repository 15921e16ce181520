"""Following a key path through nested instances.

Every key primitive that takes a tuple key (read, test, write, delete, report a missing
key) walks it with :func:`walk`, which goes as far as the path leads and says where it
stopped; each caller decides what a stop means: a ``KeyError`` naming the level where the
path breaks, ``False``, or a level to create.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["walk"]

_STOP = object()


def walk(node: Any, parts: Iterable[Any]) -> tuple[Any, int]:
    """Follow ``parts`` from ``node`` down nested instances.

    Returns ``(reached, depth)``: ``depth`` parts were followed and ``reached`` is where
    they lead. ``depth == len(parts)`` means the whole path exists; otherwise ``reached``
    is the instance that lacks ``parts[depth]``, or the leaf (something that holds no keys)
    met on the way, under ``parts[:depth]``. A part that cannot be a key counts as missing.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": {"b": torch.zeros(())}})
    >>> walk(td, ("a", "b"))[1]
    2
    >>> reached, depth = walk(td, ("a", "c"))
    >>> depth, reached is td["a"]
    (1, True)
    """
    depth = 0
    try:  # no check per level: a leaf has no _data, a part that is no key is unhashable
        for part in parts:
            child = node._data.get(part, _STOP)
            if child is _STOP:  # (a miss without an exception: tests of keys stay cheap)
                return node, depth
            node = child
            depth += 1
    except (AttributeError, TypeError):
        pass
    return node, depth
