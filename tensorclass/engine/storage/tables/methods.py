"""Table methods of every tensor class: pandas, Arrow, Parquet, CSV and JSON.

Functions, attached to ``TensorDictBase`` in ``engine/base.py``: the public signatures of
the readers and writers of :mod:`.arrow` and :mod:`.frames` (whose ``to_parquet``,
``to_csv`` and ``to_json`` are attached themselves); each reader gathers its keywords in
one :class:`~.columns.Layout`. A table has one row per batch element, so these
need a 1-D batch; nested keys are columns named by the key parts joined with ``separator``
(``"."`` by default), and reading splits the names again. The ``from_*`` class methods
build the class they are called on: ``MyClass.from_parquet(path)`` gives a ``MyClass``
(its fields checked as the constructor checks them), ``TensorDict.from_parquet(path)`` a
``TensorDict``. pandas and pyarrow are optional (``pip install "tensorclass[formats]"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ...core.self_types import B
from .arrow import Nulls, from_table, read_parquet, to_table
from .columns import Layout
from .frames import PathLike, from_dataframe, read_csv, read_json, to_dataframe

__all__ = [
    "from_arrow",
    "from_csv",
    "from_json",
    "from_pandas",
    "from_parquet",
    "to_arrow",
    "to_pandas",
]


def to_pandas(self: B, *, separator: str | None = ".") -> Any:
    """A ``pandas.DataFrame``: one row per batch element, one column per leaf.

    Tensor leaves must be 1-D (one scalar per row); non-tensor leaves become object
    columns (a shared value on every row). ``separator=None`` refuses nested keys.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.arange(2), "b": {"c": torch.ones(2)}}, batch_size=[2])
    >>> df = td.to_pandas()
    >>> list(df.columns), TensorDict.from_pandas(df)["b", "c"].tolist()
    (['a', 'b.c'], [1.0, 1.0])
    """
    return to_dataframe(self, separator)


def from_pandas(
    cls: type[B],
    dataframe: Any,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: torch.device | str | int | None = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
) -> B:
    """Build an instance from a ``pandas.DataFrame``: one entry per column.

    Numeric and boolean columns become tensors of the same dtype (``dtype`` casts
    them all); other columns become non-tensor values (one shared value when every row
    is equal). Column names are split at ``separator`` into nested keys. The batch size
    is ``[len(dataframe)]`` unless ``batch_size`` is given; ``auto_batch_size=True``
    (or ``batch_dims``) takes the longest shape every leaf shares.
    """
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(cls, dataframe, layout)


def to_arrow(self: B, *, separator: str | None = None) -> Any:
    """A ``pyarrow.Table``: one row per batch element, one column per entry.

    Tensors with more than one dim become ``arrow.fixed_shape_tensor`` columns; nested
    levels become ``struct`` columns (or columns named by the joined key, with a
    ``separator``); non-tensor leaves the column type Arrow infers.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"x": torch.zeros(2, 3), "b": {"c": torch.ones(2)}}, batch_size=[2])
    >>> table = td.to_arrow()
    >>> table.column_names, TensorDict.from_arrow(table)["x"].shape
    (['x', 'b'], torch.Size([2, 3]))
    """
    return to_table(self, separator)


def from_arrow(
    cls: type[B],
    table: object,
    *,
    copy: bool | None = None,
    nulls: Nulls = "raise",
    mask_key: object = None,
    device: torch.device | str | int | None = None,
    separator: str | None = None,
) -> B:
    """Build an instance from a ``pyarrow.Table`` or ``RecordBatch`` (or anything
    ``pyarrow.table`` accepts): one entry per column, batch size ``[num_rows]``.

    ``struct`` columns become nested levels, fixed-shape tensor and fixed-size list
    columns tensors with trailing dims, number and boolean columns tensors; other
    columns non-tensor values. Null rows raise (``nulls="raise"``), are filled with
    ``NaN``, ``0``, ``False`` or ``None`` (``"fill"``), or filled with a boolean entry
    ``(*mask_key, *key)`` added that is ``True`` on the valid rows (``"mask"``;
    ``mask_key`` defaults to ``"_mask"``). The data is always copied (``copy`` is
    accepted for compatibility: torch has no read-only tensors to view Arrow's
    buffers with). ``separator`` also splits column names into nested keys.
    """
    del copy
    return from_table(cls, table, Layout(separator, device=device), nulls, mask_key)


def from_parquet(
    cls: type[B],
    /,
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: torch.device | str | int | None = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    columns: list[str] | None = None,
    **kwargs: object,
) -> B:
    """Read a Parquet file (only ``columns``, if given): one entry per column, as
    :meth:`from_arrow` reads them, names split at ``separator``. A file that is not
    Parquet raises :class:`~tensorclass.TableFormatError` naming it. ``kwargs`` go to
    ``pyarrow.parquet.read_table``; the other keywords are :meth:`from_pandas`'s."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_table(cls, read_parquet(path, columns, **kwargs), layout, what="from_parquet")


def from_csv(
    cls: type[B],
    /,
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: torch.device | str | int | None = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    **kwargs: object,
) -> B:
    """Read a CSV file as :meth:`from_pandas` reads a data frame (``kwargs`` go to
    ``pandas.read_csv``). A file that is not CSV raises
    :class:`~tensorclass.TableFormatError` naming it.

    >>> import os, tempfile, torch
    >>> from tensorclass import TensorDict
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> TensorDict({"a": torch.arange(3), "b": {"c": torch.ones(3)}}, batch_size=[3]).to_csv(path)
    >>> TensorDict.from_csv(path)["b", "c"].tolist()
    [1.0, 1.0, 1.0]
    """
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(cls, read_csv(path, **kwargs), layout, "from_csv")


def from_json(
    cls: type[B],
    /,
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: torch.device | str | int | None = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    lines: bool = False,
    **kwargs: object,
) -> B:
    """Read a JSON file of row objects (``lines=True``: one per line) as
    :meth:`from_pandas` reads a data frame (``kwargs`` go to ``pandas.read_json``). A
    file that is not such JSON raises :class:`~tensorclass.TableFormatError` naming it."""
    layout = Layout(separator, batch_size, device, dtype, auto_batch_size, batch_dims)
    return from_dataframe(cls, read_json(path, lines, **kwargs), layout, "from_json")
