"""Sampling with a given ``torch.Generator``, for distributions that take none.

``torch.distributions`` draw from the global generator of their device. To draw from a
``generator`` instead, :func:`drawing_from` loads its state into the global generator for
the block, then stores the advanced state back into ``generator`` and restores the global
one: the global generator's state is unchanged, and consecutive blocks with the same
``generator`` draw different values.

>>> import torch
>>> gen = torch.Generator().manual_seed(0)
>>> with drawing_from(gen):
...     first = torch.randn(2)
>>> torch.equal(first, torch.randn(2, generator=torch.Generator().manual_seed(0)))
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from ..keys import NestedKey, unravel_key

__all__ = ["as_generator_spec", "drawing_from", "generator_from"]


@contextlib.contextmanager
def drawing_from(generator: torch.Generator | None) -> Iterator[None]:
    """Inside the block, the global generator of ``generator``'s device draws from it."""
    if generator is None:
        yield
        return
    device = generator.device
    if device.type == "cpu":
        default = torch.default_generator
    else:
        index = device.index if device.index is not None else torch.cuda.current_device()
        default = torch.cuda.default_generators[index]
    saved = default.get_state()
    default.set_state(generator.get_state())
    try:
        yield
    finally:
        generator.set_state(default.get_state())
        default.set_state(saved)


def as_generator_spec(generator: object) -> torch.Generator | tuple[str, ...] | str | None:
    """A module's ``generator=`` argument: a generator (an ``int`` is its seed), a key, or
    ``None``."""
    if generator is None or isinstance(generator, torch.Generator):
        return generator
    if isinstance(generator, int) and not isinstance(generator, bool):
        return torch.Generator().manual_seed(generator)
    if isinstance(generator, (str, tuple)):
        key: NestedKey = generator
        return unravel_key(key)
    raise TypeError(
        f"generator must be a torch.Generator, an int seed or a key; got {type(generator).__name__}"
    )


def generator_from(spec: Any, tensordict: Any) -> tuple[torch.Generator | None, Any]:
    """The generator to draw from for one call, and a function writing the next seed
    back to the input (or ``None``). A key names an entry holding a generator or an
    integer seed (a tensor: after sampling, a new seed drawn from the seeded generator is
    written back, so the next call draws new values); a missing entry means the global
    generator."""
    if spec is None or isinstance(spec, torch.Generator):
        return spec, None
    if spec not in tensordict:
        return None, None
    value = tensordict.get(spec)  # non-tensor entries come back as their value
    if isinstance(value, torch.Generator):
        return value, None
    if not isinstance(value, torch.Tensor):
        return torch.Generator().manual_seed(int(value)), None
    seed = int(value.reshape(-1)[0])
    generator = torch.Generator().manual_seed(seed)

    def write_back() -> None:
        following = int(torch.randint(0, 2**62, (), generator=generator))
        tensordict.set(spec, torch.full_like(value, following))

    return generator, write_back
