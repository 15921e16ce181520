"""Key access on typed tensor classes: ``x["field"]``, ``x["a", "b"]``, ``x.get(...)``.

The engine types key reads as ``Any`` (keys and batch indices share ``__getitem__``).
For a typed class the key names a declared field, so these hooks give the read the
field's type and report an unknown key, listing the valid ones. The methods that take
keys without reading them (``set``, ``select``, ``exclude``, ``rename_key_``, ``update``
with a dict literal...) have their literal keys checked too, and the writes (``x[k] = v``,
``set``, ``set_``, ``update``) the types of their values. A key through an optional nested
field (``child: Child | None``) may be missing: its read is possibly ``None``. Keys that
are not literal (a ``str`` variable) and dynamic classes (``TensorDict``) are left alone.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.erasetype import remove_instance_last_known_values
from mypy.errorcodes import ErrorCode
from mypy.messages import format_type
from mypy.nodes import DictExpr, Expression
from mypy.plugin import MethodContext
from mypy.subtypes import is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import Instance, NoneType, Type, get_proper_type

from ._mypy_fields import (
    TENSOR_CORE,
    TENSORCLASS_KEY,
    Key,
    UnknownKey,
    class_name,
    is_tensor_class,
    literal_key,
    literal_keys,
    resolve_key_path,
    strip_none,
)

__all__ = ["KEY_METHODS", "TENSORCLASS_VALUE", "key_method_hook"]

TENSORCLASS_VALUE = ErrorCode(
    "tensorclass-value",
    "Check that values written by key match the declared field type",
    "tensorclass",
)
"""The error code of a value written by key whose type is not the field's
(``# type: ignore[tensorclass-value]``)."""

#: method name -> index of the value argument of a write by key
_VALUE_ARGUMENT = {"__setitem__": 1, "set": 1, "set_": 1}

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


def _accepts(field: Type, value: Type) -> bool:
    """Whether a value of type ``value`` may be written to a field declared ``field``: a
    subtype, or a mapping / tensor collection for a nested tensor-class or ``TensorDict``
    field (converted to the field's class at run time)."""
    if is_subtype(value, field):
        return True
    nested = strip_none(field)
    if not (isinstance(nested, Instance) and nested.type.has_base(TENSOR_CORE)):
        return False
    proper = get_proper_type(value)
    return isinstance(proper, Instance) and (
        proper.type.has_base("typing.Mapping") or proper.type.has_base(TENSOR_CORE)
    )


def _check_value(
    ctx: MethodContext, receiver: Instance, key: Key, field: Type, value: Type, node: Expression
) -> None:
    """Report a value written under ``key`` whose type the field does not accept."""
    value = remove_instance_last_known_values(value)
    if _accepts(field, value):
        return
    options = ctx.api.options
    spelled = key[0] if len(key) == 1 else ", ".join(key)
    ctx.api.fail(
        f'Value of type {format_type(value, options)} cannot be written to key "{spelled}" of '
        f"{class_name(receiver.type)}: the field is declared {format_type(field, options)}",
        node,
        code=TENSORCLASS_VALUE,
    )


def _check_mapping(ctx: MethodContext, receiver: Instance, prefix: Key, expr: DictExpr) -> None:
    """The literal keys of a dict given to ``update``, and the types of their values; a
    dict under a nested tensor class is checked against that class."""
    for key_expr, value in expr.items:
        if key_expr is None:  # a ** unpacking
            continue
        key = literal_key(key_expr, None)
        if key is None:
            continue
        found = _check(ctx, receiver, prefix + key, key_expr)
        if found is None:
            continue
        nested = strip_none(found)
        if isinstance(value, DictExpr) and (
            isinstance(nested, Instance) and is_tensor_class(nested.type)
        ):
            _check_mapping(ctx, receiver, prefix + key, value)
            continue
        with ctx.api.msg.filter_errors():  # already reported where the dict is checked
            value_type = ctx.api.get_expression_type(value)
        _check_value(ctx, receiver, prefix + key, found, value_type, value)


def _check_write(ctx: MethodContext, receiver: Instance, method: str) -> None:
    """The key of a write (``x[key] = v``, ``set``, ``set_``), and the value's type."""
    expr, typ = _first(ctx, 0)
    value_expr, value_type = _first(ctx, _VALUE_ARGUMENT[method])
    keys = literal_keys(expr, typ)
    if keys is None or expr is None:
        return
    for key in keys:
        found = _check(ctx, receiver, key, expr)
        if found is not None and value_expr is not None and value_type is not None:
            _check_value(ctx, receiver, key, found, value_type, value_expr)


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
    if method in ("update", "update_"):
        expr, _ = _first(ctx, 0)
        if isinstance(expr, DictExpr):
            _check_mapping(ctx, receiver, (), expr)
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
    if method in ("get", "pop", "setdefault"):
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
