"""Key access on typed tensor classes: ``x["field"]``, ``x["a", "b"]``, ``x.get(...)``.

The engine types key reads as ``Any`` (keys and batch indices share ``__getitem__``).
For a typed class the key names a declared field, so these hooks give the read the
field's type and report an unknown key, listing the valid ones. The methods that take
keys without reading them (``set``, ``select``, ``exclude``, ``rename_key_``, ``update``
with a dict literal...) have their literal keys checked too, and the writes (``x[k] = v``,
``set``, ``setdefault``, ``update``, ``set_at_``...) the types of their values (see
``_mypy_values``). A key through an optional nested field (``child: Child | None``) may be
missing: its read is possibly ``None``. Keys that are not literal (a ``str`` variable) and
dynamic classes (``TensorDict``) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.erasetype import remove_instance_last_known_values
from mypy.nodes import Expression
from mypy.plugin import MethodContext
from mypy.typeops import make_simplified_union
from mypy.types import Instance, NoneType, Type, get_proper_type

from ._mypy_fields import (
    TENSORCLASS_KEY,
    Key,
    UnknownKey,
    is_tensor_class,
    literal_keys,
    resolve_key_path,
    strip_none,
)
from ._mypy_values import TENSORCLASS_VALUE, Write, check_value, mapping_items

__all__ = ["KEY_METHODS", "TENSORCLASS_VALUE", "key_method_hook"]

#: method name -> (index of the value argument of a write by key, how it is written)
_VALUE_ARGUMENT: dict[str, tuple[int, Write]] = {
    "__setitem__": (1, "set"),
    "set": (1, "set"),
    "set_": (1, "set"),
    "set_at_": (1, "at"),  # (key, value, index)
    "set_non_tensor": (1, "non_tensor"),
}

#: method name -> how the values of its mapping (the first argument) are written
_MAPPING_WRITES: dict[str, Write] = {
    "update": "set",
    "update_": "set",
    "update_at_": "at",  # (mapping, index)
    "copy_at_": "at",
}

#: method name -> (indices of the key arguments, whether the result is the key's value)
KEY_METHODS: dict[str, tuple[tuple[int, ...], bool]] = {
    "__getitem__": ((0,), True),
    "get": ((0,), True),
    "pop": ((0,), True),
    "setdefault": ((0,), True),  # and its default is a value written
    "__setitem__": ((0,), False),
    "set": ((0,), False),
    "set_": ((0,), False),
    "set_at_": ((0,), False),
    "set_non_tensor": ((0,), False),
    "__delitem__": ((0,), False),
    "del_": ((0,), False),
    "fill_": ((0,), False),
    "rename_key_": ((0, 1), False),
    "select": ((0,), False),  # *keys: every one of them
    "exclude": ((0,), False),
    # a dict literal or dict(k=v) call: its keys, nested mappings followed
    "update": ((0,), False),
    "update_": ((0,), False),
    "update_at_": ((0,), False),
    "copy_at_": ((0,), False),
}


def _first(ctx: MethodContext, index: int) -> tuple[Expression | None, Type | None]:
    if len(ctx.args) <= index or not ctx.args[index]:
        return None, None
    return ctx.args[index][0], ctx.arg_types[index][0]


def _check(ctx: MethodContext, receiver: Instance, key: Key, node: Expression) -> Type | None:
    """The type of ``receiver[key]``; ``None`` (and an error) for an unknown key."""
    found = _check_path(ctx, receiver, key, node)
    return found[0] if found is not None else None


def _check_path(
    ctx: MethodContext, receiver: Instance, key: Key, node: Expression
) -> tuple[Type, bool] | None:
    """:func:`_check`, and whether the key passes through an optional nested field."""
    try:
        return resolve_key_path(receiver, key)
    except UnknownKey as err:
        ctx.api.fail(str(err), node, code=TENSORCLASS_KEY)
        return None


def _check_mapping(
    ctx: MethodContext, receiver: Instance, prefix: Key, expr: Expression, write: Write
) -> None:
    """The literal keys of a mapping given to ``update`` (a dict literal, ``dict(k=v)``),
    and the types of their values; a mapping under a nested tensor class is checked
    against that class. Other mappings (a variable, a comprehension) are left alone."""
    for key, key_expr, value in mapping_items(expr) or ():
        found = _check(ctx, receiver, prefix + key, key_expr)
        if found is None:
            continue
        nested = strip_none(found)
        if (
            isinstance(nested, Instance)
            and is_tensor_class(nested.type)
            and mapping_items(value) is not None
        ):
            _check_mapping(ctx, receiver, prefix + key, value, write)
            continue
        with ctx.api.msg.filter_errors():  # already reported where the dict is checked
            value_type = ctx.api.get_expression_type(value)
        check_value(ctx, receiver, prefix + key, found, value_type, value, write)


def _check_write(ctx: MethodContext, receiver: Instance, method: str) -> None:
    """The key of a write (``x[key] = v``, ``set``, ``set_at_``...), and the value's type."""
    expr, typ = _first(ctx, 0)
    index, write = _VALUE_ARGUMENT[method]
    value_expr, value_type = _first(ctx, index)
    keys = literal_keys(expr, typ)
    if keys is None or expr is None:
        return
    for key in keys:
        found = _check(ctx, receiver, key, expr)
        if found is not None and value_expr is not None and value_type is not None:
            check_value(ctx, receiver, key, found, value_type, value_expr, write)


def _check_arguments(ctx: MethodContext, receiver: Instance, index: int) -> None:
    """Check every literal key given for one parameter (one, or all of a ``*keys``)."""
    if index < len(ctx.args):
        for expr, typ in zip(ctx.args[index], ctx.arg_types[index]):
            for key in literal_keys(expr, typ) or ():
                _check(ctx, receiver, key, expr)


#: keywords of a lazy stack's ``get`` that read the members' values (a list, a padded or a
#: nested tensor): the method's own overloads type the result, not the field
_MEMBER_READS = frozenset({"as_list", "as_padded_tensor", "as_nested_tensor"})


def _reads_members(ctx: MethodContext) -> bool:
    return any(name in _MEMBER_READS for names in ctx.arg_names for name in names)


def _key_method(ctx: MethodContext, method: str) -> Type:
    receiver = get_proper_type(ctx.type)
    if not (isinstance(receiver, Instance) and is_tensor_class(receiver.type)):
        return ctx.default_return_type
    indices, reads = KEY_METHODS[method]
    if method in _MAPPING_WRITES:
        expr, _ = _first(ctx, 0)
        if expr is not None:
            _check_mapping(ctx, receiver, (), expr, _MAPPING_WRITES[method])
        return ctx.default_return_type
    if method in _VALUE_ARGUMENT:
        _check_write(ctx, receiver, method)
        return ctx.default_return_type
    if not reads:
        for index in indices:
            _check_arguments(ctx, receiver, index)
        return ctx.default_return_type
    expr, typ = _first(ctx, indices[0])
    keys = literal_keys(expr, typ)
    if keys is None or expr is None:
        return ctx.default_return_type
    paths = [_check_path(ctx, receiver, key, expr) for key in keys]
    known = [path for path in paths if path is not None]
    if len(known) < len(paths) or _reads_members(ctx):
        return ctx.default_return_type
    value = make_simplified_union([found for found, _ in known])
    if method == "setdefault":  # the default is written when the key is missing
        default_expr, default = _first(ctx, 1)
        if default_expr is not None and default is not None:
            for key, (found, _) in zip(keys, known):
                check_value(ctx, receiver, key, found, default, default_expr)
        return value  # the key's value either way (a missing nested level is created)
    if method in ("get", "pop"):
        _, default = _first(ctx, 1)
        if default is not None:  # what a missing key gives
            return make_simplified_union([value, remove_instance_last_known_values(default)])
    if any(optional for _, optional in known):
        # through an optional nested field (unset: the key is missing), possibly None
        return make_simplified_union([value, NoneType()])
    return value


def key_method_hook(method: str) -> Callable[[MethodContext], Type]:
    """The hook for one key method (see :data:`KEY_METHODS`)."""

    def hook(ctx: MethodContext) -> Type:
        return _key_method(ctx, method)

    return hook
