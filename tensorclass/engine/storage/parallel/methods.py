"""The shared-memory methods of every tensor class: ``share_memory_`` and ``is_shared``.

Functions, attached to ``TensorDictBase`` in ``engine/base.py``, as ``map`` and ``map_iter``
are (:mod:`.map`: a process pool over chunks along a dim). The ``share_memory_``
attached is ``storage/consolidate.py``'s, which calls this one for an instance that is not
consolidated.
"""

from __future__ import annotations

from ...core.self_types import B

__all__ = ["is_shared", "share_memory_"]


def share_memory_(self: B) -> B:
    """Move every tensor to shared memory, in place (memory-mapped ones already are).

    Worker processes then see the same memory: their writes reach this instance.
    """
    for tensor in self._own_tensors():
        if not tensor.is_shared():  # type: ignore[no-untyped-call]
            tensor.share_memory_()  # type: ignore[no-untyped-call]
    return self


def is_shared(self: B) -> bool:
    """Whether every tensor is in shared memory (or memory-mapped)."""
    tensors = self._own_tensors()
    return bool(tensors) and all(t.is_shared() for t in tensors)  # type: ignore[no-untyped-call]
