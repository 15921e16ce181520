"""Arrow tables and Parquet files.

Writing: a 1-D tensor becomes a primitive column, a tensor with more dims an
``arrow.fixed_shape_tensor`` column (shape and dtype come back), a non-tensor leaf the
column type ``pyarrow.array`` infers. Nested keys become ``struct`` columns when no
separator is given (``to_arrow``), or columns named by the joined key (Parquet's default).

Arrow has no ``bfloat16``: such tensors are written as ``float32`` and their key paths are
listed (as JSON) in the schema metadata, so reading gives ``bfloat16`` back.

Reading: ``struct`` columns become nested levels; fixed-shape tensors and fixed-size lists
of numbers become tensors with trailing dims; numbers and booleans become tensors; any
other column (strings, variable-length lists, dates...) becomes non-tensor values.
Nulls raise, or are filled (``NaN``, ``0``, ``False``, ``None``), optionally with a mask.
Parquet files are read with ``pyarrow.parquet``, which never runs code from the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor

from ....errors import TableFormatError
from ...core.self_types import B, Node
from ..formats.extras import require
from .columns import (
    Column,
    Layout,
    build,
    check_keys,
    column_name,
    non_tensor_leaf,
    rows_of,
    tensor_numpy,
    to_columns,
)

__all__ = ["from_table", "read_parquet", "to_parquet", "to_table"]

PathLike = str | Path
#: the schema metadata key listing the key paths whose tensors were ``bfloat16``
_BFLOAT16 = "tensorclass.bfloat16"
Nulls = Literal["raise", "fill", "mask"]
#: Arrow columns by name, nested levels as dicts of them
_Tree = dict[str, object]


def _array(pa: ModuleType, path: tuple[str, ...], column: Column, what: str) -> object:
    try:
        if isinstance(column, Tensor):
            if column.is_complex():
                raise TableFormatError(
                    f"{what}: the key {path!r} holds a complex tensor, which Arrow cannot "
                    f"hold; store its real and imaginary parts under two keys",
                    key=path,
                )
            values = tensor_numpy(column)
            if values.ndim == 1:
                return pa.array(values)
            return pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(values))
        return pa.array(column)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as err:
        raise TableFormatError(
            f"{what}: the values of the key {path!r} cannot be an Arrow column: {err}", key=path
        ) from err


def _structs(pa: ModuleType, tree: _Tree) -> tuple[list[str], list[object]]:
    names: list[str] = []
    arrays: list[object] = []
    for name, node in tree.items():
        names.append(name)
        if isinstance(node, dict):
            inner_names, inner = _structs(pa, node)
            arrays.append(pa.StructArray.from_arrays(inner, names=inner_names))
        else:
            arrays.append(node)
    return names, arrays


def to_table(obj: Node, separator: str | None, what: str = "to_arrow") -> Any:
    """A ``pyarrow.Table`` with one row per batch element (nested levels as ``struct``
    columns when ``separator`` is ``None``, else columns named by the joined key)."""
    pa = require("pyarrow", what)
    rows_of(obj, what)
    tree: _Tree = {}
    bfloat16: list[list[str]] = []  # Arrow has no bfloat16: such columns are float32
    for path, column in to_columns(obj, what):
        array = _array(pa, path, column, what)
        if isinstance(column, Tensor) and column.dtype is torch.bfloat16:
            bfloat16.append(list(path))
        if separator is not None:
            tree[column_name(path, separator, what)] = array
            continue
        node = tree
        for part in path[:-1]:
            level = node.setdefault(part, {})
            assert isinstance(level, dict)  # the paths of one tree: a level is never a leaf
            node = level
        node[path[-1]] = array
    names, arrays = _structs(pa, tree)
    metadata = {_BFLOAT16: json.dumps(bfloat16)} if bfloat16 else None
    return pa.Table.from_arrays(arrays, names=names, metadata=metadata)


def _bfloat16_paths(table: Any) -> set[tuple[str, ...]]:
    """The key paths :func:`to_table` recorded as ``bfloat16`` (plain JSON, never code)."""
    raw = (table.schema.metadata or {}).get(_BFLOAT16.encode())
    try:
        paths = json.loads(raw) if raw else []
        return {tuple(str(part) for part in path) for path in paths}
    except (ValueError, TypeError):
        return set()  # metadata not written by tensorclass: the columns stay as they are


def _fill_value(pa: ModuleType, kind: object) -> float | bool | int | None:
    if pa.types.is_floating(kind):
        return float("nan")
    if pa.types.is_boolean(kind):
        return False
    if pa.types.is_integer(kind):
        return 0
    return None


class _Reader:
    """Reads the columns of one table into ``(key path, leaf)`` pairs."""

    def __init__(self, pa: ModuleType, nulls: Nulls, mask_key: tuple[str, ...], what: str) -> None:
        self.pa = pa
        self.nulls = nulls
        self.mask_key = mask_key
        self.what = what
        self.leaves: list[tuple[tuple[str, ...], object]] = []

    def read(self, path: tuple[str, ...], array: Any) -> None:
        pa = self.pa
        kind = array.type
        if array.null_count:
            if self.nulls == "raise":
                raise TableFormatError(
                    f"{self.what}: the column {'.'.join(path)!r} has {array.null_count} null "
                    f"rows; pass nulls='fill' or nulls='mask' to fill them",
                    key=path,
                )
            if self.nulls == "mask":
                valid = array.is_valid().to_numpy(zero_copy_only=False)
                self.leaves.append(((*self.mask_key, *path), torch.from_numpy(valid.copy())))
        if pa.types.is_struct(kind):
            for field, child in zip(kind, array.flatten(), strict=True):
                self.read((*path, field.name), child)
            return
        if isinstance(kind, pa.FixedShapeTensorType) or pa.types.is_fixed_size_list(kind):
            self.leaves.append((path, self._tensor_rows(path, array)))
            return
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
            if array.null_count:
                array = array.fill_null(_fill_value(pa, kind))
            values = array.to_numpy(zero_copy_only=False)
            self.leaves.append((path, torch.from_numpy(np.array(values, copy=True))))
            return
        self.leaves.append((path, non_tensor_leaf(array.to_pylist())))

    def _tensor_rows(self, path: tuple[str, ...], array: Any) -> Tensor:
        if array.null_count:
            raise TableFormatError(
                f"{self.what}: the tensor column {'.'.join(path)!r} has null rows, which "
                f"cannot be filled",
                key=path,
            )
        if isinstance(array.type, self.pa.FixedShapeTensorType):
            values = array.to_numpy_ndarray()
        else:
            flat = array.flatten()
            if flat.null_count or not (
                self.pa.types.is_integer(flat.type)
                or self.pa.types.is_floating(flat.type)
                or self.pa.types.is_boolean(flat.type)
            ):
                raise TableFormatError(
                    f"{self.what}: the column {'.'.join(path)!r} is a list of "
                    f"{flat.type} that is not a tensor",
                    key=path,
                )
            values = flat.to_numpy(zero_copy_only=False).reshape(len(array), -1)
        return torch.from_numpy(np.array(values, copy=True))


def _field_keys(
    pa: ModuleType,
    field: Any,
    path: tuple[str, ...],
    name: str,
    names: list[str],
    paths: list[tuple[str, ...]],
) -> None:
    """The key path (and a name for messages) of each leaf column of ``field``: a
    ``struct`` field nests its children's names, as :class:`_Reader` reads them."""
    if pa.types.is_struct(field.type):
        for child in field.type:
            _field_keys(pa, child, (*path, child.name), f"{name}.{child.name}", names, paths)
        return
    names.append(name)
    paths.append(path)


def from_table(
    cls: type[B],
    table: Any,
    layout: Layout,
    nulls: Nulls = "raise",
    mask_key: object = None,
    what: str = "from_arrow",
) -> B:
    """An instance of ``cls`` from an Arrow table (or record batch, or anything
    ``pyarrow.table`` accepts): one entry per column."""
    pa = require("pyarrow", what)
    if nulls not in ("raise", "fill", "mask"):
        raise ValueError(f"{what}: nulls must be 'raise', 'fill' or 'mask', got {nulls!r}")
    if mask_key is not None and nulls != "mask":
        raise ValueError(f"{what}: mask_key is only used with nulls='mask', got nulls={nulls!r}")
    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        table = pa.table(table)
    key = "_mask" if mask_key is None else mask_key
    if not isinstance(key, str | Iterable):
        raise TypeError(f"{what}: mask_key must be a key, got {key!r}")
    reader = _Reader(pa, nulls, (key,) if isinstance(key, str) else tuple(key), what)
    separator = layout.separator
    names: list[str] = []
    paths: list[tuple[str, ...]] = []
    for field in table.schema:  # every key the columns give, before any is read
        _field_keys(
            pa,
            field,
            tuple(field.name.split(separator)) if separator else (field.name,),
            field.name,
            names,
            paths,
        )
    check_keys(paths, what, names)
    for name, column in zip(table.column_names, table.columns, strict=True):
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        reader.read(tuple(name.split(separator)) if separator else (name,), column)
    bfloat16 = _bfloat16_paths(table)
    leaves = [
        (path, leaf.to(torch.bfloat16) if path in bfloat16 and isinstance(leaf, Tensor) else leaf)
        for path, leaf in reader.leaves
    ]
    return build(cls, leaves, table.num_rows, layout, what)


def to_parquet(self: B, path: PathLike, *, separator: str | None = ".", **kwargs: object) -> None:
    """Write a Parquet file: one row per batch element, one column per leaf (named by
    the key joined with ``separator``; ``None`` writes nested levels as ``struct``
    columns). Tensors with more than one dim keep their shape (fixed-shape tensor
    columns). ``kwargs`` go to ``pyarrow.parquet.write_table`` (``compression``...)."""
    pq = require("pyarrow.parquet", "to_parquet")
    pq.write_table(to_table(self, separator, "to_parquet"), path, **kwargs)


def read_parquet(path: PathLike, columns: list[str] | None, **kwargs: object) -> Any:
    """The Arrow table in a Parquet file (errors name the file)."""
    pa = require("pyarrow", "from_parquet")
    pq = require("pyarrow.parquet", "from_parquet")
    try:
        return pq.read_table(path, columns=columns, **kwargs)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError, ValueError) as err:
        raise TableFormatError(
            f"from_parquet: cannot read {str(path)!r} as Parquet: {err}"
        ) from err
