"""Expanding on the right: the dims a tensor lacks are added after its own, not before.

Broadcasting lines shapes up from the right; a per-sample value (shape ``[B]``) meant for
every feature of a ``[B, F]`` tensor needs its new dims on the right instead. These are
tensordict's ``expand_right`` and ``expand_as_right`` (``tensorclass.utils``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import torch
from torch import Tensor

from ..core.self_types import Node
from ..core.state import TensorCore

__all__ = ["expand_as_right", "expand_right"]

X = TypeVar("X", Tensor, Node)


def _shape_of(value: Tensor | TensorCore) -> torch.Size:
    return value.batch_size if isinstance(value, TensorCore) else value.shape


def expand_right(tensor: Tensor, shape: Sequence[int]) -> Tensor:
    """A view of ``tensor`` of shape ``shape``: trailing dims of size one are appended until
    it has as many dims as ``shape``, then every dim of size one is expanded.

    ``tensor``'s own dims must equal the leading dims of ``shape`` or be one; otherwise
    torch's ``expand`` raises its ``RuntimeError``.

    >>> import torch
    >>> from tensorclass.utils import expand_right
    >>> expand_right(torch.arange(3), (3, 4, 2)).shape
    torch.Size([3, 4, 2])
    """
    missing = len(shape) - tensor.ndim
    if missing > 0:
        tensor = tensor.reshape(*tensor.shape, *([1] * missing))
    return tensor.expand(*shape)


def expand_as_right(tensor: X, dest: Tensor | TensorCore) -> X:
    """``tensor`` expanded on the right to the shape of ``dest`` (the batch size of an
    instance), as a view.

    ``tensor`` may be an instance too: its batch dims are expanded, each leaf keeping its
    own trailing dims. ``dest`` must have at least as many dims as ``tensor``, and
    ``tensor``'s dims must equal ``dest``'s leading dims or be one; otherwise a
    ``RuntimeError`` says which shapes differ.

    >>> import torch
    >>> from tensorclass.utils import expand_as_right
    >>> expand_as_right(torch.arange(3), torch.zeros(3, 4, 5)).shape
    torch.Size([3, 4, 5])
    """
    shape, target = _shape_of(tensor), _shape_of(dest)
    if len(shape) > len(target):
        raise RuntimeError(
            f"expand_as_right: the destination must have at least as many dims as the value; "
            f"got a value of shape {list(shape)} and a destination of shape {list(target)}"
        )
    if any(own not in (1, want) for own, want in zip(shape, target)):
        raise RuntimeError(
            f"expand_as_right: shape {list(shape)} does not match the leading dims of "
            f"{list(target)} (each must be equal or 1)"
        )
    if isinstance(tensor, Node):
        padded = tensor.reshape(*shape, *([1] * (len(target) - len(shape))))
        return padded.expand(*target)
    return expand_right(tensor, target)
