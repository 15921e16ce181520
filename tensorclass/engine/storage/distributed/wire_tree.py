"""A whole tensor class as plain JSON plus one byte buffer, for receivers that hold nothing.

``scatter`` and ``gather_and_stack`` hand a rank an instance whose structure it does not
know in advance. The structure travels as JSON (never a pickle: receiving runs no code) and
the tensors as one packed ``uint8`` buffer (:mod:`.wire_pack`)::

    {"class": "module:qualname", "batch_size": [...], "names": null, "device": null,
     "entries": [{"key": "obs", "type": "tensor", "dtype": "float32", "shape": [3, 2]},
                 {"key": "info", "type": "nested", "value": {...the same, one level down}},
                 {"key": "note", "type": "non_tensor", "value": "v1"}]}

A lazy stack is ``{"lazy_stack": true, "class": <members' class>, "stack_dim": 0,
"members": [...]}``. The receiver finds each class among those already imported or defined
in its process (as ``load_memmap`` does by default: nothing is imported on its behalf), and
non-tensor values are turned back by the receiving class's declared fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor

from ....json_values import non_tensor_from_json, non_tensor_to_json, rebuilder_of
from ....non_tensor import NonTensorData, NonTensorStack
from ...core.lazy_stacks import is_lazy_stack, stack_lazily
from ...core.state import TensorCore
from ..flat_buffer import pack_bytes, views_into
from ..memmap.load import resolve_class
from ..memmap.metadata import DTYPES, dtype_name
from ..memmap.save import class_path

__all__ = ["decode_tree", "encode_tree", "pack_tree"]


def encode_tree(
    node: TensorCore, tensors: list[Tensor], where: tuple[str, ...] = ()
) -> dict[str, object]:
    """The JSON-ready structure of ``node``; its tensors are appended to ``tensors``."""
    if is_lazy_stack(node):
        return {
            "lazy_stack": True,
            "class": class_path(node.member_class),
            "stack_dim": node.stack_dim,
            "members": [
                encode_tree(m, tensors, (*where, f"<member {i}>"))
                for i, m in enumerate(node.members)
            ],
        }
    entries: list[dict[str, object]] = []
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            shape = list(leaf.shape)
            entries.append(
                {"key": key, "type": "tensor", "dtype": dtype_name(leaf.dtype), "shape": shape}
            )
            tensors.append(leaf.detach())
        elif isinstance(leaf, TensorCore):
            sub = encode_tree(leaf, tensors, (*where, key))
            entries.append({"key": key, "type": "nested", "value": sub})
        elif type(leaf) in (NonTensorData, NonTensorStack):
            kind, value = non_tensor_to_json(leaf, (*where, key))
            entry: dict[str, object] = {"key": key, "type": kind, "value": value}
            if type(leaf) is NonTensorData and leaf.meta:
                entry["meta"] = True
            entries.append(entry)
        else:
            raise TypeError(f"cannot send {(*where, key)!r}: unknown leaf {type(leaf).__name__}")
    return {
        "class": class_path(type(node)),
        "batch_size": list(node._batch_size),
        "names": None if node._names is None else list(node._names),
        "device": None if node._device is None else str(node._device),
        "entries": entries,
    }


def pack_tree(node: TensorCore, device: torch.device) -> tuple[bytes, Tensor]:
    """``node``'s structure as UTF-8 JSON and its tensors packed into one ``uint8`` buffer."""
    tensors: list[Tensor] = []
    structure = encode_tree(node, tensors)
    encoded = json.dumps(structure, separators=(",", ":")).encode()
    return encoded, pack_bytes(tensors, device)


def _likes(structure: Any, out: list[Tensor]) -> None:
    """Shape-only stand-ins of the tensors described, in packing order."""
    if structure.get("lazy_stack"):
        for member in structure["members"]:
            _likes(member, out)
        return
    for entry in structure["entries"]:
        if entry["type"] == "tensor":
            out.append(torch.empty(entry["shape"], dtype=DTYPES[entry["dtype"]], device="meta"))
        elif entry["type"] == "nested":
            _likes(entry["value"], out)


def decode_tree(encoded: bytes, buffer: Tensor, cls: type[TensorCore] | None = None) -> TensorCore:
    """The instance described by ``encoded`` (from :func:`pack_tree`), its tensors viewing
    ``buffer``. Classes must be imported (or defined) in this process."""
    structure = json.loads(encoded)
    likes: list[Tensor] = []
    _likes(structure, likes)
    return _build(structure, iter(views_into(buffer, likes)), cls, buffer.device)


def _build(
    structure: Any, tensors: Iterator[Tensor], cls: type[TensorCore] | None, where: torch.device
) -> TensorCore:
    """The instance; one recorded with a device gets the buffer's (``where``)."""
    if structure.get("lazy_stack"):
        member_cls = resolve_class(structure["class"], "imported")
        members = [_build(m, tensors, member_cls, where) for m in structure["members"]]
        return stack_lazily(members, structure["stack_dim"])
    if cls is None:
        cls = resolve_class(structure["class"], "imported")
    batch = tuple(structure["batch_size"])
    data: dict[str, object] = {}
    for entry in structure["entries"]:
        key, kind = entry["key"], entry["type"]
        if kind == "tensor":
            data[key] = next(tensors)
        elif kind == "nested":
            data[key] = _build(entry["value"], tensors, None, where)
        else:
            leaf = non_tensor_from_json(kind, entry["value"], batch, rebuilder_of(cls, key))
            if entry.get("meta") and type(leaf) is NonTensorData:
                leaf.meta = True
            data[key] = leaf
    names = structure["names"]
    return cls._new(
        data,
        torch.Size(batch),
        None if structure["device"] is None else where,
        None if names is None else tuple(names),
    )
