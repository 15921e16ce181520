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

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["NonTensorData", "NonTensorStack", "is_non_tensor", "same_value"]

_EMPTY = torch.Size([])


def same_value(a: object, b: object) -> bool:
    """Whether two non-tensor values are equal (identity, then ``==`` that gives a bool)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
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


class NonTensorData:
    """One non-tensor value shared by every element of the batch.

    Examples:
        >>> from tensorclass import TensorDict
        >>> import torch
        >>> td = TensorDict({"x": torch.zeros(4)}, batch_size=[4])
        >>> td["name"] = "run-1"
        >>> td[1:3]["name"]
        'run-1'
    """

    __slots__ = ("data",)
    shape = _EMPTY

    def __init__(self, data: Any) -> None:
        self.data = data

    def value(self) -> Any:
        """The value a read returns."""
        return self.data

    def __repr__(self) -> str:
        return f"NonTensorData({self.data!r})"

    # The shape protocol: a broadcast value is unchanged by batch operations.
    def _same(self, *args: Any, **kwargs: Any) -> NonTensorData:
        """This leaf, unchanged: a shared value has no dims for a batch operation to act on."""
        return self

    __getitem__ = view = reshape = flatten = unflatten = _same
    squeeze = unsqueeze = permute = transpose = expand = repeat = flip = roll = _same
    contiguous = detach = to = cpu = _same

    def clone(self) -> NonTensorData:
        """A new leaf holding the same value (the value itself is not copied)."""
        return NonTensorData(self.data)


class NonTensorStack:
    """One non-tensor value per batch element, in an object array shaped like the batch.

    Examples:
        >>> from tensorclass import TensorDict
        >>> import torch
        >>> a = TensorDict({"x": torch.zeros(2)}, batch_size=[2]); a["name"] = "a"
        >>> b = TensorDict({"x": torch.zeros(2)}, batch_size=[2]); b["name"] = "b"
        >>> torch.stack([a, b])["name"]
        [['a', 'a'], ['b', 'b']]
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @classmethod
    def full(cls, shape: Sequence[int], value: object) -> NonTensorStack:
        """A stack of ``shape`` holding ``value`` everywhere."""
        return cls(object_array(shape, value))

    @property
    def shape(self) -> torch.Size:
        """The batch shape the values are laid out in."""
        return torch.Size(self.array.shape)

    def value(self) -> list[Any]:
        """The values as a nested list (what a read returns)."""
        result: list[Any] = self.array.tolist()
        return result

    def __repr__(self) -> str:
        return f"NonTensorStack(shape={list(self.array.shape)})"

    @staticmethod
    def _wrap(result: Any) -> NonTensorData | NonTensorStack:
        if isinstance(result, np.ndarray):
            return NonTensorStack(result) if result.ndim else NonTensorData(result.item())
        return NonTensorData(result)

    def __getitem__(self, index: Any) -> NonTensorData | NonTensorStack:
        return self._wrap(self.array[_numpy_index(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
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

    def set_all(self, value: Any) -> None:
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

    def _same(self, *args: Any, **kwargs: Any) -> NonTensorStack:
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
    leaves: Sequence[NonTensorData | NonTensorStack], dim: int, member_shape: Sequence[int]
) -> NonTensorData | NonTensorStack:
    """Stack non-tensor leaves: equal shared values stay shared, others become a stack."""
    first = leaves[0]
    if type(first) is NonTensorData and all(
        type(leaf) is NonTensorData and same_value(leaf.data, first.data) for leaf in leaves
    ):
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
    if type(first) is NonTensorData and all(
        type(leaf) is NonTensorData and same_value(leaf.data, first.data) for leaf in leaves
    ):
        return first
    arrays = [_as_array(leaf, shape) for leaf, shape in zip(leaves, member_shapes)]
    return NonTensorStack(np.concatenate(arrays, axis=dim))


def _as_array(leaf: NonTensorData | NonTensorStack, shape: Sequence[int]) -> np.ndarray:
    if type(leaf) is NonTensorStack:
        return leaf.array
    return object_array(shape, leaf.data)  # type: ignore[union-attr]


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...]:
    if len(args) == 1 and not isinstance(args[0], int):
        return tuple(args[0])
    return tuple(args)


def _numpy_index(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(_numpy_index_part(part) for part in index)
    return _numpy_index_part(index)


def _numpy_index_part(part: Any) -> Any:
    if isinstance(part, torch.Tensor):
        return part.cpu().numpy()
    return part
