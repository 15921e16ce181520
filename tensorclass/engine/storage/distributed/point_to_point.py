"""Tensor classes over ``torch.distributed``: point to point and collectives.

Every byte goes through ``torch.distributed`` (gloo on CPU, NCCL on GPUs): the tensors
themselves, a description of the structure sent first, and the non-tensor values as UTF-8
JSON in a ``uint8`` tensor. Both sides hold an instance of the same structure (class, batch
size, keys, dtypes, shapes); receivers write into theirs in place.

A sender posts its structure's description ahead of the data, and the receiver checks it
before writing anything (the protocol is described above :func:`send`); collectives gather
a 64-bit fingerprint (a hash of the description) from every rank first.
When they differ, the ranks raise :class:`~tensorclass.StructureMismatchError` saying what
differs, instead of deadlocking or receiving garbage (with ``isend``, only the receiver
raises: nothing waits for its answer).

Collectives (``broadcast``, ``all_reduce``) pack the tensors of each dtype into one flat
buffer, so a model's parameters move in a few calls. Lazy stacks are exchanged member by
member (receivers' members are written in place).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import torch
import torch.distributed as dist
from torch import Tensor

from ....errors import StructureMismatchError
from ....json_values import non_tensor_from_json, non_tensor_to_json, rebuilder_of
from ....non_tensor import NonTensorData, NonTensorStack
from ...core.lazy_stacks import is_lazy_stack, stack_lazily
from ...core.self_types import B
from ...core.state import TensorCore
from ..consolidated_buffer import buffer_of
from ..flat_buffer import pack_bytes, split_buckets, views_into
from ..memmap.metadata import DTYPES
from ..memmap.save import class_path

C = TypeVar("C", bound=TensorCore)

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

__all__ = [
    "Transfer",
    "as_group",
    "reducing",
    "all_gather",
    "all_reduce",
    "broadcast",
    "describe",
    "irecv",
    "isend",
    "recv",
    "send",
]

Path = tuple[str, ...]


def _slots(node: TensorCore, path: Path) -> Iterator[tuple[Path, TensorCore, str, Any]]:
    """``(path, owner, key, leaf)`` for every leaf, depth first; lazy stacks by member."""
    if is_lazy_stack(node):
        for index, member in enumerate(node.members):
            yield from _slots(member, (*path, f"<member {index}>"))
        return
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            yield from _slots(leaf, (*path, key))
        else:
            yield (*path, key), node, key, leaf


def describe(node: TensorCore) -> dict[str, Any]:
    """The structure that both sides of an exchange must share (a JSON-ready dict)."""
    leaves: list[list[Any]] = []
    for path, _, _, leaf in _slots(node, ()):
        if isinstance(leaf, Tensor):
            dtype = str(leaf.dtype).removeprefix("torch.")
            leaves.append(["/".join(path), "tensor", dtype, list(leaf.shape)])
        else:
            leaves.append(["/".join(path), "non_tensor", None, list(leaf.shape)])
    return {
        "class": class_path(type(node)),
        "batch_size": list(node._batch_size),
        "leaves": leaves,
    }


def _encode(description: dict[str, Any]) -> bytes:
    return json.dumps(description, sort_keys=True, separators=(",", ":")).encode()


def _fingerprint(encoded: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "little", signed=True)


def as_group(group: object) -> ProcessGroup | None:
    """``group`` as ``torch.distributed`` takes it (``None``: the default group)."""
    if group is None or isinstance(group, dist.ProcessGroup):
        return group
    raise TypeError(f"group must be a torch.distributed ProcessGroup or None; got {group!r}")


def _device(group: ProcessGroup | None) -> torch.device:
    """Where communication buffers live for this group's backend."""
    backend = dist.get_backend(group)
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _leaf_text(leaf: list[Any]) -> str:
    kind, dtype, shape = leaf
    return f"{dtype}{shape}" if kind == "tensor" else f"non-tensor{shape}"


def _difference(first: dict[str, Any], second: dict[str, Any], one: str, two: str) -> str:
    """What differs between two structure descriptions, naming where each comes from."""
    parts = []
    if first["class"] != second["class"]:
        parts.append(f"class {first['class']} {one}, {second['class']} {two}")
    if first["batch_size"] != second["batch_size"]:
        parts.append(f"batch size {first['batch_size']} {one}, {second['batch_size']} {two}")
    mine = {leaf[0]: leaf[1:] for leaf in first["leaves"]}
    theirs = {leaf[0]: leaf[1:] for leaf in second["leaves"]}
    if set(mine) - set(theirs):
        parts.append(f"keys only {one}: {sorted(set(mine) - set(theirs))}")
    if set(theirs) - set(mine):
        parts.append(f"keys only {two}: {sorted(set(theirs) - set(mine))}")
    for key in sorted(set(mine) & set(theirs)):
        if mine[key] != theirs[key]:
            parts.append(f"{key!r}: {_leaf_text(mine[key])} {one}, {_leaf_text(theirs[key])} {two}")
    if not parts and list(mine) != list(theirs):
        parts.append("the keys are in a different order")
    return "; ".join(parts[:10]) or "the structures differ"


# -- point to point -----------------------------------------------------------------------
#
# What a sender posts, in order, on one tag (every message is posted without waiting, so
# ``isend``/``irecv`` pairs in any order, e.g. two ranks swapping data, never deadlock):
#
#   header       int64[3]: description length, non-tensor payload length, whether the
#                sender waits for a reply (``send``) or not (``isend``)
#   description  uint8: the sender's structure (JSON), so a receiver can explain a mismatch
#   payload      uint8: the non-tensor values as JSON (when there are any)
#   tensors      one message per tensor, in leaf order
#
# A receiver reads the header and description first. When the structures agree it receives
# the rest into its own tensors; when they differ it still receives the sender's messages
# (into scratch buffers shaped from the description, so nothing is left pending on the
# channel and nothing of its own is overwritten) and raises. A blocking ``send`` then gets
# a reply (int64[2]: agreed, description length; the receiver's description when they
# differ), so both sides raise; an ``isend`` gets none, and a mismatch is raised on the
# receiving side only.

_HEADER = 4  # description length, non-tensor payload length, reply wanted, packed bytes


def _peer(rank: int | None, group_rank: int | None, group: ProcessGroup | None, name: str) -> int:
    """The global rank of the peer: ``rank``, or ``group_rank`` within ``group``."""
    if (rank is None) == (group_rank is None):
        raise ValueError(
            f"pass exactly one of {name} and group_{name}; got {rank!r} and {group_rank!r}"
        )
    if group_rank is not None:
        if group is None:
            raise ValueError(f"group_{name}={group_rank} needs group=...")
        return int(dist.get_global_rank(group, group_rank))
    assert rank is not None
    return rank


def _tag(tag: int, init_tag: int) -> int:
    """``init_tag`` is tensordict's name for ``tag`` (one tag serves every message)."""
    if tag and init_tag and tag != init_tag:
        raise ValueError(f"tag={tag} and init_tag={init_tag} differ; pass one of them")
    return tag or init_tag


def _as_bytes(data: bytes, device: torch.device) -> Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).to(device)


def _recv_tensor(
    size: int, peer: int, group: ProcessGroup | None, tag: int, device: torch.device
) -> Tensor:
    buffer = torch.empty(size, dtype=torch.uint8, device=device)
    dist.recv(buffer, peer, group=group, tag=tag)
    return buffer


def _text(buffer: Tensor) -> bytes:
    return bytes(buffer.cpu().numpy().tobytes())


def _mismatch(node: TensorCore, doing: str, peer: int, mine: bytes, theirs: bytes) -> Exception:
    role = "sender" if doing == "receive" else "receiver"
    where = f"on the {role} (rank {peer})"
    difference = _difference(json.loads(mine), json.loads(theirs), "here", where)
    preposition = "from" if doing == "receive" else "to"
    return StructureMismatchError(
        f"cannot {doing} a {type(node).__name__} {preposition} rank {peer}: the structures "
        f"differ ({difference})"
    )


def _post(
    node: TensorCore,
    dst: int,
    group: ProcessGroup | None,
    tag: int,
    reply: bool,
    consolidated: bool,
) -> tuple[Transfer, bytes]:
    """Post every message of a send without waiting (see the protocol above)."""
    device = _device(group)
    encoded = _encode(describe(node))
    payload = _non_tensor_payload(node)
    tensors = _tensors(node)
    packed = buffer_of(node)  # a consolidated instance sends its buffer as it is
    if packed is not None:
        packed = packed.to(device)
    elif consolidated:
        packed = pack_bytes(tensors, device)
    header = [len(encoded), len(payload), int(reply), -1 if packed is None else packed.numel()]
    messages = [torch.tensor(header, dtype=torch.int64, device=device), _as_bytes(encoded, device)]
    if payload:
        messages.append(_as_bytes(payload, device))
    if packed is not None:
        messages.append(packed)
    else:
        messages += [_wire(tensor, device) for tensor in tensors]
    works = [dist.isend(message, dst, group=group, tag=tag) for message in messages]
    return Transfer(node, [w for w in works if w is not None], [], messages), encoded


def send(
    self: B,
    dst: int | None = None,
    *,
    group: object = None,
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
    del pseudo_rand
    pg = as_group(group)
    dst = _peer(dst, group_dst, pg, "dst")
    tag = _tag(tag, init_tag)
    transfer, encoded = _post(self, dst, pg, tag, reply=True, consolidated=consolidated)
    transfer.wait()
    device = _device(pg)
    verdict = torch.zeros(2, dtype=torch.int64, device=device)
    dist.recv(verdict, dst, group=pg, tag=tag)
    agreed, length = (int(v) for v in verdict.tolist())
    if not agreed:
        theirs = _text(_recv_tensor(length, dst, pg, tag, device))
        raise _mismatch(self, "send", dst, encoded, theirs)


def isend(
    self: B,
    dst: int | None = None,
    *,
    group: object = None,
    tag: int = 0,
    group_dst: int | None = None,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    return_early: bool = True,
    consolidated: bool = False,
) -> Transfer:
    """Start sending to ``dst`` without waiting for it; ``wait()`` on the result finishes
    (``return_early=False`` waits before returning). Keywords as in :meth:`send`."""
    del pseudo_rand
    pg = as_group(group)
    dst = _peer(dst, group_dst, pg, "dst")
    transfer, _ = _post(self, dst, pg, _tag(tag, init_tag), reply=False, consolidated=consolidated)
    if not return_early:
        transfer.wait()
    return transfer


def recv(
    self: B,
    src: int | None = None,
    *,
    group: object = None,
    tag: int = 0,
    group_src: int | None = None,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    consolidated: bool = False,
) -> int:
    """Receive in place what rank ``src`` sends; returns ``src`` (its global rank).
    Keywords as in :meth:`send` (``consolidated``: the sender's choice is followed)."""
    src = _peer(src, group_src, as_group(group), "src")
    irecv(self, src, group=group, tag=_tag(tag, init_tag)).wait()
    return src


def irecv(
    self: B,
    src: int | None = None,
    *,
    group: object = None,
    tag: int = 0,
    group_src: int | None = None,
    return_premature: bool = True,
    init_tag: int = 0,
    pseudo_rand: bool = False,
    consolidated: bool = False,
) -> Transfer:
    """Start receiving from ``src`` in place; ``wait()`` on the result finishes
    (``return_premature=False`` waits before returning). Keywords as in :meth:`recv`."""
    del pseudo_rand, consolidated  # one tag per transfer; packing is the sender's choice
    pg = as_group(group)
    src = _peer(src, group_src, pg, "src")
    tag = _tag(tag, init_tag)
    device = _device(pg)
    header = torch.zeros(_HEADER, dtype=torch.int64, device=device)
    dist.recv(header, src, group=pg, tag=tag)
    length, payload_length, reply, packed = (int(v) for v in header.tolist())
    theirs = _text(_recv_tensor(length, src, pg, tag, device))
    encoded = _encode(describe(self))
    if theirs != encoded:
        _drain(json.loads(theirs), payload_length, packed, src, pg, tag, device)
        if reply:
            dist.send(torch.tensor([0, len(encoded)], device=device), src, group=pg, tag=tag)
            dist.send(_as_bytes(encoded, device), src, group=pg, tag=tag)
        raise _mismatch(self, "receive", src, encoded, theirs)
    if payload_length:
        payload = _text(_recv_tensor(payload_length, src, pg, tag, device))
        _apply_non_tensor_payload(self, payload)
    works, copies = [], []
    kept: list[Tensor] = []
    tensors = _tensors(self)
    if packed >= 0:
        mine = _one_buffer(self, device)
        direct = mine is not None and not any(t.requires_grad for t in tensors)
        flat = mine if direct else torch.empty(packed, dtype=torch.uint8, device=device)
        assert flat is not None
        works.append(dist.irecv(flat, src, group=pg, tag=tag))
        if not direct:  # a consolidated receiver gets the bytes in its own buffer
            copies = list(zip(tensors, views_into(flat, tensors)))
        kept.append(flat)
    else:
        for tensor in tensors:
            direct = tensor.is_contiguous() and tensor.device == device and not tensor.requires_grad
            buffer = tensor if direct else torch.empty_like(tensor, device=device).contiguous()
            works.append(dist.irecv(buffer, src, group=pg, tag=tag))
            if not direct:
                copies.append((tensor, buffer))
    if reply:
        verdict = torch.tensor([1, 0], dtype=torch.int64, device=device)
        works.append(dist.isend(verdict, src, group=pg, tag=tag))
        kept.append(verdict)
    transfer = Transfer(self, [w for w in works if w is not None], copies, kept)
    if not return_premature:
        transfer.wait()
    return transfer


def _drain(
    description: dict[str, Any],
    payload_length: int,
    packed: int,
    src: int,
    group: ProcessGroup | None,
    tag: int,
    device: torch.device,
) -> None:
    """Receive (and drop) what the sender of a different structure posted after its header."""
    if payload_length:
        _recv_tensor(payload_length, src, group, tag, device)
    if packed >= 0:
        _recv_tensor(packed, src, group, tag, device)
        return
    for _, kind, dtype, shape in description["leaves"]:
        if kind == "tensor":
            scratch = torch.empty(shape, dtype=DTYPES[dtype], device=device)
            dist.recv(scratch, src, group=group, tag=tag)


def _non_tensor_payload(node: TensorCore) -> bytes:
    values = [
        non_tensor_to_json(leaf, path)
        for path, _, _, leaf in _slots(node, ())
        if type(leaf) in (NonTensorData, NonTensorStack)
    ]
    return json.dumps(values).encode() if values else b""


def _apply_non_tensor_payload(node: TensorCore, data: bytes) -> None:
    if not data:
        return
    values = iter(json.loads(data))
    for _, owner, key, leaf in _slots(node, ()):
        if type(leaf) in (NonTensorData, NonTensorStack):
            kind, payload = next(values)
            owner._data[key] = non_tensor_from_json(
                kind, payload, tuple(owner._batch_size), rebuilder_of(type(owner), key)
            )


def _one_buffer(node: TensorCore, device: torch.device) -> Tensor | None:
    """A consolidated receiver's own buffer, when the bytes can be received into it (the
    packed layout is the consolidated one)."""
    buffer = buffer_of(node)
    if buffer is None or buffer.device != device:
        return None
    return buffer


def _tensors(node: TensorCore) -> list[Tensor]:
    return [leaf for _, _, _, leaf in _slots(node, ()) if isinstance(leaf, Tensor)]


def _wire(tensor: Tensor, device: torch.device) -> Tensor:
    """The tensor as it can be sent: contiguous, on the communication device."""
    return tensor.detach().to(device).contiguous()


def _non_tensor_slots(node: TensorCore) -> Iterator[Any]:
    return (s for s in _slots(node, ()) if type(s[3]) in (NonTensorData, NonTensorStack))


@dataclass
class Transfer:
    """A started asynchronous exchange: :meth:`wait` finishes it and returns the instance."""

    node: TensorCore
    works: list[dist.Work]
    copies: list[tuple[Tensor, Tensor]]
    buffers: list[Tensor] = field(default_factory=list)  # alive until the transfer is done

    def __iter__(self) -> Iterator[Transfer]:
        """A transfer is also the list of its one ``Work``, as tensordict returns lists:
        ``for work in td.isend(1): work.wait()`` works."""
        yield self

    def is_completed(self) -> bool:
        """Whether every message has been transferred."""
        return all(work.is_completed() for work in self.works)

    def wait(self) -> TensorCore:
        """Wait for every message, then finish the in-place writes."""
        for work in self.works:
            work.wait()
        with torch.no_grad():
            for target, buffer in self.copies:
                target.copy_(buffer)
        self.copies = []
        self.buffers = []
        return self.node


# -- collectives ----------------------------------------------------------------------------


def _all_gather_bytes(data: bytes, group: ProcessGroup | None, device: torch.device) -> list[bytes]:
    world = dist.get_world_size(group)
    size = torch.tensor([len(data)], dtype=torch.int64, device=device)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size, group=group)
    longest = max(int(s.item()) for s in sizes)
    padded = torch.zeros(max(longest, 1), dtype=torch.uint8, device=device)
    if data:
        padded[: len(data)] = _as_bytes(data, device)
    gathered = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(gathered, padded, group=group)
    return [_text(g[: int(s.item())]) for g, s in zip(gathered, sizes)]


def _check_collective(node: TensorCore, group: ProcessGroup | None, what: str) -> None:
    """Gather every rank's fingerprint; on any difference every rank raises the same way."""
    device = _device(group)
    description = describe(node)
    encoded = _encode(description)
    mine = torch.tensor([_fingerprint(encoded)], dtype=torch.int64, device=device)
    everyone = [torch.zeros_like(mine) for _ in range(dist.get_world_size(group))]
    dist.all_gather(everyone, mine, group=group)
    prints = [int(t.item()) for t in everyone]
    if all(p == prints[0] for p in prints):
        return
    descriptions = _all_gather_bytes(encoded, group, device)
    ranks = list(dist.get_process_group_ranks(group) if group is not None else range(len(prints)))
    reference = json.loads(descriptions[0])
    details = [
        _difference(json.loads(d), reference, f"on rank {rank}", f"on rank {ranks[0]}")
        for rank, d, p in zip(ranks, descriptions, prints)
        if p != prints[0]
    ]
    raise StructureMismatchError(
        f"cannot {what} a {type(node).__name__}: the ranks hold different structures ("
        + "; ".join(details)
        + ")"
    )


def _buckets(tensors: list[Tensor], bucket_bytes: int | None) -> list[list[Tensor]]:
    """Flat-buffer groups: by dtype, each split into groups of at most ``bucket_bytes``."""
    groups: dict[torch.dtype, list[Tensor]] = {}
    for tensor in tensors:
        groups.setdefault(tensor.dtype, []).append(tensor)
    return [bucket for same in groups.values() for bucket in split_buckets(same, bucket_bytes)]


def _flat_collective(
    node: TensorCore,
    device: torch.device,
    run: Callable[[Tensor], dist.Work | None],
    bucket_bytes: int | None = None,
) -> Transfer:
    """Start ``run(flat_buffer)`` (an async collective) on each flat buffer; ``wait()`` on
    the result copies the results back into the leaves."""
    works, copies, flats = [], [], []
    for tensors in _buckets(_tensors(node), bucket_bytes):
        flat = torch.cat([t.detach().reshape(-1).to(device) for t in tensors])
        works.append(run(flat))
        flats.append(flat)
        offset = 0
        for tensor in tensors:
            count = tensor.numel()
            copies.append((tensor.detach(), flat[offset : offset + count].view(tensor.shape)))
            offset += count
    return Transfer(node, [w for w in works if w is not None], copies, flats)


def reducing(
    node: TensorCore,
    op: object,
    group: object,
    what: str,
    bucket_bytes: int | None,
    start: Callable[..., dist.Work | None],
    *args: int,
) -> Transfer:
    """Check that every rank holds ``node``'s structure, then start ``start(flat, *args,
    op, group=..., async_op=True)`` (``dist.all_reduce``, ``dist.reduce`` with the ``dst``
    in ``args``) on each flat buffer; ``op`` defaults to ``ReduceOp.SUM``."""
    reduce_op = dist.ReduceOp.SUM if op is None else op
    pg = as_group(group)
    _check_collective(node, pg, what)
    return _flat_collective(
        node,
        _device(pg),
        lambda flat: start(flat, *args, reduce_op, group=pg, async_op=True),
        bucket_bytes,
    )


def broadcast(
    self: B, src: int, *, group: object = None, device: torch.device | str | None = None
) -> B:
    """Overwrite this instance on every rank with rank ``src``'s values (in place);
    ``device``: where the exchange buffers live (default: CUDA for NCCL, else CPU)."""
    pg = as_group(group)
    wire = _device(pg) if device is None else torch.device(device)
    _check_collective(self, pg, "broadcast")
    _flat_collective(
        self, wire, lambda flat: dist.broadcast(flat, src, group=pg, async_op=True)
    ).wait()
    if any(True for _ in _non_tensor_slots(self)):
        device = wire
        payloads = _all_gather_bytes(_non_tensor_payload(self), pg, device)
        ranks = list(dist.get_process_group_ranks(pg)) if pg is not None else None
        index = ranks.index(src) if ranks is not None else src
        _apply_non_tensor_payload(self, payloads[index])
    return self


@overload
def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: object = None,
    async_op: Literal[False] = False,
    bucket_bytes: int | None = None,
) -> B: ...


@overload
def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: object = None,
    async_op: Literal[True],
    bucket_bytes: int | None = None,
) -> Transfer: ...


def all_reduce(
    self: B,
    op: Any = None,
    *,
    group: object = None,
    async_op: bool = False,
    bucket_bytes: int | None = None,
) -> B | Transfer:
    """Reduce every tensor across ranks in place (default ``ReduceOp.SUM``).

    Tensors travel as one flat buffer per dtype, of at most ``bucket_bytes`` bytes if
    given. ``async_op=True`` returns a :class:`~tensorclass.engine.storage.distributed.point_to_point.Transfer`
    at once; ``wait()`` on it writes the results into the leaves.
    """
    transfer = reducing(self, op, group, "all_reduce", bucket_bytes, dist.all_reduce)
    if async_op:
        return transfer
    transfer.wait()
    return self


def _rebuilt(node: C, tensors: Iterator[Tensor], non_tensors: Iterator[Any]) -> C:
    if is_lazy_stack(node):
        members = [_rebuilt(m, tensors, non_tensors) for m in node.members]
        stacked: C = stack_lazily(members, node.stack_dim)
        return stacked
    data: dict[str, Any] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = next(tensors)
        elif isinstance(leaf, TensorCore):
            data[key] = _rebuilt(leaf, tensors, non_tensors)
        else:
            kind, payload = next(non_tensors)
            data[key] = non_tensor_from_json(
                kind, payload, tuple(node._batch_size), rebuilder_of(type(node), key)
            )
    return type(node)._new(data, node._batch_size, node._device, node._names)


def all_gather(self: B, *, group: object = None) -> list[B]:
    """Every rank's instance, in rank order."""
    pg = as_group(group)
    _check_collective(self, pg, "all_gather")
    device = _device(pg)
    world = dist.get_world_size(pg)
    per_rank: list[list[Tensor]] = [[] for _ in range(world)]
    for tensor in _tensors(self):
        wire = _wire(tensor, device)
        gathered = [torch.empty_like(wire) for _ in range(world)]
        dist.all_gather(gathered, wire, group=pg)
        for rank, item in enumerate(gathered):
            per_rank[rank].append(item.to(tensor.device))
    payloads: list[bytes] = [b""] * world
    if any(True for _ in _non_tensor_slots(self)):
        payloads = _all_gather_bytes(_non_tensor_payload(self), pg, device)
    return [
        _rebuilt(self, iter(tensors), iter(json.loads(payload) if payload else []))
        for tensors, payload in zip(per_rank, payloads)
    ]
