"""Keeping a ``TensorDictParams``' module registration in step with its tensor class.

The held tensor class is the source of truth. :func:`reconcile` makes the module's
``_parameters``, ``_buffers`` and ``_modules`` name exactly the leaves and nested levels of
the tensor class again, at every depth, after any change of its structure: a key added
(registered as the constructor would register it), removed (unregistered), renamed or moved
(the same tensor, registered under its new name), a leaf or a nested level replaced.

It is cheap when nothing changed (one identity check per key), so it runs after every
in-place method called on the module and before every read of the registration
(``named_modules()``, so ``parameters()`` and optimizers; ``state_dict()``; ``to()``;
``load_state_dict()``; ``copy.deepcopy``), which also catches changes made through a nested
level read out of the module (``params["inner"].pop("w")``).
"""

from __future__ import annotations

from typing import Any

from torch import Tensor, nn

from ..engine.core.state import TensorCore

__all__ = ["in_step", "reconcile", "reconcile_level", "registered"]


def registered(leaf: Tensor, no_convert: bool) -> Tensor:
    """The tensor to register: a parameter, unless ``no_convert`` or not differentiable."""
    if isinstance(leaf, nn.Parameter) or no_convert:
        return leaf
    if leaf.is_floating_point() or leaf.is_complex():
        return nn.Parameter(leaf)
    return leaf


def in_step(params: Any) -> bool:
    """Whether this level's registration names exactly its leaves and nested levels.

    Nested levels are compared by identity only (:func:`reconcile` recurses into them).
    Registered leaves are checked first, by identity: the common case costs no ``isinstance``.
    """
    parameters, buffers, modules = params._parameters, params._buffers, params._modules
    in_parameters, in_buffers, in_modules = parameters.get, buffers.get, modules.get
    count = 0
    for key, leaf in params.__dict__["_td"]._data.items():
        if in_parameters(key) is leaf or in_buffers(key) is leaf:
            count += 1
            continue
        child = in_modules(key)
        if child is not None and child.__dict__.get("_td") is leaf:
            count += 1
        elif isinstance(leaf, (Tensor, TensorCore)):
            return False
        # anything else is non-tensor data, which is not registered
    return count == len(parameters) + len(buffers) + len(modules)


def reconcile_level(params: Any, as_is: frozenset[int] = frozenset()) -> None:
    """Make the registration of this level of ``params`` follow its leaves (not nested ones).

    For the ``nn.Module`` methods that visit every nested module themselves
    (``named_modules``, ``state_dict``, ``_apply``, ``load_state_dict``).
    """
    if not in_step(params):
        _rebuild(params, as_is)


def reconcile(params: Any, as_is: frozenset[int] = frozenset()) -> None:
    """Make the registration of ``params`` and of its nested levels follow their leaves.

    Tensors whose ``id`` is in ``as_is`` are registered as they are, without conversion
    (``set(..., no_convert=True)``).
    """
    if not in_step(params):
        _rebuild(params, as_is)
    for child in params._modules.values():
        reconcile(child, as_is)


def _rebuild(params: Any, as_is: frozenset[int]) -> None:
    """Register this level's leaves anew, keeping the tensors and modules already registered."""
    data: dict[str, Any] = params.__dict__["_td"]._data
    no_convert: bool = params.__dict__.get("_no_convert", False)
    old_parameters = {id(t) for t in params._parameters.values() if t is not None}
    old_buffers = {id(t) for t in params._buffers.values() if t is not None}
    old_modules = {id(m.__dict__["_td"]): m for m in params._modules.values()}
    parameters: dict[str, Any] = {}
    buffers: dict[str, Any] = {}
    modules: dict[str, Any] = {}
    for key, leaf in list(data.items()):
        if isinstance(leaf, TensorCore):
            child = old_modules.get(id(leaf))
            if child is None:  # a new nested level: registered as the constructor does
                child = type(params)._wrap(leaf, no_convert)
                data[key] = child.__dict__["_td"]
                if leaf.is_locked:
                    data[key].lock_()
            modules[key] = child
        elif isinstance(leaf, Tensor):
            if id(leaf) in old_parameters:
                parameters[key] = leaf
            elif id(leaf) in old_buffers:
                buffers[key] = leaf
            else:
                leaf = data[key] = registered(leaf, no_convert or id(leaf) in as_is)
                (parameters if isinstance(leaf, nn.Parameter) else buffers)[key] = leaf
    for registry, fresh in (
        (params._parameters, parameters),
        (params._buffers, buffers),
        (params._modules, modules),
    ):
        registry.clear()
        registry.update(fresh)
