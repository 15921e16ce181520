"""Key access on typed tensor classes: ``x["field"]``, ``x["a", "b"]``, ``x.get(...)``.

The engine types key reads as ``Any`` (keys and batch indices share ``__getitem__``).
For a typed class the key names a declared field, so these hooks give the read the
field's type and report an unknown key, listing the valid ones. The methods that take
keys without reading them (``set``, ``select``, ``exclude``, ``rename_key_``, ``update``
with a dict literal...) have their literal keys checked too. Keys that are not literal
(a ``str`` variable) and dynamic classes (``TensorDict``) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.erasetype import remove_instance_last_known_values
from mypy.nodes import DictExpr, Expression
from mypy.plugin import MethodContext
from mypy.typeops import make_simplified_union
from mypy.types import Instance, Type, get_proper_type

from ._mypy_fields import (
    TENSORCLASS_KEY,
    Key,
    UnknownKey,
    is_tensor_class,
    literal_key,
    literal_keys,
    resolve_key,
    strip_none,
)

__all__ = ["KEY_METHODS", "key_method_hook"]

#: method name -> (indices of the key arguments, whether the result is the key's value)
KEY_METHODS: dict[str, tuple[tuple[int, ...], bool]] = {
    "__getitem__": ((0,), True),
    "get": ((0,), True),
    "pop": ((0,), True),
    "setdefault": ((0,), True),
    "__setitem__": ((0,), False),
    "set": ((0,), False),
    "set_": ((0,), False),
    "__delitem__": ((0,), False),
    "del_": ((0,), False),
    "fill_": ((0,), False),
    "rename_key_": ((0, 1), False),
    "select": ((0,), False),  # *keys: every one of them
    "exclude": ((0,), False),
    "update": ((0,), False),  # a dict literal: its keys, nested dicts followed
    "update_": ((0,), False),
}


def _first(ctx: MethodContext, index: int) -> tuple[Expression | None, Type | None]:
    if len(ctx.args) <= index or not ctx.args[index]:
        return None, None
    return ctx.args[index][0], ctx.arg_types[index][0]


def _check(ctx: MethodContext, receiver: Instance, key: Key, node: Expression) -> Type | None:
    """The type of ``receiver[key]``; ``None`` (and an error) for an unknown key."""
    try:
        return resolve_key(receiver, key)
    except UnknownKey as err:
        ctx.api.fail(str(err), node, code=TENSORCLASS_KEY)
        return None


def _check_mapping(ctx: MethodContext, receiver: Instance, prefix: Key, expr: DictExpr) -> None:
    """The literal keys of a dict given to ``update``; a dict under a nested tensor class
    is checked against that class."""
    for key_expr, value in expr.items:
        if key_expr is None:  # a ** unpacking
            continue
        key = literal_key(key_expr, None)
        if key is None:
            continue
        found = _check(ctx, receiver, prefix + key, key_expr)
        if found is None or not isinstance(value, DictExpr):
            continue
        nested = strip_none(found)
        if isinstance(nested, Instance) and is_tensor_class(nested.type):
            _check_mapping(ctx, receiver, prefix + key, value)


def _check_arguments(ctx: MethodContext, receiver: Instance, index: int) -> None:
    """Check every literal key given for one parameter (one, or all of a ``*keys``)."""
    if index < len(ctx.args):
        for expr, typ in zip(ctx.args[index], ctx.arg_types[index]):
            for key in literal_keys(expr, typ) or ():
                _check(ctx, receiver, key, expr)


def _key_method(ctx: MethodContext, method: str) -> Type:
    receiver = get_proper_type(ctx.type)
    if not (isinstance(receiver, Instance) and is_tensor_class(receiver.type)):
        return ctx.default_return_type
    indices, reads = KEY_METHODS[method]
    if method in ("update", "update_"):
        expr, _ = _first(ctx, 0)
        if isinstance(expr, DictExpr):
            _check_mapping(ctx, receiver, (), expr)
        return ctx.default_return_type
    if not reads:
        for index in indices:
            _check_arguments(ctx, receiver, index)
        return ctx.default_return_type
    expr, typ = _first(ctx, indices[0])
    keys = literal_keys(expr, typ)
    if keys is None or expr is None:
        return ctx.default_return_type
    values = [_check(ctx, receiver, key, expr) for key in keys]
    known = [value for value in values if value is not None]
    if len(known) < len(values):
        return ctx.default_return_type
    value = make_simplified_union(known)
    if method in ("get", "pop", "setdefault"):
        _, default = _first(ctx, 1)
        if default is not None:
            return make_simplified_union([value, remove_instance_last_known_values(default)])
    return value


def key_method_hook(method: str) -> Callable[[MethodContext], Type]:
    """The hook for one key method (see :data:`KEY_METHODS`)."""

    def hook(ctx: MethodContext) -> Type:
        return _key_method(ctx, method)

    return hook
