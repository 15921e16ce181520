"""Combining and grouping instances by key: ``merge_tensordicts``, ``group_by``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from ...errors import StructureMismatchError
from ...keys import NestedKey, unravel_key_tuple
from ...non_tensor import NonTensorData, NonTensorStack
from ...registry import dynamic_class
from ..core.state import TensorCore
from .listing import _walk

__all__ = ["group_by", "merge_tensordicts"]

Callback = Callable[..., Any]


def _callback_for(
    callback_exist: Callback | Mapping[NestedKey, Callback] | None, key: tuple[str, ...]
) -> Callback | None:
    if callback_exist is None or callable(callback_exist):
        return callback_exist
    for raw, fn in callback_exist.items():
        if unravel_key_tuple(raw) == key:
            return fn
    return None


def merge_tensordicts(
    *tensordicts: TensorCore,
    callback_exist: Callback | Mapping[NestedKey, Callback] | None = None,
) -> Any:
    """A ``TensorDict`` with every leaf of every input (the values are not copied).

    It has the batch size and device of the first input. A leaf held by several inputs
    takes the first input's value, unless every input holds it and ``callback_exist``
    (a function, or a mapping from keys to functions) combines them:
    ``callback_exist(*values)``.

    >>> import torch
    >>> from tensorclass import TensorDict, merge_tensordicts
    >>> a = TensorDict({"x": torch.zeros(2), "n": {"y": torch.zeros(2)}}, [2])
    >>> b = TensorDict({"x": torch.ones(2), "n": {"z": torch.ones(2)}}, [2])
    >>> merged = merge_tensordicts(a, b, callback_exist=lambda *v: sum(v))
    >>> list(merged.keys(True, True, sort=True)), merged["x"]
    ([('n', 'y'), ('n', 'z'), 'x'], tensor([1., 1.]))
    """
    if len(tensordicts) < 2:
        raise ValueError(f"merge_tensordicts needs at least two inputs; got {len(tensordicts)}")
    for index, td in enumerate(tensordicts):
        if not isinstance(td, TensorCore):
            raise TypeError(
                f"merge_tensordicts: input {index} is a {type(td).__name__}, not a tensor class"
            )
    first = tensordicts[0]
    found: dict[tuple[str, ...], list[object]] = {}
    for td in tensordicts:
        for key, leaf in _walk(td, (), True, True):
            found.setdefault((key,) if type(key) is str else key, []).append(leaf)  # type: ignore[arg-type]
    result = dynamic_class()._new({}, first._batch_size, first._device)
    for path, leaves in found.items():
        value = leaves[0]
        fn = _callback_for(callback_exist, path)
        if fn is not None and len(leaves) == len(tensordicts) and isinstance(value, Tensor):
            value = fn(*leaves)
        result._set_path(path, value)
    return result


def group_by(tensordict: TensorCore, key: NestedKey) -> tuple[Any, tuple[Any, ...]]:
    """Split ``tensordict`` along its first batch dim into groups sharing the value at
    ``key``: ``(values, groups)``, ``groups[i]`` holding the rows whose value is
    ``values[i]`` (in their order).

    Tensor values come sorted (``torch.unique``); non-tensor values in the order they
    first appear (as a list).

    >>> import torch
    >>> from tensorclass import TensorDict, group_by
    >>> td = TensorDict({"k": torch.tensor([1, 0, 1]), "v": torch.arange(3)}, [3])
    >>> values, groups = group_by(td, "k")
    >>> values, [g["v"].tolist() for g in groups]
    (tensor([0, 1]), [[1], [0, 2]])
    """
    if not tensordict._batch_size:
        raise StructureMismatchError("group_by needs at least one batch dim")
    flat = unravel_key_tuple(key)
    leaf = tensordict._leaf(flat if len(flat) > 1 else flat[0])
    rows: Any = tensordict
    if isinstance(leaf, Tensor):
        values = torch.unique(leaf, dim=0)
        groups = []
        for value in values:
            match = leaf == value
            if match.ndim > 1:
                match = match.flatten(1).all(1)
            groups.append(rows[match])
        return values, tuple(groups)
    if isinstance(leaf, (NonTensorData, NonTensorStack)):
        column = [
            leaf[i].value() if isinstance(leaf, NonTensorStack) else leaf.value()
            for i in range(tensordict._batch_size[0])
        ]
        order: list[object] = []
        for item in column:
            if item not in order:
                order.append(item)
        groups = [
            rows[torch.tensor([i for i, item in enumerate(column) if item == value])]
            for value in order
        ]
        return order, tuple(groups)
    raise StructureMismatchError(
        f"group_by: key {key!r} holds a {type(leaf).__name__}; group by a tensor or a value"
    )
