"""Chains of modules at the path of ``tensordict.nn.sequence``: :class:`TensorDictSequential`.

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictModule
>>> from tensorclass.nn.sequence import TensorDictSequential
>>> chain = TensorDictSequential(
...     TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"]),
...     TensorDictModule(lambda y: y * 2, in_keys=["y"], out_keys=["z"]),
... )
>>> chain(TensorDict(x=torch.zeros(1)))["z"].tolist()
[2.0]
"""

from .sequential import TensorDictSequential

__all__ = ["TensorDictSequential"]
