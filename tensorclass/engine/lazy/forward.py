r"""Names a lazy stack reads from its members' class.

A lazy stack derives from ``TensorDictBase``, so it has every operation of the engine. Two
kinds of names still come from the members' class: the typed layer's names (``fields``,
``validate``, ``to_tensordict``..., defined above the engine), and the class methods that
build instances (``from_h5``, ``load``, ``from_zarr``...), which a lazy stack binds to its
members' class. An instance is also an instance of that class, so it has them; these
descriptors make them readable on the generic ``LazyStackedTensorDict`` class too (the
generic class's members are ``TensorDict``\ s).
"""

from __future__ import annotations

from typing import Any

from ...registry import dynamic_class
from ..core.state import MISSING

__all__ = ["MEMBER_CLASS_NAMES", "MemberAttribute"]


class MemberAttribute:
    """A name of the members' class that the lazy-stack engine does not define itself (the
    storage methods and the typed layer's names, which live above the engine): read from
    the members' class (``TensorDict`` for the generic class), bound to the stack."""

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


#: names read from the members' class: the class methods, which build instances of the
#: members' class (not lazy stacks), and the typed layer's names (above the engine). The
#: instance operations (storage, scale) a lazy stack inherits from ``TensorDictBase``, and
#: the class methods that build with ``cls._dense_class()`` (``from_module``, ``from_dict``...)
#: need no forwarding: on a lazy-stack class that is the members' class.
MEMBER_CLASS_NAMES = (
    # the typed layer's names (tensorclass.typed.TensorClass, tensorclass.tensordict)
    "fields",
    "json_schema",
    "load_memmap",
    "to_tensordict",
    "validate",
    # class methods: a lazy stack's builds an instance of the members' class
    "from_arrow",
    "from_consolidated",
    "from_csv",
    "from_h5",
    "from_json",
    "from_pandas",
    "from_parquet",
    "from_safetensors",
    "from_zarr",
    "load",
)
