"""``EnsembleModule``: ``num_copies`` copies of a module, each with its own parameters.

The parameters of the copies are stacked along a new leading dim (``from_modules``) into
``params_td``, a :class:`~tensorclass.nn.TensorDictParams`; each copy is re-initialised
with the ``reset_parameters`` of its submodules, so the copies differ. A call runs the
module once per copy under :func:`torch.vmap`: every output gets a leading dim of size
``num_copies``, exactly as a Python loop over the copies would give.

>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import EnsembleModule, TensorDictModule
>>> linear = TensorDictModule(nn.Linear(3, 2), in_keys=["x"], out_keys=["y"])
>>> ensemble = EnsembleModule(linear, num_copies=4)
>>> out = ensemble(TensorDict(x=torch.randn(5, 3), batch_size=[5]))
>>> out.batch_size, out["y"].shape
(torch.Size([4, 5]), torch.Size([4, 5, 2]))
"""

from __future__ import annotations

from typing import Any

import torch

from ..engine.base import TensorDictBase
from ..engine.ops import TensorOps
from ..errors import BatchSizeError
from ..tensordict import TensorDict
from .base import HeldKeysModule, TensorDictModuleBase, _reset_each
from .keys import structure_copy
from .params import TensorDictParams

__all__ = ["EnsembleModule"]


def _reset_copy(module: torch.nn.Module, params: Any) -> None:
    """Draw new values into ``params``' storage with ``module``'s ``reset_parameters``."""
    fresh = params.apply(lambda leaf: leaf.detach())
    with fresh.to_module(module):
        _reset_each(module)


class EnsembleModule(HeldKeysModule):
    """Runs ``num_copies`` copies of ``module`` (each with its own parameters) in one call.

    Args:
        module: the key-reading module to copy; its keys (and schema) are the ensemble's.
        num_copies: how many copies.
        expand_input: ``True`` (default): every copy reads the same input and the output
            has batch size ``[num_copies, *input.batch_size]``. ``False``: the input
            already has a leading dim of size ``num_copies`` and copy ``i`` reads entry
            ``i`` (an ensemble after an ensemble).

    ``parameters()`` gives the stacked copies (``params_td``) only: the module passed in
    keeps its own parameters, which the ensemble does not use and does not register.
    """

    params_td: TensorDictParams
    module: TensorDictModuleBase

    def __init__(
        self, module: TensorDictModuleBase, num_copies: int, expand_input: bool = True
    ) -> None:
        super().__init__()
        if not TensorDictModuleBase.is_tdmodule_compatible(module):
            raise TypeError(
                f"EnsembleModule needs a module with in_keys and out_keys; got "
                f"{type(module).__name__}"
            )
        if not isinstance(num_copies, int) or num_copies < 1:
            raise ValueError(
                f"EnsembleModule: num_copies must be a positive int; got {num_copies!r}"
            )
        object.__setattr__(self, "module", module)  # the skeleton: not registered
        self.num_copies = num_copies
        self.expand_input = expand_input
        self._schema = getattr(module, "schema", None)
        params = TensorDict.from_modules(*([module] * num_copies), as_module=True)
        for index in range(num_copies):
            _reset_copy(module, params[index])
        self.params_td = params

    def _call_copy(self, tensordict: Any, params: Any) -> Any:
        with params.to_module(self.module):
            return self.module(structure_copy(tensordict))

    # -- keys ------------------------------------------------------------------------------

    def _held(self) -> TensorDictModuleBase:
        return self.module  # the copied module: its keys are the ensemble's

    # -- parameters ------------------------------------------------------------------------

    def reset_parameters_recursive(self, parameters: TensorDictBase | None = None) -> Any:
        """Re-initialise every copy (each one differently).

        Without ``parameters``, ``params_td`` is reset in place and ``None`` is returned.
        With ``parameters`` (batch size ``[num_copies]``, the layout of ``params_td``), new
        values are drawn into their storage and they are returned.
        """
        target: Any = self.params_td if parameters is None else parameters
        if list(target.batch_size[:1]) != [self.num_copies]:
            raise BatchSizeError(
                f"EnsembleModule.reset_parameters_recursive: parameters must have batch_size "
                f"[{self.num_copies}]; got {list(target.batch_size)}"
            )
        for index in range(self.num_copies):
            _reset_copy(self.module, target[index])
        return None if parameters is None else parameters

    # -- the forward pass ------------------------------------------------------------------

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        if not self.expand_input and (
            not tensordict.batch_dims or tensordict.batch_size[0] != self.num_copies
        ):
            raise BatchSizeError(
                f"EnsembleModule(expand_input=False) needs an input with a leading dim of "
                f"size {self.num_copies}; got batch_size={list(tensordict.batch_size)}"
            )
        # Built per call (cheap): a stored vmapped bound method would follow a deepcopy
        # of the ensemble back to the original.
        in_dim = None if self.expand_input else 0
        vmapped = torch.vmap(self._call_copy, (in_dim, 0), randomness="different")
        result: TensorOps = vmapped(tensordict, self.params_td)
        if tensordict_out is not None:
            tensordict_out.update(result)
            return tensordict_out
        return result

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [
            ("module", repr(self.module)),
            ("num_copies", str(self.num_copies)),
            *super()._repr_fields(),
        ]
