"""New instances shaped like an existing one (``new_zeros``, ``new_full``, ``new_tensor``...)
and joining an instance's own leaves into one tensor (``stack_tensors``,
``cat_from_tensordict``...).

A ``new_*`` result has the class, keys and feature dims of the instance, and a new batch
size: a leaf of shape ``(*batch_size, *f)`` becomes ``(*size, *f)``, with the leaf's dtype
and device unless ``dtype=``/``device=`` say otherwise (``torch.zeros_like(td)`` keeps the
batch size instead).

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.zeros(3, 4), "b": torch.zeros(3, dtype=torch.int64)}, [3])
>>> out = td.new_zeros(2, 2)
>>> out.batch_size, out["a"].shape, out["b"].dtype
(torch.Size([2, 2]), torch.Size([2, 2, 4]), torch.int64)
"""

from __future__ import annotations

from builtins import sorted as sort
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from ...errors import StructureMismatchError
from ...keys import NestedKey, unravel_key_tuple
from ...non_tensor import NonTensorStack
from ..core.self_types import E, Node
from ..core.state import MISSING, TensorCore, as_device

__all__ = [
    "cat_from_tensordict",
    "cat_tensors",
    "new_empty",
    "new_full",
    "new_ones",
    "new_tensor",
    "new_zeros",
    "stack_from_tensordict",
    "stack_tensors",
]

MakeLeaf = Callable[[Tensor, tuple[int, ...], Any], Tensor]


def _sizes(size: tuple[Any, ...]) -> torch.Size:
    """``(2, 3)`` or ``([2, 3],)`` as a ``torch.Size``."""
    if len(size) == 1 and not isinstance(size[0], int):
        return torch.Size(size[0])
    return torch.Size(size)


def _kept(leaf: Any, size: torch.Size) -> Any:
    """A non-tensor leaf in a result of batch size ``size``: a shared value is kept, values
    per element only when the batch size is unchanged (else one ``None`` per element)."""
    if type(leaf) is NonTensorStack and leaf.shape != size:
        return NonTensorStack.full(size, None)
    return leaf


def _grads(tensor: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad and (tensor.is_floating_point() or tensor.is_complex()):
        tensor.requires_grad_()
    return tensor


def _fresh(
    node: TensorCore,
    size: torch.Size,
    make: MakeLeaf,
    device: Any,
    empty_lazy: bool,
) -> TensorCore:
    """A new instance of ``node``'s class of batch size ``size`` whose tensor leaves
    ``make`` gives (from the old leaf and the new shape)."""
    old = len(node._batch_size)
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = make(leaf, (*size, *leaf.shape[old:]), device)
        elif isinstance(leaf, TensorCore):
            nested = torch.Size((*size, *leaf._batch_size[old:]))
            if empty_lazy and type(leaf._data) is not dict:  # a lazy stack: emptied
                data[key] = type(leaf)._new(
                    {}, nested, leaf._device if device is MISSING else device
                )
            else:
                data[key] = _fresh(leaf, nested, make, device, empty_lazy)
        else:
            data[key] = _kept(leaf, size)
    names = node._names if len(size) == old else None
    return type(node)._new(data, size, node._device if device is MISSING else device, names)


def _new_filled(
    self: E,
    size: torch.Size,
    factory: str,
    args: tuple[Any, ...],
    dtype: torch.dtype | None,
    device: Any,
    requires_grad: bool,
    layout: torch.layout,
    pin_memory: bool | None,
    empty_lazy: bool,
) -> E:
    target = MISSING if device is MISSING else as_device(device)

    def make(leaf: Tensor, shape: tuple[int, ...], where: Any) -> Tensor:
        made: Tensor = getattr(leaf, factory)(
            shape,
            *args,
            dtype=dtype or leaf.dtype,
            device=leaf.device if where is MISSING or where is None else where,
            layout=layout,
            pin_memory=bool(pin_memory),
        )
        return _grads(made, requires_grad)

    return _fresh(self, size, make, target, empty_lazy)  # type: ignore[return-value]


def new_zeros(
    self: E,
    *size: int | Sequence[int],
    dtype: torch.dtype | None = None,
    device: Any = MISSING,
    requires_grad: bool = False,
    layout: torch.layout = torch.strided,
    pin_memory: bool | None = None,
    empty_lazy: bool = False,
) -> E:
    """An instance of batch size ``size`` whose tensors are zeros (each keeps its
    feature dims, dtype and device unless ``dtype``/``device`` are given).

    ``requires_grad`` applies to floating-point results; ``empty_lazy=True`` gives
    nested lazy stacks as empty instances. Non-tensor values are kept (values per
    element only when the batch size is unchanged).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.ones(3, 4)}, [3]).new_zeros(2)["a"].shape
    torch.Size([2, 4])
    """
    return _new_filled(
        self,
        _sizes(size),
        "new_zeros",
        (),
        dtype,
        device,
        requires_grad,
        layout,
        pin_memory,
        empty_lazy,
    )


def new_ones(
    self: E,
    *size: int | Sequence[int],
    dtype: torch.dtype | None = None,
    device: Any = MISSING,
    requires_grad: bool = False,
    layout: torch.layout = torch.strided,
    pin_memory: bool | None = None,
    empty_lazy: bool = False,
) -> E:
    """Like :meth:`new_zeros`, filled with ones.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(3)}, [3]).new_ones(2)["a"]
    tensor([1., 1.])
    """
    return _new_filled(
        self,
        _sizes(size),
        "new_ones",
        (),
        dtype,
        device,
        requires_grad,
        layout,
        pin_memory,
        empty_lazy,
    )


def new_empty(
    self: E,
    *size: int | Sequence[int],
    dtype: torch.dtype | None = None,
    device: Any = MISSING,
    requires_grad: bool = False,
    layout: torch.layout = torch.strided,
    pin_memory: bool | None = None,
    empty_lazy: bool = False,
) -> E:
    """Like :meth:`new_zeros`, with uninitialised tensors.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(3, 2)}, [3]).new_empty(5)["a"].shape
    torch.Size([5, 2])
    """
    return _new_filled(
        self,
        _sizes(size),
        "new_empty",
        (),
        dtype,
        device,
        requires_grad,
        layout,
        pin_memory,
        empty_lazy,
    )


def new_full(
    self: E,
    size: int | Sequence[int],
    fill_value: float | bool,
    *,
    dtype: torch.dtype | None = None,
    device: Any = MISSING,
    requires_grad: bool = False,
    layout: torch.layout = torch.strided,
    pin_memory: bool | None = None,
    empty_lazy: bool = False,
) -> E:
    """Like :meth:`new_zeros`, filled with ``fill_value``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"b": torch.zeros(3, dtype=torch.int64)}, [3]).new_full([2], 7)["b"]
    tensor([7, 7])
    """
    return _new_filled(
        self,
        _sizes((size,)),
        "new_full",
        (fill_value,),
        dtype,
        device,
        requires_grad,
        layout,
        pin_memory,
        empty_lazy,
    )


def new_tensor(
    self: E,
    data: Any,
    *,
    dtype: torch.dtype | None = None,
    device: Any = MISSING,
    requires_grad: bool = False,
    pin_memory: bool | None = None,
) -> E:
    """An instance whose every tensor is a copy of ``data`` (a tensor, array, list or
    number), cast to that leaf's dtype: the batch size and every leaf's shape are
    ``data``'s shape. Given an instance, each leaf copies the matching leaf of ``data``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(3), "b": torch.zeros(3, dtype=torch.int64)}, [3])
    >>> out = td.new_tensor([1, 2])
    >>> out.batch_size, out["a"], out["b"]
    (torch.Size([2]), tensor([1., 2.]), tensor([1, 2]))
    """
    if device is MISSING:
        target = data.device if isinstance(data, (Tensor, TensorCore)) else None
    else:
        target = as_device(device)
    return _copied(self, data, dtype, target, requires_grad, bool(pin_memory))


def _copied(
    self: E,
    data: Any,
    dtype: torch.dtype | None,
    device: torch.device | None,
    requires_grad: bool,
    pin_memory: bool,
) -> E:
    base = data if isinstance(data, TensorCore) else torch.as_tensor(data)
    size = base.shape
    out: dict[str, object] = {}
    for key, leaf in self._data.items():
        source = base._data[key] if isinstance(base, TensorCore) else base
        if isinstance(leaf, Tensor):
            copy = (
                torch.as_tensor(source)
                .detach()
                .to(dtype=dtype or leaf.dtype, device=device, copy=True)
            )
            out[key] = _grads(copy.pin_memory() if pin_memory else copy, requires_grad)
        elif isinstance(leaf, Node):
            out[key] = _copied(leaf, source, dtype, device, requires_grad, pin_memory)
        else:
            out[key] = _kept(leaf, size)
    names = self._names if len(size) == len(self._batch_size) else None
    return type(self)._new(out, size, device, names)


# -- joining leaves --------------------------------------------------------------------


def _join_keys(
    self: E,
    keys: tuple[NestedKey, ...],
    out_key: NestedKey,
    join: Callable[..., Tensor],
    dim: int,
    keep_entries: bool,
) -> E:
    values = [self.get(key) for key in keys]
    try:
        joined = join(values, dim)
    except (RuntimeError, TypeError) as err:
        shapes = [list(getattr(v, "shape", ())) for v in values]
        raise StructureMismatchError(
            f"cannot {join.__name__} the keys {list(keys)} (shapes {shapes}): {err}"
        ) from None
    self.set(out_key, joined)  # checked before any key is removed
    if not keep_entries:
        written = unravel_key_tuple(out_key)
        for key in keys:
            if unravel_key_tuple(key) != written:
                self.del_(key)
    return self


def stack_tensors(
    self: E, *keys: NestedKey, out_key: NestedKey, dim: int = 0, keep_entries: bool = False
) -> E:
    """Write ``torch.stack`` of the tensors under ``keys`` under ``out_key`` (``dim``
    counted in the result's dims) and remove ``keys`` unless ``keep_entries``; a failed
    stack or write changes nothing. Returns ``self``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(()), "b": torch.ones(())})
    >>> td.stack_tensors("a", "b", out_key="c")["c"], list(td.keys())
    (tensor([0., 1.]), ['c'])
    """
    return _join_keys(self, keys, out_key, torch.stack, dim, keep_entries)


def cat_tensors(
    self: E, *keys: NestedKey, out_key: NestedKey, dim: int = 0, keep_entries: bool = False
) -> E:
    """Like :meth:`stack_tensors`, with ``torch.cat`` (``dim`` counted in the entries'
    dims).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(1), "b": torch.ones(1)})
    >>> td.cat_tensors("a", "b", out_key="c")["c"]
    tensor([0., 1.])
    """
    return _join_keys(self, keys, out_key, torch.cat, dim, keep_entries)


def _leaf_tensors(self: E, order: bool | Sequence[NestedKey] | None) -> list[Tensor]:
    found = {
        key: value
        for key, value in self.items(include_nested=True, leaves_only=True)
        if isinstance(value, Tensor)
    }
    if order is None or order is False:
        return list(found.values())
    if order is True:
        keys = sort(found, key=lambda k: (k,) if isinstance(k, str) else k)
        return [found[key] for key in keys]
    wanted = [k if isinstance(k, str) else unravel_key_tuple(k) for k in order]
    wanted = [k[0] if isinstance(k, tuple) and len(k) == 1 else k for k in wanted]
    if len(wanted) != len(found) or set(wanted) != set(found):
        raise StructureMismatchError(
            f"sorted= must list every tensor leaf once; the leaves are {list(found)}"
        )
    return [found[key] for key in wanted]


def stack_from_tensordict(
    self: E,
    dim: int = 0,
    *,
    sorted: bool | Sequence[NestedKey] | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.stack`` of every tensor leaf (nested ones included), in key order;
    ``sorted=True`` sorts the keys, a list of keys gives the order.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.zeros(2), "b": torch.ones(2)}, [2]).stack_from_tensordict(1)
    tensor([[0., 1.],
            [0., 1.]])
    """
    leaves = _leaf_tensors(self, sorted)
    return torch.stack(leaves, dim, out=out)


def cat_from_tensordict(
    self: E,
    dim: int = 0,
    *,
    sorted: bool | Sequence[NestedKey] | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """``torch.cat`` of every tensor leaf (nested ones included), in key order (see
    :meth:`stack_from_tensordict`).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2, 1), "b": torch.ones(2, 2)}, [2])
    >>> td.cat_from_tensordict(1, sorted=["b", "a"])
    tensor([[1., 1., 0.],
            [1., 1., 0.]])
    """
    leaves = _leaf_tensors(self, sorted)
    return torch.cat(leaves, dim, out=out)
