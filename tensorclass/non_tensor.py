"""Non-tensor leaves: strings, numbers and objects stored along a batch.

Two leaf types speak the same shape protocol as tensors, so every batch operation treats
all leaves alike:

- :class:`NonTensorData` holds one value shared by every element of the batch. It has no
  dimensions of its own (it broadcasts), so shape operations return it unchanged.
- :class:`NonTensorStack` holds one value per batch element in a NumPy object array whose
  shape is the batch shape. It appears when different values are stacked or written.

Users rarely see either: reading a key returns the value itself (or a nested list for a
stack).
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
from typing_extensions import Self

__all__ = [
    "LIVE_WRAPPERS",
    "MetaData",
    "NonTensorData",
    "NonTensorDataBase",
    "NonTensorStack",
    "is_non_tensor",
    "same_value",
]

_EMPTY = torch.Size([])

LIVE_WRAPPERS: list[None] = []
"""One entry per :class:`NonTensorData` and :class:`NonTensorStack` object alive in the
process (appended when one is created, popped when it is freed: both atomic C calls).

Empty, no stored value anywhere is a wrapper a read must unwrap, so ``values()`` and
``items()`` skip looking at every value's type (the common all-tensor case).
"""


class _Counted:
    """Keeps :data:`LIVE_WRAPPERS` at the number of live instances: ``__new__`` counts
    every creation (``copy`` and ``pickle`` included, which skip ``__init__``)."""

    __slots__ = ("_counted",)
    _counted: bool

    def __new__(cls, *args: object, **kwargs: object) -> Self:
        LIVE_WRAPPERS.append(None)
        self = object.__new__(cls)
        # only what was counted is uncounted: torch.compile makes instances without this
        # ``__new__`` while tracing (then replays the append and this mark on the result)
        self._counted = True
        return self

    def __del__(self, _pop: Callable[[], None] = LIVE_WRAPPERS.pop) -> None:
        if getattr(self, "_counted", False):
            _pop()


def same_value(a: object, b: object) -> bool:
    """Whether two non-tensor values are equal (identity, then ``==`` that gives a bool)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):  # UnbatchedTensor payloads
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b))
    try:
        result = a == b
    except Exception:
        return False
    return result if isinstance(result, bool) else False


def object_array(shape: Sequence[int], value: object) -> np.ndarray:
    """An object array of ``shape`` whose every element is ``value`` (sequences included)."""
    array = np.empty(tuple(shape), dtype=object)
    array.fill(value)
    return array


class NonTensorDataBase(abc.ABC):  # noqa: B024  (a marker: classes are registered)
    """What every single non-tensor value is an instance of: :class:`NonTensorData` and
    :class:`MetaData` (not :class:`NonTensorStack`, which holds one value per element, as
    in tensordict).

    >>> from tensorclass import MetaData, NonTensorData, NonTensorDataBase, NonTensorStack
    >>> isinstance(NonTensorData("a"), NonTensorDataBase), isinstance(MetaData(1), NonTensorDataBase)
    (True, True)
    >>> isinstance(NonTensorStack.from_list(["a", "b"]), NonTensorDataBase)
    False
    """

    __slots__ = ()


def _payload_op(name: str) -> Callable[..., NonTensorData]:
    """A tensor method that reaches a tensor payload (an ``UnbatchedTensor``); Python
    values are unchanged by device moves and casts."""

    def op(self: NonTensorData, *args: object, **kwargs: object) -> NonTensorData:
        if not isinstance(self.data, torch.Tensor):
            return self
        moved = getattr(self.data, name)(*args, **kwargs)
        return NonTensorData(moved, batch_size=self.shape or None, meta=self.meta)

    op.__name__ = name
    op.__doc__ = f"``{name}`` of a tensor payload (another value is unchanged)."
    return op


def _batch_op(name: str) -> Callable[..., NonTensorData]:
    """A shape operation of :class:`NonTensorData`: unchanged without dims, else the batch
    size the operation gives a tensor of that shape."""

    def op(self: NonTensorData, *args: object, **kwargs: object) -> NonTensorData:
        if not self.shape:
            return self
        probe = getattr(torch.empty(self.shape, device="meta"), name)(*args, **kwargs)
        return self._with_shape(probe.shape)

    op.__name__ = name
    op.__doc__ = f"``{name}`` along the batch dims (a value without dims is unchanged)."
    return op


class NonTensorData(_Counted):
    """One non-tensor value shared by every element of the batch.

    Stored in an instance, it has no dims of its own (it broadcasts), so batch operations
    return it unchanged. Built on its own, it may carry a ``batch_size`` (and a ``device``
    and dim ``names``, informative: the value is not moved); indexing and reshaping it then
    give the batch size the same operation gives a tensor of that shape. ``tolist()`` gives
    the value once per element.

    Examples:
        >>> from tensorclass import NonTensorData, TensorDict
        >>> import torch
        >>> td = TensorDict({"x": torch.zeros(4)}, batch_size=[4])
        >>> td["name"] = "run-1"
        >>> td[1:3]["name"]
        'run-1'
        >>> alone = NonTensorData("run-1", batch_size=[2, 3])
        >>> alone[0].batch_size, alone.tolist()[0]
        (torch.Size([3]), ['run-1', 'run-1', 'run-1'])
    """

    __slots__ = ("data", "device", "meta", "names", "shape")
    data: Any
    device: torch.device | None
    meta: bool
    names: list[str | None] | None
    shape: torch.Size

    def __init__(
        self,
        data: object,
        *,
        batch_size: Sequence[int] | None = None,
        device: torch.device | str | int | None = None,
        names: Sequence[str | None] | None = None,
        meta: bool = False,
    ) -> None:
        if type(data) is NonTensorData:
            data = data.data
        self.data = data
        self.shape = _EMPTY if batch_size is None else torch.Size(batch_size)
        self.device = None if device is None else torch.device(device)
        self.names = None if names is None else list(names)
        self.meta = meta

    @property
    def batch_size(self) -> torch.Size:
        """The batch size (``torch.Size([])`` for a value stored in an instance)."""
        return self.shape

    def __setstate__(self, state: object) -> None:
        """Unpickling: the slots pickle saved, each checked (``torch.load`` may hand a crafted
        file's values here): a ``torch.Size`` of at most 64 dims each in ``[0, 2**40]``, a
        ``torch.device`` or ``None``, a bool, names one per dim."""
        slots = state[1] if type(state) is tuple and len(state) == 2 else state
        if type(slots) is dict:  # the live-wrapper mark is ``__new__``'s, never the file's
            slots = {name: value for name, value in slots.items() if name != "_counted"}
        if type(slots) is not dict or set(slots) != set(NonTensorData.__slots__):
            raise ValueError("cannot unpickle NonTensorData: its state is not its five slots")
        shape, device, names = slots["shape"], slots["device"], slots["names"]
        if (
            type(shape) is not torch.Size
            or len(shape) > 64
            or any(size > 2**40 for size in shape)
            or not (device is None or type(device) is torch.device)
            or type(slots["meta"]) is not bool
            or not (
                names is None
                or (
                    type(names) is list
                    and len(names) == len(shape)
                    and all(n is None or type(n) is str for n in names)
                )
            )
        ):
            raise ValueError(f"cannot unpickle NonTensorData: invalid state {str(slots)[:200]}")
        for name, value in slots.items():
            object.__setattr__(self, name, value)

    def value(self) -> Any:
        """The value a read returns."""
        return self.data

    def tolist(self) -> Any:
        """The value once per batch element, as nested lists (the value itself if no dims)."""
        return object_array(self.shape, self.data).tolist()

    def shared(self) -> NonTensorData:
        """This leaf as a value stored in an instance: no dims of its own (broadcasts)."""
        if not self.shape and self.device is None and self.names is None:
            return self
        return NonTensorData(self.data, meta=self.meta)

    def __repr__(self) -> str:
        # tensordict's form: the value's str, the batch size as a torch.Size, the device
        text = str(self.data)
        if len(text) > 200:
            text = f"{text[:20]}  ...  {text[-20:]}"
        name = "MetaData" if self.meta else "NonTensorData"
        return f"{name}(data={text}, batch_size={torch.Size(self.shape)}, device={self.device})"

    def _with_shape(self, shape: torch.Size) -> NonTensorData:
        return NonTensorData(self.data, batch_size=shape, device=self.device, meta=self.meta)

    def __getitem__(self, index: Any) -> NonTensorData:
        if not self.shape:
            return self  # a shared value broadcasts: every element is the value
        return self._with_shape(torch.empty(self.shape, device="meta")[index].shape)

    def clone(self) -> NonTensorData:
        """A new leaf holding the same value; :class:`MetaData` holds a deep copy of it, an
        ``UnbatchedTensor`` a clone."""
        data = self.data
        if self.meta:
            data = copy.deepcopy(data)
        elif isinstance(data, torch.Tensor):
            data = data.clone()
        return NonTensorData(
            data,
            batch_size=self.shape or None,
            device=self.device,
            names=self.names,
            meta=self.meta,
        )

    # The shape protocol: without dims of its own (stored in an instance) the value is
    # unchanged by batch operations; on its own, its batch size follows the operation.
    view = _batch_op("view")
    reshape = _batch_op("reshape")
    flatten = _batch_op("flatten")
    unflatten = _batch_op("unflatten")
    squeeze = _batch_op("squeeze")
    unsqueeze = _batch_op("unsqueeze")
    permute = _batch_op("permute")
    transpose = _batch_op("transpose")
    expand = _batch_op("expand")
    repeat = _batch_op("repeat")
    flip = _batch_op("flip")
    roll = _batch_op("roll")
    # Device moves and casts reach a tensor payload (an UnbatchedTensor) only.
    contiguous = _payload_op("contiguous")
    detach = _payload_op("detach")
    to = _payload_op("to")
    cpu = _payload_op("cpu")


NonTensorDataBase.register(NonTensorData)


class _MetaDataMeta(abc.ABCMeta):
    """``isinstance(x, MetaData)``: a :class:`NonTensorData` made by ``MetaData`` (of the
    expected type, for ``MetaData[T]``)."""

    def __instancecheck__(cls, instance: object) -> bool:
        if type(instance) is not NonTensorData or not instance.meta:
            return False
        expected: type | None = getattr(cls, "_expected", None)
        return expected is None or isinstance(instance.data, expected)


class MetaData(NonTensorDataBase, metaclass=_MetaDataMeta):
    """One Python object for the whole batch, kept as that very object.

    It behaves as a :class:`NonTensorData` (reads return the object, batch operations keep
    it), but stacking keeps one value only when the instances stacked hold *the same
    object* (``is``, not ``==``); otherwise the result is a :class:`NonTensorStack`.
    ``clone()`` copies the object (deep copy), so a clone and its source hold different
    objects. ``MetaData[T](value)`` checks that ``value`` is a ``T`` (a ``TypeError``
    otherwise). ``MetaData(...)`` builds a :class:`NonTensorData` marked as metadata;
    ``isinstance(leaf, MetaData)`` recognises it.

    >>> import torch
    >>> from tensorclass import MetaData, TensorDict
    >>> config = {"lr": 0.1}
    >>> td = TensorDict({"x": torch.zeros(3)}, batch_size=[3])
    >>> td["config"] = MetaData(config)
    >>> torch.stack([td, td])["config"] is config
    True
    >>> type(torch.stack([td, td.clone()])._data["config"]).__name__
    'NonTensorStack'
    """

    __slots__ = ()
    _expected: type | None = None

    def __new__(  # type: ignore[misc]  # builds a marked NonTensorData
        cls,
        data: object,
        *,
        batch_size: Sequence[int] | None = None,
        device: torch.device | str | int | None = None,
        names: Sequence[str | None] | None = None,
    ) -> NonTensorData:
        if type(data) is NonTensorData:
            data = data.data
        expected = cls._expected
        if expected is not None and not isinstance(data, expected):
            raise TypeError(
                f"MetaData[{expected.__name__}] expects a {expected.__name__}; got "
                f"{type(data).__name__} {data!r}"
            )
        return NonTensorData(data, batch_size=batch_size, device=device, names=names, meta=True)

    def __class_getitem__(cls, expected: type) -> type[MetaData]:
        name = f"MetaData[{getattr(expected, '__name__', expected)}]"
        return type(name, (cls,), {"__slots__": (), "_expected": expected})


class NonTensorStack(_Counted):
    """One non-tensor value per batch element, in an object array shaped like the batch.

    ``td[key]`` returns the values as nested lists, ``td.get(key)`` the stack (``tolist()``,
    ``data``, ``shape``). Indexing selects values the way it selects tensor elements: one
    element gives its value, several a stack (even of equal values).

    Examples:
        >>> from tensorclass import NonTensorStack, TensorDict
        >>> import torch
        >>> a = TensorDict({"x": torch.zeros(2)}, batch_size=[2]); a["name"] = "a"
        >>> b = TensorDict({"x": torch.zeros(2)}, batch_size=[2]); b["name"] = "b"
        >>> both = torch.stack([a, b])
        >>> both["name"], both[0]["name"], both[:, 0]["name"]
        ([['a', 'a'], ['b', 'b']], ['a', 'a'], ['a', 'b'])
        >>> tags = NonTensorStack.from_list(["x", "y", "z"])
        >>> tags.batch_size, tags[1:].tolist()
        (torch.Size([3]), ['y', 'z'])
    """

    __slots__ = ("array",)

    def __init__(self, *values: object, stack_dim: int = 0) -> None:
        """``NonTensorStack(array)`` from an object array shaped like the batch, or
        ``NonTensorStack(v0, v1, ...)``: the values (or leaves) stacked along a new dim,
        dim ``stack_dim`` of the result (0: first, -1: last, as ``torch.stack``)."""
        if len(values) == 1 and type(values[0]) is np.ndarray:
            self.array = values[0]
            return
        parts = [_leaf_array(value) for value in values]
        if any(part.shape != parts[0].shape for part in parts):
            raise ValueError(
                f"NonTensorStack: the values to stack have different batch shapes: "
                f"{[list(part.shape) for part in parts]}"
            )
        if not parts:
            self.array = np.empty((0,), dtype=object)
            return
        ndim = parts[0].ndim
        if not -ndim - 1 <= stack_dim <= ndim:
            raise IndexError(
                f"NonTensorStack: stack_dim={stack_dim} is out of range for values with "
                f"{ndim} dims (expected a dim in [{-ndim - 1}, {ndim}])"
            )
        self.array = np.stack(parts, axis=stack_dim)

    @classmethod
    def from_list(cls, values: Sequence[object]) -> NonTensorStack:
        """A stack from (nested) lists: each list level is a batch dim, so the nesting
        must be rectangular; anything that is not a list is a value."""
        return cls(_nested_array(values, _list_shape(values)))

    @classmethod
    def from_values(cls, values: list[Any]) -> NonTensorStack:
        """A stack from (nested) lists, as a list written to a key becomes: each level of
        lists of one length is a dim; below the first level whose lists differ in length
        (or are not all lists), the items are the values.

        >>> from tensorclass import NonTensorStack
        >>> NonTensorStack.from_values([["a", "b"], ["c", "d"]]).batch_size
        torch.Size([2, 2])
        >>> NonTensorStack.from_values([["a", "b"], ["c"]]).tolist()
        [['a', 'b'], ['c']]
        """
        return cls(_nested_array(values, _rectangular_shape(values)))

    @classmethod
    def full(cls, shape: Sequence[int], value: object) -> NonTensorStack:
        """A stack of ``shape`` holding ``value`` everywhere."""
        return cls(object_array(shape, value))

    @property
    def shape(self) -> torch.Size:
        """The batch shape the values are laid out in."""
        return torch.Size(self.array.shape)

    batch_size = shape

    @property
    def data(self) -> Any:
        """The one value, when every element holds an equal value (an ``AttributeError``
        otherwise: use :meth:`tolist`)."""
        flat = self.array.reshape(-1)
        if flat.size and all(same_value(item, flat[0]) for item in flat[1:]):
            return flat[0]
        raise AttributeError(
            f"this NonTensorStack (shape {list(self.array.shape)}) holds different values; "
            f"use .tolist() to get them"
        )

    def value(self) -> list[Any]:
        """The values as a nested list (what a read returns)."""
        result: list[object] = self.array.tolist()
        return result

    tolist = value

    def __len__(self) -> int:
        return int(self.array.shape[0]) if self.array.ndim else 0

    def __iter__(self) -> Iterator[NonTensorData | NonTensorStack]:
        return (self._wrap(part) for part in self.array)

    def __repr__(self) -> str:
        # tensordict's form: the values (cut after 50 characters), batch size, device
        values = str(self.array.tolist())
        if len(values) > 50:
            values = f"{values[:50]}..."
        return (
            f"NonTensorStack(\n    {values},\n    batch_size={torch.Size(self.array.shape)},"
            "\n    device=None)"
        )

    @staticmethod
    def _wrap(result: object) -> NonTensorData | NonTensorStack:
        if isinstance(result, np.ndarray):
            if not result.ndim:
                return NonTensorData(result.item())
            return NonTensorStack(result)
        return NonTensorData(result)

    def __getitem__(self, index: object) -> NonTensorData | NonTensorStack:
        return self._wrap(self.array[_numpy_index(index)])

    def __setitem__(self, index: object, value: object) -> None:
        if isinstance(value, NonTensorStack):
            self.array[_numpy_index(index)] = value.array
            return
        if isinstance(value, NonTensorData):
            value = value.data
        target = self.array[_numpy_index(index)]
        if isinstance(target, np.ndarray):
            target.fill(value)  # a view: fills the selected elements
        else:
            self.array[_numpy_index(index)] = value

    def set_all(self, value: object) -> None:
        """Write ``value`` to every element."""
        self.array.fill(value)

    def reshape(self, *shape: Any) -> NonTensorStack:
        """The values laid out in a new shape with as many elements (``view`` too)."""
        return NonTensorStack(self.array.reshape(_sizes(shape)))

    view = reshape

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> NonTensorStack:
        """Merge the dims ``start_dim`` to ``end_dim`` into one."""
        dims = self.array.shape
        end = end_dim % len(dims) if dims else 0
        new = (*dims[:start_dim], -1, *dims[end + 1 :])
        return NonTensorStack(self.array.reshape(new))

    def unflatten(self, dim: int, sizes: Sequence[int]) -> NonTensorStack:
        """Split the dim ``dim`` into dims of the given ``sizes``."""
        dims = self.array.shape
        dim = dim % len(dims)
        return NonTensorStack(self.array.reshape((*dims[:dim], *sizes, *dims[dim + 1 :])))

    def squeeze(self, dim: int | None = None) -> NonTensorStack:
        """Remove the dim ``dim`` if its size is 1 (every size-1 dim without ``dim``)."""
        if dim is None:
            return NonTensorStack(self.array.squeeze())
        if self.array.shape[dim] != 1:
            return self
        return NonTensorStack(self.array.squeeze(dim))

    def unsqueeze(self, dim: int) -> NonTensorStack:
        """Insert a dim of size 1 at ``dim``."""
        return NonTensorStack(np.expand_dims(self.array, dim))

    def permute(self, *dims: Any) -> NonTensorStack:
        """Reorder the dims."""
        return NonTensorStack(self.array.transpose(_sizes(dims)))

    def transpose(self, dim0: int, dim1: int) -> NonTensorStack:
        """Swap the dims ``dim0`` and ``dim1``."""
        return NonTensorStack(self.array.swapaxes(dim0, dim1))

    def expand(self, *shape: Any) -> NonTensorStack:
        """Broadcast to ``shape`` (``-1`` keeps a dim), as a new array."""
        sizes = _sizes(shape)
        offset = len(sizes) - self.array.ndim
        target = tuple(self.array.shape[i - offset] if s == -1 else s for i, s in enumerate(sizes))
        return NonTensorStack(np.broadcast_to(self.array, target).copy())

    def repeat(self, *repeats: Any) -> NonTensorStack:
        """Tile the values ``repeats`` times along each dim."""
        return NonTensorStack(np.tile(self.array, _sizes(repeats)))

    def repeat_interleave(
        self, repeats: int | Sequence[int] | torch.Tensor, dim: int | None = None
    ) -> NonTensorStack:
        """Repeat each value ``repeats`` times (one count, or one per value) along ``dim``
        (the flattened values without ``dim``), as ``torch.repeat_interleave``."""
        counts = repeats.tolist() if isinstance(repeats, torch.Tensor) else repeats
        return NonTensorStack(np.repeat(self.array, counts, axis=dim))

    def flip(self, dims: Sequence[int]) -> NonTensorStack:
        """Reverse the order of the values along ``dims``."""
        return NonTensorStack(np.flip(self.array, tuple(dims)).copy())

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int]) -> NonTensorStack:
        """Shift the values cyclically by ``shifts`` along ``dims``."""
        return NonTensorStack(np.roll(self.array, shifts, dims))

    def unbind(self, dim: int = 0) -> tuple[NonTensorData | NonTensorStack, ...]:
        """The slices along ``dim``, one leaf each."""
        moved = np.moveaxis(self.array, dim, 0)
        return tuple(self._wrap(part) for part in moved)

    def split_at(self, sections: Sequence[int], dim: int) -> tuple[NonTensorStack, ...]:
        """Split along ``dim`` into consecutive parts of the given sizes."""
        bounds = np.cumsum(sections)[:-1]
        return tuple(NonTensorStack(p) for p in np.split(self.array, bounds, axis=dim))

    def clone(self) -> NonTensorStack:
        """A new stack with its own array (the values themselves are not copied)."""
        return NonTensorStack(self.array.copy())

    def _same(self, *args: object, **kwargs: object) -> NonTensorStack:
        """This leaf, unchanged: device moves and casts do not apply to Python values."""
        return self

    contiguous = detach = to = cpu = _same


def is_non_tensor(data: object) -> bool:
    """Whether ``data`` is a non-tensor leaf (:class:`NonTensorData`, shared by the batch,
    or :class:`NonTensorStack`, one value per element).

    Reading a key gives the value itself; this tests a stored leaf, such as the leaves
    ``apply(..., is_leaf=...)`` or ``entry_class`` describe.

    >>> from tensorclass import NonTensorData, is_non_tensor
    >>> is_non_tensor(NonTensorData("run-1")), is_non_tensor("run-1")
    (True, False)
    """
    cls = type(data)
    return cls is NonTensorData or cls is NonTensorStack


def stack_non_tensors(
    leaves: Sequence[NonTensorData | NonTensorStack],
    dim: int,
    member_shape: Sequence[int],
    *,
    capture: bool,
) -> NonTensorData | NonTensorStack:
    """Stack non-tensor leaves into a :class:`NonTensorStack` (one value per element);
    with ``capture`` (``set_capture_non_tensor_stack(True)``), equal shared values stay
    one shared value. ``MetaData`` of one object, and an unbatched tensor (a tensor held
    as a value), always stay one value."""
    first = leaves[0]
    if (
        capture
        or (type(first) is NonTensorData and (first.meta or isinstance(first.data, torch.Tensor)))
    ) and _one_shared_value(leaves):
        return first
    arrays = [_as_array(leaf, member_shape) for leaf in leaves]
    return NonTensorStack(np.stack(arrays, axis=dim))


def cat_non_tensors(
    leaves: Sequence[NonTensorData | NonTensorStack],
    dim: int,
    member_shapes: Sequence[Sequence[int]],
) -> NonTensorData | NonTensorStack:
    """Concatenate non-tensor leaves along ``dim``."""
    first = leaves[0]
    if _one_shared_value(leaves):
        return first
    arrays = [_as_array(leaf, shape) for leaf, shape in zip(leaves, member_shapes)]
    return NonTensorStack(np.concatenate(arrays, axis=dim))


def _one_shared_value(leaves: Sequence[NonTensorData | NonTensorStack]) -> bool:
    """Whether the leaves are one shared value: equal values (``MetaData``: one object)."""
    first = leaves[0]
    if type(first) is not NonTensorData:
        return False
    if first.meta:
        return all(
            type(leaf) is NonTensorData and leaf.meta and leaf.data is first.data for leaf in leaves
        )
    return all(
        type(leaf) is NonTensorData and not leaf.meta and same_value(leaf.data, first.data)
        for leaf in leaves
    )


def _leaf_array(value: object) -> np.ndarray:
    """One value (or leaf) as an object array of its batch shape."""
    if type(value) is NonTensorStack:
        return value.array
    if type(value) is NonTensorData:
        return object_array(value.shape, value.data)
    return object_array((), value)


def _nested_array(values: Sequence[object], shape: tuple[int, ...]) -> np.ndarray:
    """The object array of ``shape`` whose items are read from nested lists ``values``
    (a ``NonTensorData`` item gives its value)."""
    array = np.empty(shape, dtype=object)
    for position in np.ndindex(*shape):
        item: Any = values
        for i in position:
            item = item[i]
        array[position] = item.data if type(item) is NonTensorData else item
    return array


def _list_shape(values: object) -> tuple[int, ...]:
    if not isinstance(values, list):
        return ()
    inner = [_list_shape(item) for item in values]
    if any(shape != inner[0] for shape in inner):
        raise ValueError(
            "NonTensorStack.from_list: the nested lists are not rectangular (the lists at "
            f"one depth have different lengths: {sorted(set(inner))})"
        )
    return (len(values), *(inner[0] if inner else ()))


def _rectangular_shape(values: Any) -> tuple[int, ...]:
    """The dims of nested lists down to the first level that is not lists of one length."""
    shape: list[int] = []
    level: list[Any] = [values]
    while all(type(item) is list for item in level):
        lengths = {len(item) for item in level}
        if len(lengths) != 1:
            break
        shape.append(lengths.pop())
        level = [part for item in level for part in item]
        if not level:
            break
    return tuple(shape)


def _as_array(leaf: NonTensorData | NonTensorStack, shape: Sequence[int]) -> np.ndarray:
    if type(leaf) is NonTensorStack:
        return leaf.array
    return object_array(shape, leaf.data)


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...]:
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return tuple(args)


def _numpy_index(index: object) -> Any:
    if isinstance(index, tuple):
        return tuple(_numpy_index_part(part) for part in index)
    return _numpy_index_part(index)


def _numpy_index_part(part: object) -> Any:
    if isinstance(part, torch.Tensor):
        return part.cpu().numpy()
    return part
