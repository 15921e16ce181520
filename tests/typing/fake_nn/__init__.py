"""A stand-in for ``tensorclass.nn`` (typing tests only, used while the real one is absent).

It has the agreed constructor signatures and nothing else; the typing tests copy it into a
temporary shadow of the package as ``tensorclass/nn``.
"""

from .module import TensorDictModule
from .sequential import TensorDictSequential

__all__ = ["TensorDictModule", "TensorDictSequential"]
