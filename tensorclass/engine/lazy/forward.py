r"""Names a lazy stack reads from its members' class.

A lazy stack derives from ``TensorDictBase``, so it has every operation of the engine. The
typed layer's names (``fields``, ``validate``, ``to_tensordict``..., defined above the
engine) still come from the members' class. An instance is also an instance of that class,
so it has them; these descriptors make them readable on the generic
``LazyStackedTensorDict`` class too (the generic class's members are ``TensorDict``\ s).
"""

from __future__ import annotations

from typing import Any

from ...registry import dynamic_class
from ..core.state import MISSING

__all__ = ["MEMBER_CLASS_NAMES", "MemberAttribute"]


class MemberAttribute:
    """A name of the members' class that the lazy-stack engine does not define itself (the
    typed layer's names, which live above the engine): read from the members' class
    (``TensorDict`` for the generic class), bound to the stack (a class method: to the
    members' class)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        cls: Any = owner if owner is not None else type(obj)
        member = cls._member_cls or dynamic_class()
        for klass in member.__mro__:
            raw = klass.__dict__.get(self.name, MISSING)
            if raw is not MISSING:
                break
        else:
            raise AttributeError(f"{member.__name__} has no attribute {self.name!r}")
        if isinstance(raw, (classmethod, staticmethod)):
            return raw.__get__(None, member)  # built by the members' class, not the stack's
        if obj is None or not hasattr(raw, "__get__"):
            return raw
        return raw.__get__(obj, cls)


#: the typed layer's names (``tensorclass.typed.TensorClass``, ``tensorclass.tensordict``),
#: read from the members' class: they live above the engine. Every other name a lazy stack
#: inherits from ``TensorDictBase``; its class methods build with ``cls._dense_class()``
#: (``from_dict``, ``from_module``...), or its ``_from_mapping`` (the table readers), which on
#: a lazy-stack class is the members' class, or build what a file holds (``from_h5``...).
MEMBER_CLASS_NAMES = (
    "fields",
    "json_schema",
    "load_memmap",
    "to_tensordict",
    "validate",
)
