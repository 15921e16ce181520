"""Reading saves written by tensordict's ``memmap`` (0.15.x) into a :class:`MemmapInfo` tree.

The loader then builds them as it builds tensorclass's own saves, so nothing else needs to
know where a save came from. What tensordict writes, and how it is read here:

- **A TensorDict level**: ``meta.json`` maps each key to its entry, beside the format fields
  ``"shape"`` (the batch size), ``"device"``, ``"_type"``, ``"_class"``,
  ``"_format_version"`` and ``"_names"`` (dim names). A tensor entry is
  ``{"dtype": "torch.float32", "shape": [...], "is_nested": false}`` and its raw bytes are in
  ``<key>.memmap``; any other entry (``{"type": ...}``) is a sub-directory ``<key>/`` with its
  own ``meta.json``. Keys are written with tensordict's ``%XX`` escapes (older saves used the
  plain key; both are looked up, always as one name inside the directory). A tensor with no
  elements may have no file.
- **A lazy stack**: ``"stack_dim"``; its members are the sub-directories ``0``, ``1``, ....
- **A tensorclass**: ``meta.json`` holds ``"_type": "<class 'module.Qualname'>"`` and the
  class's JSON-able non-tensor attributes; its data is the TensorDict level ``_tensordict/``.
  The recorded name is kept as ``tensordict_class`` (loading maps it to a class of that name
  defined in this process, else to ``TensorDict``).
- **Non-tensor values**: a ``NonTensorData``/``MetaData`` directory whose ``meta.json`` holds
  the value under ``"data"``; a ``NonTensorStack`` holds the nested list of its values.

Values tensordict could not write as JSON are pickled (``other.pickle``, ``pickle.pkl``).
They are never unpickled: reading such a save raises an error naming the file. Nested
(jagged) tensors, lazy views (``custom_op``) and archives are not read (an error says so).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ....errors import MemmapFormatError
from ....json_values import has_shape
from ...core.state import fits_batch
from ...core.untrusted import DTYPES, MAX_BATCH, key_problem, loadable, names_problem, shown
from .info import (
    EntryInfo,
    MemmapInfo,
    fail,
    load_json,
    regular_size,
    shape_problem,
    shared_batch,
    sizes,
)

__all__ = ["is_tensordict_meta", "match_class", "read_tensordict"]

_READS_VERSION = 1
_TENSORDICT_PATH = "tensorclass:TensorDict"
_WHAT = "a level of a tensordict save"
_PICKLE_FILES = ("other.pickle", "pickle.pkl")
_ESCAPED = frozenset('/<>:"|?*\\ \0%') | {chr(i) for i in range(32)} | {chr(127)}
_ESCAPE = str.maketrans({char: f"%{ord(char):02X}" for char in _ESCAPED})
_DTYPES = {f"torch.{name}": value for name, value in DTYPES.items()}


def is_tensordict_meta(meta: dict[str, Any]) -> bool:
    """Whether a ``meta.json`` object was written by tensordict (it records ``"_type"``)."""
    recorded = meta.get("_type")
    return type(recorded) is str and recorded.startswith("<class '") and recorded.endswith("'>")


def read_tensordict(root: Path, meta: dict[str, Any]) -> MemmapInfo:
    """The tree of the tensordict save at ``root`` (whose ``meta.json`` is ``meta``)."""
    kind = _kind(root, meta)
    if kind in ("non_tensor", "non_tensor_stack"):
        raise fail(root, "a single non-tensor value saved by tensordict; load its parent")
    return _collection(root, meta, kind, None)


def match_class(recorded: str, defined: list[type]) -> tuple[type | None, str]:
    """The class among ``defined`` for tensordict's recorded ``"module.Qualname"``: the one
    with that module and name, else the only one with that class name. Returns the class
    (or ``None``) and, when ``None``, why."""
    defined = [cls for cls in defined if loadable(cls)]  # never an engine part
    for cls in defined:
        if f"{cls.__module__}.{cls.__qualname__}" == recorded:
            return cls, ""
    name = recorded.rpartition(".")[2]
    named = {cls for cls in defined if cls.__name__ == name}
    if len(named) == 1:
        return named.pop(), ""
    if named:
        where = ", ".join(sorted(f"{c.__module__}.{c.__qualname__}" for c in named))
        return None, f"{len(named)} tensor classes are named {name!r} ({where})"
    return None, f"no tensor class named {name!r} is defined in this process"


def _dotted(meta: dict[str, Any]) -> str:
    return str(meta["_type"])[len("<class '") : -2]


def _level_at(path: Path, sub: Path, what: str) -> tuple[dict[str, Any], str]:
    """The ``meta.json`` of the directory ``sub`` of ``path`` and its kind; a symbolic link
    (``what`` names it in the error) is refused."""
    if sub.is_symlink():
        raise fail(path, f"{what} is a symbolic link (links are not followed)")
    meta = load_json(sub, _WHAT)
    if not isinstance(meta, dict):
        raise _not_tensordict(sub)
    return meta, _kind(sub, meta)


def _not_tensordict(path: Path) -> MemmapFormatError:
    return fail(path, 'not tensordict metadata (no "_type": "<class \'...\'>")')


def _kind(path: Path, meta: dict[str, Any]) -> str:
    if not is_tensordict_meta(meta):
        raise _not_tensordict(path)
    dotted = _dotted(meta)
    version = meta.get("_format_version")
    if type(version) is int and version > _READS_VERSION:
        raise fail(path, f"tensordict format version {version}; this reader knows up to 1")
    if meta.get("_is_non_tensor") is True or dotted.endswith((".NonTensorData", ".MetaData")):
        return "non_tensor"
    if dotted.endswith(".NonTensorStack"):
        return "non_tensor_stack"
    # the format fields have these types; a key of the same name is a dict entry
    if type(meta.get("custom_op")) is str:
        raise fail(
            path,
            f"a lazy view ({meta['custom_op']!r}) of tensordict is not read; "
            "save it after .contiguous() or .to_tensordict()",
        )
    if type(meta.get("shape")) is list:
        return "tensordict"
    if type(meta.get("stack_dim")) is int:
        return "lazy_stack"
    return "tensorclass"


def _collection(
    path: Path, meta: dict[str, Any], kind: str, parent: tuple[int, ...] | None
) -> MemmapInfo:
    if kind == "lazy_stack":
        return _lazy_stack(path, meta, parent)
    if kind == "tensorclass":
        return _tensorclass(path, meta, parent)
    return _tensordict(path, meta, parent)


def _batch(path: Path, value: object, parent: tuple[int, ...] | None) -> tuple[int, ...]:
    batch = sizes(path, value, 'the batch size ("shape")')
    if any(size > MAX_BATCH for size in batch):
        raise fail(path, f"batch size {shown(list(batch))} has a dim beyond 2**40")
    if parent is not None and batch[: len(parent)] != parent:
        raise fail(
            path, f"batch size {list(batch)} does not start with the parent's {list(parent)}"
        )
    return batch


def _tensordict(path: Path, meta: dict[str, Any], parent: tuple[int, ...] | None) -> MemmapInfo:
    batch = _batch(path, meta.get("shape"), parent)
    device = meta.get("device")
    if device == "None":
        device = None
    if device is not None and type(device) is not str:
        raise fail(path, f"invalid device {device!r}")
    names = meta.get("_names")
    if type(names) is not list:
        names = None  # a key named "_names" is a dict entry
    elif names_problem(names, len(batch)) is not None:
        raise fail(path, f"{names_problem(names, len(batch))}")
    entries = tuple(_entry(path, key, raw, batch) for key, raw in meta.items() if type(raw) is dict)
    return MemmapInfo(
        path, "instance", _TENSORDICT_PATH, False, batch, device,
        None if names is None else tuple(names), entries=entries, origin="tensordict",
    )  # fmt: skip


def _file_name(key: str) -> str:
    if not key:
        return "%"
    if key in (".", ".."):
        return "%2E" * len(key)
    return key.translate(_ESCAPE)


def _child(path: Path, key: str, suffix: str = "") -> Path:
    """Where tensordict wrote ``key``: its escaped name, or (older saves) the plain key if
    that is one plain name. Either way a single name inside ``path``."""
    found = path / (_file_name(key) + suffix)
    plain = key not in ("", ".", "..") and not any(c in key for c in "/\\\0")
    if plain and not os.path.lexists(found) and os.path.lexists(path / (key + suffix)):
        found = path / (key + suffix)
    return found


def _entry(path: Path, key: str, raw: dict[str, Any], batch: tuple[int, ...]) -> EntryInfo:
    wrong_key = key_problem(key)
    if wrong_key is not None:
        raise fail(path, wrong_key)
    if "type" in raw:
        sub = _child(path, key)
        meta, kind = _level_at(path, sub, f"entry {key!r}: {sub}")
        if kind == "non_tensor":
            return _non_tensor(sub, key, meta)
        if kind == "non_tensor_stack":
            return _non_tensor_stack(sub, key, meta, batch)
        return EntryInfo(key, "nested", child=_collection(sub, meta, kind, batch))
    dtype, shape = raw.get("dtype"), raw.get("shape")
    if raw.get("is_nested"):
        raise fail(path, f"entry {key!r} is a nested (jagged) tensor, which is not read")
    if type(dtype) is not str or dtype not in _DTYPES:
        raise fail(path, f"entry {key!r} has unknown dtype {shown(dtype)}")
    shape = sizes(path, shape, f"the shape of {key!r}")
    torch_dtype = _DTYPES[dtype]
    too_large = shape_problem(shape, torch_dtype.itemsize)
    if too_large is not None:
        raise fail(path, f"entry {key!r}: {too_large}")
    if not fits_batch(shape, batch):
        raise fail(path, f"entry {key!r} has shape {list(shape)}, not within batch {list(batch)}")
    nbytes = torch_dtype.itemsize
    for size in shape:
        nbytes *= size
    file = _child(path, key, ".memmap")
    on_disk = regular_size(file)
    if on_disk is None and nbytes == 0 and not os.path.lexists(file):
        on_disk = 0  # tensordict writes no file for a tensor without elements
    name = str(torch_dtype).removeprefix("torch.")
    return EntryInfo(key, "tensor", name, shape, nbytes, file, on_disk)


def _refuse_pickles(path: Path, what: str) -> None:
    for name in _PICKLE_FILES:
        if os.path.lexists(path / name):
            raise fail(
                path,
                f"{what} is stored as a pickle ({path / name}), which "
                f"tensorclass never loads: unpickling can run arbitrary code. Store it as "
                f"JSON data (str, numbers, lists, dicts) in tensordict and save again",
            )


def _non_tensor(path: Path, key: str, meta: dict[str, Any]) -> EntryInfo:
    _refuse_pickles(path, f"the value under {key!r}")
    if "data" not in meta:
        raise fail(path, f'the non-tensor value under {key!r} has no "data"')
    meta_flag = _dotted(meta).endswith(".MetaData")
    return EntryInfo(key, "non_tensor", value=meta["data"], meta=meta_flag)


def _non_tensor_stack(
    path: Path, key: str, meta: dict[str, Any], batch: tuple[int, ...]
) -> EntryInfo:
    data = meta.get("data")
    if type(data) is str:
        _refuse_pickles(path, f"the value under {key!r}")
        raise fail(path, f"the stack under {key!r} names the data file {data!r}, which is not read")
    if data is None:
        raise fail(path, f"the stack under {key!r} was saved member by member, which is not read")
    if not batch or not has_shape(data, batch):
        raise fail(
            path,
            f"the stack under {key!r} does not hold one value per batch element "
            f"(batch size {list(batch)})",
        )
    return EntryInfo(key, "non_tensor_stack", shape=batch, value=data)


def _lazy_stack(path: Path, meta: dict[str, Any], parent: tuple[int, ...] | None) -> MemmapInfo:
    stack_dim = meta.get("stack_dim")
    members: list[MemmapInfo] = []
    while os.path.lexists(path / str(len(members))):
        sub = path / str(len(members))
        member_meta, kind = _level_at(path, sub, f"member {sub}")
        if kind not in ("tensordict", "tensorclass"):
            raise fail(path, f"member {sub.name} is a {kind.replace('_', ' ')}, which is not read")
        members.append(_collection(sub, member_meta, kind, None))
    if not members:
        raise fail(path, "a lazy stack without members (no directory '0')")
    inner = members[0].batch_size
    if type(stack_dim) is not int or not 0 <= stack_dim <= len(inner):
        raise fail(path, f"invalid stack_dim {stack_dim!r} for members of batch size {list(inner)}")
    shared = shared_batch([member.batch_size for member in members])
    if shared is None:  # sizes may differ (a ragged stack: -1 there), not dim counts
        raise fail(
            path,
            f"the members have different numbers of batch dims "
            f"{[list(member.batch_size) for member in members]}",
        )
    batch = (*shared[:stack_dim], len(members), *shared[stack_dim:])
    if parent is not None and batch[: len(parent)] != parent:
        raise fail(
            path, f"batch size {list(batch)} does not start with the parent's {list(parent)}"
        )
    first = members[0]
    return MemmapInfo(
        path, "lazy_stack", first.class_path, first.typed, batch, stack_dim=stack_dim,
        members=tuple(members), origin="tensordict", tensordict_class=first.tensordict_class,
    )  # fmt: skip


def _tensorclass(path: Path, meta: dict[str, Any], parent: tuple[int, ...] | None) -> MemmapInfo:
    dotted = _dotted(meta)
    module, _, name = dotted.rpartition(".")
    if not module or not name:
        raise fail(path, f"invalid class {meta['_type']!r}")
    _refuse_pickles(path, f"a non-tensor attribute of the tensorclass {dotted!r}")
    attributes = tuple(
        EntryInfo(key, "non_tensor", value=value) for key, value in meta.items() if key != "_type"
    )
    inner = path / "_tensordict"
    inner_meta, kind = _level_at(path, inner, str(inner))
    if kind not in ("tensordict", "lazy_stack"):
        raise fail(path, f"the data of a tensorclass must be a TensorDict; {inner} is a {kind}")
    level = _collection(inner, inner_meta, kind, parent)

    def typed(info: MemmapInfo, at: Path) -> MemmapInfo:
        keys = {entry.key for entry in info.entries}
        clash = next((e.key for e in attributes if e.key in keys), None)
        if clash is not None:
            raise fail(path, f"the attribute {clash!r} is also a key of {inner}")
        return replace(
            info, path=at, class_path=f"{module}:{name}", typed=True,
            tensordict_class=dotted, entries=info.entries + attributes,
        )  # fmt: skip

    if level.kind == "lazy_stack":
        members = tuple(typed(member, member.path) for member in level.members)
        return replace(
            level, path=path, class_path=f"{module}:{name}", typed=True, members=members,
            tensordict_class=dotted,
        )  # fmt: skip
    return typed(level, path)
