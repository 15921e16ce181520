"""pandas data frames, CSV and JSON: one scalar per cell.

A tensor leaf must be 1-D (one scalar per row): a leaf of shape ``(N, 3)`` raises, as in
``tensordict`` (Arrow and Parquet keep such leaves, see :mod:`.arrow`). Non-tensor leaves
become object columns. A data frame keeps every NumPy dtype; CSV and JSON keep only what
their text says (integers come back ``int64``, floats ``float64``, unless ``dtype`` is
given). Reading uses ``pandas.read_csv`` and ``pandas.read_json``, which never run code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ....errors import TableFormatError
from ....non_tensor import NonTensorData, NonTensorStack
from ...core.self_types import B, Node
from ..formats.extras import require
from .columns import (
    Layout,
    build,
    check_keys,
    column_name,
    non_tensor_leaf,
    rows_of,
    tensor_numpy,
    to_columns,
)

__all__ = ["from_dataframe", "read_csv", "read_json", "to_csv", "to_dataframe", "to_json"]

PathLike = str | Path


def to_dataframe(obj: Node, separator: str | None, what: str = "to_pandas") -> Any:
    """A ``pandas.DataFrame`` with one row per batch element and one column per leaf."""
    pd = require("pandas", what)
    rows = rows_of(obj, what)
    data: dict[str, np.ndarray] = {}
    for path, column in to_columns(obj, what):
        name = column_name(path, separator, what)
        if isinstance(column, Tensor):
            if column.dim() != 1:
                raise TableFormatError(
                    f"{what}: the key {path!r} holds a tensor of shape {list(column.shape)}, "
                    f"but a column holds one scalar per row (shape [{rows}]); split it into "
                    f"one key per element, or use to_parquet/to_arrow, which keep it",
                    key=path,
                )
            data[name] = tensor_numpy(column)
        else:
            cells = np.empty(rows, dtype=object)
            for i, value in enumerate(column):
                cells[i] = value
            data[name] = cells
    return pd.DataFrame(data, index=pd.RangeIndex(rows))


def _leaf(pd: ModuleType, series: Any) -> Tensor | NonTensorData | NonTensorStack:
    """The leaf for one data-frame column: a tensor for numbers and booleans."""
    dtype = series.dtype
    array = None
    if isinstance(dtype, np.dtype):
        array = series.to_numpy()
    elif pd.api.types.is_numeric_dtype(dtype) and not series.isna().any():
        array = series.to_numpy(dtype=getattr(dtype, "numpy_dtype", None))  # nullable ints
    if array is not None and array.dtype.kind in "biufc":
        return torch.from_numpy(np.array(array, copy=True))
    return non_tensor_leaf(series.tolist())


def from_dataframe(cls: type[B], dataframe: Any, layout: Layout, what: str = "from_pandas") -> B:
    """An instance of ``cls`` from a data frame: its columns split at ``layout.separator``
    (columns whose keys would replace one another raise before anything is read)."""
    pd = require("pandas", what)
    names = [str(name) for name in dataframe.columns]
    paths = [tuple(text.split(layout.separator)) if layout.separator else (text,) for text in names]
    check_keys(paths, what, names)
    columns = [
        (path, _leaf(pd, series))
        for path, (_, series) in zip(paths, dataframe.items(), strict=True)
    ]
    return build(cls, columns, len(dataframe), layout, what)


def to_csv(self: B, path: PathLike, *, separator: str | None = ".", **kwargs: object) -> None:
    """Write a CSV file (header row, no index column) with :meth:`to_pandas`'s columns;
    ``kwargs`` go to ``pandas.DataFrame.to_csv``. CSV is text: reading gives
    ``int64``/``float64``/``bool`` columns back (or ``dtype``)."""
    kwargs.setdefault("index", False)
    to_dataframe(self, separator, "to_csv").to_csv(path, **kwargs)


def to_json(
    self: B, path: PathLike, *, separator: str | None = ".", lines: bool = False, **kwargs: object
) -> None:
    """Write a JSON file: a list of row objects (``lines=True``: one object per line),
    with :meth:`to_pandas`'s columns; ``kwargs`` go to ``pandas.DataFrame.to_json``.
    Floats keep 15 significant digits."""
    kwargs.setdefault("orient", "records")
    kwargs.setdefault("double_precision", 15)
    to_dataframe(self, separator, "to_json").to_json(path, lines=lines, **kwargs)


def _read(
    what: str,
    kind: str,
    path: PathLike,
    reader: Callable[[ModuleType], Callable[..., Any]],
    **kwargs: object,
) -> Any:
    pd = require("pandas", what)
    try:
        return reader(pd)(path, **kwargs)
    except FileNotFoundError:
        raise
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise TableFormatError(f"{what}: cannot read {str(path)!r} as {kind}: {err}") from err


def read_csv(path: PathLike, **kwargs: object) -> Any:
    """The data frame in a CSV file (errors name the file)."""
    return _read("from_csv", "CSV", path, lambda pd: pd.read_csv, **kwargs)


def read_json(path: PathLike, lines: bool, **kwargs: object) -> Any:
    """The data frame in a JSON file of row objects (errors name the file)."""
    kwargs.setdefault("orient", "records")
    kwargs.setdefault("dtype", False)  # as parsed: no guessed dtypes or dates
    frame = _read("from_json", "JSON", path, lambda pd: pd.read_json, lines=lines, **kwargs)
    if not hasattr(frame, "columns"):
        raise TableFormatError(f"from_json: {str(path)!r} holds no table of rows")
    return frame
