"""Griffe extension: signatures show no private module-level names.

A public function may default a parameter to a private constant (``sample_shape: _Shape =
_EMPTY`` with ``_EMPTY = torch.Size()``) or annotate it with a private alias. Griffe shows
the source expression, so the reader sees a name they cannot look up. This extension
replaces such a name, in a parameter's default or annotation, by the value the module
assigns to it (``torch.Size()``, ``torch.Size | list[int] | tuple[int, ...]``), when that
value is an expression that names nothing private itself. A private class or type variable
(a ``TypedDict`` of options, ``_T``) stays as it is: its value is no plain expression. A
public constant whose value names a private object shows its type only.

The code is untouched: only what the reference shows changes. Enabled in ``mkdocs.yml``
under the python handler's ``extensions:``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, TypeVar

from griffe import (
    AliasResolutionError,
    Attribute,
    Expr,
    ExprName,
    Extension,
    Function,
    GriffeLoader,
    Module,
    Object,
)

T = TypeVar("T", bound=Object)


class PrivateNames(Extension):
    """Show the values of private constants and aliases in public signatures."""

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        for attribute in _members(pkg, Attribute):
            # ``NO_DEFAULT: Any = _Missing.NO_DEFAULT``: the value tells nothing public
            if not attribute.name.startswith("_") and _names_private(attribute.value):
                attribute.value = None
        for function in _members(pkg, Function):
            for parameter in function.parameters:
                parameter.default = _public(parameter.default, function)
                parameter.annotation = _public(parameter.annotation, function)


def _members(obj: Object, kind: type[T]) -> Iterator[T]:
    """The objects of ``kind`` defined in ``obj`` (aliases are walked where defined)."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, kind):
            yield member
        if isinstance(member, Object) and not isinstance(member, Attribute | Function):
            yield from _members(member, kind)


def _names_private(value: str | Expr | None) -> bool:
    """Whether the expression ``value`` names a private object."""
    if not isinstance(value, Expr):
        return False
    names = [part for part in value.iterate(flat=True) if isinstance(part, ExprName)]
    return any(part.name.startswith("_") for part in names)


def _value(name: str, function: Function) -> str | Expr | None:
    """What ``function``'s module assigns to the private ``name``, if it can be shown."""
    member = function.module.members.get(name)
    if member is not None and member.is_alias:  # imported from the module defining it
        try:
            member = member.final_target
        except AliasResolutionError:
            return None
    if not isinstance(member, Attribute) or member.value is None:
        return None
    value = member.value
    if _names_private(value):
        return None
    if isinstance(value, Expr):
        if "TypeVar" in str(value) or "NewType" in str(value):
            return None
    return value


def _public(expr: str | Expr | None, function: Function) -> str | Expr | None:
    """``expr`` with a private name of ``function``'s module replaced by its value."""
    if isinstance(expr, ExprName) and expr.name.startswith("_"):
        value = _value(expr.name, function)
        return expr if value is None else value
    if isinstance(expr, Expr):
        for field in dataclasses.fields(expr):
            current = getattr(expr, field.name)
            if isinstance(current, Expr):
                setattr(expr, field.name, _public(current, function))
            elif isinstance(current, list):
                setattr(expr, field.name, [_public(item, function) for item in current])
    return expr
