"""A distribution over several keys: one component distribution per key.

>>> import torch
>>> from torch import distributions as d
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import CompositeDistribution
>>> params = TensorDict({
...     "cont": {"loc": torch.zeros(3, 4), "scale": torch.ones(3, 4)},
...     ("nested", "disc"): {"logits": torch.zeros(3, 10)},
... }, [3])
>>> dist = CompositeDistribution(
...     params, distribution_map={"cont": d.Normal, ("nested", "disc"): d.Categorical}
... )
>>> sample = dist.sample((4,))
>>> sample.batch_size, sample["cont"].shape, sample["nested", "disc"].shape
(torch.Size([4, 3]), torch.Size([4, 3, 4]), torch.Size([4, 3]))
>>> lp = dist.log_prob(sample)
>>> lp["cont_log_prob"].shape, lp["nested", "disc_log_prob"].shape
(torch.Size([4, 3, 4]), torch.Size([4, 3]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import torch
from torch import Tensor
from torch.distributions import Distribution

from ...errors import KeyNotFoundError
from ...keys import NestedKey, unravel_key
from ...tensordict import TensorDict
from ..keys import Key
from ..lp_aggregate import composite_lp_aggregate

_Shape = torch.Size | list[int] | tuple[int, ...]
_EMPTY = torch.Size()

__all__ = ["CompositeDistribution", "suffixed"]


def suffixed(key: Key, suffix: str) -> Key:
    """``key`` with ``suffix`` on its last part: ``("a", "b")`` -> ``("a", "b_log_prob")``."""
    if isinstance(key, str):
        return key + suffix
    return (*key[:-1], key[-1] + suffix)


def _sum_to(value: Tensor, batch: torch.Size) -> Tensor:
    """``value`` summed over its dims after the leading ``batch`` dims."""
    if value.ndim == len(batch):
        return value
    return value.reshape(*batch, -1).sum(-1)


def _mean_or_mode(dist: Distribution) -> Tensor:
    try:
        discrete = bool(getattr(dist.support, "is_discrete", False))
    except NotImplementedError:
        discrete = False
    if not discrete:
        try:
            return dist.mean
        except NotImplementedError:
            pass
    return dist.mode


class CompositeDistribution(Distribution):
    """A distribution whose values are tensor classes with one entry per component.

    Each component is ``distribution_map[name](**params[name], **extra_kwargs[name])``:
    the entry of ``params`` at ``name`` holds that distribution's keyword arguments. The
    value of a component is written at its name, or at ``name_map[name]``. The batch
    shape is ``params.batch_size``; a sample of ``sample_shape`` has the batch size
    ``sample_shape + batch_shape`` (the event dims of each component stay in its entry).

    :meth:`log_prob` and :meth:`entropy` give one ``<key>_log_prob`` (``<key>_entropy``)
    entry per component while :func:`composite_lp_aggregate` is ``False`` (the default),
    and one tensor, summed over the components and their non-batch dims, while it is
    ``True``. The distribution is also a read-only mapping from sample keys to
    components (``dist[key]``, ``list(dist)``, ``len(dist)``).

    Args:
        params: the parameters: one sub-instance per name of ``distribution_map``.
        distribution_map: each name (a key) to a distribution class (or any callable
            taking the parameters as keywords and returning a distribution).
        name_map: a name to the key its value is written at (default: the name).
        extra_kwargs: a name to more keyword arguments for its distribution.
        log_prob_key: where :meth:`log_prob_composite` writes the sum (default
            ``"sample_log_prob"``).
        entropy_key: where :meth:`entropy_composite` writes the sum (default
            ``"entropy"``).
    """

    arg_constraints: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        params: Any,
        distribution_map: Mapping[NestedKey, Callable[..., Distribution]],
        *,
        name_map: Mapping[NestedKey, NestedKey] | None = None,
        extra_kwargs: Mapping[NestedKey, Mapping[str, object]] | None = None,
        log_prob_key: NestedKey | None = None,
        entropy_key: NestedKey | None = None,
    ) -> None:
        renames = {unravel_key(k): unravel_key(v) for k, v in (name_map or {}).items()}
        extras = {unravel_key(k): dict(v) for k, v in (extra_kwargs or {}).items()}
        dists: dict[Key, Distribution] = {}
        for name, dist_class in distribution_map.items():
            key = unravel_key(name)
            try:
                sub = params[key]
            except KeyError:
                raise KeyNotFoundError(
                    f"CompositeDistribution: the params have no entry {key!r} for the "
                    f"distribution {getattr(dist_class, '__name__', dist_class)}; they have "
                    f"{sorted(map(str, params.keys()))}"
                ) from None
            kwargs = {k: sub.get(k) for k in sub.keys()}
            dists[renames.get(key, key)] = dist_class(**kwargs, **extras.get(key, {}))
        self._dists = dists
        self._params = params
        self.log_prob_key: Key = unravel_key(log_prob_key or "sample_log_prob")
        self.entropy_key: Key = unravel_key(entropy_key or "entropy")
        super().__init__(torch.Size(params.batch_size), torch.Size(), validate_args=False)

    @classmethod
    def from_distributions(
        cls,
        params: Any,
        distributions: Mapping[NestedKey, Distribution],
        *,
        name_map: Mapping[NestedKey, NestedKey] | None = None,
        log_prob_key: NestedKey | None = None,
        entropy_key: NestedKey | None = None,
    ) -> CompositeDistribution:
        """A composite of distributions already built (``params`` gives the batch size
        and device; it need not hold their parameters)."""
        self = cls.__new__(cls)
        renames = {unravel_key(k): unravel_key(v) for k, v in (name_map or {}).items()}
        self._dists = {
            renames.get(unravel_key(k), unravel_key(k)): dist for k, dist in distributions.items()
        }
        self._params = params
        self.log_prob_key = unravel_key(log_prob_key or "sample_log_prob")
        self.entropy_key = unravel_key(entropy_key or "entropy")
        Distribution.__init__(
            self, torch.Size(params.batch_size), torch.Size(), validate_args=False
        )
        return self

    # -- the mapping of sample keys to components -------------------------------------

    def __getitem__(self, key: NestedKey) -> Distribution:
        return self._dists[unravel_key(key)]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._dists)

    def __len__(self) -> int:
        return len(self._dists)

    def keys(self) -> list[Key]:
        """The sample keys, one per component."""
        return list(self._dists)

    def values(self) -> list[Distribution]:
        """The components."""
        return list(self._dists.values())

    def items(self) -> list[tuple[Key, Distribution]]:
        """``(sample key, component)`` pairs."""
        return list(self._dists.items())

    def get(self, key: NestedKey, default: object = None) -> Any:
        """The component at ``key`` (``default`` if none)."""
        return self._dists.get(unravel_key(key), default)

    def __repr__(self) -> str:
        inner = ", ".join(f"{key!r}: {dist!r}" for key, dist in self._dists.items())
        return f"{type(self).__name__}({{{inner}}})"

    # -- values -------------------------------------------------------------------------

    def _collect(self, shape: torch.Size, value_of: Callable[[Distribution], Tensor]) -> TensorDict:
        out = TensorDict(batch_size=shape + self.batch_shape, device=self._device())
        for key, dist in self._dists.items():
            out.set(key, value_of(dist))
        return out

    def _device(self) -> torch.device | None:
        device: torch.device | None = getattr(self._params, "device", None)
        return device

    def sample(self, sample_shape: _Shape = _EMPTY) -> Any:
        """One value per component, in a ``TensorDict`` of batch size
        ``sample_shape + batch_shape``."""
        shape = torch.Size(sample_shape)
        return self._collect(shape, lambda dist: dist.sample(shape))

    def rsample(self, sample_shape: _Shape = _EMPTY) -> Any:
        """As :meth:`sample`, with reparameterized values (every component needs
        ``rsample``)."""
        shape = torch.Size(sample_shape)
        for key, dist in self._dists.items():
            if not dist.has_rsample:
                raise NotImplementedError(
                    f"CompositeDistribution.rsample: the component at {key!r} "
                    f"({type(dist).__name__}) has no rsample"
                )
        return self._collect(shape, lambda dist: dist.rsample(shape))

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        """Whether every component has ``rsample``."""
        return all(dist.has_rsample for dist in self._dists.values())

    @property
    def mode(self) -> Any:
        """Each component's mode, in a ``TensorDict``."""
        return self._collect(torch.Size(), lambda dist: dist.mode)

    @property
    def mean(self) -> Any:
        """Each component's mean, in a ``TensorDict``."""
        return self._collect(torch.Size(), lambda dist: dist.mean)

    @property
    def deterministic_sample(self) -> Any:
        """Each component's deterministic value (its ``deterministic_sample``, else the
        mode of a discrete component and the mean of a continuous one), in a
        ``TensorDict``."""

        def value_of(dist: Distribution) -> Tensor:
            found = getattr(dist, "deterministic_sample", None)
            if found is not None:
                return found  # type: ignore[no-any-return]
            return _mean_or_mode(dist)

        return self._collect(torch.Size(), value_of)

    # -- scores -----------------------------------------------------------------------------

    def _per_key(
        self, suffix: str, batch: torch.Size, score: Callable[[Key, Distribution], Tensor]
    ) -> TensorDict:
        out = TensorDict(batch_size=batch, device=self._device())
        for key, dist in self._dists.items():
            out.set(suffixed(key, suffix), score(key, dist))
        return out

    def _total(self, batch: torch.Size, score: Callable[[Key, Distribution], Tensor]) -> Tensor:
        total: Tensor | int = 0
        for key, dist in self._dists.items():
            total = total + _sum_to(score(key, dist), batch)
        if isinstance(total, int):
            return torch.zeros(batch)
        return total

    def log_prob_composite(self, sample: Any, include_sum: bool = True) -> Any:
        """A ``TensorDict`` with one ``<key>_log_prob`` entry per component (the
        log-probability of ``sample[key]``), and their sum at ``log_prob_key`` if
        ``include_sum``."""
        batch = torch.Size(sample.batch_size)

        def score(key: Key, dist: Distribution) -> Tensor:
            return dist.log_prob(sample.get(key))

        out = self._per_key("_log_prob", batch, score)
        if include_sum:
            out.set(
                self.log_prob_key,
                self._total(batch, lambda k, d: out.get(suffixed(k, "_log_prob"))),
            )
        return out

    def log_prob(self, value: Any) -> Any:
        """The log-probability of ``value`` (a tensor class with one entry per sample
        key): per key in a ``TensorDict``, or summed into one tensor of the batch shape
        of ``value`` while :func:`composite_lp_aggregate` is ``True``."""
        if composite_lp_aggregate():
            batch = torch.Size(value.batch_size)
            return self._total(batch, lambda key, dist: dist.log_prob(value.get(key)))
        return self.log_prob_composite(value, include_sum=False)

    def entropy_composite(self, include_sum: bool = True) -> Any:
        """A ``TensorDict`` with one ``<key>_entropy`` entry per component, and their sum
        at ``entropy_key`` if ``include_sum``."""
        out = self._per_key("_entropy", self.batch_shape, lambda key, dist: dist.entropy())
        if include_sum:
            out.set(
                self.entropy_key,
                self._total(self.batch_shape, lambda k, d: out.get(suffixed(k, "_entropy"))),
            )
        return out

    def entropy(self) -> Any:
        """The entropy: per component in a ``TensorDict`` (``<key>_entropy``), or summed
        into one tensor while :func:`composite_lp_aggregate` is ``True``."""
        if composite_lp_aggregate():
            return self._total(self.batch_shape, lambda key, dist: dist.entropy())
        return self.entropy_composite(include_sum=False)

    def cdf(self, value: Any) -> Any:
        """A ``TensorDict`` with one ``<key>_cdf`` entry per component: the cdf of
        ``value[key]`` (``value`` is left unchanged)."""
        batch = torch.Size(value.batch_size)
        return self._per_key("_cdf", batch, lambda key, dist: dist.cdf(value.get(key)))

    def icdf(self, value: Any) -> Any:
        """A ``TensorDict`` with one ``<key>_icdf`` entry per component: the inverse cdf
        of ``value[<key>_cdf]`` (as :meth:`cdf` writes it; else of ``value[key]``)."""
        batch = torch.Size(value.batch_size)

        def score(key: Key, dist: Distribution) -> Tensor:
            probs = value.get(suffixed(key, "_cdf"), None)
            return dist.icdf(value.get(key) if probs is None else probs)

        return self._per_key("_icdf", batch, score)

    def sample_and_log_prob(self, sample_shape: _Shape = _EMPTY) -> tuple[Any, Any]:
        """``(sample, log_prob(sample))``."""
        value = self.sample(sample_shape)
        return value, self.log_prob(value)

    def rsample_and_log_prob(self, sample_shape: _Shape = _EMPTY) -> tuple[Any, Any]:
        """``(rsample, log_prob(rsample))``."""
        value = self.rsample(sample_shape)
        return value, self.log_prob(value)
