"""Storage and scale methods of every tensor class: memmap, shared memory, map, distributed.

This mixin only forwards: each concept lives in its own module (``memmap/``, ``parallel``,
``distributed``), imported when first used.
"""

from __future__ import annotations

from torch import Tensor
from typing_extensions import Self

from ._core import TensorCore

__all__ = ["StorageMethods"]


class StorageMethods(TensorCore):
    """``memmap``/``load_memmap``, ``share_memory_``, ``map``, ``send``/``recv`` and collectives."""

    __slots__ = ()

    def _own_tensors(self) -> list[Tensor]:
        """The tensors stored in this instance (at every depth), not copies of them."""
        out: list[Tensor] = []
        for leaf in self._data.values():
            if isinstance(leaf, Tensor):
                out.append(leaf)
            elif isinstance(leaf, StorageMethods):
                out.extend(leaf._own_tensors())
        return out

    # -- shared memory and worker processes ------------------------------------------------

    def share_memory_(self) -> Self:
        """Move every tensor to shared memory, in place (memory-mapped ones already are).

        Worker processes then see the same memory: their writes reach this instance.
        """
        for tensor in self._own_tensors():
            if not tensor.is_shared():  # type: ignore[no-untyped-call]
                tensor.share_memory_()  # type: ignore[no-untyped-call]
        return self

    def is_shared(self) -> bool:
        """Whether every tensor is in shared memory (or memory-mapped)."""
        tensors = self._own_tensors()
        return bool(tensors) and all(t.is_shared() for t in tensors)  # type: ignore[no-untyped-call]
