"""A learned scale that does not depend on the input, next to a location.

>>> import torch
>>> from tensorclass.nn import AddStateIndependentNormalScale
>>> loc, scale = AddStateIndependentNormalScale(4)(torch.zeros(2, 4))
>>> loc.shape, scale.shape, scale[0, 0].item()
(torch.Size([2, 4]), torch.Size([2, 4]), 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from .mappings import mappings

__all__ = ["AddStateIndependentNormalScale"]


class AddStateIndependentNormalScale(nn.Module):
    """Return the input as a location with a learned scale: ``(loc, scale, *others)``.

    The module holds one tensor, ``state_independent_scale``, of shape ``scale_shape``
    (which must match the trailing dims of ``loc``); the scale is that tensor mapped by
    ``scale_mapping``, clamped to at least ``scale_lb`` and expanded to ``loc``'s shape.

    Args:
        scale_shape: the shape of the scale tensor (an int, a shape, or ``None`` for one
            scale shared by all elements).
        scale_mapping: a name for :func:`~tensorclass.nn.mappings` (default ``"exp"``).
        scale_lb: the smallest scale (default ``1e-4``).
        device: the device of the scale tensor.
        make_param: a trainable ``nn.Parameter`` (default) or a buffer.
        init_value: the value of the tensor before the mapping (default ``0.0``).
    """

    state_independent_scale: Tensor

    def __init__(
        self,
        scale_shape: torch.Size | int | Sequence[int] | None = None,
        *,
        scale_mapping: str = "exp",
        scale_lb: float = 1e-4,
        device: torch.device | str | None = None,
        make_param: bool = True,
        init_value: float = 0.0,
    ) -> None:
        super().__init__()
        if scale_shape is None:
            shape = torch.Size(())
        elif isinstance(scale_shape, int):
            shape = torch.Size((scale_shape,))
        else:
            shape = torch.Size(scale_shape)
        self.scale_lb = scale_lb
        self.scale_mapping = mappings(scale_mapping)
        value = torch.full(shape, float(init_value), device=device)
        if make_param:
            self.state_independent_scale = nn.Parameter(value)
        else:
            self.register_buffer("state_independent_scale", value)

    def forward(self, loc: Tensor, *others: Tensor) -> tuple[Tensor, ...]:
        """``(loc, scale, *others)``."""
        own = self.state_independent_scale
        if own.shape != loc.shape[loc.ndim - own.ndim :]:
            raise RuntimeError(
                f"AddStateIndependentNormalScale: the scale has shape {tuple(own.shape)}, "
                f"which must be the trailing dims of the location; got a location of shape "
                f"{tuple(loc.shape)}"
            )
        scale = self.scale_mapping(own).clamp_min(self.scale_lb).expand_as(loc)
        return (loc, scale, *others)
