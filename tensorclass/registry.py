"""The classes that lower layers build but upper layers define, registered at import.

The engine sometimes has to *make* an instance of a class that is defined above it: a
nested mapping becomes a ``TensorDict`` (defined by class building, on top of the engine),
``from_module(..., as_module=True)`` returns a ``TensorDictParams`` (defined in ``nn``),
``to_module`` returns a ``ParamSwap`` (a ``TensorDict`` that restores the module on exit),
the constructors of every class may build a lazy stack (``LazyStackedTensorDict``, which
builds on the operations) and ``from_dataclass(..., as_tensorclass=True)`` makes a new
typed class (through ``TensorClass``).
Those layers register their class here when they are imported; the engine asks for it by
role. Nothing is patched onto engine classes, and neither the engine nor this module imports
anything from above. A role asked for before its module was imported (a program that
imported only a corner of the package, say ``tensorclass.typed``, then built a nested
mapping) is filled by the loader the package registers (:func:`register_loader`): the
package's ``__init__.py`` runs before any of its modules can, and registers the import of
``tensorclass._api``, which imports every module and so registers every role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine.lazy.stack import LazyStackedTensorDict
    from .nn.params import TensorDictParams
    from .param_swap import ParamSwap
    from .tensor_attrs import TensorAttrs
    from .tensordict import TensorDict
    from .typed import TensorClass

__all__ = [
    "attrs_class",
    "dynamic_class",
    "lazy_class",
    "lazy_stack_function",
    "params_class",
    "register_attrs_class",
    "register_dynamic_class",
    "register_lazy_class",
    "register_lazy_stack_function",
    "register_loader",
    "register_params_class",
    "register_swap_class",
    "register_typed_class",
    "swap_class",
    "typed_class",
]

_registered: dict[str, Any] = {}
_loaders: list[Callable[[], object]] = []


def register_loader(load: Callable[[], object]) -> None:
    """Register what imports the modules that register the roles (the package does, as it
    is imported: before any role can be asked for)."""
    _loaders.append(load)


def _lookup(role: str) -> Any:
    found = _registered.get(role)
    if found is None:
        for load in _loaders:
            load()  # imports the library: its modules register their classes
        found = _registered.get(role)
        if found is None:
            raise LookupError(f"no class is registered for the role {role!r} (yet)")
    return found


def register_dynamic_class(cls: type) -> None:
    """Register the class with the dynamic schema (``TensorDict``): what mappings become."""
    _registered["dynamic"] = cls


def dynamic_class() -> type[TensorDict]:
    """The registered ``TensorDict`` class."""
    found: type[TensorDict] = _lookup("dynamic")
    return found


def register_params_class(cls: type) -> None:
    """Register the parameter wrapper (``TensorDictParams``) that ``as_module=True`` returns."""
    _registered["params"] = cls


def params_class() -> type[TensorDictParams]:
    """The registered ``TensorDictParams`` class."""
    found: type[TensorDictParams] = _lookup("params")
    return found


def register_swap_class(cls: type) -> None:
    """Register the class of what ``to_module`` returns (``ParamSwap``)."""
    _registered["swap"] = cls


def swap_class() -> type[ParamSwap]:
    """The registered ``ParamSwap`` class."""
    found: type[ParamSwap] = _lookup("swap")
    return found


def register_lazy_class(cls: type) -> None:
    """Register the lazy-stack class (``LazyStackedTensorDict``), which the constructors of
    every class use (``lazy_stack``, ``from_list``, ``maybe_dense_stack``)."""
    _registered["lazy"] = cls


def lazy_class() -> type[LazyStackedTensorDict]:
    """The registered ``LazyStackedTensorDict`` class."""
    found: type[LazyStackedTensorDict] = _lookup("lazy")
    return found


def register_lazy_stack_function(function: Any) -> None:
    """Register ``lazy_stack`` (the function of ``engine/lazy/stack.py``), which the
    operations below lazy stacks call to build one."""
    _registered["lazy_stack"] = function


def lazy_stack_function() -> Any:
    """The registered ``lazy_stack`` function."""
    return _lookup("lazy_stack")


def register_typed_class(cls: type) -> None:
    """Register the root of typed classes (``TensorClass``): it makes tensor classes from
    dataclasses."""
    _registered["typed"] = cls


def typed_class() -> type[TensorClass]:
    """The registered ``TensorClass`` class."""
    found: type[TensorClass] = _lookup("typed")
    return found


def register_attrs_class(cls: type) -> None:
    """Register ``TensorAttrs``, the leaf descriptor ``attrs()`` builds."""
    _registered["attrs"] = cls


def attrs_class() -> type[TensorAttrs]:
    """The registered ``TensorAttrs`` class."""
    found: type[TensorAttrs] = _lookup("attrs")
    return found
