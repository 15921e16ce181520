"""A normal distribution restricted to an interval ``[a, b]``.

>>> import torch
>>> from tensorclass.nn import TruncatedNormal
>>> dist = TruncatedNormal(loc=torch.zeros(2), scale=torch.ones(2), a=-1.0, b=1.0)
>>> dist.mean, dist.mode
(tensor([0., 0.]), tensor([0., 0.]))
>>> bool(((dist.sample((100,)) >= -1) & (dist.sample((100,)) <= 1)).all())
True
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import torch
from torch import Tensor
from torch.distributions import Distribution, constraints
from torch.distributions.utils import broadcast_all

_Shape = torch.Size | list[int] | tuple[int, ...]
_EMPTY = torch.Size()

__all__ = ["TruncatedNormal", "TruncatedStandardNormal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _std_cdf(x: Tensor) -> Tensor:
    return 0.5 * (1 + torch.erf(x * math.sqrt(0.5)))


def _std_pdf(x: Tensor) -> Tensor:
    return torch.exp(-0.5 * x * x - _LOG_SQRT_2PI)


class TruncatedNormal(Distribution):
    """A normal distribution of mean ``loc`` and standard deviation ``scale`` restricted
    to ``[a, b]`` (bounds in the units of ``loc``), with reparameterized samples.

    Args:
        loc: the mean before truncation.
        scale: the standard deviation before truncation (values under ``1e-6`` count as
            ``1e-6``).
        a: the lower bound of the support.
        b: the upper bound of the support.
        validate_args: as for ``torch.distributions``.

    ``mean``, ``variance``, ``entropy``, ``cdf`` and ``icdf`` are the closed forms;
    ``mode`` is ``loc`` clamped to ``[a, b]``; ``log_prob``
    is ``-inf`` outside the support (when arguments are not validated). ``a >= b``
    anywhere is a ``ValueError``.
    """

    arg_constraints: ClassVar[dict[str, Any]] = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "a": constraints.real,
        "b": constraints.real,
    }
    has_rsample = True

    def __init__(
        self,
        loc: float | Tensor,
        scale: float | Tensor,
        a: float | Tensor,
        b: float | Tensor,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale, self.a, self.b = broadcast_all(loc, scale, a, b)
        self.scale = self.scale.clamp_min(1e-6)
        if bool((self.a >= self.b).any()):
            raise ValueError(
                f"TruncatedNormal: the lower bound a must be smaller than the upper bound b "
                f"everywhere; got a={self.a} and b={self.b}"
            )
        alpha = (self.a - self.loc) / self.scale
        beta = (self.b - self.loc) / self.scale
        self._alpha, self._beta = alpha, beta
        eps = torch.finfo(self.loc.dtype).eps
        self._cdf_alpha = _std_cdf(alpha)
        self._z = (_std_cdf(beta) - self._cdf_alpha).clamp_min(eps)
        self._pdf_alpha, self._pdf_beta = _std_pdf(alpha), _std_pdf(beta)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        """The interval ``[a, b]``."""
        return constraints.interval(self.a, self.b)  # type: ignore[no-untyped-call]

    def expand(self, batch_shape: Any, _instance: Any = None) -> TruncatedNormal:
        """The distribution with its parameters expanded to ``batch_shape``."""
        shape = torch.Size(batch_shape)
        return TruncatedNormal(
            self.loc.expand(shape),
            self.scale.expand(shape),
            self.a.expand(shape),
            self.b.expand(shape),
            validate_args=self._validate_args,
        )

    @property
    def mean(self) -> Tensor:
        """The mean of the truncated distribution."""
        return self.loc + self.scale * (self._pdf_alpha - self._pdf_beta) / self._z

    @property
    def mode(self) -> Tensor:
        """``loc`` clamped to ``[a, b]``."""
        return torch.maximum(torch.minimum(self.loc, self.b), self.a)

    @property
    def variance(self) -> Tensor:
        """The variance of the truncated distribution."""
        alpha, beta, z = self._alpha, self._beta, self._z
        first = (alpha * self._pdf_alpha - beta * self._pdf_beta) / z
        second = (self._pdf_alpha - self._pdf_beta) / z
        return self.scale.square() * (1 + first - second.square())

    def entropy(self) -> Tensor:
        """The differential entropy."""
        alpha, beta, z = self._alpha, self._beta, self._z
        tail = (alpha * self._pdf_alpha - beta * self._pdf_beta) / (2 * z)
        return _LOG_SQRT_2PI + 0.5 + self.scale.log() + z.log() + tail

    def log_prob(self, value: Tensor) -> Tensor:
        """The log-density of ``value`` (``-inf`` outside ``[a, b]``)."""
        if self._validate_args:
            self._validate_sample(value)
        std = (value - self.loc) / self.scale
        log_p = -0.5 * std * std - _LOG_SQRT_2PI - self.scale.log() - self._z.log()
        inside = (value >= self.a) & (value <= self.b)
        return torch.where(inside, log_p, torch.full_like(log_p, -math.inf))

    def cdf(self, value: Tensor) -> Tensor:
        """The probability of a value at most ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        std = (value - self.loc) / self.scale
        return ((_std_cdf(std) - self._cdf_alpha) / self._z).clamp(0, 1)

    def icdf(self, value: Tensor) -> Tensor:
        """The value whose cdf is ``value`` (in ``[0, 1]``)."""
        target = self._cdf_alpha + value * self._z
        eps = torch.finfo(self.loc.dtype).eps
        std = torch.special.ndtri(target.clamp(eps, 1 - eps))
        return torch.maximum(torch.minimum(self.loc + self.scale * std, self.b), self.a)

    def rsample(self, sample_shape: _Shape = _EMPTY) -> Tensor:
        """Reparameterized samples, of shape ``sample_shape + batch_shape``."""
        shape = self._extended_shape(torch.Size(sample_shape))
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)


class TruncatedStandardNormal(TruncatedNormal):
    """The standard normal distribution (mean 0, standard deviation 1) restricted to
    ``[a, b]``: a :class:`TruncatedNormal` with ``loc=0`` and ``scale=1``.

    >>> import torch
    >>> from tensorclass.nn.distributions.truncated_normal import TruncatedStandardNormal
    >>> round(TruncatedStandardNormal(torch.tensor(-1.0), torch.tensor(2.0)).mean.item(), 4)
    0.2296
    """

    def __init__(
        self, a: float | Tensor, b: float | Tensor, validate_args: bool | None = None
    ) -> None:
        a, b = broadcast_all(a, b)
        super().__init__(torch.zeros_like(a), torch.ones_like(a), a, b, validate_args)
