"""Helpers of the modules at the path of ``tensordict.nn.utils``: the positive mappings
(:func:`mappings`, :func:`add_custom_mapping`, :func:`inv_softplus`, :class:`biased_softplus`,
:func:`expln`) and the switches :func:`set_skip_existing` and
:func:`set_composite_lp_aggregate` with their readers.

>>> import torch
>>> from tensorclass.nn.utils import mappings
>>> mappings("biased_softplus_1.0")(torch.zeros(1)).tolist()
[1.0]
"""

from .lp_aggregate import composite_lp_aggregate, set_composite_lp_aggregate
from .mappings import add_custom_mapping, biased_softplus, expln, inv_softplus, mappings
from .skip import set_skip_existing, skip_existing

__all__ = [
    "add_custom_mapping",
    "biased_softplus",
    "composite_lp_aggregate",
    "expln",
    "inv_softplus",
    "mappings",
    "set_composite_lp_aggregate",
    "set_skip_existing",
    "skip_existing",
]
