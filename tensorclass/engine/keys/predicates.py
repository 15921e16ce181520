"""Predicates to pass to ``keys(is_leaf=...)``, ``apply`` filters and the like.

``default_is_leaf`` and ``is_leaf_nontensor`` take a class (what ``is_leaf`` receives);
``is_inexact``, ``is_floating``, ``is_integer`` and ``is_bool`` test their *last*
argument, so they work both as ``fn(value)`` and as ``fn(key, value)``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ...collection import TensorCollection
from ...non_tensor import NonTensorData, NonTensorStack

__all__ = [
    "default_is_leaf",
    "is_bool",
    "is_floating",
    "is_inexact",
    "is_integer",
    "is_leaf_nontensor",
]


def default_is_leaf(cls: type) -> bool:
    """Whether entries of class ``cls`` are leaves: anything but a tensor class.

    This is what ``keys``, ``items`` and ``values`` use when no ``is_leaf`` is given
    (non-tensor values are leaves).

    >>> import torch
    >>> from tensorclass import TensorDict, default_is_leaf
    >>> default_is_leaf(torch.Tensor), default_is_leaf(TensorDict)
    (True, False)
    """
    return not issubclass(cls, TensorCollection)


def is_leaf_nontensor(cls: type) -> bool:
    """Whether ``cls`` is a tensor class or a non-tensor value holder.

    >>> import torch
    >>> from tensorclass import NonTensorData, TensorDict, is_leaf_nontensor
    >>> is_leaf_nontensor(torch.Tensor), is_leaf_nontensor(NonTensorData)
    (True, True)
    """
    return issubclass(cls, (Tensor, NonTensorData, NonTensorStack))


def is_inexact(*args: object) -> bool:
    """Whether the last argument is a floating-point or complex tensor.

    >>> import torch
    >>> from tensorclass import is_inexact
    >>> is_inexact(torch.zeros(1)), is_inexact("key", torch.zeros(1, dtype=torch.long))
    (True, False)
    """
    value = args[-1]
    return isinstance(value, Tensor) and (value.is_floating_point() or value.is_complex())


def is_floating(*args: object) -> bool:
    """Whether the last argument is a floating-point tensor (see :func:`is_inexact`)."""
    value = args[-1]
    return isinstance(value, Tensor) and value.is_floating_point()


def is_integer(*args: object) -> bool:
    """Whether the last argument is an integer tensor, signed or not (``bool`` is not)."""
    value = args[-1]
    return (
        isinstance(value, Tensor)
        and value.dtype is not torch.bool
        and not value.is_floating_point()
        and not value.is_complex()
    )


def is_bool(*args: object) -> bool:
    """Whether the last argument is a boolean tensor (see :func:`is_inexact`)."""
    value = args[-1]
    return isinstance(value, Tensor) and value.dtype is torch.bool
