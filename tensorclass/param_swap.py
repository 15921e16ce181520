"""``ParamSwap``: what ``to_module`` returns, the values it replaced.

Used as a context manager it puts them back on exit. It is a ``TensorDict`` (so it is
defined above the engine, and the engine finds it through :mod:`tensorclass.registry`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from typing_extensions import Self

from .engine.params.to_module import swap_into
from .registry import register_swap_class
from .switches import ExitRestores
from .tensordict import TensorDict

__all__ = ["ParamSwap"]

_NO_BATCH = torch.Size(())


class ParamSwap(ExitRestores, TensorDict):  # its __exit__, not the shape contexts'
    """The values ``to_module`` replaced; as a context manager, it puts them back on exit.

    >>> import torch
    >>> from torch import nn
    >>> from tensorclass import TensorDict
    >>> layer = nn.Linear(2, 2)
    >>> original = layer.weight
    >>> with TensorDict({"weight": torch.zeros(2, 2)}).to_module(layer) as swapped:
    ...     bool(layer.weight.eq(0).all()), swapped["weight"] is original
    (True, True)
    >>> layer.weight is original
    True
    """

    __slots__ = ("_swap_inplace", "_swap_state_dict", "_swap_target")

    _swap_target: nn.Module | None
    _swap_inplace: bool
    _swap_state_dict: bool

    @classmethod
    def _for(
        cls, data: dict[str, Any], module: nn.Module, inplace: bool, use_state_dict: bool
    ) -> ParamSwap:
        swap = cls._new(data, _NO_BATCH)
        swap._swap_target = module
        swap._swap_inplace = inplace
        swap._swap_state_dict = use_state_dict
        return swap

    def __enter__(self) -> Self:
        return self

    def _restore(self) -> None:
        target = getattr(self, "_swap_target", None)
        if target is None:
            raise RuntimeError(
                "this ParamSwap was not returned by to_module(), so there is nothing to restore"
            )
        if self._swap_state_dict:
            self.to_module(
                target, inplace=self._swap_inplace, return_swap=False, use_state_dict=True
            )
        else:
            # The keys were just loaded from this module, so putting them back cannot fail.
            swap_into(self, target, self._swap_inplace, None)


register_swap_class(ParamSwap)
