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
from ...registry import dynamic_class
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


#: a value in the tree of keys :func:`_entries` builds (anything else there is a level)
_VALUE = object()


def _flat(state: Any, out: list[tuple[tuple[str, ...], Any]], prefix: tuple[str, ...]) -> None:
    for key, value in state.items():
        if not isinstance(key, str):
            raise StructureMismatchError(
                f"load_state_dict: the state dict's keys must be strings; got {key!r} "
                f"(nothing was written)"
            )
        if isinstance(value, dict):  # the nested format: a level
            _flat(value, out, (*prefix, key))
        else:
            out.append(((*prefix, *key.split(".")), value))


def _entries(state: Any) -> list[tuple[tuple[str, ...], Any]]:
    """Every ``(key path, value)`` of a state dict of either format, in its order; keys
    that collide (two giving one path, a value where another key nests) raise, naming
    both: writing both would drop one."""
    out: list[tuple[tuple[str, ...], Any]] = []
    _flat(state, out, ())
    tree: dict[str, Any] = {}
    for index, (path, _) in enumerate(out):
        level = tree
        for part in path[:-1]:
            node = level.get(part)
            if node is None:
                node = level[part] = {}
            elif node is _VALUE:
                raise _collision(out, index)
            level = node
        if path[-1] in level:
            raise _collision(out, index)
        level[path[-1]] = _VALUE
    return out


def _collision(entries: list[tuple[tuple[str, ...], Any]], index: int) -> StructureMismatchError:
    """The error for the entry at ``index``, which collides with an earlier one."""
    path = entries[index][0]
    for other, _ in entries[:index]:
        if other == path:
            why = "both give one key"
        elif other == path[: len(other)]:
            why = "the first holds a value, the second nests under it"
        elif path == other[: len(path)]:
            why = "the first nests under the second, which holds a value"
        else:
            continue
        return StructureMismatchError(
            f"load_state_dict: the keys {_dotted(other)!r} and {_dotted(path)!r} of the state "
            f"dict collide: {why} (nothing was written)"
        )
    raise AssertionError("no earlier entry collides")  # pragma: no cover


def _batch_record(name: str, meta: object) -> list[int] | None:
    """The batch size recorded for a level (``None``: none recorded), checked."""
    if not isinstance(meta, dict):
        return None
    batch = meta.get("batch_size")
    if batch is None:
        return None
    if not isinstance(batch, list | tuple | torch.Size) or not all(
        type(size) is int and size >= 0 for size in batch
    ):
        raise StructureMismatchError(
            f"load_state_dict: the batch size recorded for the level {name!r} must be a list "
            f"of non-negative ints; got {batch!r} (nothing was written)"
        )
    return list(batch)


def _root_batch(state: Any) -> list[int] | None:
    """The batch size the state dict records for its root level, checked."""
    metadata = getattr(state, "_metadata", None) or {}
    return _batch_record("", metadata.get(""))


def _levels(state: Any, prefix: tuple[str, ...], out: dict[tuple[str, ...], list[int]]) -> None:
    """The batch sizes recorded in the ``_metadata`` of a state dict (of either format),
    by level path, checked."""
    metadata = getattr(state, "_metadata", None) or {}
    for name, meta in metadata.items():
        if type(name) is not str:
            raise StructureMismatchError(
                f"load_state_dict: the state dict's metadata names levels with strings; got "
                f"{name!r} (nothing was written)"
            )
        batch = _batch_record(_dotted((*prefix, name)) if name else _dotted(prefix), meta)
        if batch is not None:
            out[(*prefix, *name.split(".")) if name else prefix] = batch
    for key, value in state.items():
        if isinstance(value, dict) and type(key) is str:
            _levels(value, (*prefix, key), out)


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
    size recorded in the state dict becomes this instance's. ``from_flatten`` is
    accepted for tensordict's signature: both formats are recognised from the state
    dict itself.

    All or nothing: every entry is checked before the first is written, and a problem
    raises naming the key (``StructureMismatchError`` for keys that collide: ``"n.b"`` and
    ``"n"``, a tensor where this instance has a nested level or under one of its values;
    the class's own error for a key a typed class lacks, a value of the wrong type, a
    locked instance, a recorded batch size that does not fit). No key the state dict
    does not name is dropped.
    """
    del from_flatten  # the format is read from the state dict's own structure
    entries = _entries(state_dict)
    ours: dict[tuple[str, ...], Tensor] = {}
    values: dict[tuple[str, ...], object] = {}  # every key of this instance: levels too
    for key, value in self.items(include_nested=True):
        path = (key,) if isinstance(key, str) else key
        values[path] = value
        if isinstance(value, Tensor):
            ours[path] = value
    given = {key for key, _ in entries}
    if strict and given != set(ours):
        missing = sorted(_dotted(k) for k in set(ours) - given)
        unexpected = sorted(_dotted(k) for k in given - set(ours))
        raise StructureMismatchError(
            f"load_state_dict: the keys do not match this {type(self).__name__}: missing "
            f"{missing}, unexpected {unexpected} (pass strict=False to load a subset)"
        )
    batch = _root_batch(state_dict)
    batch_size = torch.Size(batch) if batch is not None else self.batch_size
    resize = batch_size != self.batch_size
    levels: dict[tuple[str, ...], list[int]] = {}
    if resize:  # the nested levels' records are used (and checked) only then
        _levels(state_dict, (), levels)
    in_place = True  # only copies into existing tensors: nothing else to try first
    for key, value in entries:
        current = ours.get(key)
        _check_entry(self, key, value, batch_size, current, values, assign)
        in_place = in_place and current is not None and not assign
    if resize or not (in_place or _plain(self, values)):
        # writes that may fail (a typed class, a lock, a resize): made on a copy first
        trial = _locked_like(self, self.copy())
        _write(trial, entries, ours, batch_size, levels, assign, resize, dry=True)
    _write(self, entries, ours, batch_size, levels, assign, resize, dry=False)
    return self


def _plain(self: Any, values: dict[tuple[str, ...], object]) -> bool:
    """Whether every level is an unlocked ``TensorDict``: then writing a checked entry
    (see :func:`_check_entry`) cannot fail."""
    dynamic = dynamic_class()
    if type(self) is not dynamic or self.is_locked:
        return False
    return all(
        type(node) is dynamic and not node.is_locked
        for node in values.values()
        if isinstance(node, Node)
    )


def _locked_like(self: Any, trial: Any) -> Any:
    """``trial`` (a shallow copy of ``self``) with the levels locked that are in ``self``."""
    if self.is_locked:
        return trial.lock_()
    for key, node in self.items(include_nested=True):
        if isinstance(node, Node) and node.is_locked:
            trial.get(key).lock_()
    return trial


def _check_entry(
    self: Any,
    key: tuple[str, ...],
    value: object,
    batch_size: torch.Size,
    current: Tensor | None,
    values: dict[tuple[str, ...], object],
    assign: bool,
) -> None:
    """What could fail writing one entry, raised before anything is written."""
    if not isinstance(value, Tensor):
        raise StructureMismatchError(
            f"load_state_dict: key {_dotted(key)!r} holds a {type(value).__name__}, "
            "expected a tensor"
        )
    shape = value.shape
    if shape[: len(batch_size)] != batch_size:
        raise BatchSizeError(
            f"load_state_dict: key {_dotted(key)!r} has shape {tuple(shape)}, "
            f"which does not start with the batch size {list(batch_size)}"
        )
    if current is not None:
        if not assign and current.shape != shape:
            raise StructureMismatchError(
                f"load_state_dict: key {_dotted(key)!r} has shape {tuple(shape)}, "
                f"this instance holds {tuple(current.shape)} (assign=True replaces it)"
            )
        if value.is_meta and not current.is_meta:
            raise _meta(key)
        return
    if value.is_meta:
        raise _meta(key)
    for depth in range(1, len(key)):
        above = values.get(key[:depth])
        if above is not None and not isinstance(above, Node):
            raise StructureMismatchError(
                f"load_state_dict: key {_dotted(key)!r} nests under {_dotted(key[:depth])!r}, "
                f"which holds a {type(above).__name__} in this {type(self).__name__} "
                f"(nothing was written)"
            )
    if isinstance(values.get(key), Node):
        raise StructureMismatchError(
            f"load_state_dict: key {_dotted(key)!r} holds a tensor, but it is a nested level "
            f"of this {type(self).__name__}: writing it would drop the keys under it "
            f"(nothing was written)"
        )


def _meta(key: tuple[str, ...]) -> StructureMismatchError:
    return StructureMismatchError(
        f"load_state_dict: key {_dotted(key)!r} holds a tensor on the 'meta' device, "
        f"which has no data to load (nothing was written)"
    )


def _write(
    self: Any,
    entries: list[tuple[tuple[str, ...], object]],
    ours: dict[tuple[str, ...], Tensor],
    batch_size: torch.Size,
    levels: dict[tuple[str, ...], list[int]],
    assign: bool,
    resize: bool,
    dry: bool,
) -> None:
    """Write the entries (``dry``: into a shallow copy, to see that every write works;
    copies into the existing tensors, checked by :func:`_check_entry`, are left out)."""
    if resize:  # free every level's batch dims, write, then set the recorded ones
        targets = _recorded_batch_sizes(self, batch_size, levels)
        for node, _ in targets:
            node.set_batch_size(torch.Size())
    with torch.no_grad():
        for key, value in entries:
            name = key if len(key) > 1 else key[0]
            if key in ours and not assign:
                if not dry:
                    self.set_(name, value)  # into the existing tensor (a lazy stack's members')
            else:
                self.set(name, value)
    if resize:
        for node, size in reversed(targets):  # deepest first: a level fits its parent
            node.set_batch_size(size)


def _recorded_batch_sizes(
    self: Any, batch_size: torch.Size, levels: dict[tuple[str, ...], list[int]]
) -> list[tuple[Any, torch.Size]]:
    """Each level (root first) with the batch size the state dict records for it (a
    level without a record keeps its dims past the root's)."""
    old = len(self.batch_size)
    out: list[tuple[object, torch.Size]] = [(self, batch_size)]
    for key, node in self.items(include_nested=True):
        if isinstance(node, Node):
            path = (key,) if isinstance(key, str) else key
            recorded = levels.get(path)
            size = batch_size + node.batch_size[old:] if recorded is None else recorded
            out.append((node, torch.Size(size)))
    return out
