"""``torch.*`` functions on tensor classes, dispatched through ``__torch_function__``.

One table maps each supported torch function to its implementation. ``stack`` and ``cat``
are also exported directly: they are typed to return the class they are given.

>>> import torch
>>> from tensorclass import TensorDict
>>> tds = [TensorDict({"x": torch.zeros(3, 4)}, batch_size=[3]) for _ in range(2)]
>>> torch.stack(tds, 1).batch_size
torch.Size([3, 2])
>>> torch.cat(tds).batch_size
torch.Size([6])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from torch import Tensor

from ..errors import StructureMismatchError
from ._core import TensorCore
from .non_tensor import NonTensorData, NonTensorStack, cat_non_tensors, stack_non_tensors
from .shape import batch_dim

__all__ = ["HANDLED_FUNCTIONS", "cat", "stack"]

T = TypeVar("T", bound=TensorCore)
F = TypeVar("F", bound=Callable[..., Any])

HANDLED_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}


def implements(*functions: Callable[..., Any]) -> Callable[[F], F]:
    """Register an implementation for the given torch functions."""

    def register(impl: F) -> F:
        for function in functions:
            HANDLED_FUNCTIONS[function] = impl
        return impl

    return register


def _check_members(items: Sequence[TensorCore], what: str, where: object = None) -> None:
    if not items:
        raise ValueError(f"{what} needs at least one tensor class")
    first = items[0]
    for item in items[1:]:
        if type(item) is not type(first):
            under = f" key {where!r}:" if where is not None else ""
            raise StructureMismatchError(
                f"cannot {what}{under} a {type(first).__name__} with a {type(item).__name__}"
            )


def _check_keys(items: Sequence[TensorCore], path: tuple[str, ...], what: str) -> None:
    keys = items[0]._data.keys()
    for index, item in enumerate(items[1:], 1):
        if item._data.keys() != keys:
            only_first = sorted(set(keys) - set(item._data))
            only_other = sorted(set(item._data) - set(keys))
            where = f" under {path[0] if len(path) == 1 else path!r}" if path else ""
            raise StructureMismatchError(
                f"cannot {what} instances with different keys{where}: item 0 has "
                f"{only_first} that item {index} lacks, item {index} has {only_other} that "
                f"item 0 lacks (lazy_stack keeps members with different keys)"
            )


def _columns(
    items: Sequence[TensorCore], path: tuple[str, ...], what: str
) -> list[tuple[str, list[Any]]]:
    """Each key with the leaves of every item under it (the items' keys must match)."""
    first = items[0]._data
    order = tuple(first)
    if all(tuple(item._data) == order for item in items):  # same order: zip the values
        return list(zip(order, map(list, zip(*(item._data.values() for item in items)))))
    _check_keys(items, path, what)
    return [(key, [item._data[key] for item in items]) for key in order]


def _common_device(items: Sequence[TensorCore]) -> torch.device | None:
    device = items[0]._device
    for item in items:
        if item._device is not device and item._device != device:
            return None
    return device


def _stack_level(items: Sequence[TensorCore], dim: int, path: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, leaves in _columns(items, path, "stack"):
        first = leaves[0]
        where = (*path, key) if path else key
        if isinstance(first, Tensor):
            try:
                out[key] = torch.stack(leaves, dim)
            except (RuntimeError, TypeError) as err:
                shapes = [list(getattr(leaf, "shape", ())) for leaf in leaves]
                raise StructureMismatchError(
                    f"cannot stack key {where!r}: the values have shapes {shapes} ({err})"
                ) from None
        elif isinstance(first, TensorCore):
            _check_members(leaves, "stack", where)
            out[key] = _stack(leaves, dim, (*path, key))
        elif type(first) in (NonTensorData, NonTensorStack):
            if not all(type(leaf) in (NonTensorData, NonTensorStack) for leaf in leaves):
                raise StructureMismatchError(
                    f"cannot stack key {where!r}: tensors and non-tensor values are mixed"
                )
            out[key] = stack_non_tensors(leaves, dim, items[0]._batch_size)
    return out


def _stack(items: Sequence[T], dim: int, path: tuple[str, ...]) -> T:
    first = items[0]
    batch_size = first._batch_size
    for item in items[1:]:
        if item._batch_size != batch_size:
            sizes = [list(i._batch_size) for i in items]
            where = f" under {path[0] if len(path) == 1 else path!r}" if path else ""
            raise StructureMismatchError(
                f"cannot stack instances with different batch sizes{where}: {sizes}"
            )
    data = _stack_level(items, dim, path)
    new = torch.Size((*batch_size[:dim], len(items), *batch_size[dim:]))
    names = first._names
    if names is not None:
        names = (*names[:dim], None, *names[dim:])
    return type(first)._new(data, new, _common_device(items), names)


@implements(torch.stack)
def stack(items: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    """Stack instances of one class along a new batch dim ``dim``.

    Every instance needs the same keys and batch size; the result is the same class.
    Use ``lazy_stack`` to keep members with different keys.
    """
    items = list(items)
    _check_members(items, "stack")
    ndim = len(items[0]._batch_size)
    result = _stack(items, batch_dim(dim, ndim, extra=1), ())
    if out is not None:
        out.update_(result)  # type: ignore[attr-defined]
        return out
    return result


def _cat_level(items: Sequence[TensorCore], dim: int, path: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, leaves in _columns(items, path, "cat"):
        first = leaves[0]
        where = (*path, key) if path else key
        if isinstance(first, Tensor):
            try:
                out[key] = torch.cat(leaves, dim)
            except (RuntimeError, TypeError) as err:
                shapes = [list(getattr(leaf, "shape", ())) for leaf in leaves]
                raise StructureMismatchError(
                    f"cannot cat key {where!r}: the values have shapes {shapes} ({err})"
                ) from None
        elif isinstance(first, TensorCore):
            _check_members(leaves, "cat", where)
            out[key] = _cat(leaves, dim, (*path, key))
        else:
            out[key] = cat_non_tensors(leaves, dim, [item._batch_size for item in items])
    return out


def _cat(items: Sequence[T], dim: int, path: tuple[str, ...]) -> T:
    first = items[0]
    batch_size = first._batch_size
    for item in items[1:]:
        other = item._batch_size
        if other == batch_size:
            continue
        if len(other) != len(batch_size) or any(
            a != b for d, (a, b) in enumerate(zip(batch_size, other)) if d != dim
        ):
            sizes = [list(i._batch_size) for i in items]
            raise StructureMismatchError(
                f"cannot cat along dim {dim}: batch sizes {sizes} differ in another dim"
            )
    data = _cat_level(items, dim, path)
    total = sum([item._batch_size[dim] for item in items])
    new = torch.Size((*batch_size[:dim], total, *batch_size[dim + 1 :]))
    return type(first)._new(data, new, _common_device(items), first._names)


@implements(torch.cat, torch.concat, torch.concatenate)
def cat(items: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    """Concatenate instances of one class along an existing batch dim ``dim``."""
    items = list(items)
    _check_members(items, "cat")
    ndim = len(items[0]._batch_size)
    if ndim == 0:
        raise StructureMismatchError("cannot cat instances with no batch dims; use stack")
    result = _cat(items, batch_dim(dim, ndim), ())
    if out is not None:
        out.update_(result)  # type: ignore[attr-defined]
        return out
    return result


def _method(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, name)(*args, **kwargs)

    call.__name__ = name
    return call


for _name in (
    "unbind",
    "split",
    "chunk",
    "clone",
    "permute",
    "squeeze",
    "unsqueeze",
    "reshape",
    "flatten",
    "unflatten",
    "transpose",
    "flip",
    "roll",
    "masked_fill",
    "sum",
    "mean",
    "prod",
    "std",
    "var",
    "amax",
    "amin",
    "all",
    "any",
    "abs",
    "neg",
    "exp",
    "log",
    "sqrt",
    "sigmoid",
    "tanh",
    "clamp",
):
    HANDLED_FUNCTIONS[getattr(torch, _name)] = _method(_name)


def _like(factory: Callable[..., Tensor]) -> Callable[..., Any]:
    def like(obj: Any, *args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device")
        return obj._map_tensors(
            lambda t: factory(t, *args, **kwargs),
            obj._device if device is None else torch.device(device),
        )

    return like


for _factory in (
    torch.zeros_like,
    torch.ones_like,
    torch.empty_like,
    torch.full_like,
    torch.rand_like,
    torch.randn_like,
):
    HANDLED_FUNCTIONS[_factory] = _like(_factory)


@implements(torch.where)
def _where(condition: Tensor, input: Any, other: Any) -> Any:
    if isinstance(input, TensorCore):
        return input.where(condition, other)  # type: ignore[attr-defined]
    return other.where(~condition, input)


@implements(torch.allclose)
def _allclose(
    input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False
) -> bool:
    from .functional import paired_tensor_leaves

    try:
        left, right = paired_tensor_leaves(input, other, "allclose")
    except StructureMismatchError:
        return False  # different keys: not close
    return all(torch.allclose(a, b, rtol, atol, equal_nan) for a, b in zip(left, right))
