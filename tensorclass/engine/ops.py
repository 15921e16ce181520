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
from .core.repr import format_instance
from .core.safe_globals import allow_loading
from .core.state import Names
from .keys.dim_names import DimNames
from .keys.structure import Structure
from .leafwise.arithmetic import Arithmetic
from .leafwise.factories import Factories
from .leafwise.tensor_state import TensorState
from .params.building import ModuleBuilding
from .params.state_dict import Checkpoint
from .params.to_module import FunctionalParams
from .shape import batch_dims, context, indexing, packing, rearrange, selection
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
    TensorState,
    Conversion,
    Structure,
    Arithmetic,
    FunctionalParams,
    DimNames,
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
    # (keys/ operations go here)

    # shape/
    # batch_dims.py (its view, permute... are called by the context.py ones below)
    reshape = batch_dims.reshape
    expand = batch_dims.expand
    expand_as = batch_dims.expand_as
    repeat = batch_dims.repeat
    flip = batch_dims.flip
    roll = batch_dims.roll
    unbind = batch_dims.unbind
    split = batch_dims.split
    chunk = batch_dims.chunk
    set_batch_size = batch_dims.set_batch_size
    _split_sections = batch_dims._split_sections
    # context.py
    _remember = context._remember
    __enter__ = context.__enter__
    __exit__ = context.__exit__
    clear_refs_for_compile_ = context.clear_refs_for_compile_
    lock_ = context.lock_
    unlock_ = context.unlock_
    flatten_keys = context.flatten_keys
    unflatten_keys = context.unflatten_keys
    permute = context.permute
    transpose = context.transpose
    unsqueeze = context.unsqueeze
    squeeze = context.squeeze
    view = context.view
    flatten = context.flatten
    unflatten = context.unflatten
    # indexing.py
    __getitem__ = indexing.__getitem__
    __setitem__ = indexing.__setitem__
    _index = indexing._index
    _set_at = indexing._set_at
    # packing.py
    pack = packing.pack
    # rearrange.py
    movedim = rearrange.movedim
    moveaxis = rearrange.moveaxis
    swapaxes = rearrange.swapaxes
    swapdims = rearrange.swapdims
    rot90 = rearrange.rot90
    fliplr = rearrange.fliplr
    flipud = rearrange.flipud
    atleast_1d = rearrange.atleast_1d
    atleast_2d = rearrange.atleast_2d
    atleast_3d = rearrange.atleast_3d
    broadcast_to = rearrange.broadcast_to
    pad = rearrange.pad
    to_padded_tensor = rearrange.to_padded_tensor
    tile = rearrange.tile
    repeat_interleave = rearrange.repeat_interleave
    # selection.py
    gather = selection.gather
    masked_select = selection.masked_select
    narrow = selection.narrow
    tensor_split = selection.tensor_split
    get_at = selection.get_at
    set_at_ = selection.set_at_
    update_at_ = selection.update_at_
    copy_at_ = selection.copy_at_
    get_item_shape = selection.get_item_shape

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
