"""Tensor classes and non-tensor data at the path of ``tensordict.tensorclass``.

``from tensordict.tensorclass import NonTensorData`` ports as
``from tensorclass.tensorclass import NonTensorData``. The module shares its name with the
:func:`tensorclass` decorator; as in tensordict, the package's attribute ``tensorclass``
stays the decorator (``from tensorclass import tensorclass`` and ``import
tensorclass.tensorclass as t`` give the decorator; ``from tensorclass.tensorclass import
...`` reads this module).

>>> import torch
>>> from tensorclass.tensorclass import NonTensorData, TensorClass, tensorclass
>>> @tensorclass
... class Pair:
...     x: torch.Tensor
>>> Pair(x=torch.zeros(2), batch_size=[2]).batch_size
torch.Size([2])
>>> NonTensorData("label", batch_size=[3])[0].data
'label'
"""

from .constructors import from_dataclass
from .decorator import tensorclass
from .non_tensor import MetaData, NonTensorData, NonTensorDataBase, NonTensorStack, is_non_tensor
from .tensor_attrs import TensorAttrs
from .typed import TensorClass, is_tensorclass

__all__ = [
    "MetaData",
    "NonTensorData",
    "NonTensorDataBase",
    "NonTensorStack",
    "TensorAttrs",
    "TensorClass",
    "from_dataclass",
    "is_non_tensor",
    "is_tensorclass",
    "tensorclass",
]
