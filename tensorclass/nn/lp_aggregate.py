"""Whether composite log-probabilities are summed into one tensor, scoped to a block.

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

import contextvars

from ..switches import _Scoped

__all__ = ["composite_lp_aggregate", "set_composite_lp_aggregate"]

_AGGREGATE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "tensorclass_composite_lp_aggregate", default=False
)


class set_composite_lp_aggregate(_Scoped):
    """Sum the log-probabilities (and entropies) of a ``CompositeDistribution`` into one
    tensor (``True``) or keep one ``<key>_log_prob`` entry per sampled key (``False``,
    the default) inside a ``with`` block or a decorated function.

    The value also decides the keys a probabilistic module with a composite
    distribution writes (read when the module is built): its per-key entries, and while
    ``True`` also their sum at ``"sample_log_prob"``. A module with one ordinary
    distribution writes ``"sample_log_prob"`` either way (unless given ``log_prob_key``).

    The value lives in a :class:`contextvars.ContextVar`: leaving the block restores the
    previous one, and threads and asyncio tasks each see their own (``thread_local`` is
    accepted for tensordict's signature; the block is always local).

    >>> from tensorclass.nn import composite_lp_aggregate, set_composite_lp_aggregate
    >>> @set_composite_lp_aggregate(True)
    ... def summed():
    ...     return composite_lp_aggregate()
    >>> summed(), composite_lp_aggregate()
    (True, False)
    """

    _var = _AGGREGATE

    def __init__(self, mode: bool = True, *, thread_local: bool = False) -> None:
        super().__init__()
        self.mode = bool(mode)
        self.thread_local = thread_local

    def _value(self) -> bool:
        return self.mode


def composite_lp_aggregate(nowarn: bool = False) -> bool:
    """Whether composite log-probabilities are summed (see
    :class:`set_composite_lp_aggregate`); ``False`` outside its blocks. ``nowarn`` has no
    effect.

    >>> from tensorclass.nn import composite_lp_aggregate
    >>> composite_lp_aggregate()
    False
    """
    return _AGGREGATE.get()
