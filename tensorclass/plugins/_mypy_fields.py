"""What the mypy plugin knows about tensor classes: their fields and their keys.

Everything here reads mypy's own view of a class (its ``TypeInfo``), so it works the same
for classes of the module being checked, of other modules, and from the incremental cache.
"""

from __future__ import annotations

from mypy.errorcodes import ErrorCode
from mypy.expandtype import expand_type_by_instance
from mypy.maptype import map_instance_to_supertype
from mypy.nodes import (
    DictExpr,
    Expression,
    ListExpr,
    SetExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.types import (
    AnyType,
    FunctionLike,
    Instance,
    LiteralType,
    NoneType,
    ProperType,
    TupleType,
    Type,
    TypeOfAny,
    TypeType,
    UnionType,
    get_proper_type,
)

__all__ = [
    "TENSORCLASS_KEY",
    "TENSOR_CLASS",
    "TENSOR_DICT",
    "TENSOR_CORE",
    "Key",
    "UnknownKey",
    "class_name",
    "class_of",
    "field_names",
    "field_type",
    "is_tensor_class",
    "keys_of_expression",
    "literal_key",
    "literal_keys",
    "is_optional",
    "resolve_key",
    "resolve_key_path",
    "strip_none",
]

TENSOR_CLASS = "tensorclass.typed.TensorClass"
#: a TensorClass with the dynamic schema: any string key
TENSOR_DICT = "tensorclass.tensordict.TensorDict"
TENSOR_CORE = "tensorclass.engine.core.state.TensorCore"
#: typed classes that also take keys besides their fields
TYPED_TENSOR_DICT = "tensorclass.typed_tensordict.TypedTensorDict"
_RESERVED = frozenset({"batch_size", "device", "names"})

TENSORCLASS_KEY = ErrorCode(
    "tensorclass-key", "Check that keys name declared fields of tensor classes", "tensorclass"
)
"""The error code of every key error the plugin reports (``# type: ignore[tensorclass-key]``)."""

Key = tuple[str, ...]


def is_tensor_class(info: TypeInfo) -> bool:
    """Whether ``info`` is a typed tensor class (a ``TensorClass`` subclass with declared
    fields: not the base, not ``TensorDict``)."""
    return (
        info.fullname != TENSOR_CLASS
        and info.has_base(TENSOR_CLASS)
        and not info.has_base(TENSOR_DICT)
    )


def class_name(info: TypeInfo) -> str:
    """The name of a tensor class in messages: ``X`` for a lazy stack of ``X`` too (mypy
    types those as an intersection, see ``_mypy_lazy``)."""
    if info.is_intersection:
        for parent in info.bases:
            if is_tensor_class(parent.type):
                return parent.type.name
    return info.name


def field_names(info: TypeInfo) -> list[str]:
    """The declared fields of a tensor class, in constructor order (inherited first)."""
    if info.is_intersection:  # a lazy stack of X (see _mypy_lazy): X's fields
        for parent in info.bases:
            if is_tensor_class(parent.type):
                return field_names(parent.type)
    meta = info.metadata.get("dataclass")
    if meta is not None:
        names = [attr["name"] for attr in meta.get("attributes", ())]
        return [name for name in names if name not in _RESERVED]
    names = []  # the dataclass transform did not run (an error in the class): read the MRO
    for base in reversed(info.mro):
        if not is_tensor_class(base):
            continue
        for name, sym in base.names.items():
            node = sym.node
            if (
                isinstance(node, Var)
                and not node.is_classvar
                and not sym.plugin_generated
                and not name.startswith("_")
                and name not in names
            ):
                names.append(name)
    return names


def field_type(instance: Instance, name: str) -> Type:
    """The declared type of field ``name`` as seen on ``instance`` (generics expanded)."""
    owner = instance.type.get_containing_type_info(name)
    if owner is None:
        return AnyType(TypeOfAny.from_error)
    node = owner.names[name].node
    if not isinstance(node, Var) or node.type is None:
        return AnyType(TypeOfAny.special_form)
    return expand_type_by_instance(node.type, map_instance_to_supertype(instance, owner))


def class_of(typ: Type) -> Instance | None:
    """The instance type a class object stands for (``X`` given as ``schema=X``)."""
    proper = get_proper_type(typ)
    if isinstance(proper, FunctionLike) and proper.is_type_obj():
        ret = get_proper_type(proper.items[0].ret_type)
        return ret if isinstance(ret, Instance) else None
    if isinstance(proper, TypeType):
        item = get_proper_type(proper.item)
        return item if isinstance(item, Instance) else None
    return None


def literal_key(expr: Expression | None, typ: Type | None) -> Key | None:
    """A key written literally: ``"a"``, ``("a", "b")``, ``("a", ("b", "c"))``, or a value
    typed ``Literal["a"]`` / ``tuple[Literal["a"], Literal["b"]]``. ``None`` otherwise."""
    if isinstance(expr, StrExpr):
        return (expr.value,)
    if isinstance(expr, TupleExpr):
        parts: list[str] = []
        for item in expr.items:
            sub = literal_key(item, None)
            if sub is None:
                return None
            parts.extend(sub)
        return tuple(parts) if parts else None
    return _literal_key_type(typ) if typ is not None else None


def literal_keys(expr: Expression | None, typ: Type | None) -> list[Key] | None:
    """The keys a value may be: one literal key (see :func:`literal_key`), or each member of
    a union of literal keys (``Literal["a", "b"]``). ``None`` if any member is not literal."""
    key = literal_key(expr, typ)
    if key is not None:
        return [key]
    proper = get_proper_type(typ) if typ is not None else None
    if not isinstance(proper, UnionType):
        return None
    keys = [_literal_key_type(item) for item in proper.items]
    found = [key for key in keys if key is not None]
    return found if found and len(found) == len(keys) else None


def _literal_key_type(typ: Type) -> Key | None:
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.last_known_value is not None:
        proper = proper.last_known_value
    if isinstance(proper, LiteralType) and isinstance(proper.value, str):
        if proper.fallback.type.fullname == "builtins.str":
            return (proper.value,)
        return None
    if isinstance(proper, TupleType) and proper.items:
        parts: list[str] = []
        for item in proper.items:
            sub = _literal_key_type(item)
            if sub is None:
                return None
            parts.extend(sub)
        return tuple(parts)
    return None


def keys_of_expression(expr: Expression) -> list[tuple[Key, Expression]]:
    """The literal keys of an ``in_keys``/``out_keys`` argument, each with its node.

    Accepts one key (a string or a nested tuple), a list or set of keys, or a dict whose
    *keys* are keys (values are keyword-argument names). Items that are not literal keys
    are skipped: they cannot be checked.
    """
    if isinstance(expr, (StrExpr, TupleExpr)):
        key = literal_key(expr, None)  # one key; a tuple is one nested key, as at run time
        return [(key, expr)] if key is not None else []
    if isinstance(expr, DictExpr):
        items: list[Expression] = [key for key, _ in expr.items if key is not None]
    elif isinstance(expr, (ListExpr, SetExpr)):
        items = list(expr.items)
    else:
        return []
    found = []
    for item in items:
        key = literal_key(item, None)
        if key is not None:
            found.append((key, item))
    return found


class UnknownKey(Exception):
    """A key that does not exist on a tensor class; ``str()`` is the message."""


def strip_none(typ: Type) -> ProperType:
    """``X`` for ``X | None``; any other type unchanged."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        items = [i for i in proper.items if not isinstance(get_proper_type(i), NoneType)]
        if len(items) == 1:
            return get_proper_type(items[0])
    return proper


def _spell(key: Key) -> str:
    return f'"{key[0]}"' if len(key) == 1 else "(" + ", ".join(f'"{k}"' for k in key) + ")"


def resolve_key(instance: Instance, key: Key) -> Type:
    """The type of ``instance[key]``; raises :class:`UnknownKey` for an unknown key.

    Nested keys follow nested tensor-class fields; a dynamic level (a ``TensorDict``
    field, ``Any``, a union) ends the check and gives ``Any``.
    """
    return resolve_key_path(instance, key)[0]


def resolve_key_path(instance: Instance, key: Key) -> tuple[Type, bool]:
    """:func:`resolve_key`, and whether the key passes through an optional nested field
    (``child: Child | None``): then the key may be missing."""
    optional = False
    current: ProperType = instance
    for depth, part in enumerate(key):
        if not (isinstance(current, Instance) and is_tensor_class(current.type)):
            if isinstance(current, AnyType) or (
                isinstance(current, Instance) and current.type.has_base(TENSOR_CORE)
            ):
                return AnyType(TypeOfAny.special_form), optional  # dynamic keys: anything goes
            if isinstance(current, UnionType):
                return AnyType(TypeOfAny.special_form), optional
            holder = ".".join((class_name(instance.type), *key[:depth]))
            held = current.type.name if isinstance(current, Instance) else str(current)
            raise UnknownKey(
                f'Key {_spell(key)} does not exist: {holder} holds "{held}", '
                f'not a tensor class, so it has no key "{part}"'
            )
        names = field_names(current.type)
        if part not in names and current.type.has_base(TYPED_TENSOR_DICT):
            return AnyType(TypeOfAny.special_form), optional  # a key besides the fields
        if part not in names:
            valid = ", ".join(f'"{n}"' for n in names) or "(none)"
            where = "" if depth == 0 else f" (in {_spell(key)})"
            raise UnknownKey(
                f'"{part}" is not a field of {class_name(current.type)}{where}; valid keys: {valid}'
            )
        found = field_type(current, part)
        if depth == len(key) - 1:
            return found, optional
        current = strip_none(found)
        optional = optional or is_optional(found)
    return AnyType(TypeOfAny.special_form), optional


def is_optional(typ: Type) -> bool:
    """Whether ``typ`` is a union with ``None`` (``X | None``)."""
    proper = get_proper_type(typ)
    return isinstance(proper, UnionType) and any(
        isinstance(get_proper_type(item), NoneType) for item in proper.items
    )
