"""Building instances from mappings, lists and other instances, the batch-size rule every
constructor follows, and joining instances lazily (``lazy_stack``, ``maybe_dense_stack``;
``stack`` and ``cat`` are :mod:`..torch_api.functions`' own, attached as they are).

The functions are attached to ``TensorOps`` (``engine/ops.py``), the ``from_*`` ones as
class methods (``class_op``). The other constructors every class has build on them: from
Python containers, pytrees and structured arrays in :mod:`.from_containers`, from
``torch.nn`` modules in :mod:`..params.building`.

Each ``from_*`` classmethod returns an instance of the class it is called on (``Self``):
``TensorDict.from_dict(d)`` a ``TensorDict``, ``Batch.from_dict(d)`` a ``Batch`` (the keys
are its fields, nested mappings become its declared nested classes). On a lazy-stack class
they build the members' class, as the engine's other dense results do; ``from_dict`` and
``from_list`` build lazy stacks there (see ``lazy_stack.py``).

The batch size follows one rule everywhere: ``batch_size=`` sets it; ``auto_batch_size=True``
(or ``batch_dims=``) computes the longest shape prefix every entry shares, capped at
``batch_dims`` dims (:func:`auto_batch_size_`); otherwise it is ``[]``.

>>> import torch
>>> from tensorclass import TensorClass, TensorDict
>>> class Pair(TensorClass):
...     x: torch.Tensor
...     y: torch.Tensor
>>> Pair.from_dict({"x": torch.zeros(3, 2), "y": torch.ones(3)}, auto_batch_size=True)
Pair(batch_size=[3], fields={x: f32[2], y: f32[]})
>>> TensorDict.from_dict({"a": torch.zeros(3)}, batch_size=[3]).keys()
KeysView(['a'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import torch
from torch import Tensor

from ...errors import BatchSizeError, FieldTypeError
from ...non_tensor import NonTensorData
from ...registry import dynamic_class, lazy_class
from ...schema import FieldKind
from ..core.lazy_stacks import stack_lazily, stacked_leaves
from ..core.self_types import E, is_op
from ..core.state import BatchSizeLike, DeviceLike, TensorCore, as_batch_size, as_device

__all__ = [
    "auto_batch_size_",
    "from_dict",
    "from_dict_instance",
    "from_list",
    "from_schema",
    "from_tensordict",
    "fromkeys",
    "lazy_stack",
    "maybe_dense_stack",
]

T = TypeVar("T", bound=TensorCore)
_SCALARS = (bool, int, float)


def _auto(
    what: str,
    auto_batch_size: bool | None,
    batch_size: BatchSizeLike,
    batch_dims: int | None,
    size_wins: bool = False,
) -> bool:
    """Whether the batch size is computed: ``auto_batch_size``, or ``batch_dims`` given.

    ``batch_size`` and ``batch_dims`` exclude each other; ``batch_size`` with
    ``auto_batch_size=True`` is an error, unless ``size_wins`` (``from_dict``: the given
    batch size is used).
    """
    if batch_size is not None and batch_dims is not None:
        raise BatchSizeError(f"{what}: pass batch_size or batch_dims, not both")
    auto = batch_dims is not None if auto_batch_size is None else auto_batch_size
    if auto and batch_size is not None:
        if size_wins:
            return False
        raise TypeError(f"{what}: pass auto_batch_size=True or batch_size, not both")
    return auto


def _scalars_as_values(cls: type[TensorCore], mapping: Mapping[Any, Any]) -> dict[object, object]:
    """Python numbers of keys that take any value, as shared non-tensor values (so that
    ``to_dict`` output converts back under a non-empty batch size), at every level."""
    schema = cls.__tensorclass_schema__
    out: dict[object, object] = {}
    for key, value in mapping.items():
        found = schema.by_name.get(key) if type(key) is str else None
        loose = schema.dynamic or (found is None and schema.extra_keys)
        if found is not None and found.kind is FieldKind.ANY:
            loose = True
        if type(value) in _SCALARS and loose:
            value = NonTensorData(value)
        elif isinstance(value, Mapping) and not isinstance(value, TensorCore):
            if loose:
                value = _scalars_as_values(dynamic_class(), value)
            elif found is not None and found.kind is FieldKind.NESTED and found.nested_class:
                value = _scalars_as_values(found.nested_class, value)
        out[key] = value
    return out


def _level(node: TensorCore) -> Mapping[str, object]:
    """The leaves that describe a level's structure (a lazy stack's first member's)."""
    stacked = stacked_leaves(node)
    return node._data if stacked is None else stacked.members[0]._data


def _retype(result: TensorCore, template: TensorCore) -> None:
    """Give the nested levels of ``result`` the classes of ``template``'s, recursively."""
    like = _level(template)
    for key, leaf in list(result._data.items()):
        counterpart = like.get(key)
        if not (is_op(leaf) and is_op(counterpart)):
            continue
        _retype(leaf, counterpart)
        target = type(counterpart)._dense_class()
        if type(leaf) is not target:
            result._data[key] = target._from_mapping(leaf._data, leaf._batch_size, leaf._device)


def _build(
    cls: type[E],
    found: Mapping[Any, Any],
    batch_size: BatchSizeLike,
    device: DeviceLike,
    names: Sequence[str | None] | None,
    auto: bool,
    batch_dims: int | None,
) -> E:
    target = cls._dense_class()
    result = target._from_mapping(found, as_batch_size(batch_size), as_device(device))
    if auto:
        result.auto_batch_size_(batch_dims)
    elif names is not None:
        result.names = names
    return result


# -- the batch size ------------------------------------------------------------------------


def auto_batch_size_(
    self: E, batch_dims: int | None = None, keep_compliant_size: bool = False
) -> E:
    """Set the batch size to the longest shape prefix every leaf shares (nested
    instances first, each its own), at most ``batch_dims`` dims; returns ``self``.

    Nested lazy stacks keep their batch size; with ``keep_compliant_size`` (and
    ``batch_dims``), so do nested instances that have ``batch_dims`` dims or more.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3, 4, 5)}})
    >>> td.auto_batch_size_().batch_size, td["b"].batch_size
    (torch.Size([3, 4]), torch.Size([3, 4, 5]))
    """
    for leaf in self._data.values():
        if is_op(leaf) and type(leaf._data) is dict:  # not a lazy stack
            if keep_compliant_size and batch_dims is not None:
                if len(leaf._batch_size) >= batch_dims:
                    continue
            leaf.auto_batch_size_(batch_dims, keep_compliant_size)
    shapes = [leaf.shape for leaf in self._data.values() if type(leaf) is not NonTensorData]
    common: list[int] = []
    for dims in zip(*shapes):
        if any(d != dims[0] for d in dims) or (
            batch_dims is not None and len(common) == batch_dims
        ):
            break
        common.append(dims[0])
    if shapes:
        self._set_batch_size(torch.Size(common))
    return self


# -- from mappings and lists ---------------------------------------------------------------


def from_dict(
    cls: type[E],
    input_dict: Mapping[Any, Any] | TensorCore,
    *,
    auto_batch_size: bool | None = None,
    batch_size: BatchSizeLike = None,
    device: DeviceLike = None,
    batch_dims: int | None = None,
    names: Sequence[str | None] | None = None,
) -> E:
    """Build from a (nested) mapping: nested mappings become nested instances (the
    declared nested classes of a typed class, ``TensorDict`` otherwise).

    Args:
        input_dict: the entries (string or tuple keys); a tensor class gives its leaves
            (shared) and, by default, its batch size.
        auto_batch_size: compute the batch size (the longest shape prefix every entry
            shares, each nested level its own). Defaults to ``True`` when
            ``batch_dims`` is given.
        batch_size: the batch size (wins over ``auto_batch_size``). Python numbers of
            keys that take any value are then stored as non-tensor values, so that
            ``to_dict()`` output converts back.
        device: move every leaf there.
        batch_dims: the most batch dims to compute (exclusive with ``batch_size``).
        names: the names of the batch dims (with ``batch_size`` only).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> data = {"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3, 4, 5)}}
    >>> TensorDict.from_dict(data).batch_size
    torch.Size([])
    >>> td = TensorDict.from_dict(data, auto_batch_size=True)
    >>> td.batch_size, td["b"].batch_size
    (torch.Size([3, 4]), torch.Size([3, 4, 5]))
    >>> TensorDict.from_dict(data, batch_dims=1).batch_size
    torch.Size([3])
    """
    auto = _auto("from_dict", auto_batch_size, batch_size, batch_dims, size_wins=True)
    if isinstance(input_dict, TensorCore):
        if batch_size is None and not auto:
            batch_size = input_dict._batch_size
        input_dict = input_dict._data
    elif not isinstance(input_dict, Mapping):
        raise TypeError(f"from_dict expects a mapping; got {type(input_dict).__name__}")
    if not auto and batch_size is not None and as_batch_size(batch_size):
        input_dict = _scalars_as_values(cls._dense_class(), input_dict)
    return _build(cls, input_dict, batch_size, device, names, auto, batch_dims)


def from_dict_instance(
    self: E,
    input_dict: Mapping[Any, Any] | TensorCore,
    *,
    auto_batch_size: bool | None = None,
    batch_size: BatchSizeLike = None,
    device: DeviceLike = None,
    batch_dims: int | None = None,
    names: Sequence[str | None] | None = None,
) -> E:
    """Like :meth:`from_dict`, but a nested mapping under a key that holds a nested
    instance here becomes an instance of that instance's class (recursively): turns
    :meth:`to_dict` output back into the classes of this instance. The values of this
    instance are not used.

    >>> import torch
    >>> from tensorclass import TensorClass, TensorDict
    >>> class Point(TensorClass):
    ...     x: torch.Tensor
    >>> template = TensorDict({"p": Point(torch.zeros(2), batch_size=[2])}, [2])
    >>> type(template.from_dict_instance({"p": {"x": torch.ones(2)}})["p"]).__name__
    'Point'
    """
    result = (
        type(self)
        ._dense_class()
        .from_dict(
            input_dict,
            auto_batch_size=auto_batch_size,
            batch_size=batch_size,
            device=device,
            batch_dims=batch_dims,
            names=names,
        )
    )
    _retype(result, self)
    return result


def from_list(
    cls: type[E],
    input: Sequence[Any],
    *,
    auto_batch_size: bool | None = None,
    batch_size: BatchSizeLike = None,
    device: DeviceLike = None,
    batch_dims: int | None = None,
    names: Sequence[str | None] | None = None,
    lazy: bool | None = None,
) -> E:
    """Stack a list of mappings (each built with :meth:`from_dict`) or instances along a
    new first batch dim.

    Args:
        input: the elements.
        auto_batch_size: compute each element's batch size (see :meth:`from_dict`).
        batch_size: the batch size of the result, the list's length first; each
            element gets the rest.
        device: move every leaf there.
        batch_dims: the most batch dims of the result, the list's dim included.
        names: the names of the result's batch dims.
        lazy: ``True`` a lazy stack, ``False`` a dense stack; by default a dense stack
            when the elements have the same keys and shapes, a lazy stack otherwise
            (on a lazy-stack class: a lazy stack).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict.from_list([{"a": torch.zeros(3)}, {"a": torch.ones(3)}],
    ...                           batch_size=[2, 3], names=["n", "t"])
    >>> td.batch_size, td.names
    (torch.Size([2, 3]), ['n', 't'])
    """
    items = list(input)
    if not items:
        raise ValueError("from_list needs at least one element")
    auto = _auto("from_list", auto_batch_size, batch_size, batch_dims, size_wins=True)
    member_size: BatchSizeLike = None
    if batch_size is not None:
        size = as_batch_size(batch_size)
        if not size or size[0] != len(items):
            raise BatchSizeError(
                f"from_list: batch_size {list(size)} does not start with the length of "
                f"the list ({len(items)})"
            )
        member_size = size[1:]
    member_dims = None if batch_dims is None else max(batch_dims - 1, 0)
    target = cls._dense_class()
    members = [
        item
        if isinstance(item, TensorCore)
        else target.from_dict(
            item,
            auto_batch_size=auto,
            batch_size=member_size,
            device=device,
            batch_dims=member_dims,
        )
        for item in items
    ]
    lazy = cls._lazy_default if lazy is None else lazy
    result: Any
    if lazy is None:
        result = cls.maybe_dense_stack(members)
    elif lazy:
        result = cls.lazy_stack(members)
    else:
        result = cls.stack(members)
    if names is not None:
        result.names = names
    return result  # type: ignore[no-any-return]


def fromkeys(cls: type[E], keys: Sequence[Any], value: object = 0) -> E:
    """An instance (batch size ``[]``) with ``value`` under every key, as
    ``dict.fromkeys``: a number becomes a tensor per key, a tensor is shared by every
    key; a nested key creates nested levels.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict.fromkeys(["a", ("b", "c")], torch.zeros(3))
    >>> td["a"] is td["b", "c"]
    True
    """
    return _build(cls, {key: value for key in keys}, None, None, None, False, None)


def from_schema(
    cls: type[E],
    /,
    schema: Mapping[Any, tuple[Sequence[int], torch.dtype]],
    *,
    batch_size: BatchSizeLike = None,
    storage: Literal["memmap", "shared"] | None = None,
    device: DeviceLike = None,
    **kwargs: object,
) -> E:
    """Allocate zeros from a schema of ``key: (element_shape, dtype)``; each entry gets
    the shape ``[*batch_size, *element_shape]``.

    ``storage=None`` allocates tensors; ``"memmap"`` memory-mapped files under
    ``prefix=`` (never materialised in memory first; the other keywords go to
    :meth:`memmap_like`); ``"shared"`` shared memory.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict.from_schema({"obs": ([84, 84, 3], torch.uint8),
    ...                              "reward": ([], torch.float32)}, batch_size=[16])
    >>> td["obs"].shape, td["reward"].dtype
    (torch.Size([16, 84, 84, 3]), torch.float32)
    """
    if storage not in (None, "memmap", "shared"):
        raise ValueError(
            f"from_schema: storage must be None, 'memmap' or 'shared'; got {storage!r}"
        )
    if kwargs and storage != "memmap":
        raise TypeError(f"from_schema: unexpected keywords {sorted(kwargs)}")
    size = as_batch_size(batch_size)
    found: dict[object, Tensor] = {}
    for key, (shape, dtype) in schema.items():
        full = (*size, *shape)
        if storage == "memmap":  # an expanded template: memmap_like never fills it
            found[key] = torch.zeros((), dtype=dtype).expand(full)
        else:
            found[key] = torch.zeros(full, dtype=dtype, device=as_device(device))
    result: Any = _build(cls, found, size, device, None, False, None)
    if storage == "memmap":
        if "prefix" not in kwargs:
            raise TypeError("from_schema(storage='memmap') needs prefix=, a directory")
        return result.memmap_like(kwargs.pop("prefix"), **kwargs)  # type: ignore[no-any-return]
    if storage == "shared":
        result.share_memory_()
    return result  # type: ignore[no-any-return]


def from_tensordict(
    cls: type[E],
    tensordict: TensorCore,
    non_tensordict: Mapping[str, Any] | None = None,
    *,
    check: bool = True,
) -> E:
    """An instance of this class holding the leaves of ``tensordict`` (shared, not
    copied), with its batch size, device and names.

    Nested instances become the declared nested classes; ``non_tensordict`` gives more
    values (the non-tensor fields, say). With ``check``, a required field that neither
    holds is an error. A lazy stack gives a lazy stack of converted members.

    >>> import torch
    >>> from tensorclass import TensorClass, TensorDict
    >>> class State(TensorClass):
    ...     x: torch.Tensor
    >>> td = TensorDict({"x": torch.zeros(3)}, [3])
    >>> state = State.from_tensordict(td)
    >>> state.x is td["x"], state.batch_size
    (True, torch.Size([3]))
    """
    if not isinstance(tensordict, TensorCore):
        raise TypeError(f"from_tensordict expects a tensor class; got {type(tensordict).__name__}")
    target = cls._dense_class()
    stacked = stacked_leaves(tensordict)
    if stacked is not None:  # a lazy stack: convert the members, keep them stacked
        members = [target.from_tensordict(m, non_tensordict, check=check) for m in stacked.members]
        return stack_lazily(members, stacked.dim)
    data = tensordict._data
    out = target._new({}, tensordict._batch_size, tensordict._device, tensordict._names)
    stored = out._data
    for key, leaf in data.items():
        stored[key] = out._convert(key, leaf)
    for key, value in (non_tensordict or {}).items():
        stored[key] = out._convert(key, value)
    if check:
        schema = target.__tensorclass_schema__
        missing = [f.name for f in schema.fields if f.required and f.name not in stored]
        if missing:
            raise FieldTypeError(
                f"{target.__name__}.from_tensordict(): missing required field(s) "
                f"{', '.join(map(repr, missing))}; pass check=False to leave them unset",
                key=missing[0],
            )
    return out


# -- joining instances ---------------------------------------------------------------------


def lazy_stack(input: Sequence[T], dim: int = 0, *, out: T | None = None, **kwargs: Any) -> T:
    """Stack instances without copying them (see :func:`tensorclass.lazy_stack`); the
    keywords go to :meth:`LazyStackedTensorDict.lazy_stack`. Typed as the members'
    class; the mypy plugin adds ``LazyStackedTensorDict`` (see ``docs/typing.md``).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> a = TensorDict({"x": torch.zeros(3)}, [3])
    >>> b = TensorDict({"y": torch.ones(3)}, [3])
    >>> TensorDict.lazy_stack([a, b]).batch_size
    torch.Size([2, 3])
    """
    # a lazy stack, typed as the members' class (the mypy plugin adds the lazy class)
    return cast(T, lazy_class().lazy_stack(input, dim, out=out, **kwargs))


def maybe_dense_stack(
    input: Sequence[T], dim: int = 0, *, out: T | None = None, **kwargs: Any
) -> T:
    """Stack densely when the instances have the same keys and shapes, lazily otherwise
    (see :meth:`LazyStackedTensorDict.maybe_dense_stack`).

    >>> import torch
    >>> from tensorclass import LazyStackedTensorDict, TensorDict
    >>> a = TensorDict({"x": torch.zeros(3)}, [3])
    >>> b = TensorDict({"y": torch.ones(3)}, [3])
    >>> isinstance(TensorDict.maybe_dense_stack([a, a]), LazyStackedTensorDict)
    False
    >>> isinstance(TensorDict.maybe_dense_stack([a, b]), LazyStackedTensorDict)
    True
    """
    result: T = lazy_class().maybe_dense_stack(input, dim, out=out, **kwargs)
    return result
