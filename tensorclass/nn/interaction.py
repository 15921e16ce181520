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
from types import TracebackType
from typing import Any

from torch import Tensor
from torch.distributions import Distribution

__all__ = ["InteractionType", "interaction_type", "sample", "set_interaction_type"]


class InteractionType(enum.Enum):
    """Which value a distribution gives: its mode, its mean, a random sample, or the
    deterministic value (the mean, or the mode where the mean is not defined)."""

    MODE = "mode"
    MEAN = "mean"
    RANDOM = "random"
    DETERMINISTIC = "deterministic"

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
                f"unknown interaction type {value!r}; choose one of {choices}"
            ) from None


class _Current(threading.local):
    """The interaction type in force, per thread. A ``threading.local`` rather than a
    ``ContextVar`` because ``torch.compile`` traces its reads and writes: a compiled call
    guards on the value, and a ``set_interaction_type`` block inside one is traced."""

    def __init__(self) -> None:
        self.type: InteractionType | None = None


_CURRENT = _Current()


def interaction_type() -> InteractionType | None:
    """The interaction type set by the innermost ``set_interaction_type``, or ``None``."""
    return _CURRENT.type


class set_interaction_type(contextlib.ContextDecorator):
    """Set the interaction type of probabilistic modules inside a block (or a function)."""

    def __init__(self, type: InteractionType | str | None = InteractionType.DETERMINISTIC) -> None:
        self.type = None if type is None else InteractionType.from_str(type)
        self._previous: list[InteractionType | None] = []

    def __enter__(self) -> None:
        self._previous.append(_CURRENT.type)
        _CURRENT.type = self.type

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _CURRENT.type = self._previous.pop()


def _mean_or_mode(dist: Distribution) -> Tensor:
    try:
        return dist.mean
    except NotImplementedError:
        return dist.mode


def sample(dist: Distribution, kind: InteractionType) -> Any:
    """The value ``dist`` gives for the interaction type ``kind``."""
    if kind is InteractionType.RANDOM:
        return dist.rsample() if dist.has_rsample else dist.sample()
    if kind is InteractionType.MODE:
        return dist.mode
    if kind is InteractionType.MEAN:
        return dist.mean
    return _mean_or_mode(dist)
