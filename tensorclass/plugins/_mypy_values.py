"""Values written by key on typed tensor classes: which types a field accepts.

A write by key (``x["k"] = v``, ``set``, ``update({...})``...) is checked as the attribute
write ``x.k = v`` is: the value must have the field's type, except that a mapping or a
tensor collection fits a nested tensor-class or ``TensorDict`` field (it is converted).
Two writes differ: at a batch index (``set_at_``, ``update_at_``) the value is a slice of
the leaf, so ``None`` never fits and a tensor or a number fits a tensor field or a nested
one (``tensor[i] = 0.5``; a nested instance writes it to every tensor leaf); and
``set_non_tensor`` stores non-tensor data, which a tensor or nested field never holds.
The mappings read here are dict literals and ``dict(key=value)`` calls, as users write.
"""

from __future__ import annotations

from typing import Literal

from mypy.erasetype import remove_instance_last_known_values
from mypy.errorcodes import ErrorCode
from mypy.messages import format_type
from mypy.nodes import ARG_NAMED, ARG_POS, CallExpr, DictExpr, Expression, RefExpr
from mypy.plugin import MethodContext
from mypy.subtypes import is_subtype
from mypy.typeops import make_simplified_union
from mypy.types import Instance, NoneType, ProperType, Type, UnionType, get_proper_type

from ._mypy_fields import TENSOR_CORE, Key, class_name, literal_key, strip_none

__all__ = ["TENSORCLASS_VALUE", "Write", "check_value", "mapping_items"]

TENSORCLASS_VALUE = ErrorCode(
    "tensorclass-value",
    "Check that values written by key match the declared field type",
    "tensorclass",
)
"""The error code of a value written by key whose type is not the field's
(``# type: ignore[tensorclass-value]``)."""

Write = Literal["set", "at", "non_tensor"]
"""How a value is written: whole (``set``), at a batch index (``set_at_``), or as
non-tensor data (``set_non_tensor``)."""

_TENSOR = "torch._tensor.Tensor"


def _items(typ: Type) -> list[ProperType]:
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        return [get_proper_type(item) for item in proper.items]
    return [proper]


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


def _is_a(typ: ProperType, *bases: str) -> bool:
    return isinstance(typ, Instance) and any(typ.type.has_base(base) for base in bases)


def _accepts_at(ctx: MethodContext, field: Type, value: Type) -> bool:
    """:func:`_accepts` for a slice of the leaf: not ``None``; a tensor or a number into a
    tensor field, or into every tensor leaf of a nested one (``x[i] = 0.5``)."""
    items = [item for item in _items(field) if not isinstance(item, NoneType)]
    if _accepts(make_simplified_union(items) if items else field, value):
        return True
    number = ctx.api.named_generic_type("builtins.complex", [])  # int and float promote
    return any(_is_a(item, _TENSOR, TENSOR_CORE) for item in items) and all(
        _is_a(item, _TENSOR) or is_subtype(item, number) for item in _items(value)
    )


def _holds_no_data(field: Type) -> bool:
    """Whether a field never holds non-tensor data: a tensor or a nested instance."""
    return _is_a(strip_none(field), _TENSOR, TENSOR_CORE)


def check_value(
    ctx: MethodContext,
    receiver: Instance,
    key: Key,
    field: Type,
    value: Type,
    node: Expression,
    write: Write = "set",
) -> None:
    """Report a value written under ``key`` whose type the field does not accept."""
    value = remove_instance_last_known_values(value)
    options = ctx.api.options
    spelled = key[0] if len(key) == 1 else ", ".join(key)
    where = f'key "{spelled}" of {class_name(receiver.type)}'
    declared = f"the field is declared {format_type(field, options)}"
    if write == "non_tensor" and _holds_no_data(field):
        ctx.api.fail(
            f"Value of type {format_type(value, options)} cannot be written to {where} by "
            f"set_non_tensor: {declared}, which holds no non-tensor data",
            node,
            code=TENSORCLASS_VALUE,
        )
        return
    if _accepts_at(ctx, field, value) if write == "at" else _accepts(field, value):
        return
    at = " at an index" if write == "at" else ""
    ctx.api.fail(
        f"Value of type {format_type(value, options)} cannot be written to {where}{at}: {declared}",
        node,
        code=TENSORCLASS_VALUE,
    )


def mapping_items(expr: Expression) -> list[tuple[Key, Expression, Expression]] | None:
    """The literal entries of a mapping written in place: ``(key, key node, value)`` for a
    dict literal ``{"k": v}`` or a ``dict(k=v)`` call (with a literal mapping as its
    positional argument). ``None`` for any other expression (a variable, a comprehension):
    its entries are not known. Entries with a non-literal key or ``**`` are skipped."""
    if isinstance(expr, DictExpr):
        entries = []
        for key_expr, value in expr.items:
            key = literal_key(key_expr, None)
            if key is not None and key_expr is not None:  # None: a ** unpacking
                entries.append((key, key_expr, value))
        return entries
    if not (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, RefExpr)
        and expr.callee.fullname == "builtins.dict"
    ):
        return None
    entries = []
    for arg, kind, name in zip(expr.args, expr.arg_kinds, expr.arg_names):
        if kind == ARG_POS:  # dict({...}, k=v): the positional mapping comes first
            entries.extend(mapping_items(arg) or ())
        elif kind == ARG_NAMED and name is not None:
            entries.append(((name,), arg, arg))
    return entries
