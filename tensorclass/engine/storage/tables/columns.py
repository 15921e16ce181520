"""Columns: an instance with a 1-D batch as named columns, and named columns as an instance.

A column is a tensor whose first dim is the rows, or a list of one value per row (a
non-tensor leaf: a shared value is repeated on every row, a :class:`NonTensorStack` gives
its values). Nested keys become one column each, named by the key parts joined with a
separator; reading splits the names again, so the nesting comes back.

Reading turns a non-tensor column whose rows are all equal back into one shared value (a
typed class's ``str`` field gets its ``str``), and other non-tensor columns into a
:class:`NonTensorStack`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor

from ....errors import TableFormatError
from ....non_tensor import NonTensorData, NonTensorStack, same_value
from ...core.self_types import B, Node
from ...core.state import TensorCore

__all__ = [
    "Column",
    "Device",
    "Layout",
    "build",
    "check_keys",
    "column_name",
    "non_tensor_leaf",
    "rows_of",
    "tensor_numpy",
    "to_columns",
]

#: a tensor whose first dim is the rows, or one value per row
Column = Tensor | list[object]

#: where a table is built (the ``device`` keyword of the ``from_*`` readers)
Device = torch.device | str | int | None


class Layout(NamedTuple):
    """How named columns become an instance: ``separator`` splits the column names into
    nested keys; the batch size is ``[rows]`` unless ``batch_size`` is given (or
    ``auto_batch_size``/``batch_dims`` ask for the longest shared shape); ``dtype`` casts
    every tensor. The keywords every ``from_*`` reader of a table takes."""

    separator: str | None
    batch_size: Sequence[int] | None = None
    device: Device = None
    dtype: torch.dtype | None = None
    auto_batch_size: bool = False
    batch_dims: int | None = None


def rows_of(obj: TensorCore, what: str) -> int:
    """The number of rows of ``obj``: its one batch dim (other batch sizes raise)."""
    size = obj._batch_size
    if len(size) != 1:
        raise TableFormatError(
            f"{what}: a table has one row per batch element, so the batch size must have "
            f"one dim; got batch_size={list(size)} (call .reshape(-1) first)"
        )
    return int(size[0])


def to_columns(obj: Node, what: str) -> list[tuple[tuple[str, ...], Column]]:
    """Every leaf of ``obj`` (1-D batch) as ``(key path, column)``, in key order."""
    n = rows_of(obj, what)
    out: list[tuple[tuple[str, ...], Column]] = []
    for key, value in obj.items(True, True):
        path = (key,) if isinstance(key, str) else tuple(key)
        if isinstance(value, Tensor):
            out.append((path, value))
        else:
            out.append((path, _cells(obj, path, value, n)))
    return out


def _cells(obj: Node, path: tuple[str, ...], value: Any, n: int) -> list[object]:
    """The rows of a non-tensor leaf: a stack's values, or a shared value ``n`` times."""
    if isinstance(value, NonTensorStack):  # get's stack (a TensorDict's)
        return list(value.tolist())
    node: object = obj
    for part in path:  # the stored leaf, when the storage is a dict (not a lazy stack)
        data = getattr(node, "_data", None)
        if type(data) is not dict or part not in data:
            node = None
            break
        node = data[part]
    if isinstance(node, NonTensorStack):
        return list(value)
    if node is None and type(value) is list and len(value) == n:  # a lazy stack's rows
        return value
    return [value] * n


def column_name(path: tuple[str, ...], separator: str | None, what: str) -> str:
    """The column name of a key path: its parts joined by ``separator``."""
    if len(path) == 1 and (separator is None or separator not in path[0]):
        return path[0]
    if separator is None:
        raise TableFormatError(
            f"{what}: the nested key {path!r} needs a separator to become a column name "
            f"(pass separator='.')",
            key=path,
        )
    if any(separator in part for part in path):
        raise TableFormatError(
            f"{what}: the key {path!r} contains the separator {separator!r}, so its nesting "
            f"could not be read back; pass another separator",
            key=path,
        )
    return separator.join(path)


def tensor_numpy(tensor: Tensor) -> np.ndarray:
    """A NumPy array of ``tensor``'s values on the CPU (``bfloat16``, which NumPy lacks,
    becomes ``float32``)."""
    tensor = tensor.detach()
    if tensor.dtype is torch.bfloat16:
        tensor = tensor.float()
    array: np.ndarray = tensor.cpu().resolve_conj().resolve_neg().numpy()
    return array


def non_tensor_leaf(values: Sequence[object]) -> NonTensorData | NonTensorStack:
    """The leaf for a non-tensor column: one shared value when every row is equal, else a
    :class:`NonTensorStack` of the rows."""
    if values and all(same_value(v, values[0]) for v in values[1:]):
        return NonTensorData(values[0])
    array = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        array[i] = v
    return NonTensorStack(array)


def _shown(path: tuple[str, ...], names: dict[tuple[str, ...], str] | None) -> str:
    if names is not None and path in names:
        return repr(names[path])
    return repr(path[0] if len(path) == 1 else path)


def check_keys(
    paths: Iterable[tuple[str, ...]], what: str, names: Iterable[str] | None = None
) -> None:
    """Refuse columns that would lose data as keys: two columns with one key path (the
    same name twice), or a column whose key is a nested level of another's (``"a"`` and
    ``"a.b"``: one would replace the other). ``names`` are the columns' names, in the
    order of ``paths``, for the message (else the key paths are shown)."""
    seen: dict[tuple[str, ...], str | None] = {}
    given = None if names is None else iter(names)
    for path in paths:
        name = None if given is None else next(given)
        if path in seen:
            first = seen[path]
            shown = repr(path) if name is None or first is None else f"{first!r} and {name!r}"
            raise TableFormatError(
                f"{what}: the columns {shown} both give the key {path!r}; rename one of them "
                f"(nothing was built)",
                key=path,
            )
        seen[path] = name
    labels = {path: name for path, name in seen.items() if name is not None}
    for path in seen:
        for depth in range(1, len(path)):
            if path[:depth] in seen:
                raise TableFormatError(
                    f"{what}: the column {_shown(path[:depth], labels)} holds the key "
                    f"{path[:depth]!r}, and the column {_shown(path, labels)} nests the key "
                    f"{path!r} under it: one would replace the other. Rename one of them, or "
                    f"pass another separator (nothing was built)",
                    key=path,
                )


def build(
    cls: type[B],
    columns: Iterable[tuple[tuple[str, ...], object]],
    rows: int,
    layout: Layout,
    what: str = "from_arrow",
) -> B:
    """An instance of ``cls`` from ``(key path, leaf)`` pairs, laid out as ``layout`` says
    (key paths that would replace one another raise first, see :func:`check_keys`)."""
    columns = list(columns)
    check_keys((path for path, _ in columns), what)
    mapping: dict[str | tuple[str, ...], object] = {}
    for path, leaf in columns:
        if layout.dtype is not None and isinstance(leaf, Tensor):
            leaf = leaf.to(layout.dtype)
        mapping[path[0] if len(path) == 1 else path] = leaf
    size = torch.Size([rows] if layout.batch_size is None else layout.batch_size)
    where = torch.device(layout.device) if layout.device is not None else None
    result = cls._from_mapping(mapping, size, where)
    if layout.auto_batch_size or layout.batch_dims is not None:
        result.auto_batch_size_(layout.batch_dims)
    return result
