"""The pipe methods of every tensor class: ``asend`` and ``arecv`` (asynchronous, through any
object with coroutine methods ``asend``/``arecv``).

Functions, attached to ``TensorDictBase`` in ``engine/base.py``, as the other
``torch.distributed`` methods are: point to point (``send``, ``recv``, ``isend``,
``irecv``) and the collectives without a root (``broadcast``, ``all_reduce``,
``all_gather``) in :mod:`.point_to_point`, those with one root rank (``reduce``,
``gather_and_stack``, ``scatter``) in :mod:`.rooted`.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch

from ...core.self_types import B
from ...core.state import TensorCore

__all__ = ["TensorPipe", "arecv", "asend"]


class TensorPipe(Protocol):
    """What :func:`asend` and :func:`arecv` need: any object with these two coroutine methods (tensordict's UCXX ``TensorDictPipe`` is one)."""

    async def asend(self, data: Any, /) -> object:
        """Send ``data`` through the pipe."""

    async def arecv(self, data: Any, /, *, device: torch.device | str | None = None) -> TensorCore:
        """Receive into ``data`` if it can, else return a new instance."""


async def asend(self: B, dst: TensorPipe) -> None:
    """Send through a pipe, asynchronously: awaits ``dst.asend(self)``. Any object
    with coroutine methods ``asend(data)`` and ``arecv(data, *, device=None)`` is a
    pipe (tensorclass ships none; tensordict's UCXX ``TensorDictPipe`` fits).

    >>> import asyncio, torch
    >>> from tensorclass import TensorDict
    >>> class Pipe:
    ...     async def asend(self: B, data): self.data = data.clone()
    ...     async def arecv(self: B, data, *, device=None): return data.update_(self.data)
    >>> pipe = Pipe()
    >>> asyncio.run(TensorDict(a=torch.ones(2), batch_size=[2]).asend(pipe))
    >>> asyncio.run(TensorDict(a=torch.zeros(2), batch_size=[2]).arecv(pipe))["a"]
    tensor([1., 1.])
    """
    await dst.asend(self)


async def arecv(self: B, src: TensorPipe, *, device: torch.device | str | None = None) -> Any:
    """Receive from a pipe, asynchronously: returns ``await src.arecv(self,
    device=device)``, this instance written in place or another one (use the return
    value). See :meth:`asend` for what a pipe is."""
    return await src.arecv(self, device=device)
