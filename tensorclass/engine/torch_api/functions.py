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
from typing import Any, NamedTuple, TypeVar, cast

import torch
from torch import Tensor

from ...errors import KeyNotFoundError, StructureMismatchError
from ...keys import shown_key
from ...non_tensor import NonTensorData, NonTensorStack, cat_non_tensors, stack_non_tensors
from ...registry import lazy_stack_function
from ...switches import stacks_capture, stacks_lazily
from ..core.self_types import as_op, is_op
from ..core.state import TensorCore
from ..leafwise.apply import paired_tensor_leaves
from ..shape.batch_dims import batch_dim
from ..shape.jagged import jagged_cat
from .elementwise import ELEMENTWISE_FUNCTIONS, method_caller

__all__ = ["HANDLED_FUNCTIONS", "cat", "stack"]

T = TypeVar("T", bound=TensorCore)
F = TypeVar("F", bound=Callable[..., object])

HANDLED_FUNCTIONS: dict[Callable[..., object], Callable[..., object]] = {}

_NON_TENSOR = (NonTensorData, NonTensorStack)


def implements(*functions: Callable[..., object]) -> Callable[[F], F]:
    """Register an implementation for the given torch functions."""

    def register(impl: F) -> F:
        for function in functions:
            HANDLED_FUNCTIONS[function] = impl
        return impl

    return register


class _Join(NamedTuple):
    """How :func:`_combine` joins instances: ``name`` (the verb of its messages), ``leaves``
    (the torch function joining one key's tensors) and ``stacks``: stack (equal batch sizes,
    a new dim of the item count) or cat (equal except along ``dim``, which is summed)."""

    name: str
    leaves: Callable[..., Tensor]
    stacks: bool


_STACK = _Join("stack", torch.stack, True)
_CAT = _Join("cat", torch.cat, False)


def _check_members(items: Sequence[TensorCore], what: str, path: tuple[str, ...] = ()) -> None:
    if not items:
        raise ValueError(f"{what} needs at least one tensor class")
    first = items[0]
    if not path and not isinstance(first, TensorCore):
        raise TypeError(
            f"{what}: item 0 is a {type(first).__name__}, not a tensor class "
            f"(torch.{what} joins tensors)"
        )
    for item in items[1:]:
        if type(item) is not type(first):
            under = f" key {shown_key(path)!r}:" if path else ""
            raise StructureMismatchError(
                f"cannot {what}{under} a {type(first).__name__} with a {type(item).__name__}"
            )


def _check_keys(items: Sequence[TensorCore], path: tuple[str, ...], what: str) -> None:
    keys = items[0]._data.keys()
    for index, item in enumerate(items[1:], 1):
        if item._data.keys() != keys:
            only_first = sorted(set(keys) - set(item._data))
            only_other = sorted(set(item._data) - set(keys))
            where = f" under {shown_key(path)!r}" if path else ""
            raise StructureMismatchError(
                f"cannot {what} instances with different keys{where}: item 0 has "
                f"{only_first} that item {index} lacks, item {index} has {only_other} that "
                f"item 0 lacks (lazy_stack keeps members with different keys)"
            )


def _check_sizes(items: Sequence[TensorCore], dim: int, path: tuple[str, ...], how: _Join) -> None:
    """Raise if the batch sizes cannot be joined: stacking needs them equal, cat equal
    except along ``dim``."""
    batch_size = items[0]._batch_size
    for item in items:
        other = item._batch_size
        if how.stacks:
            fits = other == batch_size
        else:
            fits = len(other) == len(batch_size) and all(
                a == b for d, (a, b) in enumerate(zip(batch_size, other)) if d != dim
            )
        if not fits:
            sizes = [list(i._batch_size) for i in items]
            if how.stacks:
                where = f" under {shown_key(path)!r}" if path else ""
                raise StructureMismatchError(
                    f"cannot stack instances with different batch sizes{where}: {sizes} "
                    f"(lazy_stack keeps them as they are: batch size -1 where they differ)"
                )
            raise StructureMismatchError(
                f"cannot cat along dim {dim}: batch sizes {sizes} differ in another dim"
            )


def _members(
    items: Sequence[T], dim: int, path: tuple[str, ...], how: _Join
) -> tuple[list[dict[str, Any]], torch.device | None, int]:
    """One pass over the items to join: their storage dicts, their common device (None if
    they differ) and, for cat, the total size along ``dim``. Checks one class, as many keys
    each (then gathering by the first item's keys proves the key sets equal) and batch
    sizes that can be joined."""
    first = items[0]
    cls = type(first)
    count = len(first._data)
    batch_size = first._batch_size
    device = first._device
    stacks = how.stacks
    total = 0
    sizes_differ = False
    datas = []
    for item in items:
        if type(item) is not cls:
            _check_members(items, how.name, path)
        data = item._data
        if len(data) != count:
            _check_keys(items, path, how.name)
        datas.append(data)
        other = item._batch_size
        if other != batch_size:
            if stacks or len(other) != len(batch_size):
                _check_sizes(items, dim, path, how)  # raises
            sizes_differ = True  # cat: the other dims are checked once, after the loop
        if not stacks:
            total += other[dim]
        if item._device is not device and item._device != device:
            device = None
    if sizes_differ:
        _check_sizes(items, dim, path, how)
    return datas, device, total


def _leaf_error(
    what: str, path: tuple[str, ...], key: str, leaves: list[object], err: Exception
) -> Exception:
    where = (*path, key) if path else key
    shapes = [list(getattr(leaf, "shape", ())) for leaf in leaves]
    return StructureMismatchError(
        f"cannot {what} key {where!r}: the values have shapes {shapes} ({err})"
    )


def _combine(items: Sequence[T], dim: int, path: tuple[str, ...], how: _Join) -> T:
    """Stack or concatenate (``how``) instances of one class along batch dim ``dim``: one
    pass over the items for the checks, then one torch call per tensor key."""
    datas, device, total = _members(items, dim, path, how)
    first = items[0]
    out: dict[str, object] = {}
    join = how.leaves
    for key, value in first._data.items():
        leaves: list[Any] | None
        try:
            leaves = [data[key] for data in datas]
        except KeyError:
            leaves = None
        if leaves is None:
            # checked outside the handler: the keys error is not chained on the KeyError
            _check_keys(items, path, how.name)
            raise KeyNotFoundError(f"cannot {how.name}: an item lacks key {key!r}", key=key)
        if value.__class__ is Tensor or isinstance(value, Tensor):
            try:
                # (no dim argument when 0: torch parses one argument less)
                out[key] = join(leaves, dim) if dim else join(leaves)
            except (RuntimeError, TypeError) as err:
                joined = None if how.stacks or dim else jagged_cat(leaves)
                if joined is None:
                    raise _leaf_error(how.name, path, key, leaves, err) from None
                out[key] = joined
        elif isinstance(value, TensorCore):
            out[key] = _combine(leaves, dim, (*path, key), how)
        elif not how.stacks:
            out[key] = cat_non_tensors(leaves, dim, [item._batch_size for item in items])
        elif type(value) in _NON_TENSOR:
            if not all(type(leaf) in _NON_TENSOR for leaf in leaves):
                full_key = (*path, key) if path else key
                raise StructureMismatchError(
                    f"cannot stack key {full_key!r}: tensors and non-tensor values are mixed"
                )
            out[key] = stack_non_tensors(leaves, dim, first._batch_size, capture=stacks_capture())
    new_size = list(first._batch_size)
    names = first._names
    if names is not None and any(item._names != names for item in items):
        names = None  # as tensordict: dims named differently lose their names
    if how.stacks:
        new_size.insert(dim, len(items))
        if names is not None:
            names = (*names[:dim], None, *names[dim:])
    else:
        new_size[dim] = total
    return type(first)._new(out, torch.Size(new_size), device, names)


@implements(torch.stack)
def stack(input: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    """Stack instances of one class along a new batch dim ``dim``.

    Every instance needs the same keys and batch size; the result is the same class.
    Use ``lazy_stack`` to keep members with different keys. Under
    ``set_lazy_legacy(True)`` the result is a lazy stack.
    """
    items = list(input)
    if not items or not isinstance(items[0], TensorCore):
        _check_members(items, "stack")
    if stacks_lazily():
        return cast(T, lazy_stack_function()(items, dim, out=out))
    if dim != 0:
        dim = batch_dim(dim, len(items[0]._batch_size), extra=1)
    result = _combine(items, dim, (), _STACK)
    if out is not None:
        as_op(out).update_(result)
        return out
    return result


def cat(input: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    """Concatenate instances of one class along an existing batch dim ``dim``, as
    ``torch.cat`` does: with a lazy stack among them the result is a lazy stack (no leaf
    is copied along the stack dim), else the instances' class."""
    items = list(input)
    if items and all(isinstance(item, TensorCore) for item in items):
        # torch's dispatch picks the lazy stacks' own implementation when one is here
        return torch.cat(items, dim, out=out)  # type: ignore[arg-type, return-value]
    return _cat(items, dim, out=out)


@implements(torch.cat, torch.concat, torch.concatenate)
def _cat(input: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    items = list(input)
    if not items or not isinstance(items[0], TensorCore):
        _check_members(items, "cat")
    ndim = len(items[0]._batch_size)
    if ndim == 0:
        raise StructureMismatchError("cannot cat instances with no batch dims; use stack")
    if dim != 0:
        dim = batch_dim(dim, ndim)
    result = _combine(items, dim, (), _CAT)
    if out is not None:
        as_op(out).update_(result)
        return out
    return result


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
    "all",
    "any",
):
    HANDLED_FUNCTIONS[getattr(torch, _name)] = method_caller(_name)


# -- the leaf-op table's entries named after a torch function (torch.sin, torch.maximum,
# torch.sum, torch.cumsum, ...), F's activations and losses (F.relu, F.mse_loss, ...): see
# elementwise.py
HANDLED_FUNCTIONS.update(ELEMENTWISE_FUNCTIONS)


def _extremum(name: str, elementwise: Callable[..., Tensor]) -> Callable[..., object]:
    """``torch.max(obj)``, ``torch.max(obj, dim, keepdim)``, and ``torch.max(obj, other)``
    (the element-wise maximum, as ``torch.maximum``)."""

    def call(obj: Any, *args: object, **kwargs: object) -> object:
        other = args[0] if args else kwargs.get("other")
        if isinstance(obj, Tensor):  # torch.max(tensor, instance): element-wise
            return ELEMENTWISE_FUNCTIONS[elementwise](obj, other)
        if isinstance(other, (Tensor, TensorCore)):
            return obj._binary(elementwise, other)
        return getattr(obj, name)(*args, **kwargs)

    call.__name__ = name
    return call


HANDLED_FUNCTIONS[torch.max] = _extremum("max", torch.maximum)
HANDLED_FUNCTIONS[torch.min] = _extremum("min", torch.minimum)


def _functional_softmax(name: str) -> Callable[..., object]:
    """``torch.nn.functional.<name>(obj, dim)`` (``softmax``, ``log_softmax``): the
    method ``name`` of the instance, over batch ``dim`` (required)."""

    def call(
        input: object,
        dim: int | None = None,
        _stacklevel: int = 3,
        dtype: torch.dtype | None = None,
    ) -> object:
        if dim is None:
            raise TypeError(f"{name} of a tensor class needs a batch dim (dim=...)")
        return getattr(input, name)(dim, dtype)

    call.__name__ = f"_functional_{name}"
    return call


HANDLED_FUNCTIONS[torch.nn.functional.softmax] = _functional_softmax("softmax")
HANDLED_FUNCTIONS[torch.nn.functional.log_softmax] = _functional_softmax("log_softmax")


@implements(torch.norm)
def _norm(
    input: Any,
    p: object = "fro",
    dim: object = None,
    keepdim: bool = False,
    out: object = None,
    dtype: torch.dtype | None = None,
) -> object:
    if p not in ("fro", 2, 2.0) or dim is not None or keepdim:
        raise TypeError(
            "torch.norm of a tensor class is the 2-norm of every leaf over all its elements; "
            f"p={p!r}, dim={dim!r}, keepdim={keepdim!r} are not supported (use apply)"
        )
    return input.norm(out=out, dtype=dtype)


def _like(factory: Callable[..., Tensor]) -> Callable[..., object]:
    def like(obj: Any, *args: object, **kwargs: Any) -> object:
        device = kwargs.get("device")
        return obj._map_tensors(
            lambda t: factory(t, *args, **kwargs),
            obj._device if device is None else torch.device(device),
        )

    return like


#: the ``torch.*_like`` factories: a new instance of the same structure, each leaf made by
#: the factory (lazy stacks answer them too)
LIKE_FACTORIES: tuple[Callable[..., Tensor], ...] = (
    torch.zeros_like,
    torch.ones_like,
    torch.empty_like,
    torch.full_like,
    torch.rand_like,
    torch.randn_like,
)

for _factory in LIKE_FACTORIES:
    HANDLED_FUNCTIONS[_factory] = _like(_factory)


@implements(torch.where)
def _where(
    condition: Tensor, input: object, other: Any, *, out: TensorCore | None = None
) -> object:
    if is_op(input):
        return input.where(condition, other, out=out)
    return other.where(~condition, input, out=out)


# -- indexing, reshaping and copying (the methods of the same name) --------------------------

for _name in (
    "gather",
    "masked_select",
    "narrow",
    "tensor_split",
    "tile",
    "repeat_interleave",
    "movedim",
    "moveaxis",
    "swapaxes",
    "swapdims",
    "rot90",
    "fliplr",
    "flipud",
    "broadcast_to",
):
    HANDLED_FUNCTIONS[getattr(torch, _name)] = method_caller(_name)


def _atleast(name: str) -> Callable[..., object]:
    def call(*items: object) -> object:
        """``torch.atleast_*d`` on one instance, several, or a sequence of them."""
        if len(items) == 1 and isinstance(items[0], (list, tuple)):
            items = tuple(items[0])
        results = tuple(getattr(item, name)() for item in items)
        return results[0] if len(results) == 1 else results

    call.__name__ = name
    return call


for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):
    HANDLED_FUNCTIONS[getattr(torch, _name)] = _atleast(_name)


@implements(torch.allclose)
def _allclose(
    input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False
) -> bool:
    try:
        left, right = paired_tensor_leaves(input, other, "allclose")
    except StructureMismatchError:
        return False  # different keys: not close
    return all(torch.allclose(a, b, rtol, atol, equal_nan) for a, b in zip(left, right))
