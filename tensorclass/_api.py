"""Every public name of ``tensorclass``, imported eagerly (see ``tensorclass/__init__.py``).

Importing this module builds the whole library and fills :mod:`tensorclass.registry`
(``TensorDict``, ``ParamSwap``, ``TensorDictParams``).
"""

# ruff: noqa: F401  (every import is an export: the package re-exports it)
from . import param_swap as _param_swap  # registers what to_module returns
from .collection import is_tensor_collection
from .constructors import (
    dense_stack_tds,
    from_any,
    from_dataclass,
    from_dict,
    from_module,
    from_namedtuple,
    from_pytree,
    from_struct_array,
    from_tuple,
    fromkeys,
    make_tensordict,
    maybe_dense_stack,
)
from .decorator import is_tensorclass, tensorclass
from .errors import (
    BatchSizeError,
    FieldTypeError,
    FrozenInstanceError,
    InvalidKeyError,
    KeyNotFoundError,
    LockedError,
    MemmapFormatError,
    NotSerializableError,
    OperandError,
    RecordedClassError,
    SchemaError,
    StructureMismatchError,
    TensorClassError,
)
from .fields import field
from .keys import NestedKey, unravel_key, unravel_keys
from .loading import load_memmap
from .non_tensor import NonTensorData, NonTensorStack
from .schema import Field, FieldKind, Schema
from .specs import Spec
from .tensordict import TensorDict
from .tensordict_core import TensorDictBase, cat, from_modules, stack
from .tensordict_core.lazy_stack import LazyStackedTensorDict, lazy_stack
from .tensordict_core.memmap import EntryInfo, MemmapInfo, MemoryMappedTensor, read_metadata
from .typed import TensorClass
from .typed_tensordict import TypedTensorDict

from . import nn as nn  # isort: skip  (registers TensorDictParams, built by from_module)

from . import __all__ as __all__  # the same names as the package (isort: skip)
