"""Element-wise functions of one tensor and an operand, where torch's own form is too narrow.

``torch.maximum`` and the ``logical_*`` functions take only tensors, and torch has no
``maximum_``: the tensor-class methods take a number as well (as ``_foreach_maximum``
does), so these wrappers turn a number into a zero-dim tensor (which promotes like a
number) and write the in-place forms through ``out=``. Every function here keeps the
name of the torch function it stands for: the in-place machinery finds ``name_`` by it.

>>> import torch
>>> maximum(torch.tensor([1, 5]), 2.5)
tensor([2.5000, 5.0000])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

__all__ = [
    "INPLACE",
    "Operator",
    "addcdiv",
    "addcmul",
    "clamp",
    "lerp",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
]


#: A binary operation on leaves (``operator.add``, ``torch.maximum``...): a tensor and an
#: operand (a tensor or a number), in either order, to a tensor.
Operator = Callable[[Any, Any], Tensor]


def _tensor(value: object) -> Tensor:
    return value if isinstance(value, Tensor) else torch.tensor(value)


def maximum(input: Tensor, other: object) -> Tensor:
    """``torch.maximum``; ``other`` may be a number."""
    return torch.maximum(input, _tensor(other))


def minimum(input: Tensor, other: object) -> Tensor:
    """``torch.minimum``; ``other`` may be a number."""
    return torch.minimum(input, _tensor(other))


def logical_and(input: Tensor, other: object) -> Tensor:
    """``torch.logical_and``; ``other`` may be a number."""
    return torch.logical_and(input, _tensor(other))


def logical_or(input: Tensor, other: object) -> Tensor:
    """``torch.logical_or``; ``other`` may be a number."""
    return torch.logical_or(input, _tensor(other))


def logical_xor(input: Tensor, other: object) -> Tensor:
    """``torch.logical_xor``; ``other`` may be a number."""
    return torch.logical_xor(input, _tensor(other))


def addcmul(input: Tensor, tensor1: object, tensor2: object, *, value: float = 1) -> Tensor:
    """``torch.addcmul``; ``tensor1`` and ``tensor2`` may be numbers."""
    return torch.addcmul(input, _tensor(tensor1), _tensor(tensor2), value=value)


def addcdiv(input: Tensor, tensor1: object, tensor2: object, *, value: float = 1) -> Tensor:
    """``torch.addcdiv``; ``tensor1`` and ``tensor2`` may be numbers."""
    return torch.addcdiv(input, _tensor(tensor1), _tensor(tensor2), value=value)


def lerp(input: Tensor, end: object, weight: Tensor | float) -> Tensor:
    """``torch.lerp``; ``end`` may be a number (taken in the dtype of ``input``)."""
    if not isinstance(end, Tensor):
        end = torch.tensor(end, dtype=input.dtype, device=input.device)
    return torch.lerp(input, end, weight)


def clamp(
    input: Tensor, min: Tensor | float | None = None, max: Tensor | float | None = None
) -> Tensor:
    """``torch.clamp``; one bound may be a tensor and the other a number."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):  # then both as tensors
        return torch.clamp(
            input, None if min is None else _tensor(min), None if max is None else _tensor(max)
        )
    return torch.clamp(input, min, max)


def _maximum_(input: Tensor, other: object) -> Tensor:
    return torch.maximum(input, _tensor(other), out=input)


def _minimum_(input: Tensor, other: object) -> Tensor:
    return torch.minimum(input, _tensor(other), out=input)


def _logical_and_(input: Tensor, other: object) -> Tensor:
    return input.logical_and_(_tensor(other))


def _logical_or_(input: Tensor, other: object) -> Tensor:
    return input.logical_or_(_tensor(other))


def _logical_xor_(input: Tensor, other: object) -> Tensor:
    return input.logical_xor_(_tensor(other))


#: a wrapper above -> its in-place form (``leaf = f_(leaf, other)``, writing ``leaf``)
INPLACE: dict[Callable[..., Tensor], Callable[[Tensor, object], Tensor]] = {
    maximum: _maximum_,
    minimum: _minimum_,
    logical_and: _logical_and_,
    logical_or: _logical_or_,
    logical_xor: _logical_xor_,
}
