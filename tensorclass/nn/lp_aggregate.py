"""Whether composite log-probabilities are summed into one tensor.

>>> from tensorclass.nn import composite_lp_aggregate, set_composite_lp_aggregate
>>> composite_lp_aggregate()
False
>>> with set_composite_lp_aggregate(True):
...     composite_lp_aggregate()
True
>>> composite_lp_aggregate()
False
"""

from __future__ import annotations

import os
import threading

from ..switches import Nesting, check_mode

__all__ = ["composite_lp_aggregate", "set_composite_lp_aggregate"]


class _Process:
    """The process-wide value (the ``COMPOSITE_LP_AGGREGATE`` environment variable, if
    set, starts it)."""

    mode: bool = os.environ.get("COMPOSITE_LP_AGGREGATE", "").lower() in ("1", "true", "yes")


class _Thread(threading.local):
    """The value of the calling thread's ``thread_local=True`` blocks (``None``: none)."""

    mode: bool | None = None


_THREAD = _Thread()


class set_composite_lp_aggregate(Nesting):
    """Sum the log-probabilities (and entropies) of a ``CompositeDistribution`` into one
    tensor (``True``) or keep one ``<key>_log_prob`` entry per sampled key (``False``,
    the default).

    The value also decides the keys a probabilistic module with a composite
    distribution writes (read when the module is built): its per-key entries, and while
    ``True`` also their sum at ``"sample_log_prob"``. A module with one ordinary
    distribution writes ``"sample_log_prob"`` either way (unless given ``log_prob_key``).

    As in tensordict, it is a context manager, a decorator, and ``set()`` applies the
    value for the rest of the program (``unset()`` brings back the one it replaced). The
    value is process-wide; ``thread_local=True`` sets it for the calling thread only (and
    the blocks that thread enters inside it stay in that thread).

    >>> from tensorclass.nn import composite_lp_aggregate, set_composite_lp_aggregate
    >>> @set_composite_lp_aggregate(True)
    ... def summed():
    ...     return composite_lp_aggregate()
    >>> summed(), composite_lp_aggregate()
    (True, False)
    >>> switch = set_composite_lp_aggregate(True)
    >>> switch.set(); composite_lp_aggregate()
    True
    >>> switch.unset(); composite_lp_aggregate()
    False
    """

    def __init__(self, mode: bool = True, *, thread_local: bool = False) -> None:
        self.mode = check_mode("set_composite_lp_aggregate", mode)
        self.thread_local = thread_local
        self._saved: list[tuple[bool, bool | None]] = []

    def __enter__(self) -> None:
        if self.thread_local or _THREAD.mode is not None:
            self._saved.append((True, _THREAD.mode))
            _THREAD.mode = self.mode
        else:
            self._saved.append((False, _Process.mode))
            _Process.mode = self.mode

    def _restore(self) -> None:
        local, previous = self._saved.pop()
        if local:
            _THREAD.mode = previous
        else:
            _Process.mode = bool(previous)


def composite_lp_aggregate(nowarn: bool = False) -> bool:
    """Whether composite log-probabilities are summed (see
    :class:`set_composite_lp_aggregate`); ``False`` unless set. ``nowarn`` has no effect.

    >>> from tensorclass.nn import composite_lp_aggregate
    >>> composite_lp_aggregate()
    False
    """
    mode = _THREAD.mode
    return _Process.mode if mode is None else mode
