"""Lazy stacks are their members' class *and* ``LazyStackedTensorDict``.

At run time ``lazy_stack(frames)`` is an instance of a class deriving from both
``LazyStackedTensorDict`` and ``Frame``. The library's annotations can only name one of
them (``lazy_stack(...) -> Frame``, ``LazyStackedTensorDict.lazy_stack(...) ->
LazyStackedTensorDict``); these hooks give the calls that build a lazy stack from
instances the intersection of the two, as mypy builds it when it narrows
``isinstance(frame, LazyStackedTensorDict)``: fields, the members' methods and the lazy-stack
API (``members``, ``append``, ``get(key, as_padded_tensor=True)``...) all type-check.

A mypy without ``TypeChecker.intersect_instances`` (or one that cannot build the
intersection) keeps the annotated return type.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import TypeInfo
from mypy.plugin import CheckerPluginInterface, FunctionContext, MethodContext
from mypy.types import CallableType, Instance, Type, TypeType, get_proper_type

from ._mypy_fields import TENSOR_CORE
from ._mypy_torch import item_class

__all__ = ["LAZY_STACK", "LAZY_STACK_FUNCTION", "LAZY_STACK_METHOD", "lazy_stack_hook"]

_MODULE = "tensorclass.engine.lazy.stack"
LAZY_STACK = f"{_MODULE}.LazyStackedTensorDict"
#: ``tensorclass.lazy_stack``
LAZY_STACK_FUNCTION = f"{_MODULE}.lazy_stack"
#: the class method ``X.lazy_stack`` of every tensor class (and ``LazyStackedTensorDict``)
LAZY_STACK_METHOD = "lazy_stack"
_ITEMS = ("input", "items")


def _argument(ctx: FunctionContext | MethodContext, names: tuple[str, ...]) -> int | None:
    """The index of the first formal parameter named one of ``names`` that was given."""
    for index, name in enumerate(ctx.callee_arg_names):
        if name in names and index < len(ctx.args) and ctx.args[index]:
            return index
    return None


def _on_tensor_class(receiver: Type) -> bool:
    """Whether a method is called on a tensor class or one of its instances."""
    proper = get_proper_type(receiver)
    if isinstance(proper, CallableType) and proper.is_type_obj():
        proper = get_proper_type(proper.ret_type)
    elif isinstance(proper, TypeType):
        proper = get_proper_type(proper.item)
    return isinstance(proper, Instance) and proper.type.has_base(TENSOR_CORE)


def lazy_type(api: CheckerPluginInterface, lazy: TypeInfo, member: Instance) -> Instance | None:
    """The type of a lazy stack of ``member`` instances: the intersection of ``lazy``
    (``LazyStackedTensorDict``) and ``member`` (``None`` if mypy cannot build it)."""
    if member.type.has_base(LAZY_STACK):
        return member  # a lazy stack of lazy stacks of X: a lazy stack of X
    intersect = getattr(api, "intersect_instances", None)
    if intersect is None:
        return None  # an older mypy: the annotated type
    try:
        found = intersect((Instance(lazy, []), member), [])
    except TypeError:  # another signature: the annotated type
        return None
    return found if isinstance(found, Instance) else None


def lazy_stack_hook(
    lookup: Callable[[str], TypeInfo | None],
) -> Callable[[FunctionContext | MethodContext], Type]:
    """The hook of ``lazy_stack(items)`` and ``X.lazy_stack(items)``: a lazy stack of the
    items' class (that class and ``LazyStackedTensorDict``); with ``out=``, the annotated
    type. ``lookup`` finds a class by its full name (the plugin's)."""

    def hook(ctx: FunctionContext | MethodContext) -> Type:
        default = ctx.default_return_type
        if isinstance(ctx, MethodContext) and not _on_tensor_class(ctx.type):
            return default
        if _argument(ctx, ("out",)) is not None:
            return default
        index = _argument(ctx, _ITEMS)
        if index is None or not isinstance(get_proper_type(default), Instance):
            return default  # no items, or tensors in (a Tensor out)
        member = item_class(ctx.arg_types[index][0])
        lazy = lookup(LAZY_STACK)
        if member is None or lazy is None:
            return default
        found = lazy_type(ctx.api, lazy, member)
        return found if found is not None else default

    return hook
