"""Construction-time checks of module keys against a tensor class (``schema=X``).

A key is valid for ``X`` when it names a declared field, following nested tensor classes
for nested keys (below a dynamic level, a ``TensorDict`` or an ``Any`` field, every key is
valid). A key a sequential reads is *available* when ``X`` always holds it (a field
without a ``None`` default) or an earlier module writes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..engine.core.state import TensorCore
from ..errors import KeyNotFoundError, SchemaError
from ..fields import MISSING
from ..schema import Field, FieldKind, resolved_schema
from .keys import Key

__all__ = [
    "available_keys",
    "check_keys",
    "check_module_keys",
    "check_schema_class",
    "is_available",
    "valid_keys",
]


def check_schema_class(schema: object) -> None:
    """``schema=`` must be a tensor class (a ``TensorClass`` subclass or ``TensorDict``)."""
    if not (isinstance(schema, type) and issubclass(schema, TensorCore)):
        raise SchemaError(f"schema= must be a tensor class; got {schema!r}")


def _field_at(cls: type, key: Key) -> tuple[bool, Field | None]:
    """Whether ``key`` is valid for ``cls``, and the field it ends on (``None`` if dynamic)."""
    parts = (key,) if type(key) is str else key
    current: type | None = cls
    found: Field | None = None
    for depth, part in enumerate(parts):
        schema = resolved_schema(current) if current is not None else None
        if schema is None:
            return True, None
        found = schema.by_name.get(part)
        if found is None:
            return False, None
        if depth == len(parts) - 1:
            break
        if found.kind is FieldKind.NESTED:
            current = found.nested_class
        elif found.kind is FieldKind.ANY:
            current = None
        else:
            return False, None
    return True, found


def valid_keys(cls: type, prefix: tuple[str, ...] = ()) -> list[Key]:
    """Every key ``cls`` declares, nested classes included (for error messages)."""
    schema = resolved_schema(cls)
    if schema is None:
        return []
    out: list[Key] = []
    for f in schema.fields:
        key = (*prefix, f.name)
        out.append(key if prefix else f.name)
        if f.kind is FieldKind.NESTED and f.nested_class is not None:
            out.extend(valid_keys(f.nested_class, key))
    return out


def check_keys(schema: type, keys: Iterable[Key], owner: str, role: str) -> None:
    """Raise a ``KeyError`` naming the valid keys if a key is not a field of ``schema``."""
    for key in keys:
        ok, _ = _field_at(schema, key)
        if not ok:
            shown = ", ".join(repr(k) for k in valid_keys(schema)) or "(none)"
            raise KeyNotFoundError(
                f"{owner}: {role} {key!r} is not a field of {schema.__name__}; valid keys: {shown}",
                key=key,
            )


def check_module_keys(
    schema: Any, module: str, in_keys: Iterable[Key], out_keys: Iterable[Key]
) -> None:
    """Check ``schema`` (:func:`check_schema_class`), then that every in key and out key of
    the module (``module`` names its class in the errors) is a field of it."""
    check_schema_class(schema)
    owner = f"{module}(schema={schema.__name__})"
    check_keys(schema, in_keys, owner, "in key")
    check_keys(schema, out_keys, owner, "out key")


def _always_held(f: Field) -> bool:
    return (
        f.required
        or (f.default is not None and f.default is not MISSING)
        or (f.default_factory is not MISSING)
    )


def available_keys(cls: type, prefix: tuple[str, ...] = ()) -> tuple[set[Key], set[Key]]:
    """The keys every instance of ``cls`` holds, and the levels below which any key is.

    Returns ``(keys, open_levels)``: a key under an open level (a dynamic nested value) is
    taken to be available.
    """
    schema = resolved_schema(cls)
    if schema is None:
        return set(), {prefix}  # a dynamic class (``TensorDict``): any key may be there
    keys: set[Key] = set()
    open_levels: set[Key] = set()
    for f in schema.fields:
        if not _always_held(f):
            continue
        path = (*prefix, f.name)
        keys.add(path if prefix else f.name)
        if f.kind is FieldKind.NESTED and f.nested_class is not None:
            sub_keys, sub_open = available_keys(f.nested_class, path)
            keys |= sub_keys
            open_levels |= sub_open
        elif f.kind is FieldKind.ANY:
            open_levels.add(path)
    return keys, open_levels


def is_available(key: Key, keys: set[Key], open_levels: set[Key]) -> bool:
    """Whether ``key`` is in ``keys`` or below one of ``open_levels``."""
    if key in keys:
        return True
    parts = (key,) if type(key) is str else key
    return any(parts[:depth] in open_levels for depth in range(len(parts)))
