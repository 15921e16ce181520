"""In-place writes that reach lazy stacks: each stored tensor written once, or refused.

A lazy stack's leaves are stacked when read, so a stacked leaf is a copy: an in-place write
must reach the members' own tensors. Two helpers make every in-place operation do so:

* :func:`distinct_writes` is the one rule for a stack that holds a member more than once
  (``lazy_stack([a, a])``, or a stack indexed with repeated indices), following torch,
  which refuses an in-place write into elements that share one memory location: each
  distinct member is written once when every position it holds receives the same value
  (a number, or an operand that does not vary between those positions); a write that would
  put different values into one member is an :class:`~tensorclass.errors.OperandError`
  naming the key, raised before any member is written.
* :func:`through_lazy` runs a dense instance's in-place operation when a lazy stack is
  nested in it (at any depth): on a dense copy, whose results are then written back (the
  lazy stacks through :func:`distinct_writes`), so the members' tensors change and a
  refusal changes nothing.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from torch import Tensor

from ...errors import OperandError
from ...keys import shown_key
from ..core.lazy_stacks import is_lazy
from ..core.state import TensorCore

__all__ = [
    "check_nested",
    "distinct_writes",
    "first_difference",
    "holds_lazy",
    "run_through_lazy",
    "through_lazy",
]

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M")
P = TypeVar("P")


def holds_lazy(node: TensorCore) -> bool:
    """Whether a lazy stack is nested in ``node`` (at any depth)."""
    for leaf in node._data.values():
        if (
            leaf.__class__ is not Tensor  # the common leaf, cleared at once
            and isinstance(leaf, TensorCore)
            and (type(leaf._data) is not dict or holds_lazy(leaf))
        ):
            return True
    return False


# -- the rule for repeated members ---------------------------------------------------------


def _same_tensor(a: Tensor, b: Tensor) -> bool:
    if a is b:
        return True
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    if a.is_floating_point() or a.is_complex():  # NaN where both are NaN is the same value
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return False


def _difference(a: object, b: object, path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The key path where ``a`` and ``b`` differ (``path`` itself for whole values), or
    ``None`` when they are the same value."""
    if a is b:
        return None
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if isinstance(a, Tensor) and isinstance(b, Tensor) and _same_tensor(a, b):
            return None
        return path
    if isinstance(a, TensorCore) and isinstance(b, TensorCore):
        keys = list(a._data)
        if keys != list(b._data):
            return path
        for key in keys:
            found = _difference(a._data[key], b._data[key], (*path, key))
            if found is not None:
                return found
        return None
    try:
        if bool(a == b):
            return None
    except Exception:  # an object without a truth value for ==: compared by identity
        return path
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return None
    return path


def first_difference(a: object, b: object) -> tuple[str, ...] | None:
    """The key path where two values differ (``()``: the values themselves), or ``None``
    when they are the same value (NaN where both are NaN included)."""
    return _difference(a, b, ())


def distinct_writes(
    members: Sequence[M], parts: Sequence[P], what: str, key: tuple[str, ...] = ()
) -> list[tuple[M, P]]:
    """``(member, part)`` for each distinct member, once.

    ``parts`` holds what each position of the stack receives (an operand, a value to
    write). A member held at several positions must receive the same value at each (see
    the module documentation), else an :class:`OperandError` naming ``what`` and the key
    (``key`` prefixes the keys found in the parts); nothing has been written then."""
    ids = [id(member) for member in members]
    if len(set(ids)) == len(ids):  # the common case: nothing repeated
        return list(zip(members, parts, strict=True))
    first: dict[int, int] = {}
    out: list[tuple[M, P]] = []
    for i, (member, part) in enumerate(zip(members, parts, strict=True)):
        j = first.setdefault(id(member), i)
        if j == i:
            out.append((member, part))
            continue
        found = _difference(parts[j], part, key)
        if found is not None:
            where = f"key {shown_key(found)!r}" if found else "the value"
            raise OperandError(
                f"{what}: positions {j} and {i} of the lazy stack hold the same member, "
                f"which would receive different values for {where} (torch refuses an "
                f"in-place write into elements that share memory); stack distinct members "
                f"(clone them) or write the same value to both; nothing was written",
                key=shown_key(found) if found else None,
            )
    return out


# -- dense instances holding lazy stacks ---------------------------------------------------


def _copy(leaf: Tensor) -> Tensor:
    """A fresh copy that an in-place check treats as the leaf (a leaf requiring grad stays
    one)."""
    copy = leaf.detach().clone()
    return copy.requires_grad_() if leaf.requires_grad else copy


def _shadow(node: TensorCore) -> TensorCore:
    """A dense copy of ``node``: tensors copied, nested lazy stacks made dense copies."""
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = _copy(leaf)
        elif isinstance(leaf, TensorCore):
            data[key] = _shadow(leaf.contiguous() if is_lazy(leaf) else leaf)
        else:
            data[key] = leaf
    return type(node)._new(data, node._batch_size, node._device, node._names)


def _changed(node: TensorCore) -> bool:
    """Whether a tensor of a shadow was written (its version counter moved)."""
    for leaf in node._data.values():
        if isinstance(leaf, Tensor):
            if leaf._version:
                return True
        elif isinstance(leaf, TensorCore) and _changed(leaf):
            return True
    return False


def check_nested(
    node: TensorCore,
    values: TensorCore,
    what: str,
    path: tuple[str, ...],
    only_changed: bool = False,
) -> None:
    """Refuse up front writing ``values`` into ``node`` when a lazy stack nested in it (at
    any depth) would give a member held at several positions different values
    (``only_changed``: the parts of ``values`` none of whose tensors was written are
    skipped, as :func:`run_through_lazy` does not write them back)."""
    for key, leaf in node._data.items():
        if not isinstance(leaf, TensorCore):
            continue
        part = values._data.get(key)
        if not isinstance(part, TensorCore):
            continue
        if is_lazy(leaf):
            if not only_changed or _changed(part):
                leaf._check_write_back(part, what, (*path, key))
        else:
            check_nested(leaf, part, what, (*path, key), only_changed)


def _write_back(node: TensorCore, shadow: TensorCore) -> None:
    for key, leaf in node._data.items():
        part = shadow._data[key]
        if isinstance(leaf, Tensor):
            if part._version:
                leaf.copy_(part)
        elif isinstance(leaf, TensorCore):
            if not is_lazy(leaf):
                _write_back(leaf, part)
            elif _changed(part):
                leaf._write_back(part)


def run_through_lazy(node: TensorCore, what: str, run: Callable[[TensorCore], object]) -> None:
    """``run`` (an in-place operation) on a dense copy of ``node``, whose written tensors
    are then copied back into ``node``'s tensors and nested lazy stacks' members."""
    shadow = _shadow(node)
    run(shadow)
    check_nested(node, shadow, what, (), only_changed=True)
    _write_back(node, shadow)


def through_lazy(method: F) -> F:
    """Decorate an in-place method returning ``self``: when a lazy stack is nested in a
    dense receiver, the method runs on a dense copy and the results are written back (see
    the module documentation); otherwise it runs as it is. A private method (``_inplace``)
    takes the operation first: errors name it."""
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self: TensorCore, *args: Any, **kwargs: Any) -> Any:
        data = self._data
        if type(data) is not dict:  # a lazy stack itself: its own methods reach the members
            return method(self, *args, **kwargs)
        if not holds_lazy(self):
            return method(self, *args, **kwargs)
        what = name
        if name.startswith("_"):
            what = f"in-place {getattr(args[0], '__name__', 'operation')}"
        result: list[Any] = []
        run_through_lazy(self, what, lambda shadow: result.append(method(shadow, *args, **kwargs)))
        if result[0] is NotImplemented:
            return NotImplemented
        return self

    return wrapper  # type: ignore[return-value]
