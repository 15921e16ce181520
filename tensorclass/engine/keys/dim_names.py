"""Names of the batch dims: ``refine_names``, ``rename``, ``rename_`` (as named tensors)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import BatchSizeError
from ..core.self_types import E
from ..core.state import check_names

__all__ = ["refine_names", "rename", "rename_"]


def _expand_ellipsis(names: Sequence[object], current: list[str | None]) -> list[Any]:
    """``names`` with one ``...`` standing for the current names it does not cover."""
    if not any(name is Ellipsis for name in names):
        return list(names)
    at = [i for i, name in enumerate(names) if name is Ellipsis]
    if len(at) > 1:
        raise BatchSizeError(f"names may hold one '...'; got {list(names)}")
    i = at[0]
    covered = len(names) - 1
    if covered > len(current):
        raise BatchSizeError(f"{len(current)} batch dims cannot take the names {list(names)}")
    rest = len(current) - covered
    return [*names[:i], *current[i : i + rest], *names[i + 1 :]]


def refine_names(self: E, *names: object) -> E:
    """Name the unnamed batch dims and check the named ones, in place.

    ``...`` stands for the dims not listed. A named dim given another name is an error.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2, 3)}, [2, 3])
    >>> td.refine_names(..., "time").names
    [None, 'time']
    """
    current = self.names
    wanted = _expand_ellipsis(names, current)
    if len(wanted) != len(current):
        raise BatchSizeError(
            f"refine_names: {len(current)} batch dims, {len(wanted)} names: {list(names)}"
        )
    for dim, (old, new) in enumerate(zip(current, wanted)):
        if old is not None and new != old:
            raise BatchSizeError(
                f"refine_names: batch dim {dim} is named {old!r}; cannot refine it to {new!r}"
            )
    self._names = check_names(wanted, len(current))
    return self


def _renamed(self: E, names: tuple[object, ...], rename_map: dict[str, str]) -> Any:
    current = self.names
    if names:
        if rename_map:
            raise BatchSizeError("rename: give names or a rename map, not both")
        return check_names(_expand_ellipsis(names, current), len(current))
    missing = [old for old in rename_map if old not in current]
    if missing:
        raise BatchSizeError(f"rename: no batch dim is named {missing}; names are {current}")
    new = [rename_map.get(name, name) if name is not None else None for name in current]
    return check_names(new, len(current))


def rename(self: E, *names: object, **rename_map: str) -> E:
    """A shallow copy whose batch dims have new names.

    Give every name (``None`` clears one, ``...`` keeps the others) or ``old=new``
    pairs.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2, 3)}, [2, 3], names=["b", "t"])
    >>> td.rename(t="time").names, td.names
    (['b', 'time'], ['b', 't'])
    """
    new = _renamed(self, names, rename_map)
    return type(self)._new(dict(self._data), self._batch_size, self._device, new)


def rename_(self: E, *names: object, **rename_map: str) -> E:
    """Rename the batch dims in place (see :meth:`rename`)."""
    self._names = _renamed(self, names, rename_map)
    return self
