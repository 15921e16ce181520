"""Modules made from other things: a whole-instance function (``WrapModule``), another
module (``TensorDictModuleWrapper``) or a decorated function (``as_tensordict_module``).

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictModule, TensorDictSequential, WrapModule
>>> flatten = WrapModule(lambda td: td.reshape(-1), in_keys=["x"], out_keys=["x"])
>>> seq = TensorDictSequential(TensorDictModule(lambda x: x + 1, ["x"], ["x"]), flatten)
>>> seq(TensorDict(x=torch.zeros(2, 3, 1), batch_size=[2, 3])).batch_size
torch.Size([6])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic

from torch import nn

from ..engine.base import TensorDictBase
from ..engine.ops import TensorOps
from .base import FixedKeysModule, HeldKeysModule, T, TensorDictModuleBase
from .keys import Key, KeysLike, as_keys
from .module import TensorDictModule
from .schema_check import check_module_keys

__all__ = ["TensorDictModuleWrapper", "WrapModule", "as_tensordict_module"]


class WrapModule(FixedKeysModule[T]):
    """A function from a tensor class to a tensor class, as a module.

    Use it to put an operation on the whole instance (a reshape, a selection...) in a
    :class:`~tensorclass.nn.TensorDictSequential`.

    Args:
        func: called with the input; returns a tensor class.
        inplace: ``False`` (default) returns what ``func`` returns; ``True`` writes its
            entries into the input (``update``) and returns the input.
        in_keys: the keys ``func`` reads (they tell a sequential what it needs; not
            checked at call time). Default: none.
        out_keys: the keys ``func`` writes. Default: none.
        schema: a tensor class; the keys must be its fields, and the input must be one.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass.nn import WrapModule
    >>> double = WrapModule(lambda td: td * 2, in_keys=["x"], out_keys=["x"])
    >>> double(TensorDict(x=torch.ones(2)))["x"]
    tensor([2., 2.])
    """

    def __init__(
        self,
        func: Callable[[Any], Any],
        *,
        inplace: bool = False,
        in_keys: KeysLike | None = None,
        out_keys: KeysLike | None = None,
        schema: type[T] | None = None,
    ) -> None:
        super().__init__()
        if not callable(func):
            raise TypeError(f"WrapModule needs a callable; got {type(func).__name__}")
        self.func = func
        self.inplace = inplace
        self._in_keys = as_keys(in_keys if in_keys is not None else [], "in_keys")
        self._out_keys = as_keys(out_keys if out_keys is not None else [], "out_keys")
        if schema is not None:
            check_module_keys(schema, "WrapModule", self._in_keys, self._out_keys)
            self._schema = schema

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        result: TensorOps = self.func(tensordict)
        if self.inplace and result is not tensordict:
            tensordict.update(result)
            result = tensordict
        if tensordict_out is not None:
            tensordict_out.update(result)
            return tensordict_out
        return result

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [("func", repr(self.func)), *super()._repr_fields()]


class TensorDictModuleWrapper(HeldKeysModule[T], Generic[T]):
    """Wraps a key-reading module and behaves like it; subclass it to change ``forward``.

    The keys, the schema and the parameters are those of ``td_module``; an attribute the
    wrapper does not have is read from ``td_module``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass.nn import TensorDictModule, TensorDictModuleWrapper
    >>> class Clipped(TensorDictModuleWrapper):
    ...     def forward(self, tensordict):
    ...         tensordict = self.td_module(tensordict)
    ...         tensordict["y"] = tensordict["y"].clamp(max=1.5)
    ...         return tensordict
    >>> inner = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    >>> Clipped(inner)(TensorDict(x=torch.tensor([0.0, 1.0])))["y"]
    tensor([1.0000, 1.5000])
    """

    def __init__(self, td_module: TensorDictModuleBase[T]) -> None:
        super().__init__()
        if not TensorDictModuleBase.is_tdmodule_compatible(td_module):
            raise TypeError(
                f"TensorDictModuleWrapper needs a module with in_keys and out_keys; got "
                f"{type(td_module).__name__}"
            )
        self.td_module = td_module
        self._schema = getattr(td_module, "schema", None)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            td_module = self._modules.get("td_module")
            if td_module is None or name.startswith("__"):
                raise
            return getattr(td_module, name)

    def _held(self) -> TensorDictModuleBase[T]:
        return self.td_module

    @property
    def out_keys_source(self) -> list[Key]:
        """The wrapped module's ``out_keys_source`` (its ``out_keys`` if it has none)."""
        return list(getattr(self.td_module, "out_keys_source", self.td_module.out_keys))

    def _forward_td(self, tensordict: Any, tensordict_out: Any) -> Any:
        if tensordict_out is None:
            return self.td_module(tensordict)
        return self.td_module(tensordict, tensordict_out=tensordict_out)

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [("td_module", repr(self.td_module))]


class as_tensordict_module:
    """Decorator: a function of tensors becomes a :class:`~tensorclass.nn.TensorDictModule`.

    The decorated name is a module reading ``in_keys`` (passed positionally) and writing
    ``out_keys``; called with tensors, it still returns tensors.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass import as_tensordict_module
    >>> @as_tensordict_module(in_keys=["x", "y"], out_keys=["z"])
    ... def add(x, y):
    ...     return x + y
    >>> add(TensorDict(x=torch.ones(2), y=torch.ones(2)))["z"]
    tensor([2., 2.])
    >>> add(torch.ones(1), torch.ones(1))
    tensor([2.])
    """

    def __init__(
        self,
        *,
        in_keys: KeysLike,
        out_keys: KeysLike,
        schema: type[TensorDictBase] | None = None,
    ) -> None:
        self.in_keys = as_keys(in_keys, "in_keys")
        self.out_keys = as_keys(out_keys, "out_keys")
        self.schema = schema

    def __call__(self, func: Callable[..., Any]) -> TensorDictModule[Any]:
        """Wrap ``func`` in a ``TensorDictModule``."""
        module: TensorDictModule[Any] = TensorDictModule(
            func, in_keys=self.in_keys, out_keys=self.out_keys, schema=self.schema
        )
        if not isinstance(func, nn.Module):
            module.__doc__ = func.__doc__
        return module
