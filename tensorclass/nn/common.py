"""The key-reading modules at the path of ``tensordict.nn.common``:
:class:`TensorDictModuleBase`, :class:`TensorDictModule`, the wrappers and :func:`dispatch`.

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.nn.common import TensorDictModule
>>> module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
>>> module(TensorDict(x=torch.zeros(2)))["y"].tolist()
[1.0, 1.0]
"""

from .base import TensorDictModuleBase
from .dispatch import dispatch
from .module import TensorDictModule
from .wrappers import TensorDictModuleWrapper, WrapModule, as_tensordict_module

__all__ = [
    "TensorDictModule",
    "TensorDictModuleBase",
    "TensorDictModuleWrapper",
    "WrapModule",
    "as_tensordict_module",
    "dispatch",
]
