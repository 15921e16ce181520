"""Functions over several instances at the path of ``tensordict.functional``: padding
(:func:`pad`, :func:`pad_sequence`, :func:`unpad_sequence`), merging and grouping
(:func:`merge_tensordicts`, :func:`group_by`), stacking (:func:`dense_stack_tds`), collating
(:func:`collate`) and :func:`make_tensordict`.

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.functional import pad_sequence
>>> padded = pad_sequence([TensorDict(a=torch.ones(2), batch_size=[2]),
...                        TensorDict(a=torch.ones(3), batch_size=[3])])
>>> padded.batch_size, padded["a"].tolist()
(torch.Size([2, 3]), [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
"""

from .engine.keys.merging import group_by, merge_tensordicts
from .engine.lazy.collate import collate
from .engine.torch_api.padding import pad, pad_sequence, unpad_sequence
from .tensordict import dense_stack_tds, make_tensordict

__all__ = [
    "collate",
    "dense_stack_tds",
    "group_by",
    "make_tensordict",
    "merge_tensordicts",
    "pad",
    "pad_sequence",
    "unpad_sequence",
]
