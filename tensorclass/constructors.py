"""The constructors as functions (``tensorclass.from_dict``...), building ``TensorDict`` s.

Each forwards to the classmethod of ``TensorDict`` of the same name (every class has those:
``Batch.from_dict`` builds a ``Batch``); ``from_dataclass`` makes tensor classes of
dataclasses, ``maybe_dense_stack`` and ``dense_stack_tds`` stack densely when they can.
``maybe_dense_stack`` *is* the static method of every class (``TensorDict.maybe_dense_stack``,
:mod:`.engine.build.instances`); the others differ from the class methods in their signature
(parameter names, a ``TensorDict`` result where the class method gives its class), so they
stay functions of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import numpy as np
from torch import nn

from .engine.build.instances import maybe_dense_stack
from .engine.core.state import BatchSizeLike, DeviceLike, TensorCore
from .tensordict import TensorDict
from .typed import TensorClass

if TYPE_CHECKING:
    from .nn.params import TensorDictParams

__all__ = [
    "from_any",
    "from_dataclass",
    "from_dict",
    "from_module",
    "from_namedtuple",
    "from_pytree",
    "from_struct_array",
    "from_tuple",
    "fromkeys",
    "maybe_dense_stack",
]

T = TypeVar("T", bound=TensorCore)


def from_dict(
    d: Mapping[Any, Any],
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
    names: Sequence[str | None] | None = None,
) -> TensorDict:
    """A ``TensorDict`` from a nested mapping (see :meth:`TensorDict.from_dict`).

    >>> import torch
    >>> from tensorclass import from_dict
    >>> from_dict({"a": torch.zeros(3, 4), "b": {"c": torch.zeros(3)}}, batch_dims=1).batch_size
    torch.Size([3])
    """
    return TensorDict.from_dict(
        d,
        auto_batch_size=auto_batch_size,
        batch_size=batch_size,
        device=device,
        batch_dims=batch_dims,
        names=names,
    )


def from_any(
    obj: object,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> Any:
    """Convert a dict, tuple, named tuple, dataclass or structured array to a
    ``TensorDict``, recursively (see :meth:`TensorDict.from_any`).

    >>> import torch
    >>> from tensorclass import from_any
    >>> sorted(from_any({"obs": torch.zeros(3), "pair": (torch.zeros(3), 1)}).keys())
    ['obs', 'pair']
    """
    return TensorDict.from_any(
        obj,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
    )


def from_namedtuple(
    named_tuple: tuple[Any, ...],
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> TensorDict:
    """A ``TensorDict`` with one entry per field of a named tuple (see
    :meth:`TensorDict.from_namedtuple`).

    >>> import torch
    >>> from tensorclass import from_namedtuple
    >>> sorted(from_namedtuple(torch.tensor([2, 0, 1]).max(0)).keys())
    ['indices', 'values']
    """
    return TensorDict.from_namedtuple(
        named_tuple,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
    )


def from_tuple(
    obj: tuple[Any, ...],
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> TensorDict:
    """A ``TensorDict`` with the keys ``"0"``, ``"1"``, ... (see
    :meth:`TensorDict.from_tuple`).

    >>> import torch
    >>> from tensorclass import from_tuple
    >>> from_tuple((torch.zeros(3), torch.ones(3)), auto_batch_size=True).batch_size
    torch.Size([3])
    """
    return TensorDict.from_tuple(
        obj,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
    )


def from_dataclass(
    obj: object,
    *,
    dest_cls: type | None = None,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    batch_size: BatchSizeLike = None,
    frozen: bool = False,
    device: DeviceLike = None,
    autocast: bool = False,
    nocast: bool = False,
    inplace: bool = False,
    shadow: bool = False,
    tensor_only: bool = False,
) -> Any:
    """A dataclass type as a tensor class, or a dataclass instance as a tensor-class
    instance.

    Given a type, the result is a tensor class ``<Name>_tc`` with the same fields (made once
    per dataclass and set of class options; nested dataclass fields become nested tensor
    classes with the same options). ``frozen``, ``autocast``, ``nocast``, ``shadow`` and
    ``tensor_only`` are the class options of ``TensorClass[...]`` (``autocast``, ``nocast``
    and ``tensor_only`` exclude each other: a ``TypeError``). ``inplace=True`` (turning the
    dataclass itself into a tensor class) is refused for a dataclass type with a
    ``TypeError`` and ignored for an instance. Given an instance, the result is an instance
    of ``dest_cls`` (or of the class made for its type) built from its fields.
    :meth:`TensorDict.from_dataclass` builds a ``TensorDict`` instead.

    >>> import dataclasses, torch
    >>> from tensorclass import from_dataclass
    >>> @dataclasses.dataclass
    ... class Data:
    ...     obs: torch.Tensor
    ...     label: str = "a"
    >>> DataTC = from_dataclass(Data)
    >>> batch = from_dataclass(Data(torch.zeros(4, 3)), batch_size=[4])
    >>> type(batch) is DataTC, batch.label
    (True, 'a')
    """
    return TensorClass._from_dataclass(
        obj,
        dest_cls=dest_cls,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        batch_size=batch_size,
        device=device,
        frozen=frozen,
        autocast=autocast,
        nocast=nocast,
        inplace=inplace,
        shadow=shadow,
        tensor_only=tensor_only,
    )


def fromkeys(keys: Sequence[Any], value: object = 0) -> TensorDict:
    """A ``TensorDict`` with ``value`` under every key (see :meth:`TensorDict.fromkeys`).

    >>> from tensorclass import fromkeys
    >>> fromkeys(["a", ("b", "c")], 1)["b", "c"]
    tensor(1)
    """
    return TensorDict.fromkeys(keys, value)


@overload
def from_module(
    module: nn.Module,
    as_module: Literal[False] = ...,
    lock: bool = ...,
    use_state_dict: bool = ...,
    filter_empty: bool = ...,
) -> TensorDict: ...


@overload
def from_module(
    module: nn.Module,
    as_module: Literal[True],
    lock: bool = ...,
    use_state_dict: bool = ...,
    filter_empty: bool = ...,
) -> TensorDictParams: ...


@overload
def from_module(
    module: nn.Module,
    as_module: bool,
    lock: bool = ...,
    use_state_dict: bool = ...,
    filter_empty: bool = ...,
) -> TensorDict | TensorDictParams: ...


def from_module(
    module: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    filter_empty: bool = True,
) -> TensorDict | TensorDictParams:
    """The parameters and buffers of ``module`` as a ``TensorDict`` (a
    :class:`~tensorclass.nn.TensorDictParams` with ``as_module=True``; see
    :meth:`TensorDict.from_module`).

    >>> import torch
    >>> from tensorclass import from_module
    >>> sorted(from_module(torch.nn.Linear(2, 3)).keys())
    ['bias', 'weight']
    """
    return TensorDict.from_module(module, as_module, lock, use_state_dict, filter_empty)


def from_pytree(
    pytree: object,
    *,
    batch_size: BatchSizeLike = None,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
) -> TensorDict:
    """A ``TensorDict`` that ``to_pytree()`` converts back to ``pytree`` (see
    :meth:`TensorDict.from_pytree`).

    >>> import torch
    >>> from tensorclass import from_pytree
    >>> from_pytree([torch.zeros(2), {"a": torch.ones(2)}]).to_pytree()
    [tensor([0., 0.]), {'a': tensor([1., 1.])}]
    """
    return TensorDict.from_pytree(
        pytree, batch_size=batch_size, auto_batch_size=auto_batch_size, batch_dims=batch_dims
    )


def from_struct_array(
    struct_array: np.ndarray,
    *,
    auto_batch_size: bool | None = None,
    batch_dims: int | None = None,
    device: DeviceLike = None,
    batch_size: BatchSizeLike = None,
) -> TensorDict:
    """A ``TensorDict`` with one entry per field of a NumPy structured array, sharing its
    memory (see :meth:`TensorDict.from_struct_array`).

    >>> import numpy as np
    >>> from tensorclass import from_struct_array
    >>> from_struct_array(np.zeros(4, dtype=[("a", "f4"), ("b", "i8")])).batch_size
    torch.Size([4])
    """
    return TensorDict.from_struct_array(
        struct_array,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        device=device,
        batch_size=batch_size,
    )
