"""Parameters as tensor classes: ``from_module``, ``from_modules`` and the swap context.

``TensorDict.from_module(m)`` holds ``m``'s parameters and buffers (the tensors
themselves, not copies), nested by submodule name. ``from_modules(*ms)`` stacks the
parameters of several modules of the same structure along a new batch dim, for ensembles
run with ``torch.vmap``:

>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict, from_modules
>>> model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
>>> params = TensorDict.from_module(model)
>>> sorted(params.keys(include_nested=True, leaves_only=True))
[('0', 'bias'), ('0', 'weight'), ('2', 'bias'), ('2', 'weight')]
>>> params["0", "weight"] is model[0].weight
True
>>> ensemble = from_modules(*[nn.Linear(3, 1) for _ in range(5)])
>>> ensemble.batch_size, ensemble["weight"].shape
(torch.Size([5]), torch.Size([5, 1, 3]))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar, overload

import torch
from torch import Tensor, nn
from typing_extensions import Unpack

from ...errors import StructureMismatchError
from ...registry import dynamic_class, lazy_class, params_class
from ..core.state import TensorCore

if TYPE_CHECKING:  # annotations only: the classes are above this layer
    from ...nn.params import TensorDictParams
    from ...tensordict import TensorDict
    from ..lazy.stack import LazyStackedTensorDict

__all__ = ["FromModule", "FromModules", "from_module", "from_modules"]

_NO_BATCH = torch.Size(())
_T_co = TypeVar("_T_co", covariant=True)
_L_co = TypeVar("_L_co", covariant=True)


class FromModule(Protocol[_T_co]):
    """The type of a ``from_module`` building a ``_T_co`` (``X.from_module``: an ``X``;
    :func:`from_module`: a ``TensorDict``), or with ``as_module=True`` a
    ``TensorDictParams``."""

    @overload
    def __call__(
        self,
        module: nn.Module,
        as_module: Literal[False] = ...,
        lock: bool = ...,
        use_state_dict: bool = ...,
        filter_empty: bool = ...,
    ) -> _T_co: ...

    @overload
    def __call__(
        self,
        module: nn.Module,
        as_module: Literal[True],
        lock: bool = ...,
        use_state_dict: bool = ...,
        filter_empty: bool = ...,
    ) -> TensorDictParams: ...

    @overload
    def __call__(
        self,
        module: nn.Module,
        as_module: bool,
        lock: bool = ...,
        use_state_dict: bool = ...,
        filter_empty: bool = ...,
    ) -> _T_co | TensorDictParams: ...


class _StackOptions(TypedDict, total=False):
    """The keywords of ``from_modules`` that do not choose the type of the result."""

    lock: bool
    use_state_dict: bool
    expand_identical: bool


class FromModules(Protocol[_T_co, _L_co]):
    """The type of a ``from_modules`` building a ``_T_co``, or a ``_L_co`` with
    ``lazy_stack=True`` (``X.from_modules``: an ``X`` both times, a lazy stack typed as its
    members' class; :func:`from_modules`: a ``TensorDict``, a ``LazyStackedTensorDict``), or
    with ``as_module=True`` a ``TensorDictParams``."""

    @overload
    def __call__(
        self,
        *modules: nn.Module,
        as_module: Literal[False] = ...,
        lazy_stack: Literal[False] = ...,
        **options: Unpack[_StackOptions],
    ) -> _T_co: ...

    @overload
    def __call__(
        self,
        *modules: nn.Module,
        as_module: Literal[False] = ...,
        lazy_stack: Literal[True],
        **options: Unpack[_StackOptions],
    ) -> _L_co: ...

    @overload
    def __call__(
        self,
        *modules: nn.Module,
        as_module: Literal[False] = ...,
        lazy_stack: bool,
        **options: Unpack[_StackOptions],
    ) -> _T_co | _L_co: ...

    @overload
    def __call__(
        self,
        *modules: nn.Module,
        as_module: Literal[True],
        lazy_stack: Literal[False] = ...,
        **options: Unpack[_StackOptions],
    ) -> TensorDictParams: ...

    @overload
    def __call__(
        self,
        *modules: nn.Module,
        as_module: bool = ...,
        lazy_stack: bool = ...,
        **options: Unpack[_StackOptions],
    ) -> _T_co | _L_co | TensorDictParams: ...


def _collect(module: nn.Module, filter_empty: bool = True) -> dict[str, object]:
    data: dict[str, object] = {}
    for name, param in module._parameters.items():
        if param is not None:
            data[name] = param
    for name, buffer in module._buffers.items():
        if buffer is not None:
            data[name] = buffer
    for name, child in module._modules.items():
        if child is not None:
            sub = _collect(child, filter_empty)
            if sub or not filter_empty:
                data[name] = dynamic_class()._new(sub, _NO_BATCH)
    return data


def _as_module(params: TensorCore) -> TensorDictParams:
    # TensorDictParams is defined in nn, above this layer: asked of the registry
    return params_class()(params, no_convert=True, lock=params.is_locked)


def _from_module(
    module: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    filter_empty: bool = True,
) -> Any:
    """The parameters and buffers of ``module`` as a TensorDict, nested by submodule name.

    The leaves *are* the module's tensors (storage and identity shared). Submodules without
    parameters or buffers are left out (kept as empty levels with ``filter_empty=False``).
    ``use_state_dict=True`` reads ``state_dict()``
    instead (state-dict hooks run; non-persistent buffers are left out).
    ``filter_empty=False`` keeps an empty entry for each submodule without parameters or
    buffers (``nn.ReLU``...), so the result follows the module tree exactly.
    ``as_module=True`` returns a :class:`~tensorclass.nn.TensorDictParams`.
    """
    if use_state_dict and not filter_empty:
        raise ValueError("from_module: filter_empty=False needs use_state_dict=False")
    if use_state_dict:
        flat = dynamic_class()(dict(module.state_dict(keep_vars=True)))
        params = flat.unflatten_keys(".")
    else:
        params = dynamic_class()._new(_collect(module, filter_empty), _NO_BATCH)
    if lock:
        params.lock_()
    return _as_module(params) if as_module else params


#: the parameters and buffers of a module as a ``TensorDict`` (see :func:`_from_module`)
from_module: FromModule[TensorDict] = _from_module


def _stack_level(items: list[TensorCore], expand_identical: bool, path: tuple[str, ...]) -> Any:
    keys = list(items[0]._data)
    for index, item in enumerate(items[1:], 1):
        if list(item._data) != keys:
            where = f" under {path!r}" if path else ""
            raise StructureMismatchError(
                f"from_modules: module {index} has the keys {sorted(item._data)}{where}, "
                f"module 0 has {sorted(keys)}; modules of different structure need "
                f"lazy_stack=True"
            )
    n = len(items)
    data: dict[str, object] = {}
    for key in keys:
        leaves = [item._data[key] for item in items]
        first = leaves[0]
        if isinstance(first, TensorCore):
            data[key] = dynamic_class()._new(
                _stack_level(leaves, expand_identical, (*path, key)), torch.Size([n])
            )
        elif expand_identical and all(leaf is first for leaf in leaves):
            data[key] = first.expand(n, *first.shape)
        else:
            data[key] = _stack_leaves(leaves, (*path, key))
    return data


def _stack_leaves(leaves: list[Tensor], path: tuple[str, ...]) -> Tensor:
    try:
        stacked = torch.stack([leaf.detach() for leaf in leaves])
    except RuntimeError:
        shapes = [list(leaf.shape) for leaf in leaves]
        raise StructureMismatchError(
            f"from_modules: {path!r} has the shapes {shapes}; modules with different "
            f"shapes need lazy_stack=True"
        ) from None
    first = leaves[0]
    if isinstance(first, nn.Parameter):
        return nn.Parameter(stacked, requires_grad=first.requires_grad)
    return stacked


def _from_modules(
    *modules: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    lazy_stack: bool = False,
    expand_identical: bool = False,
) -> Any:
    """The parameters of several modules, stacked along a new batch dim (for ``vmap``).

    The dense stack (default) holds *new* tensors: parameters are new leaf
    ``nn.Parameter`` s, so gradients land on them and the modules' own parameters are left
    untouched (give these to the optimizer). ``expand_identical=True`` expands a tensor
    that every module shares (the same object) instead of copying it; its gradient then
    reaches the shared tensor. ``as_module=True`` returns a
    :class:`~tensorclass.nn.TensorDictParams`. ``lazy_stack=True`` keeps the modules' own
    tensors in a lazy stack (stacked on each read), so gradients reach the modules.
    """
    if not modules:
        raise ValueError("from_modules needs at least one module")
    if lazy_stack and as_module:
        raise ValueError("from_modules: lazy_stack and as_module cannot be combined")
    tds: list[TensorCore] = [
        from_module(m, lock=False, use_state_dict=use_state_dict) for m in modules
    ]
    if lazy_stack:
        params = lazy_class()._restack(tds, 0)
        return params.lock_() if lock else params
    stacked = dynamic_class()._new(
        _stack_level(tds, expand_identical, ()), torch.Size([len(modules)])
    )
    if lock:
        stacked.lock_()
    return _as_module(stacked) if as_module else stacked


#: the parameters of modules stacked as a ``TensorDict`` (see :func:`_from_modules`)
from_modules: FromModules[TensorDict, LazyStackedTensorDict] = _from_modules
