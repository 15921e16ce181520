"""In and out keys of modules: normalisation, reading inputs, names for keyword calls."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

from ..engine.core.state import TensorCore
from ..errors import InvalidKeyError
from ..keys import NestedKey, unravel_key
from ..non_tensor import NonTensorData, NonTensorStack

__all__ = ["Key", "KeysLike", "as_keys", "call_name", "read_input", "show_keys", "structure_copy"]

Key: TypeAlias = "str | tuple[str, ...]"
"""A normalised key: a string, or a flat tuple of at least two strings."""

KeysLike: TypeAlias = "NestedKey | Sequence[NestedKey]"
"""One key, or a sequence of keys (a tuple of strings is one nested key)."""


def as_keys(keys: object, what: str) -> list[Key]:
    """Normalise ``keys`` (one key or an iterable of keys) into a list of keys."""
    if isinstance(keys, (str, tuple)):
        keys = [keys]
    if not isinstance(keys, Iterable):
        raise InvalidKeyError(f"{what} must be a key or a list of keys; got {keys!r}")
    return [unravel_key(key) for key in keys]


def call_name(key: Key) -> str:
    """The keyword-argument name a key is passed as: ``("a", "b")`` becomes ``"a_b"``."""
    return key if type(key) is str else "_".join(key)


def read_input(node: TensorCore, key: Key) -> Any:
    """The value under ``key`` (non-tensor leaves unwrapped); ``KeyError`` when missing."""
    leaf = node._data[key] if type(key) is str else node._leaf(key)
    cls = leaf.__class__
    if cls is NonTensorData or cls is NonTensorStack:
        return leaf.value()
    return leaf


def structure_copy(node: TensorCore) -> Any:
    """A copy of the key structure (every level) that shares the leaves."""
    data = {
        key: structure_copy(leaf) if isinstance(leaf, TensorCore) else leaf
        for key, leaf in node._data.items()
    }
    return type(node)._new(data, node._batch_size, node._device, node._names)


def show_keys(keys: Iterable[Key]) -> str:
    """Keys as they appear in messages and reprs: ``['a', ('b', 'c')]``."""
    return repr(list(keys))
