"""``TensorAttrs``: the device, dtype and shape of one tensor, as a tensor class.

``x.attrs()`` describes every tensor leaf of ``x`` with one; ``y.to(attrs)`` then moves
and casts each leaf of ``y`` to the device and dtype recorded for the same key, for
instances whose leaves do not share one device or dtype.

>>> import torch
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.zeros(3), "b": torch.zeros(3, dtype=torch.int32)}, [3])
>>> attrs = td.attrs()
>>> attrs["b"].tgt_dtype, attrs["b"].tgt_shape
(torch.int32, torch.Size([3]))
>>> TensorDict({"a": torch.ones(3), "b": torch.ones(3)}, [3]).to(attrs)["b"].dtype
torch.int32
"""

from __future__ import annotations

import torch

from .registry import register_attrs_class
from .typed import TensorClass

__all__ = ["TensorAttrs"]


class TensorAttrs(TensorClass):
    """The device, dtype and shape of one tensor (``None`` for what was not recorded).

    The fields start with ``tgt_`` so they do not hide the class's own ``device``,
    ``dtype`` and ``shape``.

    Attributes:
        tgt_device: the tensor's device.
        tgt_dtype: the tensor's dtype.
        tgt_shape: the tensor's shape.
    """

    tgt_device: torch.device | None = None
    tgt_dtype: torch.dtype | None = None
    tgt_shape: torch.Size | None = None


register_attrs_class(TensorAttrs)
