"""Building instances from the parameters and buffers of ``torch.nn`` modules:
``from_module`` and ``from_modules``.

They read the modules with :mod:`.extract`; a typed class takes the result as its fields
(through ``from_tensordict``). Both are attached to ``TensorOps`` as class methods, typed by
their overloads (:class:`.extract.FromModule`, :class:`.extract.FromModules`).
"""

from __future__ import annotations

from typing import Any

from torch import nn

from ..core.self_types import E
from . import extract as module_params

__all__ = ["from_module", "from_modules"]


def from_module(
    cls: type[E],
    module: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    filter_empty: bool = True,
) -> Any:
    """The parameters and buffers of ``module``, nested by submodule name (the module's
    own tensors, not copies).

    A ``TensorDict`` class gives a ``TensorDict``; a typed class takes them as its
    fields. ``as_module=True`` gives a :class:`~tensorclass.nn.TensorDictParams`;
    ``filter_empty=False`` keeps submodules without parameters as empty levels. See
    :mod:`tensorclass.engine.params.extract`.

    >>> import torch
    >>> from tensorclass import TensorClass
    >>> class LinearParams(TensorClass):
    ...     weight: torch.Tensor
    ...     bias: torch.Tensor
    >>> params = LinearParams.from_module(torch.nn.Linear(3, 2))
    >>> params.weight.shape, params.is_locked
    (torch.Size([2, 3]), True)
    """
    if as_module:
        return module_params.from_module(module, True, lock, use_state_dict, filter_empty)
    params = module_params.from_module(module, False, lock, use_state_dict, filter_empty)
    target = cls._dense_class()
    if target.__tensorclass_schema__.dynamic:
        return params
    result = target.from_tensordict(params)
    return result.lock_() if lock else result


def from_modules(
    cls: type[E],
    *modules: nn.Module,
    as_module: bool = False,
    lock: bool = True,
    use_state_dict: bool = False,
    lazy_stack: bool = False,
    expand_identical: bool = False,
) -> Any:
    """The parameters of several modules of one structure, stacked along a new batch
    dim (for ensembles with ``torch.vmap``); see :func:`tensorclass.from_modules`. A
    typed class takes them as its fields. The result is this class (a lazy stack of it
    with ``lazy_stack=True``, typed as the class, as :meth:`lazy_stack` is), or a
    :class:`~tensorclass.nn.TensorDictParams` with ``as_module=True``.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> TensorDict.from_modules(torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)).batch_size
    torch.Size([2])
    """
    params: Any = module_params.from_modules(
        *modules,
        as_module=as_module,
        lock=lock and as_module,  # the other results are locked once converted
        use_state_dict=use_state_dict,
        lazy_stack=lazy_stack,
        expand_identical=expand_identical,
    )
    target = cls._dense_class()
    if not as_module and not target.__tensorclass_schema__.dynamic:
        params = target.from_tensordict(params)
    if lock and not as_module:
        params.lock_()
    return params
