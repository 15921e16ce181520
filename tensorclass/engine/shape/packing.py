"""Packing every leaf into one tensor of features, and back: ``pack`` and ``PackLayout``.

A model that wants one input tensor (an MLP over an observation made of several keys) can
take ``flat, layout = x.pack()``: each leaf is flattened after the batch dims and the leaves
are joined along one feature dim. ``layout.unpack(flat)`` gives the instance back, its
leaves views of ``flat`` (so after ``index_select`` or a model that keeps the width, the
same layout still applies).

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"p": torch.zeros(5), "v": torch.ones(5, 3)}, [5])
>>> flat, layout = td.pack()
>>> flat.shape, layout.keys, layout.offsets
(torch.Size([5, 4]), ('p', 'v'), (0, 1))
>>> layout.unpack(flat[:2])["v"].shape
torch.Size([2, 3])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from ...errors import OperandError, StructureMismatchError
from ...keys import shown_key
from ...registry import dynamic_class
from ..core.self_types import E
from ..core.state import TensorCore

__all__ = ["PackLayout", "pack"]

#: a nested instance of a packed one: its key, its batch dims past the root's, its class
_Nested = tuple[tuple[str, ...], torch.Size, type | None]


@dataclass(frozen=True)
class PackLayout:
    """Where each leaf sits in a packed tensor, and how to rebuild the instance.

    Frozen, hashable and compared by value: a module can keep one and ``torch.compile``
    treats it as a constant.

    Attributes:
        keys: the leaf keys, in column order.
        shapes: each leaf's shape after the batch dims.
        dim: the packed dim, counted from the end (a negative int).
        nested: one ``(key, batch_shape, cls)`` per nested instance: its batch shape after
            the root's batch dims, and its class (``None`` for a ``TensorDict``).
        device: the device of the packed instance.
        cls: the root's class (``None`` for a ``TensorDict``).
    """

    keys: tuple[str | tuple[str, ...], ...]
    shapes: tuple[torch.Size, ...]
    dim: int = -1
    nested: tuple[tuple[tuple[str, ...], torch.Size, type | None], ...] = ()
    device: torch.device | None = None
    cls: type | None = None
    offsets: tuple[int, ...] = field(init=False)
    numel: int = field(init=False)

    def __post_init__(self) -> None:
        shapes = tuple(torch.Size(shape) for shape in self.shapes)
        nested = tuple((key, torch.Size(shape), cls) for key, shape, cls in self.nested)
        sizes = [math.prod(shape) for shape in shapes]
        offsets = tuple(sum(sizes[:i]) for i in range(len(sizes)))
        object.__setattr__(self, "shapes", shapes)
        object.__setattr__(self, "nested", nested)
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "numel", sum(sizes))

    def unpack(self, flat: Tensor) -> Any:
        """Rebuild the instance from ``flat``: its leaves are views of ``flat``.

        The batch size is ``flat``'s shape without the packed dim, so ``flat`` may have
        other batch dims than the packed instance had (after ``index_select``, a reshape).
        """
        if flat.dim() < -self.dim or flat.shape[self.dim] != self.numel:
            raise StructureMismatchError(
                f"PackLayout.unpack: expected a tensor with {self.numel} entries along dim "
                f"{self.dim}, got shape {tuple(flat.shape)}"
            )
        columns = flat.movedim(self.dim, -1)
        batch = columns.shape[:-1]
        root: dict[str, Any] = {}
        for key, shape, offset in zip(self.keys, self.shapes, self.offsets):
            leaf = columns.narrow(-1, offset, math.prod(shape))
            leaf = leaf.squeeze(-1) if not shape else leaf.view(*leaf.shape[:-1], *shape)
            path = (key,) if isinstance(key, str) else key
            level = root
            for part in path[:-1]:
                level = level.setdefault(part, {})
            level[path[-1]] = leaf
        return self._build(root, (), batch, self.cls)

    def _build(
        self, data: dict[str, object], path: tuple[str, ...], batch: torch.Size, cls: type | None
    ) -> TensorCore:
        nested = {key: (shape, sub) for key, shape, sub in self.nested}
        for name, value in data.items():
            if isinstance(value, dict):
                key = (*path, name)
                shape, sub = nested[key]
                data[name] = self._build(value, key, batch + shape, sub)
        for key, shape, sub in self.nested:  # a nested instance with no leaf
            if key[:-1] == path and key[-1] not in data:
                data[key[-1]] = self._build({}, key, batch + shape, sub)
        owner: type[TensorCore] = dynamic_class() if cls is None else cls
        return owner._new(data, batch, self.device, None)


def _leaves(
    node: TensorCore,
    path: tuple[str, ...],
    root_dims: int,
    out: list[tuple[str | tuple[str, ...], Tensor]],
    nested: list[_Nested],
) -> None:
    dynamic = dynamic_class()
    for name, leaf in node._data.items():
        key = (*path, name)
        if isinstance(leaf, Tensor):
            out.append((key, leaf))
        elif isinstance(leaf, TensorCore):
            cls = None if isinstance(leaf, dynamic) else type(leaf)
            nested.append((key, leaf._batch_size[root_dims:], cls))
            _leaves(leaf, key, root_dims, out, nested)
        else:
            raise OperandError(
                f"pack: key {shown_key(key)!r} holds a non-tensor value "
                f"({type(leaf).__name__}); drop it first with filter_non_tensor_data()"
            )


def _pack(node: E, dim: int = -1, *, layout: PackLayout | None = None) -> tuple[Tensor, PackLayout]:
    """Pack ``node``'s leaves into one tensor along ``dim``; see :func:`pack`."""
    if getattr(node._data, "members", None) is not None:  # a lazy stack packs densely
        node = node.contiguous()
    batch = node._batch_size
    dims = len(batch)
    if not -(dims + 1) <= dim <= dims:
        raise IndexError(f"pack: dim {dim} out of range for {dims} batch dims")
    dim = dim - (dims + 1) if dim >= 0 else dim
    found: list[tuple[str | tuple[str, ...], Tensor]] = []
    nested: list[_Nested] = []
    _leaves(node, (), dims, found, nested)
    if layout is None:
        found.sort(key=lambda item: item[0])
        nested.sort(key=lambda item: item[0])
        cls = None if isinstance(node, dynamic_class()) else type(node)
        layout = PackLayout(
            keys=tuple(k[0] if len(k) == 1 else k for k, _ in found),
            shapes=tuple(leaf.shape[dims:] for _, leaf in found),
            dim=dim,
            nested=tuple(nested),
            device=node._device,
            cls=cls,
        )
    else:
        found = _in_layout_order(found, layout, dims, dim)
    leaves = [leaf for _, leaf in found]
    if len({(leaf.dtype, leaf.device) for leaf in leaves}) > 1:
        kinds = {
            k if isinstance(k, str) else shown_key(k): f"{t.dtype} on {t.device}" for k, t in found
        }
        raise OperandError(f"pack: every leaf must share one dtype and device, got {kinds}")
    if not leaves:
        flat = torch.zeros((*batch, 0), device=node._device)
    else:
        flat = torch.cat([leaf.reshape(*batch, -1) for leaf in leaves], dim=-1)
    if dim != -1:
        flat = flat.movedim(-1, dim).contiguous()
    elif not flat.is_contiguous():
        flat = flat.contiguous()
    return flat, layout


def _in_layout_order(
    found: list[tuple[str | tuple[str, ...], Tensor]], layout: PackLayout, dims: int, dim: int
) -> list[tuple[str | tuple[str, ...], Tensor]]:
    if dim != layout.dim:
        raise OperandError(f"pack: dim {dim} does not match the layout's dim {layout.dim}")
    by_key = {k[0] if len(k) == 1 else k: leaf for k, leaf in found}
    extra = set(by_key) - set(layout.keys)
    missing = [k for k in layout.keys if k not in by_key]
    if extra or missing:
        raise StructureMismatchError(
            f"pack: the leaves do not match the layout: missing {missing}, extra {sorted(extra, key=str)}"
        )
    out = []
    for key, shape in zip(layout.keys, layout.shapes):
        leaf = by_key[key]
        if leaf.shape[dims:] != shape:
            raise StructureMismatchError(
                f"pack: key {key!r} has feature shape {tuple(leaf.shape[dims:])}, "
                f"the layout expects {tuple(shape)}"
            )
        out.append((key, leaf))
    return out


def pack(self: E, dim: int = -1, *, layout: PackLayout | None = None) -> tuple[Tensor, PackLayout]:
    """Pack every tensor leaf into one tensor of features; returns ``(flat, layout)``.

    Each leaf is flattened after the batch dims; the leaves are joined in sorted key
    order (or ``layout``'s order: then a missing, extra or reshaped leaf is an error).
    ``flat`` has shape ``(*batch_size, F)`` for ``dim=-1``; ``dim`` places the feature
    dim elsewhere (as for ``torch.stack``). Every leaf must share one dtype and device;
    non-tensor values cannot be packed. ``layout.unpack(flat)`` inverts it.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.ones(2, 3), "b": {"c": torch.zeros(2)}}, [2])
    >>> flat, layout = td.pack()
    >>> flat
    tensor([[1., 1., 1., 0.],
            [1., 1., 1., 0.]])
    >>> (layout.unpack(flat) == td).all()
    True
    """
    return _pack(self, dim, layout=layout)
