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
from typing import TYPE_CHECKING, Any, Generic, TypeVar

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

R = TypeVar("R")

_loaders: list[Callable[[], object]] = []


class _Role(Generic[R]):
    """One role: the value its layer registers, read back by the layers below it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.value: R | None = None

    def register(self, value: R) -> None:
        self.value = value

    def get(self) -> R:
        if self.value is None:
            for load in _loaders:
                load()  # imports the library: its modules register their classes
            if self.value is None:
                raise LookupError(f"no class is registered for the role {self.name!r} (yet)")
        return self.value


_dynamic: _Role[type[TensorDict]] = _Role("dynamic")
_params: _Role[type[TensorDictParams]] = _Role("params")
_swap: _Role[type[ParamSwap]] = _Role("swap")
_lazy: _Role[type[LazyStackedTensorDict]] = _Role("lazy")
_lazy_stack: _Role[Callable[..., Any]] = _Role("lazy_stack")
_typed: _Role[type[TensorClass]] = _Role("typed")
_attrs: _Role[type[TensorAttrs]] = _Role("attrs")


def register_loader(load: Callable[[], object]) -> None:
    """Register what imports the modules that register the roles (the package does, as it
    is imported: before any role can be asked for)."""
    _loaders.append(load)


def register_dynamic_class(cls: type[TensorDict]) -> None:
    """Register the class with the dynamic schema (``TensorDict``): what mappings become."""
    _dynamic.register(cls)


def dynamic_class() -> type[TensorDict]:
    """The registered ``TensorDict`` class."""
    return _dynamic.get()


def register_params_class(cls: type[TensorDictParams]) -> None:
    """Register the parameter wrapper (``TensorDictParams``) that ``as_module=True`` returns."""
    _params.register(cls)


def params_class() -> type[TensorDictParams]:
    """The registered ``TensorDictParams`` class."""
    return _params.get()


def register_swap_class(cls: type[ParamSwap]) -> None:
    """Register the class of what ``to_module`` returns (``ParamSwap``)."""
    _swap.register(cls)


def swap_class() -> type[ParamSwap]:
    """The registered ``ParamSwap`` class."""
    return _swap.get()


def register_lazy_class(cls: type[LazyStackedTensorDict]) -> None:
    """Register the lazy-stack class (``LazyStackedTensorDict``), which the constructors of
    every class use (``lazy_stack``, ``from_list``, ``maybe_dense_stack``)."""
    _lazy.register(cls)


def lazy_class() -> type[LazyStackedTensorDict]:
    """The registered ``LazyStackedTensorDict`` class."""
    return _lazy.get()


def register_lazy_stack_function(function: Callable[..., Any]) -> None:
    """Register ``lazy_stack`` (the function of ``engine/lazy/stack.py``), which the
    operations below lazy stacks call to build one."""
    _lazy_stack.register(function)


def lazy_stack_function() -> Callable[..., Any]:
    """The registered ``lazy_stack`` function."""
    return _lazy_stack.get()


def register_typed_class(cls: type[TensorClass]) -> None:
    """Register the root of typed classes (``TensorClass``): it makes tensor classes from
    dataclasses."""
    _typed.register(cls)


def typed_class() -> type[TensorClass]:
    """The registered ``TensorClass`` class."""
    return _typed.get()


def register_attrs_class(cls: type[TensorAttrs]) -> None:
    """Register ``TensorAttrs``, the leaf descriptor ``attrs()`` builds."""
    _attrs.register(cls)


def attrs_class() -> type[TensorAttrs]:
    """The registered ``TensorAttrs`` class."""
    return _attrs.get()
