"""To plain Python: ``to_dict``, ``tolist``, ``numpy``.

Tensors are shared unless ``convert_tensors`` asks for lists (``True``) or NumPy arrays
(``"numpy"``); non-tensor values come back as themselves; nested instances become dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from torch import Tensor

from ...registry import attrs_class, dynamic_class
from ..core.self_types import E, is_op
from ..keys.access import read_value

__all__ = ["as_tensor", "attrs", "numpy", "to_dict", "tolist"]

ConvertTensors = bool | Literal["numpy"]


def _convert_tensor(tensor: Tensor, how: ConvertTensors) -> object:
    if how == "numpy":
        return tensor.detach().cpu().numpy()
    if how:
        return tensor.tolist()
    return tensor


def attrs(
    self: E,
    *,
    fields: Sequence[str] = ("device", "dtype", "shape"),
    num_threads: int | None = None,
) -> Any:
    """A ``TensorDict`` (batch size ``[]``, no device) with a :class:`TensorAttrs` per
    tensor leaf: its device, dtype and shape (only those in ``fields``; the others are
    ``None``). Pass it to :meth:`to` to move and cast another instance leaf by leaf.
    ``num_threads`` is accepted for tensordict's signature (one thread builds it).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(2, dtype=torch.int8)}, [2])
    >>> td.attrs(fields=("dtype",))["a"].tgt_dtype
    torch.int8
    """
    del num_threads  # building is cheap: one pass, no threads
    unknown = set(fields) - {"device", "dtype", "shape"}
    if unknown:
        raise ValueError(
            f"attrs: fields must be among 'device', 'dtype', 'shape'; got {sorted(unknown)}"
        )
    attrs_cls = attrs_class()
    flat = {
        key: attrs_cls(
            tgt_device=leaf.device if "device" in fields else None,
            tgt_dtype=leaf.dtype if "dtype" in fields else None,
            tgt_shape=leaf.shape if "shape" in fields else None,
        )
        for key, leaf in self.items(include_nested=True, leaves_only=True)
        if isinstance(leaf, Tensor)
    }
    return dynamic_class().from_dict(flat, batch_size=[])


def as_tensor(self: E) -> E:
    """The same instance with plain tensor leaves: memory-mapped leaves become
    ``torch.Tensor`` views of the same storage (no copy), and a leaf with an
    ``as_tensor()`` method is converted with it. A locked instance gives a locked
    result.

    >>> import torch
    >>> from tensorclass import MemoryMappedTensor, TensorDict
    >>> td = TensorDict({"a": MemoryMappedTensor.from_tensor(torch.ones(2))}, [2])
    >>> plain = td.as_tensor()
    >>> type(plain["a"]).__name__, plain["a"].data_ptr() == td["a"].data_ptr()
    ('Tensor', True)
    """
    result = _map_leaves_as_tensor(self)
    return result.lock_() if self._locked else result


def _map_leaves_as_tensor(self: E) -> E:
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        if is_op(leaf):
            data[key] = _map_leaves_as_tensor(leaf)
        else:
            convert = None if type(leaf) is Tensor else getattr(leaf, "as_tensor", None)
            data[key] = convert() if callable(convert) else leaf
    return type(self)._new(data, self._batch_size, self._device, self._names)


def to_dict(
    self: E,
    *,
    retain_none: bool = True,
    convert_tensors: ConvertTensors = False,
    tolist_first: bool = False,
) -> dict[str, Any]:
    """A nested plain ``dict`` of the values (tensors are shared, not copied).

    ``retain_none`` lists the unset fields of a typed class as ``None``;
    ``convert_tensors=True`` turns tensors into lists (``"numpy"``: NumPy arrays);
    ``tolist_first=True`` turns a nested instance with batch dims of its own into a
    list (see :meth:`tolist`) instead of a dict.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.arange(2), "n": {"b": torch.ones(2)}}, [2]).to_dict(
    ...     convert_tensors=True
    ... )
    {'a': [0, 1], 'n': {'b': [1.0, 1.0]}}
    """
    out: dict[str, object] = {}
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):  # the common leaf first, kept as it is by default
            out[key] = _convert_tensor(leaf, convert_tensors) if convert_tensors else leaf
        elif is_op(leaf):
            if tolist_first and leaf._batch_size:
                out[key] = leaf.tolist(convert_tensors=convert_tensors, tolist_first=True)
            else:
                out[key] = leaf.to_dict(
                    retain_none=retain_none,
                    convert_tensors=convert_tensors,
                    tolist_first=tolist_first,
                )
        else:
            out[key] = read_value(leaf)
    if retain_none:
        schema = type(self).__tensorclass_schema__
        for name in schema.names:
            if name not in out:
                out[name] = None
    return out


def tolist(
    self: E,
    *,
    convert_nodes: bool = True,
    convert_tensors: ConvertTensors = False,
    tolist_first: bool = False,
) -> Any:
    """Nested lists, one level per batch dim, of the elements as dicts (:meth:`to_dict`).

    Without batch dims, the dict itself. ``convert_nodes=False`` keeps the elements as
    instances; ``convert_tensors`` and ``tolist_first`` are those of :meth:`to_dict`.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict({"a": torch.arange(4).view(2, 2)}, [2]).tolist(convert_tensors=True)
    [{'a': [0, 1]}, {'a': [2, 3]}]
    """
    if convert_tensors and not convert_nodes:
        raise TypeError("tolist: convert_tensors needs convert_nodes=True")
    if not self._batch_size:
        if not convert_nodes:
            return self
        return self.to_dict(convert_tensors=convert_tensors, tolist_first=tolist_first)
    return [
        element.tolist(
            convert_nodes=convert_nodes,
            convert_tensors=convert_tensors,
            tolist_first=tolist_first,
        )
        for element in self.unbind(0)
    ]


def numpy(self: E) -> dict[str, Any]:
    """A nested dict of NumPy arrays (non-tensor values as themselves)."""
    return self.to_dict(retain_none=False, convert_tensors="numpy")
