"""``consolidate()``: every tensor of an instance becomes a view into one byte buffer.

The buffer is one ``uint8`` storage; each tensor (in the order of a walk of the tree: keys
in order, lazy-stack members in order) sits at an offset aligned to 16 bytes (the layout of
:mod:`.wire_pack`) and is read through ``Tensor.view(dtype)``. Buffers made here are kept
in a weak set of storages, so :func:`is_consolidated` can tell a consolidated
instance from one whose leaves merely share memory: it holds when every tensor is a view
into one such buffer, at the offsets the layout gives, and the buffer holds nothing else.
In-place writes keep it; replacing, adding or removing a tensor ends it.

What a consolidated instance does with its one buffer:

- pickling (``pickle``, ``torch.save``, ``multiprocessing``) sends the buffer and a
  description of the tree made of plain values (classes, batch sizes, keys, each tensor's
  dtype and shape: its place follows from the order); :func:`rebuild_consolidated` (on
  torch's ``weights_only`` allow-list) rebuilds the views. ``pickle`` gets the buffer's
  bytes as they are (:class:`PickledBuffer`; out of band with protocol 5), ``torch.save``
  (protocol 2) one tensor storage, and ``multiprocessing`` the tensor itself (shared
  memory, as for any tensor);
- ``to(device)`` copies the buffer once and rebuilds the views;
- ``share_memory_()`` moves the one storage to shared memory.

``filename=`` puts the buffer in a file (see :mod:`.consolidated_file`), which
:func:`from_consolidated` reads back without unpickling anything.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.reduction import ForkingPickler
from typing import Any

import torch
from torch import Tensor

from ...errors import FormatError
from ..core.lazy_stacks import is_lazy_stack, stack_lazily
from ..core.safe_globals import allow_loading
from ..core.self_types import B
from ..core.state import TensorCore
from ..core.untrusted import loadable, shown, tree_problem
from ..shape.jagged import as_jagged, is_jagged, jagged_parts
from .consolidated_buffer import (
    JAGGED_ENTRY,
    LAZY_LEVEL,
    LEVEL,
    NESTED_ENTRY,
    TENSOR_ENTRY,
    buffer_of,
    has_buffers,
    layout_of,
    register_buffer,
)
from .consolidated_file import read_file, tensors_of, write_file
from .flat_buffer import ALIGN, byte_layout, views_into
from .memmap.options import in_background
from .memmap.tensor import PathLike
from .parallel import methods as parallel_methods

__all__ = [
    "consolidate",
    "from_consolidated",
    "from_consolidated_as",
    "PickledBuffer",
    "buffer_from_bytes",
    "is_consolidated",
    "rebuild_consolidated",
    "same_buffer",
    "share_memory_",
    "tensors_of",
]

Spec = tuple[int, torch.dtype, tuple[int, ...], tuple[int, ...]]


def rebuild_tree(node: TensorCore, leaf: Callable[[Tensor], Any], *, inplace: bool) -> Any:
    """``node`` with every tensor replaced by ``leaf(tensor)`` (same walk order)."""
    if is_lazy_stack(node):
        members = [rebuild_tree(m, leaf, inplace=inplace) for m in node.members]
        return node if inplace else stack_lazily(members, node.stack_dim)
    data: dict[str, object] = {}
    for key, value in node._data.items():
        if isinstance(value, Tensor):
            data[key] = leaf(value)
        elif isinstance(value, TensorCore):
            data[key] = rebuild_tree(value, leaf, inplace=inplace)
        else:
            data[key] = value
    if inplace:
        node._data.update(data)
        return node
    return type(node)._new(data, node._batch_size, node._device, node._names)


def _spec(tensor: Tensor, buffer_start: int) -> Spec | tuple[Spec, Spec]:
    """Where a tensor lies in the buffer (a nested jagged tensor: its values' and its
    offsets')."""
    if is_jagged(tensor):
        values, offsets = jagged_parts(tensor)
        return (_plain_spec(values, buffer_start), _plain_spec(offsets, buffer_start))
    return _plain_spec(tensor, buffer_start)


def _plain_spec(tensor: Tensor, buffer_start: int) -> Spec:
    offset = tensor.storage_offset() * tensor.element_size() - buffer_start
    return (int(offset), tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()))


class _Views:
    """Views of a byte buffer: one typed view per dtype, then ``as_strided`` per leaf."""

    def __init__(self, buffer: Tensor) -> None:
        self.buffer = buffer
        self.typed: dict[torch.dtype, Tensor] = {}

    def __call__(self, spec: Any) -> Tensor:
        if type(spec) is tuple and len(spec) == 2:  # a nested jagged tensor's two specs
            values, offsets = self(spec[0]), self(spec[1])
            if offsets.dim() != 1 or offsets.dtype not in (torch.int32, torch.int64):
                raise ValueError("a consolidated pickle holds bad nested-tensor offsets")
            return as_jagged(values, offsets)
        try:
            offset, dtype, shape, stride = spec
            typed = self.typed.get(dtype)
            if typed is None:
                size = self.buffer.numel()
                typed = self.buffer[: size - size % dtype.itemsize].view(dtype)
                self.typed[dtype] = typed
            start, rest = divmod(offset, dtype.itemsize)
        except (TypeError, ValueError, AttributeError):
            raise ValueError(f"a consolidated pickle holds a malformed leaf {spec!r}") from None
        if rest or start < 0:
            raise ValueError(f"a consolidated pickle holds a leaf at a bad offset {offset}")
        try:
            return typed.as_strided(shape, stride, start)
        except (RuntimeError, TypeError) as err:
            raise ValueError(
                f"a consolidated pickle holds a leaf outside its buffer: {err}"
            ) from None


def _rebuild_consolidated(buffer: Tensor, skeleton: TensorCore) -> TensorCore:
    """Unpickling a consolidated instance pickled before :func:`rebuild_consolidated`:
    views of ``buffer`` in the skeleton's leaves, ``(offset, dtype, shape, stride)``.

    Builds only views of a tensor (``torch.load`` with ``weights_only=True`` may call it):
    the skeleton was rebuilt by the allow-listed class rebuilders already."""
    if not isinstance(buffer, Tensor) or buffer.dtype != torch.uint8 or buffer.dim() != 1:
        raise ValueError("a consolidated pickle must hold a 1-D uint8 buffer")
    if not isinstance(skeleton, TensorCore):
        raise ValueError("a consolidated pickle must hold a tensor class skeleton")
    register_buffer(buffer)
    _fill(skeleton, _Views(buffer))
    wrong = tree_problem(skeleton)  # the views now stand where the leaf specs were
    if wrong is not None:
        raise FormatError(f"cannot unpickle a consolidated tensor class: {wrong}")
    return skeleton


def _fill(node: TensorCore, views: _Views) -> None:
    if is_lazy_stack(node):
        for member in node.members:
            _fill(member, views)
        return
    data = node._data
    for key, value in data.items():
        if isinstance(value, tuple):
            data[key] = views(value)
        elif isinstance(value, TensorCore):
            _fill(value, views)


allow_loading(_rebuild_consolidated)


def _copy_into(
    views: list[Tensor], tensors: list[Tensor], threads: int, non_blocking: bool
) -> None:
    pairs = list(zip(views, tensors))

    def copy(pair: tuple[Tensor, Tensor]) -> None:
        pair[0].copy_(pair[1].detach(), non_blocking=non_blocking)

    if threads > 1 and len(pairs) > 1:
        with ThreadPoolExecutor(min(threads, len(pairs))) as pool:
            for _ in pool.map(copy, pairs):
                pass
    else:
        for pair in pairs:
            copy(pair)


def is_consolidated(self: B) -> bool:
    """Whether every tensor is a view into the one buffer :meth:`consolidate` made
    (in-place writes keep it; replacing, adding or removing a tensor ends it).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict(a=torch.zeros(3))
    >>> td.is_consolidated(), td.consolidate().is_consolidated()
    (False, True)
    """
    return buffer_of(self) is not None


def consolidate(
    self: B,
    filename: PathLike | None = None,
    *,
    num_threads: int = 0,
    device: torch.device | str | int | None = None,
    non_blocking: bool = False,
    inplace: bool = False,
    return_early: bool = False,
    use_buffer: bool = False,
    share_memory: bool = False,
    pin_memory: bool = False,
    metadata: bool = False,
) -> Any:
    """Copy every tensor into one contiguous byte buffer; return an instance whose
    tensors are views into it (locked, as in tensordict), or ``self`` with
    ``inplace=True``.

    Pickling, ``to(device)`` and ``share_memory_()`` of the result then handle one
    buffer instead of one tensor per leaf. An instance that is consolidated already is
    returned as it is, unless ``filename``, ``device`` or ``share_memory=True`` asks for a
    buffer it does not have (a new consolidated instance is then made). ``filename`` puts the buffer in that file (memory-mapped, so
    in-place writes reach it) followed by a JSON description of the tree, which
    :meth:`from_consolidated` reads back. ``device`` chooses the buffer's device (the
    instance's by default); ``share_memory``/``pin_memory`` place it in shared or
    pinned memory (pinning needs an accelerator and is skipped without one);
    ``num_threads`` copies leaves in parallel, and ``return_early=True`` returns a
    :class:`~tensorclass.utils.TensorDictFuture` of the result. ``use_buffer`` and ``metadata``
    are accepted and change nothing (the structure is always known).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict(a=torch.zeros(3), b={"c": torch.arange(3)}, batch_size=[3])
    >>> c = td.consolidate()
    >>> c["a"].untyped_storage() is c["b", "c"].untyped_storage()
    True
    """
    del use_buffer, metadata
    if filename is not None and device is not None and torch.device(device).type != "cpu":
        raise ValueError(f"consolidate: filename= needs device='cpu'; got device={device!r}")
    buffer = buffer_of(self)
    if buffer is not None and filename is None and not _asks_change(buffer, device, share_memory):
        return self  # consolidated already, as asked

    def run() -> Any:
        return _consolidate(
            self, filename, num_threads, device, non_blocking, inplace, share_memory, pin_memory
        )

    return in_background(run) if return_early else run()


def _consolidate(
    self: B,
    filename: PathLike | None,
    num_threads: int,
    device: torch.device | str | int | None,
    non_blocking: bool,
    inplace: bool,
    share_memory: bool,
    pin_memory: bool,
) -> B:
    tensors = tensors_of(self)  # a nested jagged tensor: its values and offsets
    _, total = byte_layout(tensors)
    if filename is not None:
        buffer = write_file(self, filename, total)
    else:
        where = torch.device(device) if device is not None else _buffer_device(self, tensors)
        buffer = torch.empty(total, dtype=torch.uint8, device=where)
        if share_memory and where.type == "cpu":
            buffer.share_memory_()  # type: ignore[no-untyped-call]
        if pin_memory and where.type == "cpu" and torch.cuda.is_available():
            buffer = buffer.pin_memory()
    views = views_into(buffer, tensors)
    _copy_into(views, tensors, num_threads, non_blocking)
    register_buffer(buffer)
    moved = None if device is None and filename is None else buffer.device
    found = iter(views)

    def rebuilt(leaf: Tensor) -> Tensor:
        if is_jagged(leaf):
            return as_jagged(next(found), next(found))
        return next(found)

    result: B = rebuild_tree(self, rebuilt, inplace=inplace)
    if moved is not None:
        _set_devices(result, moved, filename is not None)
    return result if inplace else result.lock_()


def _buffer_device(self: B, tensors: list[Tensor]) -> torch.device:
    if self._device is not None:
        return self._device
    return tensors[0].device if tensors else torch.device("cpu")


def from_consolidated_as(cls: type[B], filename: PathLike) -> B:
    """Read a file written by ``consolidate(filename=...)``: the tensors are views into
    one copy-on-write mapping of the file (writes do not reach it); the result is
    consolidated and not locked. Nothing is unpickled; the file's classes must be
    imported (see :func:`tensorclass.from_consolidated`).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict(a=torch.zeros(3), b={"c": torch.ones(3)}, batch_size=[3])
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = td.consolidate(filename=f"{path}/td.bin")
    ...     loaded = TensorDict.from_consolidated(f"{path}/td.bin")
    ...     loaded["b", "c"].tolist(), loaded.is_consolidated()
    ([1.0, 1.0, 1.0], True)
    """
    result = from_consolidated(filename)
    target = cls._dense_class()  # a lazy-stack class: its members' class
    if not isinstance(result, target):
        raise TypeError(
            f"{os.fspath(filename)}: holds a {type(result).__name__}, not a {target.__name__} "
            f"(use tensorclass.from_consolidated to get the recorded class)"
        )
    return result


# -- the one-buffer forms of pickling, to(device) and share_memory_ -------------------


class PickledBuffer:
    """A consolidated buffer as a pickle argument (see :func:`rebuild_consolidated`).

    ``pickle`` (protocol 3 and up) gets the bytes of a CPU buffer as they are, out of band
    with protocol 5 and a ``buffer_callback``; ``torch.save`` (protocol 2) and other devices
    get the tensor (one storage record); ``multiprocessing`` gets the tensor too, which
    ``torch.multiprocessing`` sends through shared memory.
    """

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        tensor = self.tensor
        if protocol < 3 or tensor.device.type != "cpu":
            return _as_tensor(self)  # the pickler then sees one tensor (its storage)
        array = tensor.numpy()
        data = pickle.PickleBuffer(array.data) if protocol >= 5 else array.tobytes()
        return (buffer_from_bytes, (data,))


def _as_tensor(packed: PickledBuffer) -> tuple[Any, ...]:
    return (same_buffer, (packed.tensor,))


def same_buffer(buffer: Tensor) -> Tensor:
    """``buffer`` itself: the unpickling of a :class:`PickledBuffer` sent as a tensor."""
    return buffer


# multiprocessing: the tensor, which torch.multiprocessing sends through shared memory
ForkingPickler.register(PickledBuffer, _as_tensor)


def buffer_from_bytes(data: Any) -> Tensor:
    """The ``uint8`` tensor over the bytes a :class:`PickledBuffer` pickled (a writable
    buffer is used as it is; read-only bytes are copied once)."""
    view = memoryview(data)
    if view.readonly:
        view = memoryview(bytearray(view))
    if view.nbytes == 0:
        return torch.empty(0, dtype=torch.uint8)
    return torch.frombuffer(view.cast("B"), dtype=torch.uint8)


class _Build:
    """Builds the tree a :func:`~.consolidated_buffer.layout_of` description records, with
    each tensor a view of ``buffer`` at the place the layout gives it."""

    def __init__(self, buffer: Tensor, device: torch.device | None) -> None:
        self.buffer = buffer
        self.total = buffer.numel()
        self.device = device  # replaces every recorded device (``to(device)``)
        self.offset = 0
        self.typed: dict[torch.dtype, Tensor] = {}
        self.strides: dict[tuple[int, ...], tuple[tuple[int, ...], int]] = {}

    def level(self, level: Any) -> TensorCore:
        if level[0] == LAZY_LEVEL:
            _, dim, locked, members = level
            stacked: TensorCore = stack_lazily([self.level(m) for m in members], dim)
            stacked._locked = bool(locked)
            return stacked
        if level[0] != LEVEL:
            raise ValueError(f"unknown level kind {level[0]!r}")
        _, cls, batch_size, device, names, locked, entries = level
        if not loadable(cls):
            raise ValueError(f"{shown(cls)} is not a tensor class a pickle may build")
        data: dict[str, object] = {}
        strides_of, total, typed_of = self.strides, self.total, self.typed
        for entry in entries:
            kind = entry[1]
            if kind == TENSOR_ENTRY:
                # inline (a call per tensor costs as much as the view)
                key, _, dtype, shape = entry
                known = strides_of.get(shape)
                if known is None:
                    known = strides_of[shape] = _contiguous_strides(shape)
                strides, count = known
                itemsize = dtype.itemsize
                start = self.offset
                nbytes = count * itemsize
                if start + nbytes > total:
                    raise ValueError(f"a tensor of shape {shape} lies outside the buffer")
                self.offset = start + -(-nbytes // ALIGN) * ALIGN
                typed = typed_of.get(dtype)
                if typed is None:
                    typed = self.typed_view(dtype)
                data[key] = typed.as_strided(shape, strides, start // itemsize)
            elif kind == NESTED_ENTRY:
                data[entry[0]] = self.level(entry[2])
            elif kind == JAGGED_ENTRY:
                data[entry[0]] = self.jagged(*entry[2:])
            else:
                data[entry[0]] = entry[2]
        if device is not None and self.device is not None:
            device = self.device
        node: TensorCore = cls._new(data, torch.Size(batch_size), device, names)
        node._locked = bool(locked)
        return node

    def next_view(self, dtype: torch.dtype, shape: tuple[int, ...]) -> Tensor:
        """The next tensor of the buffer, of ``dtype`` and ``shape`` (contiguous)."""
        strides, count = _contiguous_strides(shape)
        start = self.offset
        nbytes = count * dtype.itemsize
        if start + nbytes > self.total:
            raise ValueError(f"a tensor of shape {shape} lies outside the buffer")
        self.offset = start + -(-nbytes // ALIGN) * ALIGN
        typed = self.typed.get(dtype)
        if typed is None:
            typed = self.typed_view(dtype)
        return typed.as_strided(shape, strides, start // dtype.itemsize)

    def jagged(
        self, values: tuple[torch.dtype, tuple[int, ...]], ends: tuple[torch.dtype, tuple[int, ...]]
    ) -> Tensor:
        """A nested jagged tensor on the next two tensors of the buffer (its offsets
        checked: from 0, non-decreasing, up to the number of rows of its values)."""
        rows = self.next_view(*values)
        offsets = self.next_view(*ends)
        if (
            offsets.dtype not in (torch.int32, torch.int64)
            or offsets.dim() != 1
            or rows.dim() < 1
            or len(offsets) < 1
            or int(offsets[0]) != 0
            or bool((offsets[1:] < offsets[:-1]).any())
            or int(offsets[-1]) != rows.shape[0]
        ):
            raise ValueError("a consolidated nested jagged tensor has bad offsets")
        return as_jagged(rows, offsets)

    def typed_view(self, dtype: torch.dtype) -> Tensor:
        """The buffer viewed as ``dtype`` (made once per dtype)."""
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"{dtype!r} is not a dtype")
        size = self.total - self.total % dtype.itemsize
        typed = self.typed[dtype] = self.buffer[:size].view(dtype)
        return typed


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """The strides of a contiguous tensor of ``shape``, and its element count."""
    strides, step, count = [], 1, 1
    for size in reversed(shape):
        if type(size) is not int or size < 0:
            raise ValueError(f"bad shape {shape!r}")
        strides.append(step)
        step *= max(size, 1)
        count *= size
    strides.reverse()
    return tuple(strides), count


def rebuild_consolidated(buffer: Tensor, description: tuple[Any, ...]) -> TensorCore:
    """Unpickle a consolidated instance: its tree (as ``description`` records it, plain
    values only) with every tensor a view of ``buffer``; the result is consolidated.

    Only views are built and every place is checked against the buffer (``torch.load``
    with ``weights_only=True`` may call it); a malformed pickle raises ``ValueError``.
    """
    if not isinstance(buffer, Tensor) or buffer.dtype != torch.uint8 or buffer.dim() != 1:
        raise ValueError("a consolidated pickle must hold a 1-D uint8 buffer")
    build = _Build(buffer, None)
    try:
        result = build.level(description)
    except (TypeError, IndexError, RuntimeError, AttributeError) as err:
        raise ValueError(f"a consolidated pickle is malformed: {err}") from None
    if build.offset != build.total:
        raise ValueError("a consolidated pickle's tensors do not fill its buffer")
    wrong = tree_problem(result)  # batch sizes, names, typed fields: as the constructor
    if wrong is not None:
        raise FormatError(f"cannot unpickle a consolidated tensor class: {wrong}")
    register_buffer(buffer)
    return result


allow_loading(rebuild_consolidated, buffer_from_bytes, same_buffer)


def _consolidated_reduce(self: B) -> tuple[Any, ...] | None:
    layout = layout_of(self)
    if layout is None:
        return None
    buffer, description = layout
    return (rebuild_consolidated, (PickledBuffer(buffer), description))


def _consolidated_to(self: B, device: torch.device, non_blocking: bool) -> B | None:
    if not has_buffers():
        return None
    layout = layout_of(self)
    if layout is None or layout[0].device == device:
        return None
    buffer, description = layout
    moved = buffer.to(device, non_blocking=non_blocking)
    result: Any = _Build(moved, moved.device).level(description)
    register_buffer(moved)
    return result  # type: ignore[no-any-return]


def share_memory_(self: B) -> B:
    """Move every tensor to shared memory, in place (a consolidated instance moves its
    one buffer); worker processes then see the same memory."""
    buffer = buffer_of(self)
    if buffer is not None:
        buffer.untyped_storage().share_memory_()
        return self
    return parallel_methods.share_memory_(self)


def _asks_change(buffer: Tensor, device: Any, share_memory: bool) -> bool:
    """Whether consolidating an already consolidated instance asks for another buffer."""
    if device is not None and torch.device(device) != buffer.device:
        return True
    return share_memory and not buffer.untyped_storage().is_shared()


def _set_devices(node: TensorCore, device: torch.device, every: bool) -> None:
    # every tensor now lives in the one buffer, on its device: the instances that have a
    # device say so; with ``every`` (a move, or a file: on the CPU) device-less instances
    # too, as in tensordict
    if every or node._device is not None:
        node._device = device
    if is_lazy_stack(node):
        for member in node.members:
            _set_devices(member, device, every)
        return
    for value in node._data.values():
        if isinstance(value, TensorCore):
            _set_devices(value, device, every)


def from_consolidated(filename: PathLike) -> Any:
    """Read a file written by ``consolidate(filename=...)`` (any tensor class).

    The file is a byte buffer followed by a JSON description of the tree: nothing is
    unpickled, no module is imported (the recorded classes must be imported already, or be
    ``TensorDict``), offsets and sizes are checked against the file, and any problem
    raises :class:`~tensorclass.MemmapFormatError` naming the file. The tensors view one
    copy-on-write mapping of the file.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, from_consolidated
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = TensorDict(a=torch.arange(3)).consolidate(filename=f"{path}/x")
    ...     from_consolidated(f"{path}/x")["a"].tolist()
    [0, 1, 2]
    """
    buffer, build = read_file(filename)
    register_buffer(buffer)
    return build(buffer)
