"""``skip_existing``: modules skip the work whose outputs are already there.

Inside ``with set_skip_existing():`` a key-reading module called with a tensor class that
already holds all its ``out_keys`` returns it unchanged instead of running. The mode lives in
a :class:`contextvars.ContextVar`: leaving the block restores the previous mode, and other
threads and asyncio tasks never see it. As a decorator of a function, the mode holds while
the function runs; as a decorator of a ``forward(self, tensordict, ...)`` method, the check
is also made before the method runs.

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictModule, set_skip_existing, skip_existing
>>> add_one = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
>>> td = TensorDict(x=torch.zeros(2), y=torch.zeros(2))
>>> with set_skip_existing():
...     add_one(td)["y"]  # "y" is there: not recomputed
tensor([0., 0.])
>>> add_one(td)["y"]
tensor([1., 1.])
>>> skip_existing()
False
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from ..engine.core.state import TensorCore
from ..keys import NestedKey, unravel_key
from ..switches import ExitRestores
from .keys import Key

__all__ = ["ACTIVE", "current_mode", "set_skip_existing", "should_skip", "skip_existing"]

F = TypeVar("F", bound=Callable[..., Any])

_MODE: contextvars.ContextVar[bool | list[Key]] = contextvars.ContextVar(
    "tensorclass_skip_existing", default=False
)

ACTIVE = [0]
"""How many skip blocks are open, in any thread: a cheap test that modules read before the
context variable (and one ``torch.compile`` traces: no block, no ``ContextVar.get``)."""


def current_mode() -> bool | list[Key]:
    """The mode a module's call follows (``False`` quickly when no block is open)."""
    return _MODE.get() if ACTIVE[0] else False


def skip_existing() -> bool | list[Key]:
    """The current mode: ``False`` (modules run), ``True`` (modules whose outputs are all
    present are skipped) or a list of keys (only modules writing nothing else are skipped).

    >>> from tensorclass.nn import set_skip_existing, skip_existing
    >>> skip_existing()
    False
    >>> with set_skip_existing(["y"]):
    ...     skip_existing()
    ['y']
    """
    return _MODE.get()


def should_skip(
    mode: bool | list[Key], in_keys: Sequence[Key], out_keys: Sequence[Key], tensordict: Any
) -> bool:
    """Whether a module reading ``in_keys`` and writing ``out_keys`` skips ``tensordict``.

    Never when ``mode`` is ``False``, when it writes nothing, or when it writes a key it
    also reads (it updates that key); with a list of keys, only when every out key is listed.
    """
    if mode is False or not out_keys:
        return False
    if any(key in in_keys for key in out_keys):
        return False
    if mode is not True and not all(key in mode for key in out_keys):
        return False
    return all(key in tensordict for key in out_keys)


def _mode_of(mode: Any) -> bool | list[Key]:
    if isinstance(mode, bool):
        return mode
    if isinstance(mode, (str, tuple)):
        return [unravel_key(mode)]
    return [unravel_key(key) for key in mode]


class set_skip_existing(ExitRestores):
    """Set the :func:`skip_existing` mode for a ``with`` block or a decorated function.

    Args:
        mode: ``True`` (default): a module whose out keys are all in its input returns the
            input without running; ``False``: every module runs; a list of keys: only
            modules whose out keys are all in the list (and in the input) are skipped;
            ``None`` (decorator only): the decorated method follows the enclosing mode.
        in_key_attr: for a decorated method, the module attribute holding its in keys.
        out_key_attr: for a decorated method, the module attribute holding its out keys.
        thread_local: accepted for tensordict's sake; the mode is always local to the
            current thread (and asyncio task), whatever the value.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> from tensorclass.nn import TensorDictModuleBase, set_skip_existing
    >>> class Double(TensorDictModuleBase):
    ...     in_keys = ["x"]
    ...     out_keys = ["y"]
    ...     @set_skip_existing(True)
    ...     def forward(self, tensordict):
    ...         tensordict["y"] = tensordict["x"] * 2
    ...         return tensordict
    >>> Double()(TensorDict(x=torch.ones(2), y=torch.zeros(2)))["y"]
    tensor([0., 0.])
    """

    def __init__(
        self,
        mode: bool | NestedKey | Sequence[NestedKey] | None = True,
        in_key_attr: str = "in_keys",
        out_key_attr: str = "out_keys",
        *,
        thread_local: bool = False,
    ) -> None:
        self.mode = None if mode is None else _mode_of(mode)
        self.in_key_attr = in_key_attr
        self.out_key_attr = out_key_attr
        self.thread_local = thread_local
        self._tokens: list[contextvars.Token[bool | list[Key]]] = []

    def __enter__(self) -> None:
        if self.mode is None:
            raise RuntimeError(
                "set_skip_existing(None) only decorates a method (it then follows the "
                "enclosing mode); as a context manager give True, False or a list of keys"
            )
        self._tokens.append(_MODE.set(self.mode))
        ACTIVE[0] += 1

    def _restore(self) -> None:
        _MODE.reset(self._tokens.pop())
        ACTIVE[0] -= 1

    def __call__(self, func: F) -> F:
        """Decorate ``func``: the mode holds while it runs (see the class docstring)."""
        mode, in_attr, out_attr = self.mode, self.in_key_attr, self.out_key_attr

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            effective = _MODE.get() if mode is None else mode
            if len(args) > 1 and isinstance(args[1], TensorCore):
                owner, tensordict = args[0], args[1]
                in_keys = getattr(owner, in_attr, None)
                out_keys = getattr(owner, out_attr, None)
                if (
                    in_keys is not None
                    and out_keys is not None
                    and should_skip(effective, in_keys, out_keys, tensordict)
                ):
                    return tensordict
            if mode is None:
                return func(*args, **kwargs)
            token = _MODE.set(mode)
            ACTIVE[0] += 1
            try:
                return func(*args, **kwargs)
            finally:
                _MODE.reset(token)
                ACTIVE[0] -= 1

        return cast(F, wrapper)

    def __repr__(self) -> str:
        return f"set_skip_existing({self.mode!r})"
