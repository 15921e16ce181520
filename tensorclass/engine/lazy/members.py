"""The members of a lazy stack as a list: ``tensordicts``, ``append``, ``insert``, ``extend``.

Growing a lazy stack adds members along the stack dim (its size grows by one per member),
as ``list.append`` / ``list.insert`` do; nothing is copied. A new member must be of the
members' class and have their batch size (any size at a dim where the members' sizes
already differ, ``-1`` in the batch size); a bad one is refused before anything changes:

>>> import torch
>>> from tensorclass import TensorDict, lazy_stack
>>> stack = lazy_stack([TensorDict(a=torch.zeros(2), batch_size=[2])])
>>> stack.append(TensorDict(a=torch.ones(2), batch_size=[2]))
>>> stack.batch_size
torch.Size([2, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from ...errors import BatchSizeError, LockedError, StructureMismatchError
from ..core.state import TensorCore
from ..keys.listing import KeysView
from .self_type import S

__all__ = ["append", "extend", "insert", "tensordicts", "valid_keys"]


def tensordicts(self: S) -> list[Any]:
    """The members, in order (a new list: grow the stack with :meth:`append`)."""
    return list(self._lazy.members)


def valid_keys(
    self: S,
    include_nested: bool = False,
    leaves_only: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    *,
    sort: bool = False,
) -> Any:
    """The keys every member has (those that can be read through the stack); see
    ``keys``. ``sort=True`` gives them sorted (a list)."""
    if is_leaf is not None:
        raise TypeError("valid_keys: is_leaf is not supported; use leaves_only=True")
    keys: KeysView = self.keys(include_nested, leaves_only)
    if sort:
        return sorted(keys, key=lambda k: (k,) if isinstance(k, str) else k)
    return keys


def _check_new_member(self: S, item: object, position: str) -> None:
    leaves = self._lazy
    first = leaves.members[0]
    if not isinstance(item, TensorCore) or type(item) is not type(first):
        raise StructureMismatchError(
            f"cannot add a {type(item).__name__} to a lazy stack of "
            f"{type(first).__name__} ({position}): the members share their class"
        )
    # the members' batch size, -1 where they differ (a ragged stack takes any size there)
    shared = [size for d, size in enumerate(self._batch_size) if d != leaves.dim]
    given = item._batch_size
    if len(given) != len(shared) or any(s not in (-1, g) for s, g in zip(shared, given)):
        raise BatchSizeError(
            f"cannot add an instance of batch size {list(given)} to a lazy stack whose "
            f"members have batch size {shared} ({position}; -1: sizes differ there)"
        )
    if self._locked:
        raise LockedError(
            f"cannot add a member ({position}) to this {type(self).__name__}: it is "
            f"locked; call unlock_() first"
        )


def _grown(self: S, added: int) -> None:
    """Update the batch size and device after ``added`` members joined."""
    leaves = self._lazy
    sizes = list(self._batch_size)
    sizes[leaves.dim] += added
    device = self._device
    if device is not None and any(m._device != device for m in leaves.members):
        device = None
    object.__setattr__(self, "_batch_size", torch.Size(sizes))
    object.__setattr__(self, "_device", device)


def append(self: S, tensordict: object) -> None:
    """Add ``tensordict`` as the last member (the stack dim grows by one)."""
    _check_new_member(self, tensordict, f"member {len(self._lazy.members)}")
    self._lazy.members.append(tensordict)
    _grown(self, 1)


def insert(self: S, index: int, tensordict: object) -> None:
    """Add ``tensordict`` as a member before position ``index`` (as ``list.insert``)."""
    _check_new_member(self, tensordict, f"at index {index}")
    self._lazy.members.insert(index, tensordict)
    _grown(self, 1)


def extend(self: S, tensordict: Iterable[Any]) -> None:
    """Add every instance of the iterable ``tensordict`` as members (all are checked
    first; tensordict's parameter name)."""
    items = list(tensordict)
    start = len(self._lazy.members)
    for offset, item in enumerate(items):
        _check_new_member(self, item, f"member {start + offset}")
    self._lazy.members.extend(items)
    _grown(self, len(items))
