"""The top-level table functions: ``to_arrow(td)`` and ``from_*`` building a ``TensorDict``.

Each forwards to the method of the same name (``tensorclass.engine.storage.tables.methods``);
call the class method on a tensor class (``MyClass.from_parquet(path)``) to get that class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ....registry import dynamic_class
from .arrow import Nulls
from .frames import PathLike

__all__ = ["from_arrow", "from_csv", "from_json", "from_pandas", "from_parquet", "to_arrow"]

Device = torch.device | str | int | None


def to_arrow(td: Any) -> Any:
    """A ``pyarrow.Table`` of ``td`` (one batch dim): one row per element, one column per
    entry, nested levels as ``struct`` columns (see ``TensorDict.to_arrow``).

    >>> import torch
    >>> from tensorclass import TensorDict, from_arrow, to_arrow
    >>> table = to_arrow(TensorDict({"x": torch.arange(3)}, batch_size=[3]))
    >>> table.num_rows, from_arrow(table)["x"].tolist()
    (3, [0, 1, 2])
    """
    return td.to_arrow()


def from_arrow(
    table: Any,
    *,
    copy: bool | None = None,
    nulls: Nulls = "raise",
    mask_key: Any = None,
    device: Device = None,
) -> Any:
    """A ``TensorDict`` from a ``pyarrow.Table`` (see ``TensorDict.from_arrow``)."""
    return dynamic_class().from_arrow(
        table, copy=copy, nulls=nulls, mask_key=mask_key, device=device
    )


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
    return dynamic_class().from_pandas(
        dataframe,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        separator=separator,
        dtype=dtype,
    )


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
    **kwargs: Any,
) -> Any:
    """A ``TensorDict`` from a Parquet file (see ``TensorDict.from_parquet``)."""
    return dynamic_class().from_parquet(
        path,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        separator=separator,
        dtype=dtype,
        columns=columns,
        **kwargs,
    )


def from_csv(
    path: PathLike,
    *,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    device: Device = None,
    batch_size: Sequence[int] | None = None,
    separator: str | None = ".",
    dtype: torch.dtype | None = None,
    **kwargs: Any,
) -> Any:
    """A ``TensorDict`` from a CSV file (see ``TensorDict.from_csv``)."""
    return dynamic_class().from_csv(
        path,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        separator=separator,
        dtype=dtype,
        **kwargs,
    )


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
    **kwargs: Any,
) -> Any:
    """A ``TensorDict`` from a JSON file of row objects (see ``TensorDict.from_json``)."""
    return dynamic_class().from_json(
        path,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
        separator=separator,
        dtype=dtype,
        lines=lines,
        **kwargs,
    )
