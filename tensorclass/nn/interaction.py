"""How probabilistic modules turn a distribution into a value: the interaction type.

``set_interaction_type`` sets it for a block (or a function, as a decorator), for the
thread that enters the block; outside any block each module uses its
``default_interaction_type``. ``torch.compile`` traces both the setting and its reads.

>>> from tensorclass.nn import InteractionType, interaction_type, set_interaction_type
>>> with set_interaction_type("mode"):
...     interaction_type()
<InteractionType.MODE: 'mode'>
>>> interaction_type() is None
True
"""

from __future__ import annotations

import contextlib
import enum
import threading
from typing import Any

import torch
from torch import Tensor
from torch.distributions import Distribution

from ..switches import ExitRestores

__all__ = ["InteractionType", "interaction_type", "sample", "set_interaction_type"]


class InteractionType(enum.Enum):
    """Which value a distribution gives: its mode, its median, its mean, a random sample, or
    the deterministic value (the mean, or the mode where the mean is not defined).

    ``MODE`` and ``MEDIAN`` read the distribution's attribute of that name; one it does not
    have is a ``NotImplementedError`` (``torch.distributions`` define no ``median``: a
    distribution class of your own can).
    """

    MODE = "mode"
    MEDIAN = "median"
    MEAN = "mean"
    RANDOM = "random"
    DETERMINISTIC = "deterministic"

    def __str__(self) -> str:
        """The value, as tensordict prints it: ``str(InteractionType.MODE) == "mode"``."""
        return self.value

    @classmethod
    def from_str(cls, value: str | InteractionType) -> InteractionType:
        """``"mode"``, ``"MODE"`` or ``InteractionType.MODE`` as an ``InteractionType``."""
        if isinstance(value, InteractionType):
            return value
        try:
            return cls(value.lower())
        except ValueError:
            choices = ", ".join(repr(member.value) for member in cls)
            raise ValueError(
                f"{value!r} is not a valid InteractionType; choose one of {choices}"
            ) from None


class _Current(threading.local):
    """The interaction type in force, per thread. A ``threading.local`` rather than a
    ``ContextVar`` because ``torch.compile`` traces its reads and writes: a compiled call
    guards on the value, and a ``set_interaction_type`` block inside one is traced."""

    def __init__(self) -> None:
        self.type: InteractionType | None = None
        self.depth = 0  # thread-local blocks this thread is in


class _Process:
    """The interaction type of ``set_interaction_type(..., thread_local=False)`` blocks:
    every thread that is not inside a thread-local block sees it."""

    type: InteractionType | None = None


_CURRENT = _Current()


def interaction_type() -> InteractionType | None:
    """The interaction type set by the innermost ``set_interaction_type``, or ``None``."""
    current = _CURRENT
    return current.type if current.depth else _Process.type


class set_interaction_type(contextlib.ContextDecorator, ExitRestores):
    """Set the interaction type of probabilistic modules inside a block (or a function).

    ``thread_local=True`` (the default here) sets it for the calling thread only;
    ``thread_local=False`` (tensordict's default) sets it for the whole process: every
    thread that is not inside a thread-local block sees it. Inside a thread-local block,
    nested blocks stay local to the thread whatever their flag.
    """

    def __init__(
        self,
        type: InteractionType | str | None = InteractionType.DETERMINISTIC,
        *,
        thread_local: bool = True,
    ) -> None:
        self.type = None if type is None else InteractionType.from_str(type)
        self.thread_local = thread_local
        self._previous: list[tuple[bool, InteractionType | None]] = []

    def __enter__(self) -> None:
        current = _CURRENT
        if self.thread_local or current.depth:
            self._previous.append((True, current.type))
            current.type = self.type
            current.depth += 1
        else:
            self._previous.append((False, _Process.type))
            _Process.type = self.type

    def _restore(self) -> None:
        local, previous = self._previous.pop()
        if local:
            _CURRENT.type = previous
            _CURRENT.depth -= 1
        else:
            _Process.type = previous


def _mean_or_mode(dist: Distribution) -> Tensor:
    found = getattr(type(dist), "deterministic_sample", None)
    if found is not None:
        return dist.deterministic_sample  # type: ignore[attr-defined, no-any-return]
    try:
        return dist.mean
    except NotImplementedError:
        return dist.mode


def sample(
    dist: Distribution,
    kind: InteractionType,
    shape: tuple[int, ...] = (),
    n_empirical_estimate: int = 1000,
) -> Any:
    """The value ``dist`` gives for the interaction type ``kind``; ``shape`` leading dims
    (new draws for ``RANDOM``, the one value repeated otherwise). ``MEAN`` of a
    distribution without a mean averages ``n_empirical_estimate`` samples."""
    if kind is InteractionType.RANDOM:
        size = torch.Size(shape)
        return dist.rsample(size) if dist.has_rsample else dist.sample(size)
    if kind is InteractionType.MODE:
        value = dist.mode
    elif kind is InteractionType.MEDIAN:
        median: Tensor | None = getattr(dist, "median", None)
        if median is None:
            raise NotImplementedError(
                f"InteractionType.MEDIAN: {type(dist).__name__} has no median; use another "
                f"interaction type or a distribution class with a median property"
            )
        value = median
    elif kind is InteractionType.MEAN:
        try:
            value = dist.mean
        except NotImplementedError:
            value = dist.sample(torch.Size([n_empirical_estimate])).float().mean(0)
    else:
        value = _mean_or_mode(dist)
    return value.expand(*shape, *value.shape) if shape else value
