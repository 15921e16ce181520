"""The top-level table functions: ``to_arrow(td)`` and ``from_*`` building a ``TensorDict``.

tensordict's function forms: the same readers and writer as the methods of
:mod:`.methods` (``to_table``, ``from_dataframe``, ``from_table`` with one
:class:`~.columns.Layout`), building a ``TensorDict``; their signatures are tensordict's
(no ``separator`` for ``from_arrow``). Call the class method on a tensor class
(``MyClass.from_parquet(path)``) to get that class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ....registry import dynamic_class
from .arrow import Nulls, from_table, read_parquet, to_table
from .columns import Device, Layout
from .frames import PathLike, from_dataframe, read_csv, read_json

__all__ = ["from_arrow", "from_csv", "from_json", "from_pandas", "from_parquet", "to_arrow"]


def to_arrow(td: Any) -> Any:
    """A ``pyarrow.Table`` of ``td`` (one batch dim): one row per element, one column per
    entry, nested levels as ``struct`` columns (see ``TensorDict.to_arrow``).

    >>> import torch
    >>> from tensorclass import TensorDict, from_arrow, to_arrow
    >>> table = to_arrow(TensorDict({"x": torch.arange(3)}, batch_size=[3]))
    >>> table.num_rows, from_arrow(table)["x"].tolist()
    (3, [0, 1, 2])
    """
    return to_table(td, None)


def from_arrow(
    table: object,
    *,
    copy: bool | None = None,
    nulls: Nulls = "raise",
    mask_key: object = None,
    device: Device = None,
) -> Any:
    """A ``TensorDict`` from a ``pyarrow.Table`` (see ``TensorDict.from_arrow``)."""
    del copy
    return from_table(dynamic_class(), table, Layout(None, device=device), nulls, mask_key)


def from_pandas(
    dataframe: Any,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: Device = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
) -> Any:
    """A ``TensorDict`` from a ``pandas.DataFrame`` (see ``TensorDict.from_pandas``)."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(dynamic_class(), dataframe, layout)


def from_parquet(
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: Device = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    columns: list[str] | None = None,
    **kwargs: object,
) -> Any:
    """A ``TensorDict`` from a Parquet file (see ``TensorDict.from_parquet``)."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    table = read_parquet(path, columns, **kwargs)
    return from_table(dynamic_class(), table, layout, what="from_parquet")


def from_csv(
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: Device = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    **kwargs: object,
) -> Any:
    """A ``TensorDict`` from a CSV file (see ``TensorDict.from_csv``)."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(dynamic_class(), read_csv(path, **kwargs), layout, "from_csv")


def from_json(
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: Device = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    lines: bool = False,
    **kwargs: object,
) -> Any:
    """A ``TensorDict`` from a JSON file of row objects (see ``TensorDict.from_json``)."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(dynamic_class(), read_json(path, lines, **kwargs), layout, "from_json")
