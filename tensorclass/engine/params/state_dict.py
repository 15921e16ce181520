"""``state_dict`` / ``load_state_dict``: a tensor class in ``nn.Module`` checkpoint form.

The state dict is what ``nn.Module.state_dict`` gives: an ``OrderedDict`` of detached
tensors under ``"."``-joined keys (``"n.b"`` for ``("n", "b")``), with the batch size and
device of each level in its ``_metadata`` attribute (under the level's joined key, ``""``
for the root). ``flatten=False`` nests an ``OrderedDict`` per level instead. Non-tensor
values are not part of a state dict (as in ``nn.Module``).

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.zeros(2), "n": {"b": torch.ones(2, 3)}}, [2])
>>> state = td.state_dict()
>>> list(state), state._metadata[""]
(['a', 'n.b'], {'batch_size': [2], 'device': None})
>>> target = td.clone().zero_()
>>> target.load_state_dict(state)["n", "b"].sum()
tensor(6.)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import Tensor

from ...errors import BatchSizeError, StructureMismatchError
from ..core.self_types import E, Node

__all__ = ["load_state_dict", "state_dict"]


def _dotted(key: tuple[str, ...]) -> str:
    return ".".join(key)


def _level_metadata(node: Node) -> dict[str, object]:
    device = node.device
    return {"batch_size": list(node.batch_size), "device": None if device is None else str(device)}


def _fill(node: Any, dest: Any, prefix: str, path: str, keep_vars: bool, flatten: bool) -> None:
    dest._metadata[prefix + path] = _level_metadata(node)
    for name, value in node.items():
        if isinstance(value, Tensor):
            dest[f"{prefix}{path}.{name}" if path else prefix + name] = (
                value if keep_vars else value.detach()
            )
        elif hasattr(value, "_batch_size"):  # a nested instance
            if flatten:
                _fill(value, dest, prefix, f"{path}.{name}" if path else name, keep_vars, True)
            else:
                sub: Any = OrderedDict()
                sub._metadata = OrderedDict()
                _fill(value, sub, "", "", keep_vars, False)
                dest[prefix + name] = sub


def _nest(state: Any, prefix: str = "") -> tuple[dict[str, Any], dict[tuple[str, ...], Any]]:
    """A nested dict of tensors and the metadata by level path, from either format."""
    tree: dict[str, Any] = {}
    levels: dict[tuple[str, ...], object] = {}
    metadata = getattr(state, "_metadata", None) or {}
    for name, meta in metadata.items():
        levels[tuple(name.split(".")) if name else ()] = meta
    for key, value in state.items():
        if isinstance(value, dict):  # the nested format
            subtree, sublevels = _nest(value)
            tree[key] = subtree
            for path, meta in sublevels.items():
                levels[(key,) + path] = meta  # noqa: RUF005
            continue
        *parents, last = key.split(".")
        level = tree
        for part in parents:
            level = level.setdefault(part, {})
        level[last] = value
    return tree, levels


def _leaf_items(
    tree: dict[str, object], path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], object]]:
    out: list[tuple[tuple[str, ...], object]] = []
    for name, value in tree.items():
        if isinstance(value, dict):
            out.extend(_leaf_items(value, (*path, name)))
        else:
            out.append(((*path, name), value))
    return out


def state_dict(
    self: E,
    destination: Any = None,
    prefix: str = "",
    keep_vars: bool = False,
    flatten: bool = True,
) -> OrderedDict[str, Any]:
    """The tensor leaves as an ``nn.Module``-style state dict (see the module docs).

    Args:
        destination: an ``OrderedDict`` to fill and return (a new one by default).
        prefix: prepended to every key (as ``nn.Module`` does for submodules).
        keep_vars: keep the tensors as they are; by default they are detached.
        flatten: ``"."``-joined keys (default), or one nested ``OrderedDict`` per level.
    """
    dest: Any = OrderedDict() if destination is None else destination
    if not hasattr(dest, "_metadata"):
        dest._metadata = OrderedDict()
    _fill(self, dest, prefix, "", keep_vars, flatten)
    root = prefix[:-1] if prefix.endswith(".") else prefix
    if root != prefix:  # nn.Module keys a level's metadata without the trailing dot
        dest._metadata[root] = dest._metadata.pop(prefix)
    filled: OrderedDict[str, object] = dest
    return filled


def load_state_dict(
    self: E,
    state_dict: Any,
    strict: bool = True,
    assign: bool = False,
    from_flatten: bool | None = None,
) -> E:
    """Load a state dict (either format) into this instance; returns ``self``.

    With ``strict`` (the default) the state dict must hold exactly this instance's
    tensor leaves; otherwise its entries are written and the others kept. By default
    each value is copied into the existing tensor (which keeps its storage, dtype and
    device); ``assign=True`` puts the state dict's tensors in place instead. A batch
    size recorded in the state dict becomes this instance's. Nothing is written
    unless every entry can be (a wrong key or shape is an error naming the key).
    ``from_flatten`` is accepted for tensordict's signature: both formats are
    recognised from the state dict itself.
    """
    del from_flatten  # the format is read from the state dict's own structure
    tree, levels = _nest(state_dict)
    entries = _leaf_items(tree)
    ours: dict[tuple[str, ...], Tensor] = {
        (key,) if isinstance(key, str) else key: value
        for key, value in self.items(include_nested=True, leaves_only=True)
        if isinstance(value, Tensor)
    }
    given = {key for key, _ in entries}
    if strict and given != set(ours):
        missing = sorted(_dotted(k) for k in set(ours) - given)
        unexpected = sorted(_dotted(k) for k in given - set(ours))
        raise StructureMismatchError(
            f"load_state_dict: the keys do not match this {type(self).__name__}: missing "
            f"{missing}, unexpected {unexpected} (pass strict=False to load a subset)"
        )
    batch = levels.get((), {}).get("batch_size")
    batch_size = torch.Size(batch) if batch is not None else self.batch_size
    for key, value in entries:
        if not isinstance(value, Tensor):
            raise StructureMismatchError(
                f"load_state_dict: key {_dotted(key)!r} holds a {type(value).__name__}, "
                "expected a tensor"
            )
        if value.shape[: len(batch_size)] != batch_size:
            raise BatchSizeError(
                f"load_state_dict: key {_dotted(key)!r} has shape {tuple(value.shape)}, "
                f"which does not start with the batch size {list(batch_size)}"
            )
        current = ours.get(key)
        if current is not None and not assign and current.shape != value.shape:
            raise StructureMismatchError(
                f"load_state_dict: key {_dotted(key)!r} has shape {tuple(value.shape)}, "
                f"this instance holds {tuple(current.shape)} (assign=True replaces it)"
            )
    resize = batch_size != self.batch_size
    if resize:  # free every level's batch dims, write, then set the recorded ones
        targets = _recorded_batch_sizes(self, batch_size, levels)
        for node, _ in targets:
            node.set_batch_size(torch.Size())
    with torch.no_grad():
        for key, value in entries:
            name = key if len(key) > 1 else key[0]
            if key in ours and not assign:
                self.set_(name, value)  # into the existing tensor (a lazy stack's members')
            else:
                self.set(name, value)
    if resize:
        for node, size in reversed(targets):  # deepest first: a level fits its parent
            node.set_batch_size(size)
    return self


def _recorded_batch_sizes(
    self: E, batch_size: torch.Size, levels: dict[Any, Any]
) -> list[tuple[Any, torch.Size]]:
    """Each level (root first) with the batch size the state dict records for it (a
    level without a record keeps its dims past the root's)."""
    old = len(self.batch_size)
    out: list[tuple[object, torch.Size]] = [(self, batch_size)]
    for key, node in self.items(include_nested=True):
        if hasattr(node, "_batch_size"):
            path = (key,) if isinstance(key, str) else key
            recorded = levels.get(path, {}).get("batch_size")
            size = batch_size + node.batch_size[old:] if recorded is None else recorded
            out.append((node, torch.Size(size)))
    return out
