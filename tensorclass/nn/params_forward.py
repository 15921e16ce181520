"""Class-level forwards that make ``TensorDictParams`` a tensor class as well as a module.

``install_forwards(cls)`` puts on ``cls`` one descriptor per public ``TensorDict`` method
and property (and per operator dunder) that ``nn.Module`` does not define, plus the
tensor-class versions of the few names ``nn.Module`` gives another meaning and that
``TensorDictParams`` follows tensordict for (``apply``, ``float``...). Read on an instance,
a descriptor gives the held tensor class's (``self._td``) attribute; read on the class, the
``TensorDict`` one (so ``inspect.signature`` sees the real parameters).

Methods that return the held tensor class (in-place ones: ``add_``, ``zero_``,
``apply_``...) return the module instead; other results (``p + 1``, ``p.apply(fn)``) are
plain tensor-class instances. ``TensorDictParams`` arguments are passed as their tensor
class.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from torch import nn

from ..engine.leafwise.table import LeafOps
from ..tensordict import TensorDict
from .params_sync import reconcile

__all__ = ["install_forwards", "unwrap"]

#: names nn.Module defines for which TensorDictParams follows the tensor class
#: (out-of-place results, like tensordict); ``to``, ``cpu``, ``cuda``, ``requires_grad_``,
#: ``zero_grad``, ``state_dict`` and ``load_state_dict`` keep the module's meaning.
TENSOR_CLASS_WINS = ("apply", "float", "double", "half", "bfloat16", "type")

#: dunders forwarded to the tensor class (operators are looked up on the type)
DUNDERS = (
    "__abs__ __add__ __and__ __floordiv__ __invert__ __mod__ __mul__ __neg__ __or__ __pos__ "
    "__pow__ __radd__ __rand__ __rfloordiv__ __rmod__ __rmul__ __ror__ __rpow__ __rsub__ "
    "__rtruediv__ __rxor__ __sub__ __truediv__ __xor__ __iadd__ __iand__ __ifloordiv__ "
    "__imod__ __imul__ __ior__ __ipow__ __isub__ __itruediv__ __ixor__ "
    "__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __iter__ __array_ufunc__"
).split()


def unwrap(value: object) -> Any:
    """``value``'s tensor class if it is a ``TensorDictParams`` (lists and tuples too)."""
    td = getattr(value, "__dict__", {}).get("_td") if isinstance(value, nn.Module) else None
    if td is not None:
        return td
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v) for v in value)
    return value


#: methods that may add, remove or rename keys in place but return something other than
#: the tensor class (``pop`` returns the value): the registration is brought in step after
#: them, as after every method that returns the held tensor class (the in-place ones)
MUTATORS = frozenset({"pop", "popitem", "separates", "setdefault", "split_keys"})

#: the in-place entries of the engine's leaf-wise table (``mul_``, ``exp_``...): they write
#: into every tensor leaf and, by construction, neither add, remove nor replace one, so the
#: registration is not checked after them (``tests/nn/test_params_sync.py`` checks it is so)
LEAFWISE_INPLACE = frozenset(
    name for name in vars(LeafOps) if name.endswith("_") and not name.startswith("_")
)


class _Method:
    """Forwards a method to the held tensor class; returns the module for results that are it.

    After a method that returns the held tensor class (an in-place method, except the
    :data:`LEAFWISE_INPLACE` ones) or one of :data:`MUTATORS`, the module's registration is
    brought in step with the leaves.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.mutator = name in MUTATORS
        self.leafwise = name in LEAFWISE_INPLACE

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return getattr(TensorDict, self.name)
        td = obj.__dict__["_td"]
        mutator, leafwise = self.mutator, self.leafwise
        method: Any = getattr(td, self.name)
        if not callable(method):
            return method

        @functools.wraps(method)
        def forward(*args: object, **kwargs: object) -> object:
            args = tuple(unwrap(a) for a in args)
            kwargs = {k: unwrap(v) for k, v in kwargs.items()}
            result = method(*args, **kwargs)
            if result is td:
                if not leafwise:
                    reconcile(obj)
                return obj
            if mutator:
                reconcile(obj)
            return result

        return forward


class _Property:
    """Forwards a property (reads and, where the tensor class allows, writes)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return getattr(TensorDict, self.name)
        return getattr(obj.__dict__["_td"], self.name)

    def __set__(self, obj: object, value: object) -> None:
        setattr(obj.__dict__["_td"], self.name, value)


def _torch_function(
    cls: type,
    func: Callable[..., object],
    types: tuple[type, ...],
    args: tuple[object, ...] = (),
    kwargs: dict[str, object] | None = None,
) -> object:
    """Run the torch function on the tensor classes held by ``TensorDictParams`` arguments."""
    kwargs = {k: unwrap(v) for k, v in (kwargs or {}).items()}
    return func(*(unwrap(a) for a in args), **kwargs)


def install_forwards(cls: type) -> None:
    """Put the forwarding descriptors on ``cls`` (names it defines itself are kept)."""
    names = [
        name
        for name in dir(TensorDict)
        if not name.startswith("_") and not hasattr(nn.Module, name)
    ]
    for name in (*names, *TENSOR_CLASS_WINS, *DUNDERS):
        if name in cls.__dict__:
            continue
        static = inspect.getattr_static(TensorDict, name)
        setattr(cls, name, _Property(name) if isinstance(static, property) else _Method(name))
    cls.__hash__ = nn.Module.__hash__  # type: ignore[assignment]  # identity, for optimizers
    cls.__torch_function__ = classmethod(_torch_function)  # type: ignore[attr-defined]
