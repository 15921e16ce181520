"""``TensorDict``: the tensor class with a dynamic schema (any string key).

It *is* a :class:`~tensorclass.TensorClass` (``issubclass(TensorDict, TensorClass)``): the same
engine, state and operations, with the dynamic schema as its policy instead of declared
fields. It adds the mapping constructor (``from_dict`` and the other constructors are the
engine's, shared by every class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import torch
from typing_extensions import Self

from .collection import is_tensor_collection
from .engine.base import TensorDictBase
from .engine.core.state import (
    FAST_WRITE,
    NO_DEFAULT,
    BatchSizeLike,
    DeviceLike,
    TensorCore,
    as_batch_size,
    as_device,
    check_names,
    fast_write,
)
from .engine.keys.merging import merge_tensordicts
from .engine.lazy.stack import LazyStackedTensorDict, lazy_stack_class
from .engine.lazy.stack import dense_stack_members as _dense_stack_members
from .engine.leafwise.comparing import assert_allclose_td
from .engine.shape.expand_right import expand_as_right, expand_right
from .engine.storage.memmap import MemoryMappedTensor
from .engine.storage.memmap.load import ClassPolicy
from .engine.storage.memmap.tensor import PathLike
from .engine.torch_api.padding import pad, pad_sequence
from .errors import TensorClassError
from .keys import NestedKey, unravel_key_tuple
from .registry import register_dynamic_class
from .typed import TensorClass, is_tensorclass

# tensordict.tensordict's names, importable from here too
__all__ = [
    "NO_DEFAULT",
    "LazyStackedTensorDict",
    "MemoryMappedTensor",
    "NestedKey",
    "TensorDict",
    "TensorDictBase",
    "assert_allclose_td",
    "dense_stack_tds",
    "expand_as_right",
    "expand_right",
    "is_tensor_collection",
    "is_tensorclass",
    "make_tensordict",
    "merge_tensordicts",
    "pad",
    "pad_sequence",
]

T = TypeVar("T", bound=TensorCore)

_object_new = object.__new__


class TensorDict(TensorClass, dynamic=True):
    """A dict of tensors that share leading batch dims and behave like one tensor.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"obs": torch.zeros(4, 3), "info": {"step": torch.arange(4)}},
    ...                 batch_size=[4])
    >>> td[1:3]
    TensorDict(batch_size=[2], fields={info: {step: i64[]}, obs: f32[3]})
    >>> td["info", "step"]
    tensor([0, 1, 2, 3])

    Args:
        source: a mapping (nested mappings become nested TensorDicts; tuple keys create
            nesting) or another tensor class whose leaves are shared.
        batch_size: the leading dims every value must share (default: none).
        device: if given, every value written is moved there.
        names: optional names of the batch dims.
        lock: lock the result (see :meth:`lock_`).
        **kwargs: more entries, by keyword.
    """

    __slots__ = ()

    def __init__(
        self,
        source: Mapping[Any, Any] | TensorCore | None = None,
        batch_size: BatchSizeLike = None,
        device: DeviceLike = None,
        names: Sequence[str | None] | None = None,
        *,
        lock: bool = False,
        **kwargs: Any,
    ) -> None:
        if source.__class__ is not dict and isinstance(source, TensorCore):
            if batch_size is None:
                batch_size = source._batch_size
            source = source._data
        self._batch_size = size = (
            batch_size if batch_size.__class__ is torch.Size else as_batch_size(batch_size)
        )
        self._device = None if device is None else as_device(device)
        self._names = None
        self._locked = False
        data: dict[str, Any] = {}
        self._data = data
        if source is not None:
            if source.__class__ is not dict and not isinstance(source, Mapping):
                raise TypeError(
                    f"TensorDict source must be a mapping or a tensor class; got "
                    f"{type(source).__name__}"
                )
            self._fill(source.items(), size, data)
        if kwargs:
            self._fill(kwargs.items(), size, data)
        if names is not None:
            self._names = check_names(names, len(size))
        if lock:
            self.lock_()

    @FAST_WRITE.hoisting("self", when="len(entries) > 2")
    def _fill(self, entries: Any, size: torch.Size, data: dict[str, Any]) -> None:
        if size and self._device is None:
            # The common case, checked first: a str key and a tensor that fits the batch
            # (the write fast path, state.fast_write, inlined: a call per key costs as much
            # again; its parts that read only self, the lock and the batch dims, computed
            # once before the loop, which does not change them, unless there are two keys
            # or fewer: a level of a chain of nested dicts costs less without).
            for key, value in entries:
                if key.__class__ is str:
                    if fast_write(self, key, value):
                        data[key] = value
                        continue
                    if value.__class__ is dict:
                        if type(self)._nested_class is _default_nested_class:
                            # A nested TensorDict, built here (the batch size is known good;
                            # its state set inline: a _new call per level costs ~10% of the
                            # 19-level chain's construction).
                            child_data: dict[str, Any] = {}
                            child = _object_new(TensorDict)
                            child._data = child_data
                            child._batch_size = size
                            child._device = None
                            child._names = None
                            child._locked = False
                            try:
                                child._fill(value.items(), size, child_data)
                            except TensorClassError as err:
                                raise err.under(key) from None
                            data[key] = child
                        else:
                            data[key] = self._nested_from_mapping(key, value, key)
                        continue
                self._fill_one(key, value, size, data)
            return
        for key, value in entries:
            self._fill_one(key, value, size, data)

    @FAST_WRITE
    def _fill_one(self, key: Any, value: Any, size: torch.Size, data: dict[str, Any]) -> None:
        if key.__class__ is str:
            if fast_write(self, key, value):
                data[key] = value
            else:
                data[key] = self._convert(key, value)
        else:
            self._set_path(unravel_key_tuple(key), value)

    @classmethod
    def _from_mapping(
        cls, mapping: Mapping[Any, Any], batch_size: torch.Size, device: torch.device | None
    ) -> Self:
        if cls.__init__ is not TensorDict.__init__:  # a subclass with its own constructor
            return cls(mapping, batch_size, device)
        data: dict[str, Any] = {}
        self = cls._new(data, batch_size, device)
        self._fill(mapping.items(), batch_size, data)
        return self

    @classmethod
    def load_memmap(  # type: ignore[override]  # the recorded class, not always a TensorDict
        cls,
        prefix: PathLike,
        device: Any = None,
        non_blocking: bool = False,
        *,
        classes: ClassPolicy | None = None,
        out: Any = None,
        robust_key: bool | None = None,
        subpath: str | tuple[str, ...] | None = None,
        mode: str | None = None,
        num_threads: int = 0,
        allow_pickle: bool | None = None,
        validate: bool = True,
    ) -> TensorClass:
        """Load a save made by ``memmap``: each level comes back as its recorded class, as
        :func:`tensorclass.load_memmap` does (``classes="tensordict"``: plain TensorDicts).
        The other arguments are those of :meth:`TensorClass.load_memmap`.

        >>> import tempfile, torch
        >>> from tensorclass import TensorClass, TensorDict
        >>> class Frame(TensorClass):
        ...     pixels: torch.Tensor
        >>> path = tempfile.mkdtemp()
        >>> _ = Frame(torch.zeros(2, 3), batch_size=[2]).memmap(path, existsok=True)
        >>> type(TensorDict.load_memmap(path)).__name__
        'Frame'
        >>> type(TensorDict.load_memmap(path, classes="tensordict")).__name__
        'TensorDict'
        """
        loaded: TensorClass = super().load_memmap(
            prefix,
            device,
            non_blocking,
            classes=classes,
            out=out,
            robust_key=robust_key,
            subpath=subpath,
            mode=mode,
            num_threads=num_threads,
            allow_pickle=allow_pickle,
            validate=validate,
        )
        return loaded


register_dynamic_class(TensorDict)  # what the engine builds for nested mappings
lazy_stack_class(TensorDict)  # made now: torch.compile cannot make it while tracing
_default_nested_class = TensorCore._nested_class


def make_tensordict(
    input_dict: Mapping[Any, Any] | TensorCore | None = None,
    batch_size: BatchSizeLike = None,
    device: DeviceLike = None,
    auto_batch_size: bool | None = None,
    **kwargs: Any,
) -> TensorDict:
    """A ``TensorDict`` from a mapping and/or keyword entries (the mapping's win on a
    shared key); ``auto_batch_size=True`` computes the batch size when none is given.

    >>> import torch
    >>> from tensorclass import make_tensordict
    >>> make_tensordict(a=torch.zeros(3, 4), b=torch.zeros(3)).batch_size
    torch.Size([])
    >>> make_tensordict({"a": torch.zeros(3)}, auto_batch_size=True).batch_size
    torch.Size([3])
    """
    entries: dict[Any, Any] = dict(kwargs)
    if isinstance(input_dict, TensorCore):
        if batch_size is None and not auto_batch_size:
            batch_size = input_dict.batch_size
        entries.update(input_dict._data)
    elif input_dict is not None:
        entries.update(input_dict)
    return TensorDict.from_dict(
        entries,
        auto_batch_size=bool(auto_batch_size) and batch_size is None,
        batch_size=batch_size,
        device=device,
    )


def dense_stack_tds(td_list: Sequence[T] | LazyStackedTensorDict, dim: int | None = None) -> T:
    """Stack a list of instances, or the members of a lazy stack (along its stack dim),
    densely where their keys and shapes allow: nested levels that differ stay lazy stacks
    (see :func:`maybe_dense_stack`). A ``TensorDict`` is returned as it is.

    >>> import torch
    >>> from tensorclass import TensorDict, dense_stack_tds, lazy_stack
    >>> inner = lazy_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(4))])
    >>> outer = lazy_stack([TensorDict(lazy=inner), TensorDict(lazy=inner.clone())])
    >>> dense = dense_stack_tds(outer)
    >>> type(dense).__name__, dense.batch_size, dense["lazy"][:, 1]["a"].shape
    ('TensorDict', torch.Size([2]), torch.Size([2, 4]))
    """
    if isinstance(td_list, LazyStackedTensorDict):
        return _dense_stack_members(list(td_list.members), td_list.stack_dim)  # type: ignore[no-any-return]
    if isinstance(td_list, TensorCore):
        return td_list  # type: ignore[return-value]
    if dim is None:
        raise ValueError("dense_stack_tds: pass dim= to stack a list")
    return _dense_stack_members(td_list, dim)
