"""Writing a tree into an HDF5 file or Zarr store, and the layout of a file written without one.

Helpers of :class:`~.persistent.PersistentTensorDict`: :func:`plan` describes a tree (every
key and value checked before anything is written), :func:`write_arrays` stores its tensors;
:func:`infer_level` reads the groups of a file that another tool wrote as a layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from torch import Tensor

from ....errors import FileFormatError
from ...core.state import TensorCore
from ...core.untrusted import MAX_DEPTH
from .backends import Backend, numpy_of, torch_dtype_of
from .layout import Layout, describe

__all__ = [
    "common_prefix",
    "has_stack",
    "infer_level",
    "plan",
    "plan_tensor",
    "rebatch",
    "tensor_entries",
    "write_arrays",
]

Arrays = dict[str, np.ndarray]


def tensor_entries(level: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every tensor entry of a layout level, at every depth."""
    for member in level.get("members", ()):
        yield from tensor_entries(member)
    for entry in level.get("keys", {}).values():
        if "tensor" in entry:
            yield entry
        elif "td" in entry:
            yield from tensor_entries(entry["td"])


def has_stack(level: dict[str, Any]) -> bool:
    """Whether a layout level holds a lazy stack (at any depth)."""
    if "members" in level or "stack_dim" in level:
        return True
    return any("td" in e and has_stack(e["td"]) for e in level.get("keys", {}).values())


def plan(node: TensorCore, path: tuple[str, ...] = ()) -> tuple[dict[str, Any], Arrays]:
    """The layout level of ``node`` and the arrays to store, by path (nothing written)."""
    layout = Layout("/")
    level = describe(node, layout, path)
    arrays: Arrays = {}
    stored_as: dict[str, str | None] = {}
    for name, tensor in layout.tensors.items():
        arrays[name], stored_as[name] = numpy_of(tensor)
    for entry in tensor_entries(level):
        dtype = stored_as[entry["tensor"]]
        if dtype is not None:
            entry["dtype"] = dtype  # numpy has no such dtype: stored as an int of its size
    return level, arrays


def plan_tensor(path: tuple[str, ...], tensor: Tensor) -> tuple[dict[str, Any], Arrays]:
    """The layout entry of one tensor at ``path`` and its array."""
    name = Layout("/").name(path, tensor)
    array, dtype = numpy_of(tensor)
    return {"tensor": name, **({"dtype": dtype} if dtype else {})}, {name: array}


def write_arrays(store: Backend, root: object, arrays: Arrays, options: dict[str, object]) -> None:
    """Store each array at its path below ``root`` (replacing what is there)."""
    for path, array in arrays.items():
        store.write(root, path, array, options)


def infer_level(store: Backend, group: Any, filename: object, path: str = "") -> dict[str, Any]:
    """The layout of a group written without one: datasets of numbers are tensors, other
    datasets non-tensor values (read now), groups nested levels; the batch size is ``[]``."""
    if path.count("/") > MAX_DEPTH:
        raise FileFormatError(f"{filename}: the groups nest more than {MAX_DEPTH} levels")
    keys: dict[str, Any] = {}
    for name in store.members(group):
        where = f"{path}{name}"
        outside = store.inside(group, name)
        if outside is not None:
            raise FileFormatError(f"{filename}: {where!r} is {outside}; not read")
        node = group[name]
        if store.is_group(node):
            keys[name] = {"td": infer_level(store, node, filename, where + "/")}
        elif torch_dtype_of(node.dtype) is not None:
            keys[name] = {"tensor": where}
        else:
            problem = store.declared_problem(node, node.dtype.itemsize)
            if problem is not None:
                raise FileFormatError(f"{filename}: {where!r} {problem}; not read")
            keys[name] = {"non_tensor": _decoded(np.asarray(node[()]).tolist())}
    return {"batch_size": [], "names": None, "keys": keys}


def common_prefix(shapes: list[list[int]], limit: int | None) -> list[int]:
    """The leading sizes every shape shares (at most ``limit`` of them)."""
    if not shapes:
        return []
    prefix: list[int] = []
    for sizes in zip(*shapes):
        if len(set(sizes)) != 1 or (limit is not None and len(prefix) >= limit):
            break
        prefix.append(sizes[0])
    return prefix


def rebatch(level: dict[str, Any], batch: list[int]) -> None:
    """Give ``level`` and its nested levels the leading batch dims ``batch``."""
    old = level["batch_size"]
    level["batch_size"] = list(batch) + old[len(batch) :]
    for entry in level.get("keys", {}).values():
        if "td" in entry:
            rebatch(entry["td"], batch)


def _decoded(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value
