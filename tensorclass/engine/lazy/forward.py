r"""Names a lazy stack reads from its members' class.

The storage methods (``memmap``, ``share_memory_``, ``send``...) and the typed layer's names
(``from_module``, ``to_tensordict``, ``fields``...) live above the lazy-stack engine, on the
members' class. An instance is also an instance of that class, so it has them; these
descriptors make them readable on the generic ``LazyStackedTensorDict`` class too (the
generic class's members are ``TensorDict``\ s), and bind class methods to the members' class.
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

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
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


#: names instances get from their members' class, also readable on the generic class
MEMBER_CLASS_NAMES = (
    "all_gather",
    "all_reduce",
    "arecv",
    "asend",
    "broadcast",
    "consolidate",
    "dumps",
    "fields",
    "from_consolidated",
    "from_h5",
    "from_module",
    "from_modules",
    "from_safetensors",
    "from_zarr",
    "gather_and_stack",
    "irecv",
    "is_consolidated",
    "is_memmap",
    "is_shared",
    "isend",
    "json_schema",
    "load",
    "load_",
    "load_memmap",
    "load_memmap_",
    "make_memmap",
    "make_memmap_from_storage",
    "make_memmap_from_tensor",
    "map",
    "map_iter",
    "memmap",
    "memmap_",
    "memmap_like",
    "memmap_refresh_",
    "recv",
    "reduce",
    "save",
    "saved_path",
    "scatter",
    "send",
    "share_memory_",
    "to_h5",
    "to_lazystack",
    "to_safetensors",
    "to_tensordict",
    "to_zarr",
    "validate",
    # tables (storage/tables/methods.py)
    "from_arrow",
    "from_csv",
    "from_json",
    "from_pandas",
    "from_parquet",
    "to_arrow",
    "to_csv",
    "to_json",
    "to_pandas",
    "to_parquet",
)
