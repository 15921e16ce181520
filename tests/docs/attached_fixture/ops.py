"""Operations written as functions, the way the engine writes them."""

from __future__ import annotations

from typing import TypeVar

E = TypeVar("E")


def permute(self: E, *dims: int) -> E:
    """Permute the batch dims of the box.

    Args:
        dims: the new order.
    """
    return self


def from_items(cls: type[E], items: dict[str, int], *, strict: bool = True) -> E:
    """Build a box from items (a class method)."""
    return cls()


def size(self: E) -> int:
    """The number of items in the box (a property)."""
    return 0


def set_size(self: E, value: int) -> None:
    """Ignored."""


def check(value: int) -> bool:
    """Whether a value fits (a static method)."""
    return value >= 0
