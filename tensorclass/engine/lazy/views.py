"""Lazy shape views: ``view``, ``permute``, ``transpose``, ``unsqueeze`` and ``squeeze`` under
``set_lazy_legacy(True)`` (tensordict's legacy lazy mode).

Under that switch these operations return a :class:`LazyViewTensorDict`: an instance of the
source's class (as a lazy stack is an instance of its members') whose storage,
:class:`ViewLeaves`, reads each key of the source through the operation and writes each key
back through its inverse. So a view is never out of date, and every write lands in the
source: ``view["a"] = value`` (a new or replaced key), ``set_``, ``view[index] = value``,
writes into nested levels, deletions and renames.

>>> import torch, warnings
>>> from tensorclass import TensorDict, set_lazy_legacy
>>> td = TensorDict(a=torch.zeros(3, 4), batch_size=[3, 4])
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)  # tensordict deprecates the mode
...     with set_lazy_legacy(True):
...         flat = td.view(12)
>>> flat["b"] = torch.arange(12.0)      # a new key, in the source's shape
>>> td["b"].shape
torch.Size([3, 4])
>>> flat[0] = TensorDict(a=torch.tensor(7.0), b=torch.tensor(-1.0))
>>> td["a"][0, 0].item(), td["b"][0, 0].item()
(7.0, -1.0)

The inverse operation of a view gives its source back (``td.unsqueeze(0).squeeze(0) is td``;
``view`` back to the source's batch size, the inverse ``permute``, the same ``transpose``),
an operation that changes nothing gives the instance itself, and any other operation under
the switch gives a view of the view. Operations that build a new instance (indexing,
``apply``, ``clone``, ``contiguous``, ``to_tensordict``...) give a dense instance of the
source's class, as in tensordict; without the switch the shape operations of a view are
dense too.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any, ClassVar, cast

import torch
from typing_extensions import Self

from ...registry import register_lazy_view_function
from ..base import TensorDictBase
from ..core.state import Names, TensorCore, set_state
from ..keys.access import read_value
from ..shape.batch_dims import (
    _infer_shape,
    _permute,
    _sizes,
    _squeeze,
    _unsqueeze,
    _view,
    batch_dim,
    reshape,
    squeeze_dims,
)
from .variants import variant_class

__all__ = ["LazyViewTensorDict", "ViewLeaves", "ViewOp", "lazy_view"]


class ViewOp:
    """One shape operation on the leading batch dims: ``kind`` (``"view"``, ``"permute"``,
    ``"unsqueeze"`` or ``"squeeze"``) with its dims made explicit, from the batch size
    ``source`` to ``batch``. It applies to any instance whose batch size starts with
    ``source`` (nested levels keep their own trailing batch dims)."""

    __slots__ = ("batch", "dims", "kind", "source")

    def __init__(
        self, kind: str, dims: tuple[int, ...], source: torch.Size, batch: torch.Size
    ) -> None:
        self.kind = kind
        self.dims = dims
        self.source = source
        self.batch = batch

    def forward(self, node: Any) -> Any:
        """``node`` (batch ``source + extra``) as the view sees it (batch ``batch + extra``)."""
        n = len(self.source)
        extra = tuple(node._batch_size[n:])
        if self.kind == "view":
            return _view(node, (*self.dims, *extra))
        if self.kind == "permute":
            return _permute(node, (*self.dims, *range(n, n + len(extra))))
        if self.kind == "unsqueeze":
            return _unsqueeze(node, self.dims[0])
        return _squeeze(node, self.dims)

    def backward(self, node: Any) -> Any:
        """``node`` (batch ``batch + extra``) in the source's shape (the inverse)."""
        m = len(self.batch)
        extra = tuple(node._batch_size[m:])
        if self.kind == "permute":
            inverse = [0] * m
            for position, dim in enumerate(self.dims):
                inverse[dim] = position
            return _permute(node, (*inverse, *range(m, m + len(extra))))
        return reshape(node, (*self.source, *extra))

    def undone_by(self, other: ViewOp) -> bool:
        """Whether ``other`` applied after this operation gives the source back: the inverse
        permutation, or (``view``, ``unsqueeze`` and ``squeeze`` being row-major reshapes)
        any reshape back to the source's batch size."""
        if other.batch != self.source:
            return False
        if self.kind == "permute":
            return other.kind == "permute" and all(
                self.dims[d] == i for i, d in enumerate(other.dims)
            )
        return other.kind != "permute"

    def __repr__(self) -> str:
        if self.kind == "view":
            return f"view(size={list(self.batch)})"
        return f"{self.kind}(dims={list(self.dims)})"


class ViewLeaves(MutableMapping[str, Any]):
    """The ``_data`` of a lazy view: the source's keys, each read through the operation
    and written back through its inverse."""

    __slots__ = ("op", "source")

    def __init__(self, source: TensorCore, op: ViewOp) -> None:
        self.source = source
        self.op = op

    def _single(self, key: str, leaf: object, batch: torch.Size) -> Any:
        source = self.source
        return _dense_class(type(source))._new({key: leaf}, batch, source._device)

    def __getitem__(self, key: str) -> Any:
        leaf = self.source._data[key]
        if isinstance(leaf, TensorCore):
            return lazy_view_of(leaf, self.op)
        return self.op.forward(self._single(key, leaf, self.op.source))._data[key]

    def __setitem__(self, key: str, leaf: object) -> None:
        back = self.op.backward(self._single(key, leaf, self.op.batch))._data[key]
        self.source._set_str(key, back)

    def __delitem__(self, key: str) -> None:
        source = self.source
        if key not in source._data:
            raise KeyError(key)
        source._check_unlocked(key, "delete")
        del source._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.source._data))

    def __len__(self) -> int:
        return len(self.source._data)

    def __contains__(self, key: object) -> bool:
        return key in self.source._data

    def copy(self) -> dict[str, Any]:
        """The viewed leaves in a plain dict."""
        return {key: self[key] for key in self}

    def __repr__(self) -> str:
        return f"ViewLeaves(keys={list(self)}, op={self.op!r})"


class LazyViewTensorDict(TensorDictBase):
    """A lazy shape view of a tensor class (see the module documentation).

    ``source`` is the viewed instance and ``view_op`` the operation.
    """

    __slots__ = ()
    _source_cls: ClassVar[type[TensorCore] | None] = None
    _variants: ClassVar[dict[type, type[LazyViewTensorDict]]] = {}
    # The storage is the source's leaves read through the operation (not a dict): writes go
    # through it, with no shortcut into the storage.
    _fast_set: ClassVar[bool] = False
    _tensor_fields: ClassVar[frozenset[str]] = frozenset()
    _dict_storage: ClassVar[bool] = False

    @classmethod
    def _new(
        cls,
        data: dict[str, object],
        batch_size: torch.Size,
        device: torch.device | None = None,
        names: Names = None,
    ) -> Any:
        # Results the engine builds from the viewed leaves are dense, in the source's class.
        return _dense_class(cls)._new(data, batch_size, device, names)

    @property
    def source(self) -> Any:
        """The viewed instance (writes through the view land in it)."""
        return self._view_leaves.source

    @property
    def view_op(self) -> ViewOp:
        """The shape operation this view applies to its source."""
        return self._view_leaves.op

    @property
    def _view_leaves(self) -> ViewLeaves:
        return cast(ViewLeaves, self._data)

    def lock_(self) -> Self:
        """Lock the source (and this view): see ``TensorDict.lock_``."""
        self.source.lock_()
        self._locked = True
        return self

    def unlock_(self) -> Self:
        """Unlock the source (and this view): see ``TensorDict.unlock_``."""
        self.source.unlock_()
        self._locked = False
        return self

    def _as_dynamic(self) -> Any:
        # to_tensordict: a dense TensorDict of the viewed leaves (nested views made dense)
        return _dense(self)._as_dynamic()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(\n    source={self.source!r},\n    op={self.view_op!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # pickled as the dense instance it shows (the source is not part of it)
        reduced = _dense(self).__reduce__()
        assert isinstance(reduced, tuple)  # an instance reduces to a tuple, not a name
        return reduced


def _dense(node: TensorCore) -> TensorCore:
    """A dense instance with the leaves a view shows (nested views made dense too)."""
    data = {
        key: _dense(leaf) if isinstance(leaf, LazyViewTensorDict) else leaf
        for key, leaf in node._data.items()
    }
    return type(node)._new(data, node._batch_size, node._device, node._names)


def _dense_class(cls: type) -> Any:
    """The class of the dense instances a view of a ``cls`` gives: the source's class of a
    view, the members' class of a lazy stack, else ``cls``."""
    for name in ("_source_cls", "_member_cls"):
        found: type | None = getattr(cls, name, None)
        if found is not None:
            return found
    return cls


class _ViewField:
    """Reads a typed field of a lazy view: the source's value through the operation."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: LazyViewTensorDict | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            leaf = obj._data[self.name]
        except KeyError:
            return None
        return read_value(leaf)

    def __set__(self, obj: Any, value: object) -> None:
        obj._set_field(self.name, value)


def _variant(source_cls: type[TensorCore]) -> type[LazyViewTensorDict]:
    """The lazy-view class whose instances are also instances of ``source_cls``."""
    found = LazyViewTensorDict._variants.get(source_cls)  # its source, for torch.compile
    if found is None:
        found = variant_class(
            LazyViewTensorDict,
            source_cls,
            LazyViewTensorDict._variants,
            "_source_cls",
            _ViewField,
            f"A lazy shape view of a {source_cls.__name__}.",
        )
    return found


def lazy_view_of(source: TensorCore, op: ViewOp) -> Any:
    """``source`` seen through ``op`` (its batch size starts with ``op.source``), lazily."""
    batch = torch.Size((*op.batch, *source._batch_size[len(op.source) :]))
    cls = _variant(_dense_class(type(source)))
    view = object.__new__(cls)
    set_state(view, cls, ViewLeaves(source, op), batch, source._device, None, source._locked)
    return view


def _op(self: TensorCore, kind: str, args: tuple[Any, ...]) -> ViewOp | None:
    """The explicit operation of a shape call (``None``: a call the views do not take)."""
    bs = self._batch_size
    n = len(bs)
    if kind == "view":
        if not args or any(isinstance(a, torch.dtype) for a in args):
            return None
        new = _infer_shape(_sizes(args), bs.numel(), bs)
        return ViewOp("view", tuple(new), bs, new)
    if kind == "permute":
        order = tuple(batch_dim(d, n) for d in _sizes(args))
        if sorted(order) != list(range(n)):
            return None  # let the dense operation raise its error
        return ViewOp("permute", order, bs, torch.Size([bs[d] for d in order]))
    if kind == "transpose":
        d0, d1 = (batch_dim(d, n) for d in args)
        order_list = list(range(n))
        order_list[d0], order_list[d1] = order_list[d1], order_list[d0]
        order = tuple(order_list)
        return ViewOp("permute", order, bs, torch.Size([bs[d] for d in order]))
    if kind == "unsqueeze":
        d = batch_dim(args[0], n, extra=1)
        sizes = list(bs)
        sizes.insert(d, 1)
        return ViewOp("unsqueeze", (d,), bs, torch.Size(sizes))
    dim = args[0] if args else None
    if dim is None:
        dims = tuple(d for d, size in enumerate(bs) if size == 1)
    else:
        dims = tuple(sorted(d for d in squeeze_dims(dim, n) if bs[d] == 1))
    new = torch.Size([size for d, size in enumerate(bs) if d not in dims])
    return ViewOp("squeeze", dims, bs, new)


def lazy_view(self: TensorCore, kind: str, args: tuple[Any, ...]) -> Any:
    """The shape operation ``kind`` (``view``, ``permute``, ``transpose``, ``unsqueeze``,
    ``squeeze``) of ``self`` with ``args``, as a lazy view; ``None`` when the call is not
    one the views take (``view(dtype)``, a bad permutation, a ragged lazy stack: the
    dense operation answers). A lazy stack's own shape operations keep its members where
    they can, and call this where they cannot (a ``view`` across the stack dim).
    The inverse of a view gives its source back; a call that changes nothing, ``self``."""
    if -1 in self._batch_size:
        return None  # a ragged lazy stack: its own shape operations answer
    op = _op(self, kind, args)
    if op is None:
        return None
    if isinstance(self, LazyViewTensorDict) and self.view_op.undone_by(op):
        return self.source
    if op.batch == op.source and (op.kind != "permute" or op.dims == tuple(range(len(op.dims)))):
        return self
    return lazy_view_of(self, op)


register_lazy_view_function(lazy_view)
