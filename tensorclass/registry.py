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
    "lazy_view_function",
    "params_class",
    "register_attrs_class",
    "register_dynamic_class",
    "register_lazy_class",
    "register_lazy_stack_function",
    "register_lazy_view_function",
    "register_loader",
    "params_held",
    "register_params_class",
    "register_swap_class",
    "register_typed_class",
    "serve_as_tensordict",
    "serving_as_tensordict",
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
        """Register the role's value (its layer does, when it is imported)."""
        self.value = value

    def get(self) -> R:
        """The registered value (importing the library first if none is registered yet)."""
        if self.value is None:
            for load in _loaders:
                load()  # imports the library: its modules register their classes
            if self.value is None:
                raise LookupError(f"no class is registered for the role {self.name!r} (yet)")
        return self.value


# one role per class (or function) that a lower layer builds and an upper one defines
_dynamic: _Role[type[TensorDict]] = _Role("dynamic")  # TensorDict: what mappings become
_params: _Role[type[TensorDictParams]] = _Role("params")  # what as_module=True returns
_swap: _Role[type[ParamSwap]] = _Role("swap")  # what to_module returns
_lazy: _Role[type[LazyStackedTensorDict]] = _Role("lazy")  # lazy_stack, from_list...
_lazy_stack: _Role[Callable[..., Any]] = _Role("lazy_stack")  # engine/lazy/stack.py's
_lazy_view: _Role[Callable[..., Any]] = _Role("lazy_view")  # engine/lazy/views.py's
_typed: _Role[type[TensorClass]] = _Role("typed")  # makes tensor classes of dataclasses
_attrs: _Role[type[TensorAttrs]] = _Role("attrs")  # the leaf descriptor attrs() builds

# ``register_X(value)``, called by the module that defines it, and ``X()``, the value
register_dynamic_class, dynamic_class = _dynamic.register, _dynamic.get
register_params_class, params_class = _params.register, _params.get


_SERVING_AS_TENSORDICT = [False]


def serve_as_tensordict(on: bool) -> None:
    """Whether tensorclass is being served as ``tensordict`` (``install_as_tensordict``
    turns it on), for the two tensordict behaviours that cost speed and only programs
    written for tensordict rely on: a ``TensorDictParams`` written into a tensor class is
    stored as the tensor class of its parameters (TorchRL's target updaters walk them), and
    a declared tensor class defined from then on has a ``__getattr__`` to chain (a class
    with ``__getattr__`` reads every attribute more slowly)."""
    _SERVING_AS_TENSORDICT[0] = on


def serving_as_tensordict() -> bool:
    """Whether :func:`serve_as_tensordict` is on."""
    return _SERVING_AS_TENSORDICT[0]


def params_held(value: object) -> Any:
    """The tensor class a ``TensorDictParams`` holds (whose leaves are its parameters) when
    :func:`serve_as_tensordict` is on, else ``None`` (and for any other value)."""
    cls = _params.value
    if not _SERVING_AS_TENSORDICT[0] or cls is None or not isinstance(value, cls):
        return None
    return value.__dict__["_td"]


register_swap_class, swap_class = _swap.register, _swap.get
register_lazy_class, lazy_class = _lazy.register, _lazy.get
register_lazy_stack_function, lazy_stack_function = _lazy_stack.register, _lazy_stack.get
register_lazy_view_function, lazy_view_function = _lazy_view.register, _lazy_view.get
register_typed_class, typed_class = _typed.register, _typed.get
register_attrs_class, attrs_class = _attrs.register, _attrs.get


def register_loader(load: Callable[[], object]) -> None:
    """Register what imports the modules that register the roles (the package does, as it
    is imported: before any role can be asked for)."""
    _loaders.append(load)
