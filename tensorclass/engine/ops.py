"""``TensorOps``: every operation of the engine, joined once.

The operations live in small mixins (keys, indexing, shape, functional, leaf-wise ops,
arithmetic, ``to_module``, constructors and conversions, ``new_*`` factories), each written once for every tensor class and each deriving only
from the state (``TensorCore``) or the mixin it calls; this module joins them and adds the
protocol methods: ``__torch_function__``, ``repr``, ``len``, iteration and pickling. Lazy
stacks build on it; :class:`~tensorclass.engine.base.TensorDictBase` adds the
storage methods on top.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from typing_extensions import Self

from .build.conversion import Conversion
from .build.from_containers import ContainerBuilding
from .core.attach import op_property
from .core.repr import format_instance
from .core.safe_globals import allow_loading
from .core.state import Names
from .keys import access, dim_names, structure
from .leafwise.arithmetic import Arithmetic
from .leafwise.factories import Factories
from .leafwise.tensor_state import TensorState
from .params.building import ModuleBuilding
from .params.state_dict import Checkpoint
from .params.to_module import FunctionalParams
from .shape.context import ContextOps
from .shape.packing import Packing
from .shape.selection import Selecting
from .torch_api.functions import HANDLED_FUNCTIONS
from .torch_api.pytree import register_pytree

__all__ = ["TensorOps"]


def _rebuild(
    cls: type[TensorOps],
    data: dict[str, Any],
    batch_size: torch.Size,
    device: torch.device | None,
    names: Names,
    locked: bool,
) -> TensorOps:
    obj = cls._new(data, batch_size, device, names)
    if locked:
        obj.lock_()
    return obj


class TensorOps(
    ContextOps,
    Selecting,
    TensorState,
    Conversion,
    Arithmetic,
    FunctionalParams,
    Packing,
    Checkpoint,
    ContainerBuilding,
    ModuleBuilding,
    Factories,
):
    """The operations shared by :class:`TensorDict`, every tensor class and lazy stacks.

    An instance is a dict of leaves (tensors, nested instances, non-tensor values) whose
    leading dims all equal :attr:`batch_size`; it behaves like one tensor of that shape.
    """

    __slots__ = ()

    # The operations, attached by folder, one line each (``name = module.function``).

    # keys/
    # keys/access.py (flatten_keys, unflatten_keys: shape/context.py's ContextOps wraps them)
    get = access.get
    __contains__ = access.__contains__
    keys = access.keys
    values = access.values
    items = access.items
    is_empty = access.is_empty
    set = access.set
    set_ = access.set_
    setdefault = access.setdefault
    update = access.update
    update_ = access.update_
    pop = access.pop
    del_ = access.del_
    __delitem__ = access.__delitem__
    rename_key_ = access.rename_key_
    select = access.select
    exclude = access.exclude
    empty = access.empty
    filter_non_tensor_data = access.filter_non_tensor_data
    # keys/dim_names.py
    refine_names = dim_names.refine_names
    rename = dim_names.rename
    rename_ = dim_names.rename_
    # keys/structure.py
    clear = structure.clear
    popitem = structure.popitem
    filter_empty_ = structure.filter_empty_
    separates = structure.separates
    split_keys = structure.split_keys
    rename_keys = structure.rename_keys
    replace = structure.replace
    create_nested = structure.create_nested
    sorted_keys = op_property(structure.sorted_keys)
    depth = op_property(structure.depth)
    entry_class = structure.entry_class
    is_non_tensor = structure.is_non_tensor
    non_tensor_items = structure.non_tensor_items
    get_non_tensor = structure.get_non_tensor
    set_non_tensor = structure.set_non_tensor
    param_count = structure.param_count
    auto_device_ = structure.auto_device_
    clear_device_ = structure.clear_device_

    # shape/
    # (shape/ operations go here)

    # leafwise/
    # (leafwise/ operations go here)

    # build/ and params/
    # (build/ and params/ operations go here)

    # The protocol methods.

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_pytree(cls)  # every tensor class is a pytree node (vmap, torch.func)
        if not cls.__name__.startswith("_"):  # internal layouts (_Blank) stay unloadable
            allow_loading(cls)  # torch.load(weights_only=True) may rebuild it

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        impl = HANDLED_FUNCTIONS.get(func)
        if impl is None:
            return NotImplemented
        return impl(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return format_instance(self)

    def __len__(self) -> int:
        """The size of the first batch dim (0 without batch dims), as for tensors."""
        batch_size = self._batch_size
        return batch_size[0] if batch_size else 0

    def __iter__(self) -> Iterator[Self]:
        """Iterate over the first batch dim (as for tensors); use :meth:`keys` for keys."""
        if not self._batch_size:
            raise TypeError(f"iteration over a {type(self).__name__} with no batch dims")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        raise RuntimeError(
            f"the truth value of a {type(self).__name__} is ambiguous: use .all() or .any() "
            f"on a comparison, or .is_empty() to test for leaves"
        )

    def _consolidated_reduce(self) -> tuple[Any, ...] | None:
        """The one-buffer pickle of a consolidated instance (``None``: pickle the leaves);
        see :mod:`.consolidate`."""
        return None

    def __reduce__(self) -> tuple[Any, ...]:
        packed = self._consolidated_reduce()
        if packed is not None:
            return packed
        return (
            _rebuild,
            (type(self), self._data, self._batch_size, self._device, self._names, self._locked),
        )


allow_loading(_rebuild)
