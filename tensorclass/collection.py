"""``TensorCollection``: the marker base of every tensor class instance.

It holds nothing and knows nothing; it lets the layers below the engine (the schema, key
helpers) recognise a tensor class instance or class with ``isinstance``/``issubclass``
without importing the engine.
"""

from __future__ import annotations

__all__ = ["TensorCollection", "is_tensor_collection"]


class TensorCollection:
    """The base of every tensor class: ``TensorDict``, typed classes and lazy stacks.

    Use it in annotations and ``isinstance`` checks for "any tensor class instance"
    (``@tensorclass``-decorated classes derive from it too).

    >>> import torch
    >>> from tensorclass import TensorCollection, TensorDict
    >>> isinstance(TensorDict({"a": torch.zeros(2)}, [2]), TensorCollection)
    True
    """

    __slots__ = ()


def is_tensor_collection(datatype: object) -> bool:
    """Whether ``datatype`` is a TensorDict or a tensor class instance (or such a class).

    >>> import torch
    >>> from tensorclass import TensorDict, is_tensor_collection
    >>> is_tensor_collection(TensorDict({}, [])), is_tensor_collection(torch.zeros(2))
    (True, False)
    """
    if isinstance(datatype, type):
        return issubclass(datatype, TensorCollection)
    return isinstance(datatype, TensorCollection)
