"""The classes of lazy containers that are also instances of their members' class.

A lazy stack of ``Point`` instances is an instance of ``LazyStackedTensorDict[Point]``, a
class made once per member class with both bases, so ``isinstance(stack, Point)`` holds and
``stack.x`` reads the field through the container; lazy shape views do the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from ..core.state import TensorCore

__all__ = ["variant_class"]

B = TypeVar("B", bound=TensorCore)


def variant_class(
    base: type[B],
    source_cls: type[TensorCore],
    cache: dict[type, type[B]],
    role: str,
    field: Callable[[str], object],
    doc: str,
) -> type[B]:
    """Make ``base[source_cls]``, a subclass of both holding ``source_cls`` as ``role`` and
    ``field(name)`` for each of its declared fields, and keep it in ``cache``.

    Callers look in ``cache`` themselves first: ``torch.compile`` reconstructs a class it
    found in that class attribute, never one returned through this function."""
    name = f"{base.__name__}[{source_cls.__name__}]"
    namespace: dict[str, object] = {
        "__slots__": (),
        "__module__": base.__module__,
        "__qualname__": name,
        role: source_cls,
        "__doc__": doc,
    }
    schema = getattr(source_cls, "__tensorclass_schema__", None)
    for field_name in schema.names if schema is not None else ():
        namespace[field_name] = field(field_name)
    # type.__new__ with the source's metaclass: a typed class gets no schema rebuild
    made = cast("type[B]", type.__new__(type(source_cls), name, (base, source_cls), namespace))
    cache[source_cls] = made
    return made
