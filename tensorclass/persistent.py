"""Instances backed by an HDF5 file at the path of ``tensordict.persistent``:
:class:`PersistentTensorDict`.
"""

from .engine.storage.formats.persistent import PersistentTensorDict

__all__ = ["PersistentTensorDict"]
