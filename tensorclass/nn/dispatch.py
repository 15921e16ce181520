"""``dispatch``: call a function (or a module's ``forward``) of a tensor class with tensors.

A decorated function ``f(tensordict, ...)`` (or method ``forward(self, tensordict, ...)``)
still takes a tensor class; it can also be called with the input tensors, positionally in
the order of its source keys or by keyword (a nested key's name joins its parts with the
separator: ``("a", "b")`` is ``a_b``). A ``TensorDict`` is built from them, the function
runs, and the values under the destination keys are returned: one tensor, or a tuple.

>>> import torch
>>> from tensorclass.nn import dispatch
>>> @dispatch(source=["x", ("obs", "scale")], dest=["y"])
... def scale(tensordict):
...     tensordict["y"] = tensordict["x"] * tensordict["obs", "scale"]
...     return tensordict
>>> scale(x=torch.ones(2), obs_scale=torch.full((2,), 3.0))
tensor([3., 3.])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast, overload

from ..engine.core.state import TensorCore
from ..errors import InvalidKeyError
from ..keys import NestedKey
from ..tensordict import TensorDict
from .keys import Key, as_keys

__all__ = ["dispatch"]

F = TypeVar("F", bound=Callable[..., Any])


@overload
def dispatch(separator: F) -> F: ...


@overload
def dispatch(
    separator: str = "_",
    source: str | Sequence[NestedKey] = "in_keys",
    dest: str | Sequence[NestedKey] = "out_keys",
    auto_batch_size: bool = True,
) -> Callable[[F], F]: ...


def dispatch(
    separator: Any = "_",
    source: str | Sequence[NestedKey] = "in_keys",
    dest: str | Sequence[NestedKey] = "out_keys",
    auto_batch_size: bool = True,
) -> Any:
    """Let a function of a tensor class be called with tensors too (a decorator).

    Use it bare (``@dispatch``) or with options (``@dispatch(separator=".")``).

    Args:
        separator: joins the parts of a nested key into a keyword name (``"_"``).
        source: the keys the tensors fill, in positional order; a string names the
            attribute of ``self`` that holds them (``"in_keys"``, for a method).
        dest: the keys whose values are returned; a string names an attribute of ``self``
            (``"out_keys"``).
        auto_batch_size: give the built ``TensorDict`` the leading dims its tensors share
            (``True``), or no batch dims (``False``).

    A method is recognised by its first parameter being named ``self``. Keywords that name
    no source key are passed on to the function.
    """
    if callable(separator):
        return _decorator("_", source, dest, auto_batch_size)(separator)
    if not isinstance(separator, str):
        raise TypeError(f"dispatch: separator must be a string; got {separator!r}")
    return _decorator(separator, source, dest, auto_batch_size)


def _keys(spec: str | Sequence[NestedKey], owner: Any, role: str, name: str) -> list[Key]:
    if not isinstance(spec, str):
        return as_keys(spec, role)
    if owner is None or not hasattr(owner, spec):
        raise InvalidKeyError(
            f"dispatch({role}={spec!r}): {name} is not a method of an object with a {spec!r} "
            f"attribute; give {role} as a list of keys"
        )
    return as_keys(getattr(owner, spec), role)


def _decorator(
    separator: str,
    source: str | Sequence[NestedKey],
    dest: str | Sequence[NestedKey],
    auto_batch_size: bool,
) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        params = list(inspect.signature(func).parameters)
        is_method = bool(params) and params[0] == "self"
        name = getattr(func, "__qualname__", repr(func))

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            first = 1 if is_method else 0
            if len(args) > first and isinstance(args[first], TensorCore):
                return func(*args, **kwargs)
            if "tensordict" in kwargs and isinstance(kwargs["tensordict"], TensorCore):
                return func(*args, **kwargs)
            owner = args[0] if is_method else None
            values = args[first:]
            in_keys = _keys(source, owner, "source", name)
            out_keys = _keys(dest, owner, "dest", name)
            if len(values) > len(in_keys):
                raise TypeError(
                    f"{name} takes {len(in_keys)} input tensor(s) {in_keys!r}; got {len(values)}"
                )
            td = TensorDict()
            for key, value in zip(in_keys, values):
                td.set(key, value)
            for key in in_keys[len(values) :]:
                arg = key if type(key) is str else separator.join(key)
                if arg in kwargs:
                    td.set(key, kwargs.pop(arg))
            if auto_batch_size:
                td.auto_batch_size_()
            result = func(*args[:first], td, **kwargs)
            outputs = tuple(result.get(key) for key in out_keys)
            return outputs[0] if len(outputs) == 1 else outputs

        return cast(F, wrapper)

    return decorate
