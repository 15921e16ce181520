"""Comparing two instances in tests: ``assert_close`` (alias ``assert_allclose_td``)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ...keys import NestedKey, unravel_key_tuple
from ...non_tensor import same_value
from ..core.state import TensorCore

__all__ = ["assert_allclose_td", "assert_close"]


def _shown(path: tuple[str, ...]) -> Any:
    return path[0] if len(path) == 1 else path


def assert_close(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    intersection: bool = False,
    msg: str = "",
    prefix: NestedKey = (),
) -> bool:
    """Assert that two tensor classes hold the same keys and close values.

    Tensors are compared with ``torch.testing.assert_close`` (which checks dtypes,
    shapes and devices too), non-tensor values with ``==``, nested instances key by key.
    The ``AssertionError`` names the first differing key. ``intersection=True``
    compares only the keys both hold. Returns ``True``.

    >>> import torch
    >>> from tensorclass import TensorDict, assert_close
    >>> a = TensorDict({"x": torch.zeros(2), "n": {"y": torch.zeros(2)}}, [2])
    >>> b = a.clone()
    >>> b["n", "y"] += 1
    >>> assert_close(a, b)
    Traceback (most recent call last):
    ...
    AssertionError: key ('n', 'y') differs: Tensor-likes are not close!...
    """
    path = () if prefix == () else unravel_key_tuple(prefix)
    lead = f"{msg}: " if msg else ""
    if not isinstance(actual, TensorCore) or not isinstance(expected, TensorCore):
        raise TypeError(
            f"assert_close compares tensor classes; got {type(actual).__name__} and "
            f"{type(expected).__name__}"
        )
    if actual._batch_size != expected._batch_size:
        where = f"at {_shown(path)!r}" if path else "at the top level"
        raise AssertionError(
            f"{lead}batch sizes differ {where}: {list(actual._batch_size)} and "
            f"{list(expected._batch_size)}"
        )
    keys_a, keys_e = list(actual._data), list(expected._data)
    if not intersection and set(keys_a) != set(keys_e):
        where = f"at {_shown(path)!r}" if path else "at the top level"
        only_a = sorted(set(keys_a) - set(keys_e))
        only_e = sorted(set(keys_e) - set(keys_a))
        raise AssertionError(
            f"{lead}keys differ {where}: only in actual {only_a}, only in expected {only_e}"
        )
    for key in keys_a:
        if key not in expected._data:
            continue
        left, right = actual._data[key], expected._data[key]
        sub = (*path, key)
        if isinstance(left, TensorCore) and isinstance(right, TensorCore):
            assert_close(left, right, rtol, atol, equal_nan, intersection, msg, sub)
        elif isinstance(left, Tensor) and isinstance(right, Tensor):
            try:
                torch.testing.assert_close(left, right, rtol=rtol, atol=atol, equal_nan=equal_nan)
            except AssertionError as err:
                raise AssertionError(f"{lead}key {_shown(sub)!r} differs: {err}") from None
        elif type(left) is not type(right) or not _same_leaf(left, right):
            raise AssertionError(
                f"{lead}key {_shown(sub)!r} differs: {_describe(left)} and {_describe(right)}"
            )
    return True


def _same_leaf(left: Any, right: Any) -> bool:
    value_l, value_r = left.value(), right.value()
    return bool(same_value(value_l, value_r) or value_l == value_r)


def _describe(leaf: Any) -> str:
    return repr(leaf.value()) if hasattr(leaf, "value") else type(leaf).__name__


#: the same function, under tensordict's other name
assert_allclose_td = assert_close
