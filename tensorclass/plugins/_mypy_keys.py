"""Key access on typed tensor classes: ``x["field"]``, ``x["a", "b"]``, ``x.get(...)``.

The engine types key reads as ``Any`` (keys and batch indices share ``__getitem__``).
For a typed class the key names a declared field, so these hooks give the read the
field's type and report an unknown key, listing the valid ones. Keys that are not
literal (a ``str`` variable) and dynamic classes (``TensorDict``) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.erasetype import remove_instance_last_known_values
from mypy.nodes import Expression
from mypy.plugin import MethodContext
from mypy.typeops import make_simplified_union
from mypy.types import Instance, Type, get_proper_type

from ._mypy_fields import TENSORCLASS_KEY, UnknownKey, is_tensor_class, literal_key, resolve_key

__all__ = ["KEY_METHODS", "key_method_hook"]

#: method name -> (index of the key argument, whether the result is the key's value)
KEY_METHODS: dict[str, tuple[int, bool]] = {
    "__getitem__": (0, True),
    "get": (0, True),
    "pop": (0, True),
    "setdefault": (0, True),
    "__setitem__": (0, False),
    "set": (0, False),
    "set_": (0, False),
    "__delitem__": (0, False),
    "del_": (0, False),
}


def _first(ctx: MethodContext, index: int) -> tuple[Expression | None, Type | None]:
    if len(ctx.args) <= index or not ctx.args[index]:
        return None, None
    return ctx.args[index][0], ctx.arg_types[index][0]


def _key_method(ctx: MethodContext, method: str) -> Type:
    receiver = get_proper_type(ctx.type)
    if not (isinstance(receiver, Instance) and is_tensor_class(receiver.type)):
        return ctx.default_return_type
    index, reads = KEY_METHODS[method]
    expr, typ = _first(ctx, index)
    key = literal_key(expr, typ)
    if key is None:
        return ctx.default_return_type
    try:
        value = resolve_key(receiver, key)
    except UnknownKey as err:
        ctx.api.fail(str(err), expr or ctx.context, code=TENSORCLASS_KEY)
        return ctx.default_return_type
    if not reads:
        return ctx.default_return_type
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
