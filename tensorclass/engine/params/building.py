"""Building instances from the parameters and buffers of ``torch.nn`` modules:
``from_module`` and ``from_modules``.

They read the modules with :mod:`.extract`; a typed class takes the result as its fields
(through ``from_tensordict``). Both are overloaded class methods: ``TensorOps`` declares
them, with their overloads and docstrings, and calls these functions.
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
    as_module: bool,
    lock: bool,
    use_state_dict: bool,
    filter_empty: bool,
) -> Any:
    """``cls.from_module(...)`` (see :meth:`TensorOps.from_module`)."""
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
    as_module: bool,
    lock: bool,
    use_state_dict: bool,
    lazy_stack: bool,
    expand_identical: bool,
) -> Any:
    """``cls.from_modules(...)`` (see :meth:`TensorOps.from_modules`)."""
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
