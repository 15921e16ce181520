"""The ``torch.distributed`` methods of every tensor class: point to point (``send``,
``recv``, ``isend``, ``irecv``), collectives (``broadcast``, ``all_reduce``,
``all_gather``, ``reduce``, ``gather_and_stack``, ``scatter``) and pipes (``asend``,
``arecv``).

Functions, attached to ``TensorDictBase`` in ``engine/base.py``. They forward: the transfers
are :mod:`.point_to_point` and :mod:`.rooted` (the collectives with one root rank).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, overload

import torch

from ...core.self_types import B
from . import point_to_point, rooted
from .point_to_point import Transfer

__all__ = [
    "TensorPipe",
    "all_gather",
    "all_reduce",
    "arecv",
    "asend",
    "broadcast",
    "gather_and_stack",
    "irecv",
    "isend",
    "recv",
    "reduce",
    "scatter",
    "send",
]


class TensorPipe(Protocol):
    """What ``asend`` and ``arecv`` need: any object
    with these two coroutine methods (tensordict's UCXX ``TensorDictPipe`` is one)."""

    async def asend(self, data: Any, /) -> Any:
        """Send ``data`` through the pipe."""

    async def arecv(self, data: Any, /, *, device: Any = None) -> Any:
        """Receive into ``data`` if it can, else return a new instance."""


def send(
    self: B,
    dst: int | None = None,
    *,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    consolidated: bool = False,
) -> None:
    """Send to rank ``dst`` (which calls :meth:`recv` on the same structure).

    ``group_dst``: the receiver's rank in ``group`` instead of ``dst``. ``init_tag``: the
    tag (``tag``'s tensordict name); ``pseudo_rand`` is accepted and has no effect (one
    tag serves a whole transfer, in order). ``consolidated=True`` packs every tensor
    into one message. See :mod:`tensorclass.engine.storage.distributed.point_to_point`.
    """
    point_to_point.send(
        self,
        dst,
        group=group,
        tag=tag,
        group_dst=group_dst,
        init_tag=init_tag,
        pseudo_rand=pseudo_rand,
        consolidated=consolidated,
    )


def recv(
    self: B,
    src: int | None = None,
    *,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    consolidated: bool = False,
) -> int:
    """Receive in place what rank ``src`` sends; returns ``src`` (its global rank).
    Keywords as in :meth:`send` (``consolidated``: the sender's choice is followed)."""
    return point_to_point.recv(
        self,
        src,
        group=group,
        tag=tag,
        group_src=group_src,
        init_tag=init_tag,
        pseudo_rand=pseudo_rand,
        consolidated=consolidated,
    )


def isend(
    self: B,
    dst: int | None = None,
    *,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    return_early: bool = True,
    consolidated: bool = False,
) -> Transfer:
    """Start sending to ``dst`` without waiting for it; ``wait()`` on the result finishes
    (``return_early=False`` waits before returning). Keywords as in :meth:`send`."""
    return point_to_point.isend(
        self,
        dst,
        group=group,
        tag=tag,
        group_dst=group_dst,
        init_tag=init_tag,
        pseudo_rand=pseudo_rand,
        return_early=return_early,
        consolidated=consolidated,
    )


def irecv(
    self: B,
    src: int | None = None,
    *,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
    return_premature: bool = True,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    consolidated: bool = False,
) -> Transfer:
    """Start receiving from ``src`` in place; ``wait()`` on the result finishes
    (``return_premature=False`` waits before returning). Keywords as in :meth:`recv`."""
    return point_to_point.irecv(
        self,
        src,
        group=group,
        tag=tag,
        group_src=group_src,
        return_premature=return_premature,
        init_tag=init_tag,
        pseudo_rand=pseudo_rand,
        consolidated=consolidated,
    )


def broadcast(
    self: B, src: int, *, group: Any = None, device: torch.device | str | None = None
) -> B:
    """Overwrite this instance on every rank with rank ``src``'s values (in place);
    ``device``: where the exchange buffers live (default: CUDA for NCCL, else CPU)."""
    return point_to_point.broadcast(self, src, group=group, device=device)  # type: ignore[return-value]


@overload
def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: Any = None,
    async_op: Literal[False] = False,
    bucket_bytes: int | None = None,
) -> B: ...


@overload
def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: Any = None,
    async_op: Literal[True],
    bucket_bytes: int | None = None,
) -> Transfer: ...


def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: Any = None,
    async_op: bool = False,
    bucket_bytes: int | None = None,
) -> B | Transfer:
    """Reduce every tensor across ranks in place (default ``ReduceOp.SUM``).

    Tensors travel as one flat buffer per dtype, of at most ``bucket_bytes`` bytes if
    given. ``async_op=True`` returns a :class:`~tensorclass.engine.storage.distributed.point_to_point.Transfer`
    at once; ``wait()`` on it writes the results into the leaves.
    """
    result: B | Transfer = point_to_point.all_reduce(
        self, op, group=group, async_op=async_op, bucket_bytes=bucket_bytes
    )
    return result


def all_gather(self: B, *, group: Any = None) -> list[B]:
    """Every rank's instance, in rank order."""
    return point_to_point.all_gather(self, group=group)


def reduce(
    self: B,
    dst: int,
    op: Any = None,
    async_op: bool = False,
    return_premature: bool = False,
    group: Any = None,
    *,
    bucket_bytes: int | None = None,
) -> Transfer | None:
    """Reduce every tensor over the ranks into rank ``dst``'s instance, in place
    (default ``ReduceOp.SUM``); the other ranks keep their values.

    Every rank calls it with the same structure (checked first). Tensors travel as one
    flat buffer per dtype, of at most ``bucket_bytes`` bytes if given. With
    ``async_op=True, return_premature=True`` the handle returns at once (``wait()``
    on it writes the result); otherwise this waits and returns ``None``.
    """
    return rooted.reduce(
        self,
        dst,
        op,
        async_op,
        return_premature,
        group,
        bucket_bytes=bucket_bytes,
    )


def gather_and_stack(self: B, dst: int, group: Any = None) -> B | None:
    """On rank ``dst``, write the other ranks' instances, stacked in rank order, into this
    instance (its first batch dim is ``world_size - 1``) and return it; the other ranks
    return ``None``. Structures travel as JSON, never pickled; the senders' classes
    must be imported on ``dst``. See :mod:`tensorclass.engine.storage.distributed.rooted`.
    """
    return rooted.gather_and_stack(self, dst, group)  # type: ignore[return-value]


def scatter(
    self: B,
    src: int,
    tensordicts: list[Any] | None = None,
    *,
    group: Any = None,
    device: torch.device | str | None = None,
) -> Any:
    """Rank ``src`` passes ``tensordicts`` (one per rank); every rank returns a new
    instance holding its own. Receivers need no template (structures travel as JSON,
    never pickled; their classes must be imported); this instance is not used.
    ``device``: where the received instance goes (default: the CPU with gloo)."""
    return rooted.scatter(self, src, tensordicts, group=group, device=device)


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
