"""Typed dictionaries of tensors at the path of ``tensordict.typedtensordict``:
:class:`TypedTensorDict`.

>>> import torch
>>> from tensorclass.typedtensordict import TypedTensorDict
>>> class Step(TypedTensorDict):
...     obs: torch.Tensor
>>> Step(obs=torch.zeros(2, 3), batch_size=[2])["obs"].shape
torch.Size([2, 3])
"""

from .typed_tensordict import TypedTensorDict

__all__ = ["TypedTensorDict"]
