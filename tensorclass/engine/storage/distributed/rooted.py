"""Collectives with a root rank: ``reduce``, ``gather_and_stack`` and ``scatter``.

``reduce`` needs the same structure on every rank (checked first, as ``all_reduce`` does:
see :mod:`.distributed`). ``gather_and_stack`` and ``scatter`` hand a rank instances it
holds no template for: each travels as its structure in JSON and its tensors packed in one
byte buffer (:mod:`.wire_tree`), never as a pickle, so receiving runs no code. The classes
must be imported (or defined) in the receiving process.

Both exchange a small header first (``int64``: packed bytes, JSON bytes, buffer size, status)
so that a rank that cannot take part (a list of the wrong length, a value that is not JSON,
a receiver of the wrong batch size) makes every rank raise instead of leaving the others
waiting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import Tensor

from ...core.lazy_stacks import is_lazy_stack
from ...core.self_types import B, as_op
from ...core.state import TensorCore
from ...torch_api.functions import stack
from .point_to_point import (
    Transfer,
    _as_bytes,
    _device,
    _text,
    as_group,
    reducing,
)
from .wire_tree import decode_tree, pack_tree

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

__all__ = ["gather_and_stack", "reduce", "scatter"]


def reduce(
    self: B,
    dst: int,
    op: Any = None,
    async_op: bool = False,
    return_premature: bool = False,
    group: object = None,
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
    transfer = reducing(self, op, group, "reduce", bucket_bytes, dist.reduce, dst)
    if dist.get_rank() != dst:
        transfer.copies = []  # only dst's buffers hold the result
    if async_op and return_premature:
        return transfer
    transfer.wait()
    return None


def _header(packed: int, encoded: int, total: int, ok: bool, device: torch.device) -> Tensor:
    return torch.tensor([packed, encoded, total, int(ok)], dtype=torch.int64, device=device)


def _frame(encoded: bytes, packed: Tensor, total: int, device: torch.device) -> Tensor:
    """``packed`` (at offset 0, so typed views stay aligned), then the JSON, then zeros."""
    buffer = torch.zeros(max(total, 1), dtype=torch.uint8, device=device)
    buffer[: packed.numel()] = packed
    if encoded:
        buffer[packed.numel() : packed.numel() + len(encoded)] = _as_bytes(encoded, device)
    return buffer


def _unframe(buffer: Tensor, header: list[int]) -> TensorCore:
    packed, encoded = header[0], header[1]
    return decode_tree(_text(buffer[packed : packed + encoded]), buffer[:packed])


def _group_ranks(group: ProcessGroup | None) -> list[int]:
    if group is None:
        return list(range(dist.get_world_size()))
    return list(dist.get_process_group_ranks(group))


def gather_and_stack(self: B, dst: int, group: object = None) -> B | None:
    """On rank ``dst``, write the other ranks' instances, stacked in rank order, into this
    instance (its first batch dim is ``world_size - 1``) and return it; the other ranks
    return ``None``. Structures travel as JSON, never pickled; the senders' classes
    must be imported on ``dst``. See :mod:`tensorclass.engine.storage.distributed.rooted`.
    """
    pg = as_group(group)
    device = _device(pg)
    ranks = _group_ranks(pg)
    world = len(ranks)
    at_dst = dist.get_rank() == dst
    encoded, packed = b"", torch.zeros(0, dtype=torch.uint8, device=device)
    problem: Exception | None = None
    if at_dst:
        if not self.batch_dims or self._batch_size[0] != world - 1:
            problem = ValueError(
                f"gather_and_stack: rank {dst} receives {world - 1} instances, so its first "
                f"batch dim must be {world - 1}; got batch size {list(self._batch_size)}"
            )
    else:
        try:
            encoded, packed = pack_tree(self, device)
        except Exception as err:  # raised below, once every rank knows
            problem = err
    mine = _header(packed.numel(), len(encoded), 0, problem is None, device)
    headers = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(headers, mine, group=pg)
    rows = [h.tolist() for h in headers]
    if problem is not None:
        raise problem
    failed = [rank for rank, row in zip(ranks, rows) if not row[3]]
    if failed:
        raise RuntimeError(f"gather_and_stack: rank(s) {failed} could not take part (see there)")
    total = max(row[0] + row[1] for row in rows)
    buffer = _frame(encoded, packed, total, device)
    gathered = [torch.empty_like(buffer) for _ in range(world)] if at_dst else None
    dist.gather(buffer, gathered, dst=dst, group=pg)
    if gathered is None:
        return None
    instances = [
        _unframe(received, row) for rank, received, row in zip(ranks, gathered, rows) if rank != dst
    ]
    if is_lazy_stack(self) and self.stack_dim == 0:
        for member, instance in zip(self.members, instances):
            _write_into(member, instance)
    else:
        _write_into(self, stack(instances, 0))
    return self


def _write_into(target: TensorCore, source: TensorCore) -> None:
    """``target.update(source, inplace=True)``, lazy stacks member by member (so that keys
    only some members hold are written too)."""
    if (
        is_lazy_stack(target)
        and is_lazy_stack(source)
        and target.stack_dim == source.stack_dim
        and len(target.members) == len(source.members)
    ):
        for mine, theirs in zip(target.members, source.members):
            _write_into(mine, theirs)
        return
    if target._device is not None:
        source = as_op(source).to(target._device)
    as_op(target).update(source, inplace=True)


def scatter(
    self: B,
    src: int,
    tensordicts: list[Any] | None = None,
    *,
    group: object = None,
    device: torch.device | str | None = None,
) -> Any:
    """Rank ``src`` passes ``tensordicts`` (one per rank); every rank returns a new
    instance holding its own. Receivers need no template (structures travel as JSON,
    never pickled; their classes must be imported); this instance is not used.
    ``device``: where the received instance goes (default: the CPU with gloo)."""
    del self
    pg = as_group(group)
    wire = _device(pg)
    ranks = _group_ranks(pg)
    header = _header(0, 0, 0, False, wire)
    if dist.get_rank() == src:
        problem: Exception | None = None
        parts: list[tuple[bytes, Tensor]] = []
        try:
            if tensordicts is None or len(tensordicts) != len(ranks):
                count = None if tensordicts is None else len(tensordicts)
                raise ValueError(
                    f"scatter: rank {src} must pass one instance per rank ({len(ranks)}); "
                    f"got {count}"
                )
            parts = [pack_tree(item, wire) for item in tensordicts]
        except Exception as err:  # raised below, once every rank knows
            problem = err
        total = max((p.numel() + len(e) for e, p in parts), default=0)
        headers = [_header(p.numel(), len(e), total, True, wire) for e, p in parts]
        if problem is not None:
            headers = [_header(0, 0, 0, False, wire) for _ in ranks]
        dist.scatter(header, headers, src=src, group=pg)
        if problem is not None:
            raise problem
        frames = [_frame(e, p, total, wire) for e, p in parts]
    else:
        dist.scatter(header, None, src=src, group=pg)
        frames = None
    row = header.tolist()
    if not row[3]:
        raise RuntimeError(f"scatter: rank {src} could not scatter its instances (see there)")
    received = torch.empty(max(row[2], 1), dtype=torch.uint8, device=wire)
    dist.scatter(received, frames, src=src, group=pg)
    result = _unframe(received, row)
    return result if device is None else as_op(result).to(device)
