"""Module keys checked against a schema: ``TensorDictModule(..., schema=X)``.

Given ``schema=X`` (a typed tensor class), the literal ``in_keys``/``out_keys`` of a
key-reading module (``TensorDictModule``, ``ProbabilisticTensorDictModule``, any
``TensorDictModuleBase`` whose constructor takes them) are checked against X's fields,
following nested tensor classes. A dict ``in_keys`` is checked by its keys for a
``TensorDictModule`` (``{key: keyword}``) and by its values for a probabilistic module
(``{keyword: key}``, as tensordict reads it). A ``TensorDictSequential(*modules,
schema=X)`` checks the literal keys of the modules written inline in the call (those
without a schema of their own, nested sequentials included) and its ``selected_out_keys``.
Keys held in variables cannot be seen and are not checked.
"""

from __future__ import annotations

from mypy.nodes import (
    ARG_POS,
    CallExpr,
    Decorator,
    DictExpr,
    Expression,
    FuncDef,
    OverloadedFuncDef,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.plugin import FunctionContext
from mypy.types import Instance, Type, get_proper_type

from ._mypy_fields import (
    TENSORCLASS_KEY,
    Key,
    UnknownKey,
    class_of,
    is_tensor_class,
    keys_of_expression,
    resolve_key,
)

__all__ = ["KEYED_CALLS", "MODULE_BASE", "SEQUENTIAL", "module_hook", "sequential_hook"]

MODULE_BASE = "tensorclass.nn.base.TensorDictModuleBase"
SEQUENTIAL = "tensorclass.nn.sequential.TensorDictSequential"
PROBABILISTIC = "tensorclass.nn.probabilistic.ProbabilisticTensorDictModule"
"""Modules whose dict ``in_keys`` maps keyword names to keys (the keys are its values)."""
KEYED_CALLS = frozenset({"tensorclass.nn.wrappers.as_tensordict_module"})
"""Calls that are not module classes but take ``in_keys``/``out_keys`` with ``schema=``."""
_KEY_ARGUMENTS = ("in_keys", "out_keys")
_DROP = "_"  # an out key that drops the output


def _formal(ctx: FunctionContext, name: str) -> list[tuple[Expression, Type]]:
    if name not in ctx.callee_arg_names:
        return []
    index = ctx.callee_arg_names.index(name)
    return list(zip(ctx.args[index], ctx.arg_types[index]))


def _schema(ctx: FunctionContext) -> Instance | None:
    given = _formal(ctx, "schema")
    if not given:
        return None
    schema = class_of(given[0][1])
    return schema if schema is not None and is_tensor_class(schema.type) else None


def _literal_keys(expr: Expression, by_value: bool) -> list[tuple[Key, Expression]]:
    """The literal keys of a keys argument; of a dict, its values when ``by_value``."""
    if by_value and isinstance(expr, DictExpr):
        values = [value for _, value in expr.items if isinstance(value, (StrExpr, TupleExpr))]
        return [found for value in values for found in keys_of_expression(value)]
    return keys_of_expression(expr)


def _check(
    ctx: FunctionContext, schema: Instance, what: str, expr: Expression, by_value: bool = False
) -> None:
    for key, node in _literal_keys(expr, by_value and what == "in_keys"):
        if what == "out_keys" and key == (_DROP,):
            continue
        try:
            resolve_key(schema, key)
        except UnknownKey as err:
            ctx.api.fail(f"{what} of schema {schema.type.name}: {err}", node, code=TENSORCLASS_KEY)


def _init_parameters(info: TypeInfo) -> list[str | None]:
    """The parameter names of a class's ``__init__``, without ``self``."""
    sym = info.get("__init__")
    node = sym.node if sym is not None else None
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, OverloadedFuncDef) and node.items:
        first = node.items[0]
        node = first.func if isinstance(first, Decorator) else first
    if not isinstance(node, FuncDef):
        return []
    return list(node.arg_names[1:])


def _call_argument(call: CallExpr, name: str, parameters: list[str | None]) -> Expression | None:
    for arg, arg_name in zip(call.args, call.arg_names):
        if arg_name == name:
            return arg
    positional = [arg for arg, kind in zip(call.args, call.arg_kinds) if kind == ARG_POS]
    if name in parameters and parameters.index(name) < len(positional):
        return positional[parameters.index(name)]
    return None


def _called_class(expr: Expression) -> TypeInfo | None:
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        node = expr.callee.node
        if isinstance(node, TypeInfo):
            return node
    return None


def _check_inline(ctx: FunctionContext, schema: Instance, expr: Expression) -> None:
    """Check a module written inline in a sequential's arguments (recursively)."""
    info = _called_class(expr)
    if info is None or not isinstance(expr, CallExpr):
        return
    if any(name == "schema" for name in expr.arg_names):
        return  # it has its own schema: its own call is checked against it
    if info.has_base(SEQUENTIAL):
        for arg, kind in zip(expr.args, expr.arg_kinds):
            if kind == ARG_POS:
                _check_inline(ctx, schema, arg)
    elif info.has_base(MODULE_BASE):
        parameters = _init_parameters(info)
        for what in _KEY_ARGUMENTS:
            keys = _call_argument(expr, what, parameters)
            if keys is not None:
                _check(ctx, schema, what, keys, info.has_base(PROBABILISTIC))


def module_hook(ctx: FunctionContext) -> Type:
    """Check the literal ``in_keys``/``out_keys`` of a module built with ``schema=X``."""
    schema = _schema(ctx)
    if schema is not None:
        built = get_proper_type(ctx.default_return_type)
        by_value = isinstance(built, Instance) and built.type.has_base(PROBABILISTIC)
        for what in _KEY_ARGUMENTS:
            for expr, _ in _formal(ctx, what):
                _check(ctx, schema, what, expr, by_value)
    return ctx.default_return_type


def sequential_hook(ctx: FunctionContext) -> Type:
    """Check the inline modules and ``selected_out_keys`` of a sequential with a schema."""
    schema = _schema(ctx)
    if schema is not None:
        modules = _formal(ctx, "modules") or list(zip(ctx.args[0], ctx.arg_types[0]))
        for expr, _ in modules:
            _check_inline(ctx, schema, expr)
        for expr, _ in _formal(ctx, "selected_out_keys"):
            _check(ctx, schema, "selected_out_keys", expr)
    return ctx.default_return_type
