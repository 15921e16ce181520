"""Continuous distributions and the modules that make their parameters: a location with a
positive scale split from one tensor (:class:`NormalParamExtractor`), a learned scale that does
not depend on the input (:class:`AddStateIndependentNormalScale`), and the point mass
:class:`Delta` (``tensordict.nn.distributions.continuous``).

>>> import torch
>>> from tensorclass.nn import AddStateIndependentNormalScale
>>> loc, scale = AddStateIndependentNormalScale(4)(torch.zeros(2, 4))
>>> loc.shape, scale.shape, scale[0, 0].item()
(torch.Size([2, 4]), torch.Size([2, 4]), 1.0)
>>> from tensorclass.nn.distributions import NormalParamExtractor
>>> loc, scale = NormalParamExtractor()(torch.zeros(3, 8))
>>> loc.shape, scale.shape, round(scale[0, 0].item(), 3)
(torch.Size([3, 4]), torch.Size([3, 4]), 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import torch
from torch import Tensor, nn
from torch.distributions import Distribution

from ..mappings import mappings

__all__ = ["AddStateIndependentNormalScale", "Delta", "NormalParamExtractor", "positive_mapping"]


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


def positive_mapping(name: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """A mapping by name (see :func:`~tensorclass.nn.mappings`), or the callable itself."""
    if callable(name):
        return name
    return mappings(name)


class NormalParamExtractor(nn.Module):
    """Split the last dim in two halves: a location and a positive scale.

    Args:
        scale_mapping: how the second half becomes positive: a name for
            :func:`~tensorclass.nn.mappings` (default ``"biased_softplus_1.0"``: 0 maps to 1)
            or a callable.
        scale_lb: the smallest scale returned (default ``1e-4``).
    """

    def __init__(
        self,
        scale_mapping: str | Callable[[Tensor], Tensor] = "biased_softplus_1.0",
        scale_lb: float = 1e-4,
    ) -> None:
        super().__init__()
        self.scale_mapping = positive_mapping(scale_mapping)
        self.scale_lb = scale_lb

    def forward(self, *tensors: Tensor) -> tuple[Tensor, Tensor]:
        """``(loc, scale)`` from one tensor (or several, concatenated on the last dim)."""
        tensor = tensors[0] if len(tensors) == 1 else torch.cat(tensors, -1)
        loc, scale = tensor.chunk(2, -1)
        return loc, self.scale_mapping(scale).clamp_min(self.scale_lb)


class Delta(Distribution):
    """A point mass at ``param``: every draw is ``param``, and a value has log-probability
    ``+inf`` where it equals ``param`` and ``-inf`` elsewhere.

    A value equals ``param`` where ``|value - param| < atol + rtol * |param|`` at every
    element of an event. Without ``batch_shape`` and ``event_shape``, the last dim of
    ``param`` is the event and the dims before it the batch; given, they are taken as they
    are. ``mean``, ``mode`` and ``deterministic_sample`` are ``param``; ``sample`` and
    ``rsample`` give ``param`` expanded to the sample shape (a view of it).

    Args:
        param: the point the mass sits on.
        atol: the absolute tolerance of the equality test (default ``1e-6``).
        rtol: the relative tolerance of the equality test (default ``1e-6``).
        batch_shape: the batch shape of the distribution.
        event_shape: the shape of one event.

    >>> import torch
    >>> from tensorclass.nn.distributions import Delta
    >>> dist = Delta(torch.tensor([1.0, 2.0]))
    >>> dist.sample((3,)).shape, dist.batch_shape, dist.event_shape
    (torch.Size([3, 2]), torch.Size([]), torch.Size([2]))
    >>> dist.log_prob(torch.tensor([1.0, 2.0])), dist.log_prob(torch.tensor([1.0, 0.0]))
    (tensor(inf), tensor(-inf))
    """

    arg_constraints: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        param: Tensor,
        atol: float = 1e-6,
        rtol: float = 1e-6,
        batch_shape: torch.Size | Sequence[int] | None = None,
        event_shape: torch.Size | Sequence[int] | None = None,
    ) -> None:
        self.param = param
        self.atol = atol
        self.rtol = rtol
        batch = torch.Size(batch_shape or ())
        event = torch.Size(event_shape or ())
        if not batch and not event:
            batch, event = param.shape[:-1], param.shape[-1:]
        super().__init__(batch_shape=batch, event_shape=event)

    def update(self, param: Tensor) -> None:
        """Move the mass to ``param``."""
        self.param = param

    def log_prob(self, value: Tensor) -> Tensor:
        """``+inf`` for each event equal to ``param`` (within the tolerances), else ``-inf``."""
        param = self.param.expand_as(value)
        equal = (value - param).abs() < self.atol + self.rtol * param.abs()
        if self.event_shape:
            equal = equal.flatten(-len(self.event_shape)).all(-1)
        inf = torch.tensor(float("inf"), dtype=value.dtype, device=value.device)
        return torch.where(equal, inf, -inf)

    def sample(self, sample_shape: torch.Size | Sequence[int] | None = None) -> Tensor:
        """``param`` expanded to ``sample_shape + param.shape`` (computed under ``no_grad``)."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: torch.Size | Sequence[int] | None = None) -> Tensor:
        """``param`` expanded to ``sample_shape + param.shape``, with its gradient."""
        return self.param.expand(*(sample_shape or ()), *self.param.shape)

    @property
    def mode(self) -> Tensor:
        """``param``."""
        return self.param

    @property
    def mean(self) -> Tensor:
        """``param``."""
        return self.param

    @property
    def deterministic_sample(self) -> Tensor:
        """``param`` (what a module draws under ``InteractionType.DETERMINISTIC``)."""
        return self.param
