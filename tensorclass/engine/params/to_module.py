"""Loading parameters into modules: ``to_module`` and the swap it returns.

``params.to_module(module)`` puts every leaf of ``params`` into ``module`` (nested keys
follow submodule names) in place of the module's parameters and buffers, and returns the
values it replaced. Used as a context manager, it puts them back on exit, also when the
block raises:

>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict
>>> layer = nn.Linear(3, 1)
>>> zeros = TensorDict.from_module(layer).detach().clone().zero_()
>>> with zeros.to_module(layer):
...     layer(torch.ones(3))
tensor([0.])
>>> bool(layer.weight.abs().sum() > 0)  # the original parameters are back
True

The values are written into the module's parameter and buffer dicts directly (not through
``setattr``), so any tensor can stand in for a parameter: a plain tensor, a tensor with a
graph, or a batched tensor inside ``torch.vmap``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

import torch
from torch import Tensor, nn

from ...errors import KeyNotFoundError
from ...registry import dynamic_class, swap_class
from ..core.self_types import E
from ..core.state import TensorCore

__all__ = ["load_state_dict", "swap_into", "to_module"]

_NO_BATCH = torch.Size(())


def _no_entry(module: nn.Module, key: str, path: tuple[str, ...]) -> KeyNotFoundError:
    names = [*module._parameters, *module._buffers, *module._modules]
    return KeyNotFoundError(
        f"cannot load {path if len(path) > 1 else key!r} into {type(module).__name__}: it has "
        f"no parameter, buffer or submodule {key!r} (it has: "
        f"{', '.join(map(repr, names)) or 'nothing'})",
        key=path,
    )


def _as_parameter(leaf: Tensor, current: object) -> Tensor:
    """``preserve_module_state``: a plain tensor taking a parameter's place becomes a
    parameter (same storage) with the original ``requires_grad``; tensors with a graph,
    tensor subclasses and functorch-wrapped (vmap/grad) tensors stay as they are."""
    if (
        isinstance(current, nn.Parameter)
        and leaf.__class__ is Tensor
        and not leaf.requires_grad
        and not torch._C._functorch.is_functorch_wrapped_tensor(leaf)
    ):
        return nn.Parameter(leaf, requires_grad=current.requires_grad)
    return leaf


def swap_into(
    node: TensorCore,
    module: nn.Module,
    inplace: bool,
    old: dict[str, Any] | None,
    path: tuple[str, ...] = (),
    non_blocking: bool = False,
    preserve: bool = False,
) -> None:
    """Put the leaves of ``node`` into ``module``; record replaced values in ``old``."""
    params: dict[str, Any] = module._parameters
    buffers: dict[str, Any] = module._buffers
    for key, leaf in node._data.items():
        if (
            leaf.__class__ is Tensor
            or leaf is None
            or (not isinstance(leaf, TensorCore) and isinstance(leaf, Tensor))
        ):
            store: dict[str, Any]
            if key in params:
                store = params
            elif key in buffers:
                store = buffers
            else:
                raise _no_entry(module, key, (*path, key))
            current = store[key]
            if leaf is None:  # putting back an entry that was unset (a Linear's bias=False)
                store[key] = None
                continue
            if inplace and current is not None:
                if old is not None:
                    old[key] = current.detach().clone()
                with torch.no_grad():
                    current.copy_(leaf, non_blocking=non_blocking)
                continue
            if old is not None:
                old[key] = current  # None too: leaving the block unsets the entry again
            store[key] = _as_parameter(leaf, current) if preserve else leaf
        elif isinstance(leaf, TensorCore):
            child = module._modules.get(key)
            if child is None:
                raise _no_entry(module, key, (*path, key))
            sub: dict[str, Any] | None = None
            if old is not None:
                sub = {}  # recorded before the recursion fills it: a failure can roll back
                old[key] = dynamic_class()._new(sub, _NO_BATCH)
            swap_into(leaf, child, inplace, sub, (*path, key), non_blocking, preserve)
        # non-tensor entries have no place in a module


def _check_fits(node: TensorCore, module: nn.Module, path: tuple[str, ...] = ()) -> None:
    """Raise what ``swap_into(node, module, inplace=True, None)`` would raise part way:
    a key the module does not have, a value that cannot be copied into its entry."""
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            child = module._modules.get(key)
            if child is None:
                raise _no_entry(module, key, (*path, key))
            _check_fits(leaf, child, (*path, key))
        elif leaf is None or isinstance(leaf, Tensor):
            store = module._parameters if key in module._parameters else module._buffers
            if key not in store:
                raise _no_entry(module, key, (*path, key))
            current = store[key]
            if leaf is not None and current is not None:
                shape, target = leaf.shape, current.shape  # copy_ broadcasts shape to target
                if len(shape) > len(target) or any(
                    a != 1 and a != b for a, b in zip(reversed(shape), reversed(target))
                ):
                    raise RuntimeError(
                        f"cannot copy {'.'.join((*path, key))!r} of shape {list(leaf.shape)} "
                        f"into {type(module).__name__}'s entry of shape {list(current.shape)}"
                    )


@overload
def to_module(
    self: E,
    module: nn.Module,
    *,
    inplace: bool | None = False,
    return_swap: Literal[True] = True,
    swap_dest: Any = None,
    use_state_dict: bool = False,
    non_blocking: bool = False,
    preserve_module_state: bool = False,
    memo: None = None,
) -> Any: ...  # a ParamSwap (tensorclass.module_params)


@overload
def to_module(
    self: E,
    module: nn.Module,
    *,
    inplace: bool | None = False,
    return_swap: Literal[False],
    swap_dest: Any = None,
    use_state_dict: bool = False,
    non_blocking: bool = False,
    preserve_module_state: bool = False,
    memo: None = None,
) -> E: ...


def to_module(
    self: E,
    module: nn.Module,
    *,
    inplace: bool | None = False,
    return_swap: bool = True,
    swap_dest: Any = None,
    use_state_dict: bool = False,
    non_blocking: bool = False,
    preserve_module_state: bool = False,
    memo: None = None,
) -> Any:
    """Put these values into ``module`` in place of its parameters and buffers.

    Nested keys follow submodule names (the layout :meth:`TensorDict.from_module`
    produces); a key the module does not have is an error. By default the module's
    entries are *replaced* by these tensors (which may be plain tensors, tensors with a
    graph, or batched tensors under ``torch.vmap``); ``inplace=True`` copies the values
    into the existing tensors instead. ``use_state_dict=True`` goes through
    ``load_state_dict`` (so state-dict hooks run). When loading fails (a key the module
    does not have, a value ``copy_`` rejects), the entries loaded before the failure are
    put back, so the module is left as it was.

    Returns the replaced values (a TensorDict that is also a context manager: on exit
    it puts them back), or this instance when ``return_swap=False``. ``swap_dest``
    receives the replaced values instead (updated in place, and returned).

    ``non_blocking`` is passed to the copies of ``inplace=True``.
    ``preserve_module_state=True`` keeps the module's parameters ``nn.Parameter`` s: a
    plain tensor (no graph, not batched by ``vmap``) loaded in a parameter's place is
    wrapped as a parameter sharing its storage, with the original ``requires_grad``
    (tensordict's default). By default the tensor is loaded as it is (still registered
    as a parameter or buffer of the module). ``memo`` is not accepted (as in
    tensordict 0.15).
    """
    if memo is not None:
        raise RuntimeError("to_module: memo is no longer accepted (as in tensordict 0.15)")
    inplace = bool(inplace)
    if use_state_dict and (non_blocking or preserve_module_state):
        raise ValueError(
            "to_module(use_state_dict=True) loads through load_state_dict: non_blocking "
            "and preserve_module_state do not apply"
        )
    result = _to_module(
        self, module, inplace, return_swap, use_state_dict, non_blocking, preserve_module_state
    )
    if swap_dest is None or not return_swap:
        return result
    swap_dest.update(result)
    return swap_dest


def _to_module(
    self: E,
    module: nn.Module,
    inplace: bool,
    return_swap: bool,
    use_state_dict: bool,
    non_blocking: bool,
    preserve: bool,
) -> object:
    old_data: dict[str, object] | None
    if use_state_dict:
        old_data = load_state_dict(self, module, inplace, return_swap)
    elif inplace and not return_swap:
        # Nothing to give back, so nothing is copied: check first, then write.
        _check_fits(self, module)
        swap_into(self, module, True, None, (), non_blocking)
        return self
    else:
        old_data = {}
        try:
            swap_into(self, module, inplace, old_data, (), non_blocking, preserve)
        except BaseException:
            # Nothing half-loaded: put back what was replaced before the failure.
            swap_into(dynamic_class()._new(old_data, _NO_BATCH), module, inplace, None)
            raise
    if old_data is None or not return_swap:
        return self
    return swap_class()._for(old_data, module, inplace, use_state_dict)


def load_state_dict(
    params: TensorCore, module: nn.Module, inplace: bool, return_swap: bool
) -> dict[str, Any] | None:
    """``to_module(use_state_dict=True)``: load through ``module.load_state_dict``."""
    old = dict(module.state_dict(keep_vars=True)) if return_swap else None
    dynamic = dynamic_class()
    flat: Mapping[str, object] = dynamic._new(params._data, _NO_BATCH).flatten_keys(".").to_dict()
    module.load_state_dict(flat, assign=not inplace)
    if old is None:
        return None
    if inplace:
        old = {k: v.detach().clone() for k, v in old.items()}
    nested: dict[str, object] = dynamic(old).unflatten_keys(".")._data
    return nested
