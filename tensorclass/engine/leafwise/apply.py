"""Leaf-wise operations: apply, clone, to, detach, masked_fill, where, zero_...

Tensor leaves (at every depth) are transformed; non-tensor leaves are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypeVar, overload

import torch
from torch import Tensor

from ...errors import BatchSizeError, OperandError, StructureMismatchError
from ..core.self_types import E, Node, as_op
from ..core.state import MISSING, DeviceLike, TensorCore, as_batch_size, as_device, check_names
from ..shape.inplace import holds_lazy, run_through_lazy, through_lazy
from .masks import check_mask, expand_mask

C = TypeVar("C", bound=TensorCore)

__all__ = [
    "__copy__",
    "__deepcopy__",
    "apply",
    "apply_",
    "clone",
    "contiguous",
    "cpu",
    "cuda",
    "detach",
    "detach_",
    "fill_",
    "is_contiguous",
    "masked_fill",
    "masked_fill_",
    "named_apply",
    "paired_tensor_leaves",
    "requires_grad",
    "requires_grad_",
    "tensor_leaf_keys",
    "tensor_leaves",
    "to",
    "where",
    "zero_",
    "zero_tensors",
]


def zero_tensors(leaves: list[Tensor]) -> None:
    """Zero ``leaves`` in place: one fused kernel, or one call each under a torch.func
    transform (the fused op has no batching rule)."""
    if torch._C._are_functorch_transforms_active():
        for leaf in leaves:
            leaf.zero_()
    elif leaves:
        torch._foreach_zero_(leaves)


def tensor_leaves(node: TensorCore) -> list[Tensor]:
    """Every tensor leaf, depth first, in key order."""
    out: list[Tensor] = []
    for leaf in node._data.values():
        if isinstance(leaf, Tensor):
            out.append(leaf)
        elif isinstance(leaf, TensorCore):
            out.extend(tensor_leaves(leaf))
    return out


def tensor_leaf_keys(node: TensorCore, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The keys of :func:`tensor_leaves`, in the same order (for error messages)."""
    out: list[tuple[str, ...]] = []
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            out.append((*prefix, key))
        elif isinstance(leaf, TensorCore):
            out.extend(tensor_leaf_keys(leaf, (*prefix, key)))
    return out


def paired_tensor_leaves(
    node: TensorCore, other: TensorCore, what: str
) -> tuple[list[Tensor], list[Tensor]]:
    """The tensor leaves of ``node`` and the leaves of ``other`` under the same keys.

    Pairs go by key, never by position (two instances may list their keys in different
    orders); different keys are a :class:`StructureMismatchError` naming the level.
    """
    lefts: list[Tensor] = []
    rights: list[Tensor] = []
    _pair_into(node, other, (), what, lefts, rights)
    return lefts, rights


def _pair_into(
    node: TensorCore,
    other: TensorCore,
    path: tuple[str, ...],
    what: str,
    lefts: list[Tensor],
    rights: list[Tensor],
) -> None:
    data, other_data = node._data, other._data
    if len(data) != len(other_data) or any(key not in other_data for key in data):
        where = repr(path) if path else "the top level"
        raise StructureMismatchError(
            f"{what}: the operands have different keys at {where}: {sorted(data)} and "
            f"{sorted(other_data)}"
        )
    for key, leaf in data.items():
        right = other_data[key]
        if isinstance(leaf, Tensor):
            if not isinstance(right, Tensor):
                raise StructureMismatchError(
                    f"{what}: key {(*path, key) if path else key!r} holds a tensor in one "
                    f"operand and a {type(right).__name__} in the other"
                )
            lefts.append(leaf)
            rights.append(right)
        elif isinstance(leaf, TensorCore):
            if not isinstance(right, TensorCore):
                raise StructureMismatchError(
                    f"{what}: key {(*path, key) if path else key!r} holds a "
                    f"{type(leaf).__name__} in one operand and a {type(right).__name__} in "
                    f"the other"
                )
            _pair_into(leaf, right, (*path, key), what, lefts, rights)


def _other_leaf(other: object, key: str, default: object, path: tuple[str, ...]) -> object:
    if not isinstance(other, TensorCore):
        return other  # a default standing in for a missing nested instance
    leaf = other._data.get(key, MISSING)
    if leaf is MISSING:
        if default is MISSING:
            raise StructureMismatchError(
                f"key {(*path, key) if path else key!r} is missing from an input "
                f"{type(other).__name__}; pass default= to fill missing entries"
            )
        return default
    return leaf


class _Options(NamedTuple):
    """The rarely used arguments of ``apply``, passed down as one value."""

    device: Any = MISSING
    filter_empty: bool | None = None
    propagate_lock: bool = False
    is_leaf: Callable[[type], bool] | None = None
    out: TensorCore | None = None
    batch_size_given: bool = False  # results may change the batch dims (not checked)
    pending: list[tuple[Tensor, Tensor, str | tuple[str, ...]]] | None = (
        None  # in-place writes, made at the end
    )


_PLAIN = _Options()


def _clear_device(node: TensorCore) -> None:
    node._device = None
    for leaf in node._data.values():
        if isinstance(leaf, TensorCore):
            _clear_device(leaf)


def _changed_batch(key: str | tuple[str, ...], batch: torch.Size, result: Tensor) -> BatchSizeError:
    return BatchSizeError(
        f"apply: fn returned shape {list(result.shape)} for {key!r}, which does not start with "
        f"the batch size {list(batch)}; pass batch_size= to give the result's batch size",
        key=key,
    )


def _write_all(pending: list[tuple[Tensor, Tensor, str | tuple[str, ...]]]) -> None:
    """The writes of ``apply(..., inplace=True)``: every result is checked to fit its leaf
    first, so a failing ``fn`` or result leaves every leaf as it was."""
    for leaf, result, key in pending:
        shape = tuple(getattr(result, "shape", ()))
        target = tuple(leaf.shape)
        fits = len(shape) <= len(target) and all(  # broadcasts onto the leaf (copy_'s rule)
            s in (t, 1) for s, t in zip(reversed(shape), reversed(target), strict=False)
        )
        if not fits:
            raise OperandError(
                f"apply_: fn returned shape {list(shape)} for {key!r}, which cannot be "
                f"written into its leaf of shape {list(leaf.shape)}; nothing was written",
                key=key,
            )
    for leaf, result, _ in pending:
        leaf.copy_(result)


def _expand_mask(mask: Tensor, leaf: Tensor, batch_dims: int) -> Tensor:
    """A mask over the leading batch dims, with singleton dims appended for ``leaf``
    (see :mod:`.masks`)."""
    return expand_mask(mask, leaf)


def _map_tensors(self: E, fn: Callable[[Tensor], Tensor], device: Any = MISSING) -> E:
    """A new instance with ``fn`` applied to every tensor leaf (depth first)."""
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            data[key] = fn(leaf)
        elif isinstance(leaf, Node):
            data[key] = leaf._map_tensors(fn, device)
        else:
            data[key] = leaf
    return type(self)._new(
        data, self._batch_size, self._device if device is MISSING else device, self._names
    )


@overload
def apply(
    self: E,
    fn: Callable[[Tensor], Tensor | None],
    *,
    batch_size: Any = ...,
    device: Any = ...,
    names: Any = ...,
    inplace: bool = ...,
    default: Any = ...,
    filter_empty: bool | None = ...,
    propagate_lock: bool = ...,
    call_on_nested: Literal[False] = ...,
    is_leaf: Callable[[type], bool] | None = ...,
    out: TensorCore | None = ...,
) -> E: ...


@overload
def apply(
    self: E,
    fn: Callable[..., Any],
    *others: TensorCore,
    batch_size: Any = ...,
    device: Any = ...,
    names: Any = ...,
    inplace: bool = ...,
    default: Any = ...,
    filter_empty: bool | None = ...,
    propagate_lock: bool = ...,
    call_on_nested: bool = ...,
    is_leaf: Callable[[type], bool] | None = ...,
    out: TensorCore | None = ...,
    named: bool = ...,
    nested_keys: bool = ...,
) -> E: ...


def apply(
    self: E,
    fn: Callable[..., Any],
    *others: TensorCore,
    batch_size: Any = None,
    device: Any = MISSING,
    names: Any = None,
    inplace: bool = False,
    default: Any = MISSING,
    filter_empty: bool | None = None,
    propagate_lock: bool = False,
    call_on_nested: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    out: TensorCore | None = None,
    named: bool = False,
    nested_keys: bool = False,
) -> E:
    """Apply ``fn`` to every tensor leaf (with the matching leaves of ``others``).

    Returning ``None`` drops the leaf; a nested instance left without leaves that way
    is dropped too (``filter_empty=True`` drops every empty nested result,
    ``filter_empty=False`` none). ``batch_size=`` declares the batch size of the
    result when ``fn`` changes it; ``device=`` its device (leaves are moved there;
    ``None`` clears it); ``inplace=True`` writes results into the leaves;
    ``propagate_lock=True`` locks the result if this instance is locked;
    ``call_on_nested=True`` calls ``fn`` on nested instances instead of entering them,
    as ``is_leaf`` does for the nested classes it accepts; ``out=`` receives the
    results (written in place where it has the key) and is returned. ``named=True`` is
    :meth:`named_apply` (``fn`` gets the key first; ``nested_keys`` as there).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.ones(2), "b": torch.zeros(2, dtype=torch.long)}, [2])
    >>> floats = td.apply(lambda x: x if x.is_floating_point() else None)
    >>> list(floats.keys())
    ['a']
    """
    if named:
        return named_apply(
            self,
            fn,
            *others,
            nested_keys=nested_keys,
            batch_size=batch_size,
            device=device,
            names=names,
            inplace=inplace,
            default=default,
            filter_empty=filter_empty,
            propagate_lock=propagate_lock,
            call_on_nested=call_on_nested,
            is_leaf=is_leaf,
            out=out,
        )
    if (
        not (others or inplace or call_on_nested or propagate_lock)
        and batch_size is None
        and names is None
        and device is MISSING
        and filter_empty is None
        and is_leaf is None
        and out is None
    ):
        return _apply_plain(self, fn)
    return self._apply(
        fn,
        others,
        batch_size,
        names,
        inplace,
        default,
        call_on_nested,
        None,
        _Options(device, filter_empty, propagate_lock, is_leaf, out),
    )


def _apply_plain(self: E, fn: Callable[[Tensor], Any]) -> E:
    """``apply`` with one function and nothing else: the common case, kept lean."""
    out: dict[str, object] = {}
    batch = self._batch_size
    n = len(batch)
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            result = fn(leaf)
            if result is not None and getattr(result, "shape", batch)[:n] != batch:
                raise _changed_batch(key, batch, result)
        elif isinstance(leaf, Node):
            result = _apply_plain(leaf, fn)
            if not result._data and leaf._data:  # emptied by fn: dropped
                continue
        else:
            result = leaf
        if result is not None:
            out[key] = result
    return type(self)._new(out, self._batch_size, self._device, self._names)


def named_apply(
    self: E,
    fn: Callable[..., Any],
    *others: TensorCore,
    nested_keys: bool = False,
    batch_size: Any = None,
    device: Any = MISSING,
    names: Any = None,
    inplace: bool = False,
    default: Any = MISSING,
    filter_empty: bool | None = None,
    propagate_lock: bool = False,
    call_on_nested: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
    out: TensorCore | None = None,
) -> E:
    """Like :meth:`apply`, with the key first: ``fn(key, leaf, *other_leaves)``.

    ``nested_keys=True`` passes the full path instead of the last key (a tuple below the top
    level, the string itself at the top, as tensordict does); the other arguments are those
    of :meth:`apply`.
    """
    prefix: tuple[str, ...] | None = () if nested_keys else ("",)
    options = _Options(device, filter_empty, propagate_lock, is_leaf, out)
    return self._apply(
        fn, others, batch_size, names, inplace, default, call_on_nested, prefix, options
    )


def _apply(
    self: E,
    fn: Callable[..., Any],
    others: tuple[TensorCore, ...],
    batch_size: int | Sequence[int] | None,
    names: Sequence[str | None] | None,
    inplace: bool,
    default: object,
    call_on_nested: bool,
    prefix: tuple[str, ...] | None,
    options: _Options | None = None,
) -> E:
    new_size = self._batch_size if batch_size is None else as_batch_size(batch_size)
    for other in others:
        if not isinstance(other, TensorCore):
            raise TypeError(
                f"apply: extra inputs must be tensor classes; got {type(other).__name__}"
            )
    opts = _PLAIN if options is None else options
    if batch_size is not None:
        opts = opts._replace(batch_size_given=True)
    if inplace:
        if type(self._data) is dict and holds_lazy(self):  # written back into the stacks
            run_through_lazy(
                self,
                "apply_",
                lambda shadow: as_op(shadow)._apply(
                    fn, others, batch_size, names, True, default, call_on_nested, prefix, opts
                ),
            )
            return self
        opts = opts._replace(pending=[])
    data = _apply_level(
        self, fn, others, new_size, inplace, default, call_on_nested, prefix, (), opts
    )
    if inplace:
        assert opts.pending is not None
        _write_all(opts.pending)
        return self
    if batch_size is None and names is None:
        new_names = self._names
    else:
        new_names = check_names(names, len(new_size))
    result = type(self)._new(data, new_size, self._device, new_names)
    if opts.device is not MISSING:
        device = as_device(opts.device)
        if device is None:
            _clear_device(result)
        else:
            result = result._map_tensors(lambda t: t.to(device), device)
    if opts.out is not None:
        target: Any = opts.out
        return target.update(result, inplace=True)  # type: ignore[no-any-return]
    if opts.propagate_lock and self._locked:
        result.lock_()
    return result


def _apply_level(
    self: E,
    fn: Callable[..., Any],
    others: tuple[object, ...],
    new_size: torch.Size,
    inplace: bool,
    default: object,
    call_on_nested: bool,
    prefix: tuple[str, ...] | None,
    path: tuple[str, ...],
    opts: _Options,
) -> dict[str, object]:
    n = len(self._batch_size)
    out: dict[str, object] = {}
    is_leaf = opts.is_leaf
    check = not opts.batch_size_given
    for key, leaf in self._data.items():
        extra = [_other_leaf(other, key, default, path) for other in others]
        if isinstance(leaf, Tensor):
            if prefix is None:
                result = fn(leaf, *extra)
            else:
                # nested_keys: the full path, a plain string at the top level (as tensordict)
                name: str | tuple[str, ...] = (*path, key) if prefix == () and path else key
                result = fn(name, leaf, *extra)
            if check and result is not None and getattr(result, "shape", new_size)[:n] != new_size:
                raise _changed_batch((*path, key) if path else key, new_size, result)
            if inplace and result is not None and result is not leaf:
                assert opts.pending is not None  # written once every result is known
                opts.pending.append((leaf, result, (*path, key) if path else key))
                result = leaf
        elif isinstance(leaf, Node):
            if call_on_nested or (is_leaf is not None and is_leaf(type(leaf))):
                if prefix is None:
                    result = fn(leaf, *extra)
                else:
                    name = (*path, key) if prefix == () and path else key
                    result = fn(name, leaf, *extra)
            else:
                nested_size = new_size + leaf._batch_size[n:]
                nested = _apply_level(
                    leaf,
                    fn,
                    tuple(extra),
                    nested_size,
                    inplace,
                    default,
                    call_on_nested,
                    prefix,
                    (*path, key),
                    opts,
                )
                if not nested and (opts.filter_empty or (opts.filter_empty is None and leaf._data)):
                    continue
                result = type(leaf)._new(nested, nested_size, leaf._device, None)
        else:
            result = leaf
        if result is not None:
            out[key] = result
    return out


def apply_(
    self: E,
    fn: Callable[..., Any],
    *others: TensorCore,
    default: Any = MISSING,
    is_leaf: Callable[[type], bool] | None = None,
    named: bool = False,
    nested_keys: bool = False,
) -> E:
    """Apply ``fn`` to every tensor leaf and write the results in place (``default``,
    ``is_leaf``, ``named`` and ``nested_keys`` as for :meth:`apply`)."""
    return self.apply(
        fn,
        *others,
        inplace=True,
        default=default,
        is_leaf=is_leaf,
        named=named,
        nested_keys=nested_keys,
    )


# -- copies, devices and dtypes ------------------------------------------------------


def clone(self: E, recurse: bool = True) -> E:
    """A copy; ``recurse=False`` copies the structure but shares the leaves."""
    if not recurse:
        return type(self)._new(dict(self._data), self._batch_size, self._device, self._names)
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        data[key] = leaf.clone()
    return type(self)._new(data, self._batch_size, self._device, self._names)


def __copy__(self: E) -> E:
    return self.clone(recurse=False)


def __deepcopy__(self: E, memo: dict[int, object]) -> E:
    return self.clone()


def _consolidated_to(self: E, device: torch.device, non_blocking: bool) -> E | None:
    """``to(device)`` of a consolidated instance: one buffer moved (``None``: move the
    leaves); see :mod:`.consolidate`."""
    return None


@overload
def to(
    self: E, device: DeviceLike, dtype: torch.dtype | None = None, non_blocking: bool = False
) -> E: ...


@overload
def to(self: E, dtype: torch.dtype, non_blocking: bool = False) -> E: ...


@overload
def to(self: E, other: Tensor | TensorCore, non_blocking: bool = False) -> E: ...


@overload
def to(
    self: E,
    *,
    device: DeviceLike = None,
    dtype: torch.dtype | None = None,
    non_blocking: bool = False,
) -> E: ...


def to(self: E, *args: Any, **kwargs: Any) -> E:
    """Move to a device and/or cast to a dtype (like ``Tensor.to``).

    Also accepts a tensor or another tensor class to take the device from, or the
    result of :meth:`attrs` to move and cast each leaf like the leaf of the same key.
    """
    if len(args) == 1 and not kwargs and isinstance(args[0], torch.dtype):
        dtype = args[0]  # the common cast: skip the general argument parser
        return self._map_tensors(lambda t: t.to(dtype=dtype))
    if args and isinstance(args[0], TensorCore) and _describes_leaves(args[0]):
        non_blocking = bool(kwargs.get("non_blocking", args[1] if len(args) > 1 else False))
        return _to_described(self, args[0], non_blocking)
    if args and isinstance(args[0], TensorCore):
        args = (args[0].device, *args[1:]) if args[0].device is not None else args[1:]
    parsed: Any = torch._C._nn._parse_to(*args, **kwargs)
    device, dtype, non_blocking = parsed[0], parsed[1], parsed[2]
    if device is not None and dtype is None:
        if device == self._device:
            return self
        moved = self._consolidated_to(device, non_blocking)
        if moved is not None:
            return moved
        return self._map_tensors(lambda t: t.to(device, non_blocking=non_blocking), device)
    if device is None:
        return self._map_tensors(lambda t: t.to(dtype, non_blocking=non_blocking))
    return self._map_tensors(lambda t: t.to(device, dtype, non_blocking=non_blocking), device)


def _to_described(self: E, spec: TensorCore, non_blocking: bool) -> E:
    """Each tensor leaf moved and cast as ``spec`` (an ``attrs()`` result) records for
    its key; leaves ``spec`` does not describe are kept."""
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        target = spec._data.get(key)
        if isinstance(leaf, Tensor) and target is not None and hasattr(target, "tgt_dtype"):
            device, dtype = target.tgt_device, target.tgt_dtype
            data[key] = leaf.to(device=device, dtype=dtype, non_blocking=non_blocking)
        elif isinstance(leaf, Node) and isinstance(target, TensorCore):
            data[key] = _to_described(leaf, target, non_blocking)
        else:
            data[key] = leaf
    devices = {t.device for t in data.values() if isinstance(t, Tensor)}
    device = self._device if self._device is None or devices == {self._device} else None
    return type(self)._new(data, self._batch_size, device, self._names)


def cpu(self: E) -> E:
    """Move every leaf to the CPU."""
    return self.to("cpu")


def cuda(self: E, device: int | str | torch.device | None = None) -> E:
    """Move every leaf to a CUDA device."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = torch.device("cuda", device)
    return self.to(device)


def detach(self: E) -> E:
    """A copy whose tensors are detached from the autograd graph (storage shared)."""
    return self._map_tensors(Tensor.detach)


def detach_(self: E) -> E:
    """Detach every tensor in place."""
    for leaf in tensor_leaves(self):
        leaf.detach_()
    return self


def requires_grad_(self: E, requires_grad: bool = True) -> E:
    """Set ``requires_grad`` on every floating-point tensor, in place."""
    for leaf in tensor_leaves(self):
        if leaf.is_floating_point() or leaf.is_complex():
            leaf.requires_grad_(requires_grad)
    return self


def requires_grad(self: E) -> bool:
    """Whether any tensor leaf requires grad."""
    return any(leaf.requires_grad for leaf in tensor_leaves(self))


def contiguous(self: E, *, canonical: bool = False, inplace: bool = False) -> E:
    """A copy whose tensors are contiguous in memory (leaves already so are shared).

    ``canonical=True`` also copies contiguous tensors whose strides are not the
    row-major ones (a size-1 dim can have any stride), so every stride is predictable.
    ``inplace=True`` stores the contiguous tensors in this instance and returns it.
    """
    fn = _canonical if canonical else Tensor.contiguous
    if not inplace:
        return self._map_tensors(fn)
    members = getattr(self._data, "members", None)
    if members is not None:  # a lazy stack: its members
        for member in members:
            member.contiguous(canonical=canonical, inplace=True)
        return self
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            self._data[key] = fn(leaf)
        elif isinstance(leaf, Node):
            leaf.contiguous(canonical=canonical, inplace=True)
    return self


def is_contiguous(self: E) -> bool:
    """Whether every tensor leaf is contiguous."""
    return all(leaf.is_contiguous() for leaf in tensor_leaves(self))


# -- filling ---------------------------------------------------------------------------


@through_lazy
def zero_(self: E) -> E:
    """Set every tensor to zero, in place."""
    zero_tensors(tensor_leaves(self))
    return self


@through_lazy
def fill_(self: E, key: str | tuple[str, ...], value: float | bool | Tensor) -> E:
    """Fill the tensor under ``key`` with ``value``, in place."""
    flat = key if type(key) is str else tuple(key)
    leaf = self._leaf(flat)
    if isinstance(leaf, TensorCore):
        for tensor in tensor_leaves(leaf):
            tensor.fill_(value)
    else:
        leaf.fill_(value)
    return self


def masked_fill(self: E, mask: Tensor, value: float | bool | Tensor) -> E:
    """A copy with ``value`` where ``mask`` (over the leading batch dims) is true."""
    check_mask(self, mask, "masked_fill")
    n = len(self._batch_size)
    return self._map_tensors(lambda t: t.masked_fill(_expand_mask(mask, t, n), value))


@through_lazy
def masked_fill_(self: E, mask: Tensor, value: float | bool | Tensor) -> E:
    """Write ``value`` where ``mask`` (over the leading batch dims) is true, in place."""
    check_mask(self, mask, "masked_fill_")
    n = len(self._batch_size)
    for leaf in tensor_leaves(self):
        leaf.masked_fill_(_expand_mask(mask, leaf, n), value)
    return self


def where(
    self: E,
    condition: Tensor,
    other: Any,
    *,
    out: TensorCore | None = None,
    pad: float | bool | None = None,
    update_batch_size: bool = False,
) -> E:
    """Elements of this instance where ``condition`` holds, else of ``other``.

    ``other`` is a tensor class with the same keys, a tensor or a number. With
    ``pad=``, the keys only one side has are kept, with ``pad`` standing in for the
    other side. ``out=`` receives the result in place; with
    ``update_batch_size=True`` it takes the result's batch size too (and its keys), as
    ``update(..., update_batch_size=True)`` does. ``condition`` covers the leading
    batch dims.
    """
    check_mask(self, condition, "where")
    n = len(self._batch_size)
    if isinstance(other, TensorCore):
        if pad is None:
            result = self.apply(
                lambda a, b: torch.where(_expand_mask(condition, a, n), a, b), other
            )
        else:
            result = _where_padded(self, condition, other, pad, n)
    else:
        result = self._map_tensors(lambda t: torch.where(_expand_mask(condition, t, n), t, other))
    if out is not None:
        if update_batch_size:
            as_op(out).update(result, update_batch_size=True)
        else:
            as_op(out).update_(result)
        return out  # type: ignore[return-value]
    return result


def _canonical(tensor: Tensor) -> Tensor:
    """``tensor`` contiguous with row-major strides (copied only when they differ)."""
    tensor = tensor.contiguous()
    expected, step = [], 1
    for size in reversed(tensor.shape):
        expected.append(step)
        step *= max(size, 1)
    if tuple(reversed(expected)) == tensor.stride():
        return tensor
    return torch.empty_like(tensor, memory_format=torch.contiguous_format).copy_(tensor)


def _where_padded(left: C, condition: Tensor, right: TensorCore, pad: float | bool, n: int) -> C:
    """``where`` over the union of the keys: a key one side lacks takes ``pad`` there."""
    data: dict[str, object] = {}
    other = right._data
    for key, leaf in left._data.items():
        match = other.get(key, MISSING)
        if isinstance(leaf, Tensor):
            b = pad if match is MISSING else match
            data[key] = torch.where(_expand_mask(condition, leaf, n), leaf, b)
        elif isinstance(leaf, TensorCore) and isinstance(match, TensorCore):
            data[key] = _where_padded(leaf, condition, match, pad, n)
        elif isinstance(leaf, Node) and match is MISSING:
            data[key] = leaf._map_tensors(
                lambda t: torch.where(_expand_mask(condition, t, n), t, pad)
            )
        else:
            data[key] = leaf
    for key, match in other.items():
        if key in data:
            continue
        if isinstance(match, Tensor):
            data[key] = torch.where(_expand_mask(condition, match, n), pad, match)
        elif isinstance(match, Node):
            data[key] = match._map_tensors(
                lambda t: torch.where(_expand_mask(condition, t, n), pad, t)
            )
        else:
            data[key] = match
    return type(left)._new(data, left._batch_size, left._device, left._names)


def _describes_leaves(spec: TensorCore) -> bool:
    """Whether ``spec`` holds leaf descriptors (``attrs()``'s ``TensorAttrs``)."""
    for leaf in spec._data.values():
        if hasattr(leaf, "tgt_dtype"):
            return True
        if isinstance(leaf, TensorCore) and _describes_leaves(leaf):
            return True
    return False
