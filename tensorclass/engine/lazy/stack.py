"""Lazy stacks: ``lazy_stack(items, dim)`` keeps its members and stacks a key when it is read.

>>> import torch
>>> from tensorclass import TensorDict, lazy_stack
>>> tds = [TensorDict({"a": torch.rand(10), "b": torch.rand(10, 5)}, [10]) for _ in range(3)]
>>> stacked = lazy_stack(tds, 0)            # nothing is stacked here
>>> stacked["a"].shape                      # only "a" is stacked
torch.Size([3, 10])
>>> stacked["a"] = torch.zeros_like(stacked["a"])   # writes reach the members
>>> bool((tds[0]["a"] == 0).all())
True
>>> stacked[1] is tds[1]                    # indexing the stack dim gives the member
True

The members may have different keys: the stack's keys are those every member has, and
reading a key some members lack is an error naming them. A lazy stack is an instance of its
members' class (``isinstance(lazy_stack(batches), Batch)``), so typed code reads fields as
usual. Operations that keep the members (indexing, ``unbind``, ``split``, ``unsqueeze``,
``permute``, ``expand``, ``view``/``reshape`` that leave the stack dim whole, ``clone``,
``to``, ``apply``, ``select``, element-wise maths and comparisons, ``torch.cat``...) return
lazy stacks, so members whose leaves have different shapes keep working; the others
(reductions over batch dims, reshapes across the stack dim...) return dense results in the
members' class, as does :meth:`~LazyStackedTensorDict.contiguous`.

Members may also differ in batch size (episodes of different lengths): the stack's batch
size is then ``-1`` at each dim where they differ (a ragged stack), and the operations
that keep the members work member by member (``lazy/ragged.py``); reading a key whose
shapes differ needs ``as_padded_tensor``, ``as_nested_tensor`` or ``as_list``.

In-place operations (``add_``, ``exp_``, ``copy_``, ``update_``, ``stack[index] = v``...)
write the members' own tensors, also when the stack is nested in another instance. A member
held at several positions (``lazy_stack([a, a])``, a stack indexed with repeated indices)
is one memory, as an expanded tensor is in torch: it is written once when every position
receives the same value (a number, an operand that does not vary between those positions),
and a write that would give it different values is an ``OperandError`` naming the key,
raised before anything is written (torch refuses in-place writes into elements that share
memory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal, TypedDict, TypeVar, cast, overload

import torch
from torch import Tensor
from typing_extensions import Self, Unpack

from ...errors import BatchSizeError, FormatError, KeyNotFoundError, StructureMismatchError
from ...keys import NestedKey, unravel_key_tuple
from ...non_tensor import stack_non_tensors
from ...registry import dynamic_class, register_lazy_class, register_lazy_stack_function
from ...switches import stacks_capture
from ..base import TensorDictBase
from ..build.printing import format_instance
from ..core.attach import op_property
from ..core.safe_globals import allow_loading
from ..core.self_types import Node, as_op, is_op
from ..core.state import MISSING, Names, TensorCore, set_state
from ..core.untrusted import shown
from ..keys.access import cloned_input, read_value, update_unlocked
from ..keys.listing import KeysView
from ..leafwise.apply import zero_tensors
from ..leafwise.arithmetic import fused_paired_inplace, fused_scalar_inplace, refuse_first
from ..leafwise.masks import check_mask
from ..shape.batch_dims import batch_dim
from ..shape.context import undo_lock
from ..shape.inplace import check_nested, distinct_writes
from . import maths, ragged, shape
from . import members as member_list
from .cat import LAZY_FUNCTIONS
from .forward import MEMBER_CLASS_NAMES, MemberAttribute
from .leaves import LazyLeaves, missing_key_error, split_leaf
from .pytree import flatten_stack, flatten_stack_with_keys, unflatten_stack
from .ragged import _PaddingSide, pad_stack, ragged_batch
from .variants import variant_class

__all__ = [
    "LazyStackedTensorDict",
    "dense_stack_members",
    "lazy_stack",
    "lazy_stack_class",
    "maybe_dense_stack",
]

T = TypeVar("T", bound=TensorCore)
_Out = TypeVar("_Out", bound=TensorCore)
_D = TypeVar("_D")


class _TensorsOptions(TypedDict, total=False):
    """How ``LazyStackedTensorDict.lazy_stack`` stacks tensors of different shapes."""

    as_padded_tensor: bool
    as_nested_tensor: bool
    padding_side: _PaddingSide
    layout: torch.layout | None
    padding_value: float


class _MembersOptions(TypedDict, total=False):
    """``LazyStackedTensorDict.lazy_stack``'s keywords for instances (``out`` aside)."""

    device: object
    stack_dim_name: str | None
    strict_shape: bool


class _LazyKeys(KeysView):
    """The keys every member has (nested keys included on request)."""

    __slots__ = ()

    def _list(self) -> list[str | tuple[str, ...]]:
        leaves: Any = self._owner._data
        members = leaves.members
        first, *others = [m.keys(self._include_nested, self._leaves_only) for m in members]
        return [key for key in first if all(key in view for view in others)]

    def __iter__(self) -> Iterator[str | tuple[str, ...]]:
        return iter(self._list())

    def __len__(self) -> int:
        return len(self._list())


class LazyStackedTensorDict(TensorDictBase):
    """A stack of tensor classes that keeps its members (see the module documentation).

    Build one with :func:`lazy_stack` (or ``LazyStackedTensorDict(*members, stack_dim=0)``).
    ``members``, ``stack_dim`` and ``member_class`` describe it.
    """

    __slots__ = ()
    _member_cls: ClassVar[type[TensorCore] | None] = None
    _variants: ClassVar[dict[type, type[LazyStackedTensorDict]]] = {}
    # The storage is the members (a LazyLeaves mapping, not a dict): writes go through
    # them, with no shortcut into the storage and no instance __dict__ aliasing it. These
    # are the storage's flags, not the schema's: variants are made with type.__new__, so
    # the members' schema (inherited) is not derived again.
    _fast_set: ClassVar[bool] = False
    _tensor_fields: ClassVar[frozenset[str]] = frozenset()
    _dict_storage: ClassVar[bool] = False

    #: ``from_list`` builds lazy stacks on a lazy-stack class
    _lazy_default: ClassVar[bool | None] = True
    #: a pytree node of its own (registered with the class, see lazy_pytree): the members
    #: come back, and ragged keys are padded and cut back out
    _pytree_hooks: ClassVar[tuple[object, ...] | None] = (
        flatten_stack,
        unflatten_stack,
        flatten_stack_with_keys,
    )

    def __new__(
        cls,
        *tensordicts: TensorCore,
        stack_dim: int = 0,
        batch_size: Sequence[int] | None = None,
        device: Any = None,
        names: Sequence[str | None] | None = None,
        stack_dim_name: str | None = None,
        strict_shape: bool = True,
        **fields: object,
    ) -> Any:
        """``LazyStackedTensorDict(*members, stack_dim=0)``: :func:`lazy_stack` of the
        members. ``device`` moves them first; ``names`` names every dim of the result,
        ``stack_dim_name`` the stack dim; ``batch_size``, if given, must be the stack's.
        The members need one number of batch dims; their sizes may differ (a ragged
        stack, ``-1`` where they do). ``strict_shape=False`` does not relax the number of
        dims (tensordict's ``strict_shape=True``)."""
        del strict_shape  # members always need one number of batch dims here
        if fields and not tensordicts:
            # The members' constructor, given fields (dataclasses.replace calls the class
            # of a lazy stack of typed instances so): a dense instance.
            given = {"batch_size": batch_size, "device": device, "names": names}
            extra = {key: value for key, value in given.items() if value is not None}
            return cls._dense_class()(**fields, **extra)
        members = list(tensordicts)
        if device is not None:
            members = [as_op(member).to(device) for member in members]
        result = _named(lazy_stack(members, stack_dim), stack_dim_name, names)
        if batch_size is not None and torch.Size(batch_size) != result._batch_size:
            raise BatchSizeError(
                f"LazyStackedTensorDict: batch_size={list(batch_size)} given, but stacking the "
                f"members gives {list(result._batch_size)}"
            )
        return result

    def __init__(self, *tensordicts: TensorCore, **options: object) -> None:
        pass  # built by __new__

    @classmethod
    def _dense_class(cls) -> Any:
        # The constructors build the members' class, as the engine's dense results do.
        return cls._member_cls or dynamic_class()

    @classmethod
    def _from_mapping(
        cls, mapping: Mapping[object, object], batch_size: torch.Size, device: torch.device | None
    ) -> Any:
        return cls._dense_class()._from_mapping(mapping, batch_size, device)

    @classmethod
    def _new(
        cls,
        data: dict[str, object],
        batch_size: torch.Size,
        device: torch.device | None = None,
        names: Names = None,
    ) -> Any:
        # Results the engine builds from stacked leaves are dense, in the members' class.
        member = cls._member_cls or dynamic_class()
        return member._new(data, batch_size, device, names)

    @staticmethod
    def _restack(members: list[Any], dim: int) -> Any:
        """A lazy stack of ``members`` along ``dim`` (used by the modules below this one,
        which cannot import :func:`lazy_stack`)."""
        return lazy_stack(members, dim)

    @classmethod
    def member_class_of(cls) -> type[TensorCore] | None:
        """The members' class of a lazy-stack class (``None`` for the generic class)."""
        return cls._member_cls

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> object:
        impl = LAZY_FUNCTIONS.get(func)
        if impl is None:
            return super().__torch_function__(func, types, args, kwargs)
        return impl(*args, **(kwargs or {}))

    # -- what it is --------------------------------------------------------------------------

    @property
    def members(self) -> tuple[Any, ...]:
        """The stacked instances themselves, in order."""
        return tuple(self._lazy.members)

    @property
    def stack_dim(self) -> int:
        """The batch dim along which the members are stacked."""
        return self._lazy.dim

    @property
    def member_class(self) -> type[TensorCore]:
        """The class of the members (the class of :meth:`contiguous`)."""
        cls = type(self)._member_cls
        assert cls is not None
        return cls

    def _own_tensors(self) -> list[Tensor]:
        return [t for member in self._lazy.distinct() for t in member._own_tensors()]

    def _missing(self, key: object, where: object = None) -> KeyNotFoundError:
        return missing_key_error(self._lazy, key, where)

    def _absent(self, key: str, where: object = None) -> object:
        # Unset in every member: as for one member (an unset typed field reads None).
        # Held by some members only: an error saying which.
        leaves = self._lazy
        if len(leaves.missing_from(key)) == len(leaves.members):
            return super()._absent(key, where)
        raise self._missing(key, where)

    def _read_field(self, name: str) -> object:
        """A typed field, stacked from the members (``None`` if no member has it)."""
        leaves = self._lazy
        if len(leaves.missing_from(name)) == len(leaves.members):
            return None
        return read_value(leaves[name])

    def __delitem__(self, key: object) -> None:
        self.del_(key)

    def del_(self, key: object) -> Self:
        """Delete ``key`` from every member (without reading it: members may hold values of
        different shapes). A member held twice loses the key once."""
        flat = unravel_key_tuple(key)
        if len(flat) > 1:
            self.get(flat[:-1]).del_(flat[-1])
            return self
        self._check_unlocked(key, "delete")
        del self._lazy[flat[0]]
        return self

    def keys(
        self,
        include_nested: bool = False,
        leaves_only: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        *,
        sort: bool = False,
    ) -> KeysView:
        """The keys every member has (see ``TensorDict.keys``)."""
        if is_leaf is None and not sort:
            return _LazyKeys(self, include_nested, leaves_only)
        return super().keys(include_nested, leaves_only, is_leaf, sort=sort)

    def __repr__(self) -> str:
        return format_instance(self)

    def __reduce__(self) -> tuple[object, ...]:
        packed = self._consolidated_reduce()
        if packed is not None:
            return packed
        leaves = self._lazy
        return (_rebuild, (list(leaves.members), leaves.dim, self._locked))

    # -- writing through the stack -----------------------------------------------------------

    def _set_str(
        self,
        key: str,
        value: object,
        inplace: bool = False,
        where: object = None,
        *,
        validated: object = None,
        non_blocking: bool = False,
    ) -> None:
        leaves = self._lazy
        if (
            value is None and not self.__tensorclass_schema__.dynamic
        ):  # typed: None removes the field
            for member in leaves.members:
                member._set_str(key, None, where=where)
            return
        if inplace and key in leaves:
            self._write_inplace(key, value, where)
            return
        leaf = self._convert(key, value, where)
        if self._locked:
            self._check_unlocked(where or key, "add" if key not in leaves else "replace")
        leaves[key] = leaf

    def _set_path(
        self, key: tuple[str, ...], value: object, inplace: bool = False, where: object = None
    ) -> None:
        where = where or key
        if len(key) == 1:
            self._set_str(key[0], value, inplace, where)
            return
        leaves = self._lazy
        if key[0] in leaves:
            leaves[key[0]]._set_path(key[1:], value, inplace, where)  # a lazy nested stack
            return
        parts = self._split_value(value, where)
        writes = distinct_writes(leaves.members, parts, f"writing {where!r}", key)
        if not inplace:
            self._check_members_unlocked(where, "write")  # before any member is written
        for member, part in writes:
            member._set_path(key, part, inplace, where)

    def _check_members_unlocked(self, key: object, action: str) -> None:
        """Refuse a member-by-member write up front if a member is locked (no partial writes)."""
        for member in self._lazy.members:
            member._check_unlocked(key, action)

    def _split_value(self, value: object, where: object) -> tuple[object, ...]:
        """One part of a user value per member (checked against the stack's batch size)."""
        leaves = self._lazy
        count = len(leaves.members)
        if isinstance(value, Mapping) and not isinstance(value, TensorCore):
            value = dynamic_class()(value, batch_size=self._batch_size)
        if isinstance(value, (Tensor, TensorCore)):
            leaf = self._check_leaf(str(where), value, where)
            return split_leaf(leaf, leaves.dim, count)
        return (value,) * count  # a non-tensor value: every member gets it

    def _write_inplace(self, key: str, value: object, where: object = None) -> None:
        for member, part in self._inplace_writes(key, value, where):
            member._write_inplace(key, part, where)

    def _inplace_writes(
        self, key: str, value: object, where: object = None
    ) -> list[tuple[Any, Any]]:
        """The (member, part) writes of ``_write_inplace(key, value)``, checked (nothing
        written): a member held twice must receive the same part at both positions."""
        leaves = self._lazy
        first = leaves.members[0]._data[key]
        count = len(leaves.members)
        if isinstance(first, Tensor):
            source = value if isinstance(value, Tensor) else torch.as_tensor(value)
            shape = list(first.shape)
            shape.insert(leaves.dim, count)
            try:
                parts: tuple[object, ...] = source.expand(shape).unbind(leaves.dim)
            except RuntimeError:
                raise BatchSizeError(
                    f"cannot write key {where or key!r} in place: a value of shape "
                    f"{list(source.shape)} does not fit the stacked shape {shape}"
                ) from None
        elif isinstance(first, TensorCore):
            parts = self._split_value(value, where or key)
        else:
            parts = split_leaf(self._convert(key, value, where), leaves.dim, count)
        return distinct_writes(leaves.members, parts, f"writing {where or key!r}", (key,))

    def update(
        self,
        input_dict_or_td: Mapping[Any, Any] | TensorCore | None = None,
        clone: bool = False,
        inplace: bool = False,
        *,
        non_blocking: bool = False,
        keys_to_update: Any = None,
        is_leaf: Callable[[type], bool] | None = None,
        update_batch_size: bool = False,
        ignore_lock: bool = False,
    ) -> Self:
        """Write every entry of ``input_dict_or_td`` into the members (split along the
        stack dim); see ``TensorDict.update``. A lazy stack keeps its batch size:
        ``update_batch_size=True`` is refused."""
        if input_dict_or_td is None:
            return self
        if update_batch_size:
            raise BatchSizeError(
                "update(update_batch_size=True): a lazy stack's batch size is its members'; "
                "update a dense copy (contiguous()) instead"
            )
        other: Any = cloned_input(input_dict_or_td) if clone else input_dict_or_td
        if ignore_lock and self._locked:
            return update_unlocked(self, other, inplace, keys_to_update, is_leaf)
        n = len(self._batch_size)
        if not isinstance(other, TensorCore):
            other = dynamic_class()(other, batch_size=self._batch_size)
        elif other._batch_size[:n] != self._batch_size:
            raise BatchSizeError(
                f"cannot update a lazy stack of batch size {list(self._batch_size)} from a "
                f"{type(other).__name__} of batch size {list(other._batch_size)}"
            )
        parts = _unbind(other, self._lazy.dim)
        writes = distinct_writes(self._lazy.members, parts, "update_" if inplace else "update")
        first = next(iter(other._data), None)
        if not inplace and first is not None:
            self._check_members_unlocked(first, "write")
        for member, part in writes:
            member.update(part, inplace=inplace, keys_to_update=keys_to_update, is_leaf=is_leaf)
        return self

    def _write_back(self, dense: TensorCore, what: str = "in-place write") -> Self:
        """Copy a dense result into the members' tensors (for in-place fallbacks): each
        distinct member once (see :func:`.lazy_writes.distinct_writes`)."""
        for member, part in self._check_write_back(dense, what, ()):
            member.update_(part)
        return self

    def _check_write_back(
        self, dense: TensorCore, what: str, path: tuple[str, ...]
    ) -> list[tuple[Any, Any]]:
        """The (member, part) writes of :meth:`_write_back`, checked (nothing written), the
        lazy stacks nested in the members too."""
        parts = _unbind(dense, self._lazy.dim)
        writes = distinct_writes(self._lazy.members, parts, what, path)
        for member, part in writes:
            check_nested(member, part, what, path)
        return writes

    def _split_other(self, other: object) -> list[Any] | None:
        """The parts of another operand, one per member, or None if it cannot be split."""
        count = len(self._lazy.members)
        if isinstance(other, TensorCore):
            if other._batch_size[: len(self._batch_size)] != self._batch_size:
                return None
            return list(_unbind(other, self._lazy.dim))
        if isinstance(other, (int, float, bool, complex)):
            return [other] * count
        if isinstance(other, Tensor) and other.ndim == 0:
            return [other] * count
        return None

    # -- in place, on the members ------------------------------------------------------------

    def _each(self, name: str, *args: object, **kwargs: object) -> Self:
        for member in self._lazy.distinct():  # a member held twice: once
            getattr(member, name)(*args, **kwargs)
        return self

    def _inplace(self, op: Callable[[Any, Any], Any], other: object) -> Any:
        parts = self._split_other(other)
        what = f"in-place {getattr(op, '__name__', op)}"
        if parts is None:  # on a dense copy (checked there: a refusal writes nothing)
            dense = self.contiguous()
            if dense._inplace(op, other) is NotImplemented:
                return NotImplemented
            return self._write_back(dense, what)
        if parts and parts[0] is other and isinstance(other, (int, float, bool, complex)):
            # a number for every member: every stored tensor once, in one fused kernel
            leaves = list({id(t): t for t in self._own_tensors()}.values())
            if fused_scalar_inplace(op, leaves, other):
                return self
        writes = distinct_writes(self._lazy.members, parts, what)
        if parts and isinstance(parts[0], TensorCore) and fused_paired_inplace(op, writes):
            return self  # an instance's parts: every member's leaves in one fused kernel
        refuse_first(op, writes)  # a refusal before any member is written
        for member, part in writes:
            member._inplace(op, part)
        return self

    def lerp_(self, end: object, weight: object) -> Self:
        """Move every tensor towards ``end`` by ``weight``, in the members."""
        parts = self._split_other(end)
        if parts is None or not isinstance(weight, (int, float)):
            return self._write_back(self.contiguous().lerp_(end, weight), "lerp_")
        for member, part in distinct_writes(self._lazy.members, parts, "lerp_"):
            member.lerp_(part, weight)
        return self

    def zero_(self) -> Self:
        """Zero every tensor of every member (each stored tensor once)."""
        zero_tensors(list({id(t): t for t in self._own_tensors()}.values()))
        return self

    def fill_(self, key: object, value: float | bool | Tensor) -> Self:
        """Fill ``key`` of every member with ``value``."""
        return self._each("fill_", key, value)

    def masked_fill_(self, mask: Tensor, value: float | bool | Tensor) -> Self:
        """Write ``value`` where ``mask`` (over the stack's batch dims) is true."""
        if -1 in self._batch_size:  # ragged: no dense copy; each member its part
            check_mask(self, mask, "masked_fill_")
            masks = maths.split_mask(self, mask)
            if masks is None:
                raise BatchSizeError(
                    f"masked_fill_: a mask of shape {list(mask.shape)} cannot be split between "
                    f"the members of a ragged lazy stack (batch_size={list(self._batch_size)}); "
                    f"give one over the dims up to the stack dim {self._lazy.dim}"
                )
            for member, part in zip(self._lazy.members, masks):
                member.masked_fill_(part, value)
            return self
        return self._write_back(self.contiguous().masked_fill_(mask, value), "masked_fill_")

    def detach_(self) -> Self:
        """Detach every member's tensors in place."""
        return self._each("detach_")

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Set ``requires_grad`` on the members' floating-point tensors."""
        return self._each("requires_grad_", requires_grad)

    def filter_empty_(self) -> Self:
        """Remove the empty nested instances of every member."""
        return self._each("filter_empty_")

    def clear_device_(self) -> Self:
        """Clear the device of the stack and of its members."""
        self._each("clear_device_")
        self._device = None
        return self

    def auto_device_(self) -> Self:
        """Set each member's device from its leaves, then the stack's if they agree."""
        self._each("auto_device_")
        devices = {member._device for member in self._lazy.members}
        self._device = devices.pop() if len(devices) == 1 else None
        return self

    def auto_batch_size_(
        self, batch_dims: int | None = None, keep_compliant_size: bool = False
    ) -> Self:
        """A lazy stack keeps its batch size: refused if the leaves imply another one."""
        dense = self.contiguous().auto_batch_size_(batch_dims, keep_compliant_size)
        if dense._batch_size != self._batch_size:
            raise BatchSizeError(
                f"auto_batch_size_: the leaves of this lazy stack imply batch size "
                f"{list(dense._batch_size)}, not {list(self._batch_size)}; a lazy stack "
                f"keeps its members' batch size (call contiguous() first)"
            )
        return self

    def lock_(self) -> Self:
        """Lock the stack and its members (``with stack.lock_():`` restores on exit)."""
        was_locked = self._locked
        self._locked = True
        self._each("lock_")
        return self._remember(self, undo_lock, was_locked)

    def unlock_(self) -> Self:
        """Unlock the stack and its members (``with stack.unlock_():`` restores on exit)."""
        was_locked = self._locked
        self._each("unlock_")
        self._locked = False
        return self._remember(self, undo_lock, was_locked)

    def _check_batch_size(
        self, new: torch.Size, path: tuple[str, ...], changes: list[tuple[TensorCore, torch.Size]]
    ) -> None:
        leaves = self._lazy
        if len(new) <= leaves.dim or new[leaves.dim] != len(leaves.members):
            raise BatchSizeError(
                f"cannot set batch_size={list(new)} on a lazy stack of {len(leaves.members)} "
                f"members along dim {leaves.dim}"
            )
        member_size = torch.Size(new[: leaves.dim] + new[leaves.dim + 1 :])
        for member in leaves.members:
            changes.append((member, member_size))
            member._check_batch_size(member_size, path, changes)

    # -- operations that keep the members ----------------------------------------------------

    def _per_member(self, name: str, *args: object, **kwargs: object) -> Self:
        leaves = self._lazy
        results = [getattr(m, name)(*args, **kwargs) for m in leaves.members]
        if all(r is m for r, m in zip(results, leaves.members)):
            return self
        return self._restacked(results)

    def _restacked(self, members: list[Any], dim: int | None = None) -> Self:
        result: Self = lazy_stack(members, self._lazy.dim if dim is None else dim)
        return result

    def clone(self, recurse: bool = True) -> Self:
        """A lazy stack of copies of the members."""
        return self._restacked([m.clone(recurse) for m in self._lazy.members])

    def to(self, *args: Any, **kwargs: Any) -> Self:
        """Move or cast every member (a lazy stack of the results)."""
        if (args and isinstance(args[0], (str, torch.device))) or "device" in kwargs:
            parsed: Any = torch._C._nn._parse_to(*args, **kwargs)
            if parsed[0] is not None and parsed[1] is None:  # a move: one buffer if consolidated
                moved = self._consolidated_to(parsed[0], parsed[2])
                if moved is not None:
                    return moved
        return self._per_member("to", *args, **kwargs)

    def numel(self) -> int:
        """The number of elements in the batch: the members' together (a ragged stack,
        batch size ``-1`` where the members' sizes differ, has no product)."""
        if -1 not in self._batch_size:
            return self._batch_size.numel()
        return sum(member.numel() for member in self._lazy.members)

    def detach(self) -> Self:
        """A lazy stack of the detached members."""
        return self._per_member("detach")

    def contiguous(self, *, canonical: bool = False, inplace: bool = False) -> Any:
        """A dense copy in the members' class (the keys every member has).

        ``inplace=True`` makes the members' tensors contiguous instead and returns the stack.
        """
        if inplace:
            return super().contiguous(canonical=canonical, inplace=True)
        data = {
            key: leaf.contiguous() if isinstance(leaf, LazyStackedTensorDict) else leaf
            for key, leaf in self._lazy.items()
        }
        dense = type(self)._new(data, self._batch_size, self._device, self._names)
        return dense.contiguous(canonical=True) if canonical else dense

    def is_contiguous(self) -> bool:
        """Always ``False``: the members are separate."""
        return False

    def select(
        self, *keys: object, inplace: bool = False, strict: bool = True, as_tensordict: bool = False
    ) -> Self:
        """Keep only ``keys`` in every member (see ``TensorDict.select``)."""
        if inplace:
            return self._each("select", *keys, inplace=True, strict=strict)
        return self._per_member("select", *keys, strict=strict, as_tensordict=as_tensordict)

    def exclude(self, *keys: object, inplace: bool = False) -> Self:
        """Drop ``keys`` from every member (see ``TensorDict.exclude``)."""
        if inplace:
            return self._each("exclude", *keys, inplace=True)
        return self._per_member("exclude", *keys)

    def empty(
        self,
        recurse: bool = False,
        *,
        batch_size: Any = None,
        device: Any = MISSING,
        names: Any = MISSING,
    ) -> Self:
        """A lazy stack of empty members (see ``TensorDict.empty``); with another batch
        size, device or names, a dense empty instance of the members' class."""
        if batch_size is None and device is MISSING and names is MISSING:
            return self._per_member("empty", recurse)
        return super().empty(recurse, batch_size=batch_size, device=device, names=names)

    # -- building lazy stacks ----------------------------------------------------------------

    # The overloads below say what this classmethod returns: a ``LazyStackedTensorDict``
    # for instances (the mypy plugin makes it the members' class too), unlike the engine's
    # ``Cls.lazy_stack`` (typed as the members' class), hence the ignores.
    @overload  # type: ignore[override]
    @classmethod
    def lazy_stack(
        cls, items: Sequence[Tensor], dim: int = 0, *, as_list: Literal[True]
    ) -> list[Tensor]: ...

    @overload
    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[Tensor],
        dim: int = 0,
        *,
        as_list: Literal[False] = False,
        **options: Unpack[_TensorsOptions],
    ) -> Tensor: ...

    @overload
    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[Tensor],
        dim: int = 0,
        *,
        as_list: bool = False,
        **options: Unpack[_TensorsOptions],
    ) -> Tensor | list[Tensor]: ...

    @overload
    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[T],
        dim: int = 0,
        *,
        out: None = None,
        **options: Unpack[_MembersOptions],
    ) -> LazyStackedTensorDict: ...

    @overload
    @classmethod
    def lazy_stack(
        cls, items: Sequence[T], dim: int = 0, *, out: _Out, **options: Unpack[_MembersOptions]
    ) -> _Out: ...

    @classmethod
    def lazy_stack(
        cls,
        items: Sequence[Any],
        dim: int = 0,
        *,
        device: object = None,
        out: Any = None,
        stack_dim_name: str | None = None,
        strict_shape: bool = False,
        as_list: bool = False,
        as_padded_tensor: bool = False,
        as_nested_tensor: bool = False,
        padding_side: _PaddingSide = "right",
        layout: torch.layout | None = None,
        padding_value: float = 0.0,
    ) -> Any:
        """Stack instances lazily (see :func:`lazy_stack`); ``stack_dim_name`` names the new
        dim; ``out`` (a lazy stack of the stacked batch size) receives the result in place.

        The members must share their class and batch size (``strict_shape`` is always on);
        ``device`` moves them there first. Given tensors, the
        result is ``torch.stack`` of them, or with ``as_list`` the list, with
        ``as_padded_tensor`` them padded to the largest shape (``padding_side``,
        ``padding_value``) and stacked, with ``as_nested_tensor`` a nested tensor
        (``layout``, ``torch.jagged`` by default).

        Type checkers see a ``LazyStackedTensorDict`` for instances (with the mypy plugin,
        also the members' class), a ``Tensor`` for tensors (``list[Tensor]`` with
        ``as_list=True``).

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict
        >>> LazyStackedTensorDict.lazy_stack([torch.zeros(2), torch.ones(3)], as_padded_tensor=True)
        tensor([[0., 0., 0.],
                [1., 1., 1.]])
        """
        members = list(items)
        if members and all(isinstance(m, Tensor) for m in members):
            return _stack_tensors(
                members,
                dim,
                as_list,
                as_padded_tensor,
                as_nested_tensor,
                padding_side,
                layout,
                padding_value,
            )
        if device is not None:
            members = [m.to(device) for m in members]
        result = _named(lazy_stack(members, dim), stack_dim_name, None)
        if out is not None:
            out.update_(result)
            return out
        return result

    @classmethod
    def maybe_dense_stack(  # type: ignore[override]
        cls, items: Sequence[T], dim: int = 0, out: T | None = None, strict: bool = False
    ) -> T:
        """Stack densely (``torch.stack``) when the items have the same class, batch size,
        keys and leaf shapes, lazily otherwise; nested levels decide on their own, so a
        dense result may hold lazy stacks. ``out`` receives the result in place (with
        ``strict``, it must have the same keys).

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict, TensorDict
        >>> a, b = TensorDict({"x": torch.zeros(3)}, [3]), TensorDict({"y": torch.zeros(3)}, [3])
        >>> type(LazyStackedTensorDict.maybe_dense_stack([a, a])).__name__
        'TensorDict'
        >>> isinstance(LazyStackedTensorDict.maybe_dense_stack([a, b]), LazyStackedTensorDict)
        True
        """
        result = maybe_dense_stack(items, dim)
        if out is None:
            return result
        target: Any = out
        found: Any = result
        if strict and set(target.keys(True, True)) != set(found.keys(True, True)):
            raise StructureMismatchError(
                f"maybe_dense_stack(strict=True): out has the keys {sorted(target.keys(True, True), key=str)}, "
                f"the stack {sorted(found.keys(True, True), key=str)}"
            )
        target.update_(result)
        return out

    @classmethod
    def from_dict(
        cls,
        input_dict: Any,
        *,
        auto_batch_size: bool | None = None,
        batch_size: object = None,
        device: object = None,
        batch_dims: int | None = None,
        stack_dim_name: str | None = None,
        stack_dim: int = 0,
        names: Sequence[str | None] | None = None,
    ) -> Any:
        """A lazy stack of one member per mapping (each built with the members' class's
        ``from_dict``), so the mappings may have different keys and shapes. A mapping
        whose keys are ``"0"``, ``"1"``, ... is read as that list.

        ``batch_size``, ``auto_batch_size``, ``batch_dims`` and ``device`` apply to each
        member; ``stack_dim_name`` names the stack dim, or ``names`` every dim of the
        result.

        >>> import torch
        >>> from tensorclass import LazyStackedTensorDict
        >>> td = LazyStackedTensorDict.from_dict(
        ...     [{"a": torch.zeros(3)}, {"a": torch.zeros(4)}], stack_dim_name="t")
        >>> td.batch_size, td.names, td[1]["a"].shape
        (torch.Size([2]), ['t'], torch.Size([4]))
        """
        if is_op(input_dict):  # an instance (isinstance TensorCore), typed with its operations
            items: list[object] = list(input_dict.unbind(stack_dim))
        elif isinstance(input_dict, Mapping):
            keys = [str(index) for index in range(len(input_dict))]
            if list(input_dict) != keys:
                raise TypeError(
                    f"LazyStackedTensorDict.from_dict: a mapping must have the keys '0', '1', "
                    f"... (one per member); got {list(input_dict)[:5]}"
                )
            items = [input_dict[key] for key in keys]
        else:
            items = list(input_dict)
        target: Any = cls._dense_class()
        members = [
            target.from_dict(
                item,
                auto_batch_size=auto_batch_size,
                batch_size=batch_size,
                device=device,
                batch_dims=batch_dims,
            )
            for item in items
        ]
        return _named(lazy_stack(members, stack_dim), stack_dim_name, names)

    def filter_non_tensor_data(self) -> Self:
        """A lazy stack of the members without their non-tensor entries."""
        return self._per_member("filter_non_tensor_data")

    def apply(
        self,
        fn: Callable[..., Any],
        *others: TensorCore,
        batch_size: object = None,
        device: object = MISSING,
        names: object = None,
        inplace: bool = False,
        default: object = MISSING,
        filter_empty: bool | None = None,
        propagate_lock: bool = False,
        call_on_nested: bool = False,
        is_leaf: Callable[[type], bool] | None = None,
        out: TensorCore | None = None,
        named: bool = False,
        nested_keys: bool = False,
    ) -> Self:
        """Apply ``fn`` member by member (see ``TensorDict.apply``); the result stays lazy.

        With ``batch_size=``, ``names=``, ``device=``, ``is_leaf=`` or ``out=`` the dense
        stack is used instead; ``named=True`` is :meth:`named_apply`.
        """
        if named:
            return self.named_apply(
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
        split = [self._split_other(o) for o in others]
        dense = (
            batch_size is not None
            or names is not None
            or device is not MISSING
            or is_leaf is not None
            or out is not None
            or any(s is None for s in split)
        )
        if dense:
            if inplace:
                copy = self.contiguous()
                copy.apply(fn, *others, inplace=True, default=default, is_leaf=is_leaf)
                return self._write_back(copy, "apply_")
            return super().apply(
                fn,
                *others,
                batch_size=batch_size,
                device=device,
                names=names,
                default=default,
                filter_empty=filter_empty,
                propagate_lock=propagate_lock,
                call_on_nested=call_on_nested,
                is_leaf=is_leaf,
                out=out,
            )
        leaves = self._lazy
        results = []
        for index, member in enumerate(leaves.members):
            extra = [parts[index] for parts in split if parts is not None]
            results.append(
                member.apply(  # in place too: computed first, written once all succeeded
                    fn,
                    *extra,
                    default=default,
                    filter_empty=False if inplace else filter_empty,
                    call_on_nested=call_on_nested,
                )
            )
        if inplace:
            for member, result in distinct_writes(leaves.members, results, "apply_"):
                member.update_(result)
            return self
        result = self._restacked(results)
        if propagate_lock and self._locked:
            result.lock_()
        return result

    # The lazy-stack operations, attached by module, one line each (``name = module.function``;
    # last in the class body: the names ``all`` and ``any`` shadow builtins here).

    # lazy/ragged.py (``get`` is declared with its overloads: as an assignment, pyright would
    # read it with the type of the get it overrides)
    @overload
    def get(
        self,
        key: NestedKey,
        default: object = ...,
        *,
        as_list: Literal[False] = False,
        as_padded_tensor: Literal[False] = False,
        as_nested_tensor: Literal[False] = False,
        padding_side: _PaddingSide = "right",
        padding_value: float = 0.0,
        layout: torch.layout | None = None,
    ) -> Any: ...

    @overload
    def get(self, key: NestedKey, *, as_list: Literal[True]) -> list[Any]: ...

    @overload
    def get(self, key: NestedKey, default: _D, *, as_list: Literal[True]) -> list[Any] | _D: ...

    @overload
    def get(
        self,
        key: NestedKey,
        *,
        as_padded_tensor: Literal[True],
        padding_side: _PaddingSide = "right",
        padding_value: float = 0.0,
    ) -> Tensor: ...

    @overload
    def get(
        self,
        key: NestedKey,
        default: _D,
        *,
        as_padded_tensor: Literal[True],
        padding_side: _PaddingSide = "right",
        padding_value: float = 0.0,
    ) -> Tensor | _D: ...

    @overload
    def get(
        self,
        key: NestedKey,
        *,
        as_nested_tensor: Literal[True],
        layout: torch.layout | None = None,
    ) -> Tensor: ...

    @overload
    def get(
        self,
        key: NestedKey,
        default: _D,
        *,
        as_nested_tensor: Literal[True],
        layout: torch.layout | None = None,
    ) -> Tensor | _D: ...

    @overload
    def get(
        self,
        key: NestedKey,
        default: object = ...,
        as_padded_tensor: bool = False,
        as_nested_tensor: bool = False,
        padding_side: _PaddingSide = "right",
        padding_value: float = 0.0,
        layout: torch.layout | None = None,
        *,
        as_list: bool = False,
    ) -> Any: ...

    def get(
        self,
        key: NestedKey,
        default: object = MISSING,
        as_padded_tensor: bool = False,
        as_nested_tensor: bool = False,
        padding_side: _PaddingSide = "right",
        padding_value: float = 0.0,
        layout: torch.layout | None = None,
        *,
        as_list: bool = False,
    ) -> Any:
        """The value under ``key`` (see ``TensorDict.get``), or ``default`` if a member lacks it.

        When the members' values cannot be stacked (different shapes), read them with one of:
        ``as_list=True`` (a list, one value per member), ``as_padded_tensor=True`` (padded
        with ``padding_value`` on ``padding_side`` to the largest size of every dim, then
        stacked along the stack dim) or ``as_nested_tensor=True`` (a ``torch.nested`` tensor
        of ``layout``, ``torch.jagged`` by default; the stack dim must be 0). Type checkers
        see those results: a ``list`` with ``as_list=True``, a ``Tensor`` with the others
        (or the default's type when one is given).
        """
        return ragged.get(
            self,
            key,
            default,
            as_list=as_list,
            as_padded_tensor=as_padded_tensor,
            as_nested_tensor=as_nested_tensor,
            padding_side=padding_side,
            padding_value=padding_value,
            layout=layout,
        )

    get_nestedtensor = ragged.get_nestedtensor
    densify = ragged.densify
    # member by member when ragged (the engine's otherwise)
    update_ = ragged.update_
    copy_ = ragged.copy_
    _nary = ragged.nary
    named_apply = ragged.named_apply
    rename_key_ = ragged.rename_key_
    flatten_keys = ragged.flatten_keys
    unflatten_keys = ragged.unflatten_keys

    # lazy/members.py
    tensordicts = op_property(member_list.tensordicts)
    valid_keys = member_list.valid_keys
    append = member_list.append
    insert = member_list.insert
    extend = member_list.extend

    # lazy/maths.py (== and != and its MEMBER_WISE table entries: after the class body)
    _binary = maths._binary
    as_tensor = maths.as_tensor
    __neg__ = maths.__neg__
    __abs__ = maths.__abs__
    __invert__ = maths.__invert__
    clamp = maths.clamp
    masked_fill = maths.masked_fill
    where = maths.where
    __radd__ = maths.__radd__
    __rsub__ = maths.__rsub__
    __rmul__ = maths.__rmul__
    __rtruediv__ = maths.__rtruediv__
    __rfloordiv__ = maths.__rfloordiv__
    __rmod__ = maths.__rmod__
    __rpow__ = maths.__rpow__
    __rand__ = maths.__rand__
    __ror__ = maths.__ror__
    __rxor__ = maths.__rxor__
    __lt__ = maths.__lt__
    __le__ = maths.__le__
    __gt__ = maths.__gt__
    __ge__ = maths.__ge__
    all = maths.all
    any = maths.any

    # lazy/shape.py
    _lazy = op_property(shape._lazy)
    _index = shape._index
    _set_at = shape._set_at
    update_at_ = shape.update_at_
    unbind = shape.unbind
    _split_sections = shape._split_sections
    unsqueeze = shape.unsqueeze
    squeeze = shape.squeeze
    permute = shape.permute
    expand = shape.expand
    flip = shape.flip
    roll = shape.roll
    view = shape.view
    reshape = shape.reshape
    flatten = shape.flatten
    unflatten = shape.unflatten


# lazy/maths.py, set after the class body (type checkers keep TensorOps's types): ``==`` and
# ``!=`` (assigned in a class body, they would be checked against object's), and every
# element-wise entry of the leaf-wise table without an operand, member by member
_AFTER_BODY = {"__eq__": maths.__eq__, "__ne__": maths.__ne__, **maths.MEMBER_WISE}
for _name, _method in _AFTER_BODY.items():
    if _name not in LazyStackedTensorDict.__dict__:
        setattr(LazyStackedTensorDict, _name, _method)
for _name in MEMBER_CLASS_NAMES:
    setattr(LazyStackedTensorDict, _name, MemberAttribute(_name))


def _unbind(node: TensorCore, dim: int) -> tuple[Node, ...]:
    parts: tuple[Node, ...] = as_op(node).unbind(dim)
    return parts


def _rebuild(members: list[Node], dim: int, locked: bool) -> Node:
    # torch.load(weights_only=True) may call this with anything a crafted file holds
    if (
        type(members) is not list
        or not all(isinstance(member, TensorCore) for member in members)
        or type(dim) is not int
        or type(locked) is not bool
    ):
        raise FormatError(
            "cannot unpickle a lazy stack: it needs a list of tensor classes, an int dim and "
            f"a bool; got {shown(members)}, {shown(dim)}, {shown(locked)}"
        )
    result = lazy_stack(members, dim)
    return result.lock_() if locked else result


allow_loading(_rebuild)


class _StackedField:
    """Reads a typed field of a lazy stack: the members' values, stacked."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: LazyStackedTensorDict | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._read_field(self.name)

    def __set__(self, obj: Any, value: object) -> None:
        obj._set_field(self.name, value)


def _variant(member_cls: type[TensorCore]) -> type[LazyStackedTensorDict]:
    """The lazy-stack class whose instances are also instances of ``member_cls``."""
    found = LazyStackedTensorDict._variants.get(member_cls)  # its source, for torch.compile
    if found is None:
        found = variant_class(
            LazyStackedTensorDict,
            member_cls,
            LazyStackedTensorDict._variants,
            "_member_cls",
            _StackedField,
            f"A lazy stack of {member_cls.__name__} instances.",
        )
    return found


def lazy_stack_class(member_cls: type[TensorCore]) -> type[LazyStackedTensorDict]:
    """The lazy-stack class of ``member_cls`` (made on first use; making it ahead lets
    ``torch.compile`` trace a first ``lazy_stack`` of that class, as it cannot build a class)."""
    return _variant(member_cls)


def lazy_stack(input: Sequence[T], dim: int = 0, *, out: T | None = None) -> T:
    """Stack instances along a new batch dim ``dim`` without copying (see the module doc).

    The members must share their class and number of batch dims; their keys may differ,
    and so may their batch sizes (episodes of different lengths): the stack's batch size is
    then ``-1`` at each dim where they differ (a ragged stack, as in tensordict). The result
    is an instance of the members' class and of :class:`LazyStackedTensorDict`. ``out``
    (of the stacked batch size) receives the result in place instead.

    Type checkers see the members' class; the mypy plugin adds ``LazyStackedTensorDict``,
    and ``isinstance(result, LazyStackedTensorDict)`` gives both to every checker (see
    ``docs/typing.md``).
    """
    if out is not None:
        as_op(out).update_(lazy_stack(input, dim))
        return out
    members = list(input)
    if not members:
        raise ValueError(
            "lazy_stack needs at least one instance to stack (an empty list has no member "
            "class and no batch size)"
        )
    first = members[0]
    member_cls = getattr(type(first), "_member_cls", None) or type(first)
    batch = first._batch_size if isinstance(first, TensorCore) else None
    same_batch = True
    for index, item in enumerate(members):
        if not isinstance(item, TensorCore):
            raise TypeError(
                f"lazy_stack: item {index} is a {type(item).__name__}, not a tensor class"
            )
        # a lazy stack of the members' class may stand beside dense members (a reshape
        # or an index of a stack of lazy stacks gives such mixes)
        if type(item) is not type(first) and _class_of(item) is not member_cls:
            raise StructureMismatchError(
                f"lazy_stack: item 0 is a {type(first).__name__}, item {index} a "
                f"{type(item).__name__}; members must share their class"
            )
        if same_batch and item._batch_size != batch:
            same_batch = False
    if not same_batch:  # ragged: -1 where the members' sizes differ
        batch = ragged_batch([m._batch_size for m in members], "lazy_stack")
    assert batch is not None
    d = batch_dim(dim, len(batch), extra=1)
    cls = _variant(member_cls)
    device = first._device if all(m._device == first._device for m in members) else None
    names = first._names if all(m._names == first._names for m in members) else None
    stack = object.__new__(cls)
    set_state(
        stack,
        cls,
        LazyLeaves(stack, members, d),
        torch.Size((*batch[:d], len(members), *batch[d:])),
        device,
        None if names is None else (*names[:d], None, *names[d:]),
        all(m._locked for m in members),
    )
    # an instance of the members' class too (``_variant`` derives from it)
    return cast(T, stack)


def _class_of(item: TensorCore) -> type[TensorCore]:
    """The class of a member: the members' class of a lazy stack, else its own."""
    found: type[TensorCore] = getattr(type(item), "_member_cls", None) or type(item)
    return found


def _named(stack: Any, stack_dim_name: str | None, names: Sequence[str | None] | None) -> Any:
    """Name the dims of a new lazy stack: all of them, or the stack dim only."""
    if names is not None:
        if stack_dim_name is not None:
            raise ValueError("pass names or stack_dim_name, not both")
        stack.names = names
    elif stack_dim_name is not None:
        found = list(stack.names)
        found[stack.stack_dim] = stack_dim_name
        stack.names = found
    return stack


def _stack_tensors(
    tensors: list[Tensor],
    dim: int,
    as_list: bool,
    as_padded_tensor: bool,
    as_nested_tensor: bool,
    padding_side: str,
    layout: torch.layout | None,
    padding_value: float | int | bool,
) -> Tensor | list[Tensor]:
    """``LazyStackedTensorDict.lazy_stack`` of plain tensors."""
    if as_list + as_padded_tensor + as_nested_tensor > 1:
        raise ValueError("pass one of as_list, as_padded_tensor and as_nested_tensor")
    if as_list:
        return tensors
    if as_nested_tensor:
        if any(t.is_nested for t in tensors):
            raise ValueError("as_nested_tensor: a nested tensor cannot hold nested tensors")
        return torch.nested.nested_tensor(tensors, layout=layout or torch.jagged)
    if as_padded_tensor:
        return pad_stack(tensors, dim, padding_side, padding_value, "the stacked tensors")
    return torch.stack(tensors, dim)


def _dense_level(members: Sequence[TensorCore]) -> bool:
    """Whether ``members`` stack densely at this level: one class (no lazy stack), one
    batch size, the same keys, and, key by key, tensors of one shape, instances (their
    level decides for itself) or non-tensor values."""
    first = members[0]
    if isinstance(first, LazyStackedTensorDict):
        return False
    for member in members[1:]:
        if type(member) is not type(first) or member._batch_size != first._batch_size:
            return False
        if member._data.keys() != first._data.keys():  # the same keys, in any order
            return False
    for key, leaf in first._data.items():
        for member in members[1:]:
            other = member._data[key]
            if isinstance(leaf, Tensor):
                if not isinstance(other, Tensor) or other.shape != leaf.shape:
                    return False
            elif isinstance(leaf, TensorCore):
                if not isinstance(other, TensorCore):
                    return False
            elif isinstance(other, (Tensor, TensorCore)):
                return False
    return True


def _maybe_dense(members: list[T], dim: int) -> T:
    if not _dense_level(members):
        return lazy_stack(members, dim)
    first = members[0]
    data: dict[str, object] = {}
    for key, leaf in first._data.items():
        leaves = [member._data[key] for member in members]
        if isinstance(leaf, Tensor):
            data[key] = torch.stack(leaves, dim)
        elif isinstance(leaf, TensorCore):
            data[key] = _maybe_dense(leaves, dim)
        else:
            data[key] = stack_non_tensors(leaves, dim, first._batch_size, capture=stacks_capture())
    batch = first._batch_size
    device = first._device if all(m._device == first._device for m in members) else None
    names = first._names
    return type(first)._new(
        data,
        torch.Size((*batch[:dim], len(members), *batch[dim:])),
        device,
        None if names is None else (*names[:dim], None, *names[dim:]),
    )


def maybe_dense_stack(items: Sequence[T], dim: int = 0) -> T:
    """Stack densely when the items have the same class, batch size, keys and leaf shapes
    (as ``torch.stack``), lazily otherwise (as :func:`lazy_stack`); each nested level
    decides for itself, so a dense result may hold lazy stacks.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> a = TensorDict({"x": torch.zeros(3), "n": {"y": torch.zeros(2)}}, [])
    >>> b = TensorDict({"x": torch.ones(3), "n": {"y": torch.zeros(4)}}, [])
    >>> stacked = maybe_dense_stack([a, b])
    >>> type(stacked).__name__, type(stacked["n"]).__name__
    ('TensorDict', 'LazyStackedTensorDict[TensorDict]')
    """
    members = list(items)
    if not members:
        raise ValueError("maybe_dense_stack needs at least one tensor class")
    for index, item in enumerate(members):
        if not isinstance(item, TensorCore):
            raise TypeError(
                f"maybe_dense_stack: item {index} is a {type(item).__name__}, not a tensor class"
            )
    d = batch_dim(dim, len(members[0]._batch_size), extra=1)
    result: T = _maybe_dense(members, d)
    return result


def dense_stack_members(items: Sequence[T], dim: int) -> T:
    """:func:`maybe_dense_stack`, except that lazy stacks of one layout (the same stack
    dim and number of members) are stacked member by member: the result is a lazy stack
    of the dense stacks of their corresponding members (so members of different batch
    sizes, a ragged stack, still give dense parts). ``dense_stack_tds`` stacks so.

    >>> import torch
    >>> from tensorclass import TensorDict, lazy_stack
    >>> episode = lazy_stack([TensorDict(x=torch.zeros(3), batch_size=[3]),
    ...                       TensorDict(x=torch.zeros(5), batch_size=[5])])
    >>> both = dense_stack_members([episode, episode.clone()], 0)
    >>> both.batch_size, both.stack_dim, [m.batch_size for m in both.tensordicts]
    (torch.Size([2, 2, -1]), 1, [torch.Size([2, 3]), torch.Size([2, 5])])
    """
    members = list(items)
    stacks = [m._lazy for m in members if isinstance(m, LazyStackedTensorDict)]
    if members and len(stacks) == len(members):
        inner, count, ndim = stacks[0].dim, len(stacks[0].members), len(members[0]._batch_size)
        if all(
            s.dim == inner and len(s.members) == count and len(m._batch_size) == ndim
            for s, m in zip(stacks, members)
        ):
            d = batch_dim(dim, ndim, extra=1)
            new_stack, member_dim = (inner + 1, d) if d <= inner else (inner, d - 1)
            parts: list[T] = [
                maybe_dense_stack([s.members[i] for s in stacks], member_dim) for i in range(count)
            ]
            return lazy_stack(parts, new_stack)
    return maybe_dense_stack(members, dim)


register_lazy_class(LazyStackedTensorDict)  # what the constructors of every class stack with
register_lazy_stack_function(lazy_stack)  # what the operations below lazy stacks stack with
