"""``with`` forms: ``with td.unlock_():``, ``with td.flatten_keys() as flat:``...

A few operations return an object that can also be used as a context manager, as in
``tensordict``: on exit the previous state comes back.

- ``lock_()`` / ``unlock_()``: the lock state from before the call is restored;
- ``flatten_keys()`` / ``unflatten_keys()``, ``permute``, ``transpose``, ``unsqueeze``,
  ``squeeze``, ``view``, ``flatten``, ``unflatten``: the result is a view of the same
  leaves; on exit the entries of the result are mapped back (inverse operation) and
  written into the original, so new keys and replaced values land there. Deleting a key
  of the result does not delete it from the original.

Outside a ``with`` statement each operation costs one slot store more: the result
remembers how to undo itself (the origin and an undo function) in ``_last_op``, which
``__enter__`` takes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import torch
from torch import Tensor

from ...registry import lazy_view_function
from ...switches import stacks_lazily
from ..core.self_types import E, Node
from ..core.state import TensorCore
from ..keys import access
from .batch_dims import (
    _flatten,
    _permute,
    _squeeze,
    _transpose,
    _unflatten,
    _unsqueeze,
    _view,
    batch_dim,
)

if TYPE_CHECKING:
    from ...tensordict import TensorDict

__all__ = [
    "__enter__",
    "__exit__",
    "clear_refs_for_compile_",
    "flatten",
    "flatten_keys",
    "lock_",
    "permute",
    "remember",
    "squeeze",
    "transpose",
    "unflatten",
    "unflatten_keys",
    "unlock_",
    "unsqueeze",
    "view",
    "write_back",
]

Undo = tuple[Callable[..., None], TensorCore | None, tuple[Any, ...]]
R = TypeVar("R")


def _same_view(a: object, b: object) -> bool:
    """Whether two tensors are the same view of the same memory (a round trip of a view)."""
    return (
        a.__class__ is Tensor
        and b.__class__ is Tensor
        and a.data_ptr() == b.data_ptr()
        and a.shape == b.shape
        and a.stride() == b.stride()
    )


def write_back(origin: TensorCore, back: TensorCore) -> None:
    """Write the entries of ``back`` (already mapped to ``origin``'s shape) into ``origin``.

    A leaf that is the same view of the same memory as the original's is kept as it is
    (the original tensor object stays), nested instances merge, anything else is set.
    """
    for key, leaf in back._data.items():
        current = origin._data.get(key)
        if current is leaf or _same_view(current, leaf):
            continue
        if isinstance(leaf, TensorCore) and isinstance(current, TensorCore):
            write_back(current, leaf)
            continue
        origin._set_str(key, leaf)


def undo_lock(origin: Node, result: Node, was_locked: bool) -> None:
    if was_locked and not origin._locked:
        origin.lock_()
    elif not was_locked and origin._locked:
        origin.unlock_()
    _set_last_op(origin, None)


def _undo_flatten_keys(origin: Node, result: Node, separator: str, inplace: bool) -> None:
    if inplace:
        origin.unflatten_keys(separator, inplace=True)
    else:
        write_back(origin, result.unflatten_keys(separator))


def _undo_unflatten_keys(origin: Node, result: Node, separator: str, inplace: bool) -> None:
    if inplace:
        origin.flatten_keys(separator, inplace=True)
    else:
        write_back(origin, result.flatten_keys(separator))


def _undo_permute(origin: Node, result: Node, dims: tuple[object, ...]) -> None:
    n = len(origin._batch_size)
    order = [batch_dim(d, n) for d in _ints(dims)]
    inverse = [0] * len(order)
    for position, dim in enumerate(order):
        inverse[dim] = position
    write_back(origin, result.permute(inverse))


def _undo_transpose(origin: Node, result: Node, dim0: int, dim1: int) -> None:
    write_back(origin, result.transpose(dim0, dim1))


def _undo_reshape(origin: Node, result: Node) -> None:
    write_back(origin, result.reshape(origin._batch_size))


def remember(origin: TensorCore, result: R, undo: Callable[..., None], args: tuple[Any, ...]) -> R:
    """Let ``result`` undo itself into ``origin`` at the end of a ``with`` block.

    The origin is left out when the result is the origin itself (no reference cycle). An
    instance forgets its own pending operation when another one is taken from it, so
    results never hold a chain of every intermediate (``td = td.view(...)`` in a loop): a
    ``with`` form works on the result of the last call. Under torch.compile nothing is
    remembered (a slot store breaks the graph).
    """
    if not _is_dynamo_compiling():
        if result is origin:
            _set_last_op(origin, (undo, None, args))
        else:
            _set_last_op(origin, None)
            _set_last_op(result, (undo, origin, args))
    return result


def _remember(self: E, result: R, undo: Callable[..., None], *args: object) -> R:
    return remember(self, result, undo, args)


def __enter__(self: E) -> E:
    op = getattr(self, "_last_op", None)
    _set_last_op(self, None)
    entered: list[Undo | None] | None = getattr(self, "_entered", None)
    if entered is None:
        entered = []
        _set_entered(self, entered)
    entered.append(op)
    return self


def __exit__(
    self: E,
    exc_type: type[BaseException] | None,
    exc: BaseException | None,
    traceback: TracebackType | None,
) -> None:
    entered: list[Undo | None] | None = getattr(self, "_entered", None)
    op = entered.pop() if entered else None
    if op is not None:
        undo, origin, args = op
        undo(self if origin is None else origin, self, *args)


def clear_refs_for_compile_(self: E) -> E:
    """Forget the pending ``with`` records of this instance and its nested instances.

    An operation that can be used as a context manager (``lock_``, ``flatten_keys``,
    ``permute``...) records how to undo itself on its result; call this on an instance
    returned from a ``torch.compile``-d function if the record gets in the compiler's
    way. Returns ``self``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2, 3)}, [2, 3]).permute(1, 0)
    >>> td.clear_refs_for_compile_() is td
    True
    """
    _set_last_op(self, None)
    for value in self._data.values():
        if isinstance(value, Node):
            value.clear_refs_for_compile_()
    return self


# -- the operations that remember how to undo themselves ---------------------------------


def lock_(self: E) -> E:
    """Refuse new, replaced or deleted keys (here and in nested instances).

    In-place writes (``set_``, ``update_``, ``td[idx] = ...``) still work. As a context
    manager (``with td.lock_():``) the previous lock state comes back on exit.
    """
    was_locked = self._locked
    TensorCore.lock_(self)
    return self._remember(self, undo_lock, was_locked)


def unlock_(self: E) -> E:
    """Undo :meth:`lock_` (here and in nested instances).

    As a context manager (``with td.unlock_():``) the previous lock state comes back on
    exit.
    """
    was_locked = self._locked
    TensorCore.unlock_(self)
    return self._remember(self, undo_lock, was_locked)


def flatten_keys(
    self: E,
    separator: str = ".",
    inplace: bool = False,
    is_leaf: Callable[[type], bool] | None = None,
) -> TensorDict:
    """Nested keys joined into one level: ``("a", "b")`` becomes ``"a.b"``.

    ``inplace=True`` rewrites this instance (a ``TensorDict``) and returns it;
    ``is_leaf`` keeps the nested instances whose class it accepts whole. As a context
    manager, the entries of the flat result are written back (nested again) on exit.
    """
    flat = access.joined_keys(self, separator, is_leaf)
    result = access.with_entries(self, flat, inplace, "flatten_keys")
    return self._remember(result, _undo_flatten_keys, separator, inplace)


def unflatten_keys(self: E, separator: str = ".", inplace: bool = False) -> TensorDict:
    """Keys holding ``separator`` split into nested keys (``"a.b"`` becomes
    ``("a", "b")``); ``inplace=True`` rewrites this instance. As a context manager,
    the entries of the result are written back (flattened again) on exit."""
    result = access.unflatten_keys(self, separator, inplace)
    return self._remember(result, _undo_unflatten_keys, separator, inplace)


def _lazy_view(self: E, kind: str, args: tuple[object, ...]) -> E | None:
    """Under ``set_lazy_legacy(True)``: the lazy view that writes through (``None`` for a
    call the views leave to the dense operation); see :mod:`..lazy.views`."""
    result: E | None = lazy_view_function()(self, kind, args)
    return result


def permute(self: E, *dims: int | Sequence[int]) -> E:
    """Reorder the batch dims (feature dims stay where they are).

    As a context manager, the entries of the result are written back on exit. Under
    ``set_lazy_legacy(True)`` the result is a lazy view whose writes land in ``self``.
    """
    if stacks_lazily() and (view := _lazy_view(self, "permute", dims)) is not None:
        return view
    return remember(self, _permute(self, *dims), _undo_permute, (dims,))


def transpose(self: E, dim0: int, dim1: int) -> E:
    """Swap two batch dims (as a context manager: written back on exit; a lazy view under
    ``set_lazy_legacy(True)``)."""
    if stacks_lazily() and (view := _lazy_view(self, "transpose", (dim0, dim1))) is not None:
        return view
    result = _transpose(self, dim0, dim1)
    return self._remember(result, _undo_transpose, dim0, dim1)


def unsqueeze(self: E, dim: int) -> E:
    """Insert a batch dim of size 1 at ``dim`` (as a context manager: written back on
    exit; a lazy view under ``set_lazy_legacy(True)``)."""
    if stacks_lazily() and (view := _lazy_view(self, "unsqueeze", (dim,))) is not None:
        return view
    return remember(self, _unsqueeze(self, dim), _undo_reshape, ())


def squeeze(self: E, dim: int | Sequence[int] | None = None) -> E:
    """Remove batch dims of size 1 (all of them, or those of ``dim`` that have size 1);
    as a context manager, written back on exit (a lazy view under
    ``set_lazy_legacy(True)``)."""
    if stacks_lazily() and (view := _lazy_view(self, "squeeze", (dim,))) is not None:
        return view
    return remember(self, _squeeze(self, dim), _undo_reshape, ())


def view(
    self: E,
    *shape: int | Sequence[int] | torch.dtype,
    size: Sequence[int] | None = None,
    batch_size: Sequence[int] | None = None,
) -> E:
    """View the batch dims with a new shape (``-1`` infers one dim); shares storage.
    ``view(dtype)`` views every tensor as another dtype. As a context manager, written
    back on exit; a lazy view under ``set_lazy_legacy(True)``."""
    if (
        stacks_lazily()
        and size is None
        and batch_size is None
        and (view := _lazy_view(self, "view", shape)) is not None
    ):
        return view
    result = _view(self, *shape, size=size, batch_size=batch_size)
    return remember(self, result, _undo_reshape, ())


def flatten(self: E, start_dim: int = 0, end_dim: int = -1, *, inplace: bool = False) -> E:
    """Merge the batch dims ``start_dim..end_dim`` into one (``inplace=True``: this
    instance; as a context manager: written back on exit)."""
    result = _flatten(self, start_dim, end_dim, inplace=inplace)
    if inplace:
        return result
    return self._remember(result, _undo_reshape)


def unflatten(self: E, dim: int, unflattened_size: Sequence[int], *, inplace: bool = False) -> E:
    """Split the batch dim ``dim`` into ``unflattened_size`` (``inplace=True``: this
    instance; as a context manager: written back on exit)."""
    result = _unflatten(self, dim, unflattened_size, inplace=inplace)
    if inplace:
        return result
    return self._remember(result, _undo_reshape)


def _ints(dims: tuple[Any, ...]) -> list[int]:
    if len(dims) == 1 and not isinstance(dims[0], int):
        return list(dims[0])
    return list(dims)


_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_set_last_op: Callable[[object, object], None] = vars(TensorCore)["_last_op"].__set__
_set_entered: Callable[[object, object], None] = vars(TensorCore)["_entered"].__set__
