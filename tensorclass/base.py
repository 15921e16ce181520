"""The base class of every instance and its companions, at the path of ``tensordict.base``:
:class:`TensorDictBase`, :data:`NO_DEFAULT`, :func:`is_tensor_collection`, the
``from_*`` constructors and the ``get`` default switch.

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.base import NO_DEFAULT, TensorDictBase
>>> data = TensorDict(a=torch.zeros(3), batch_size=[3])
>>> isinstance(data, TensorDictBase)
True
>>> try:
...     data.get("b", NO_DEFAULT)
... except KeyError:
...     print("missing")
missing
"""

from .collection import TensorCollection, is_tensor_collection
from .constructors import (
    from_any,
    from_dict,
    from_namedtuple,
    from_struct_array,
    from_tuple,
)
from .engine.base import TensorDictBase
from .engine.core.state import NO_DEFAULT
from .engine.storage.tables.functions import from_csv, from_json, from_pandas, from_parquet
from .file_formats import from_h5, from_zarr
from .keys import NestedKey
from .switches import get_defaults_to_none, set_get_defaults_to_none

__all__ = [
    "NO_DEFAULT",
    "NestedKey",
    "TensorCollection",
    "TensorDictBase",
    "from_any",
    "from_csv",
    "from_dict",
    "from_h5",
    "from_json",
    "from_namedtuple",
    "from_pandas",
    "from_parquet",
    "from_struct_array",
    "from_tuple",
    "from_zarr",
    "get_defaults_to_none",
    "is_tensor_collection",
    "set_get_defaults_to_none",
]
