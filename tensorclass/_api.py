"""Every public name of ``tensorclass``, imported eagerly (see ``tensorclass/__init__.py``).

Importing this module builds the whole library and fills :mod:`tensorclass.registry`
(``TensorDict``, ``ParamSwap``, ``TensorDictParams``).
"""

# ruff: noqa: F401  (every import is an export: the package re-exports it)
from . import param_swap as _param_swap  # registers what to_module returns
from .collection import TensorCollection, is_tensor_collection
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
from .engine import TensorDictBase, cat, from_modules, stack
from .engine.build.parse_repr import parse_tensor_dict_string
from .engine.keys.merging import group_by, merge_tensordicts
from .engine.keys.predicates import (
    default_is_leaf,
    is_bool,
    is_floating,
    is_inexact,
    is_integer,
    is_leaf_nontensor,
)
from .engine.lazy.stack import LazyStackedTensorDict, lazy_stack
from .engine.leafwise.comparing import assert_allclose_td, assert_close
from .engine.leafwise.reductions import ValuesIndices
from .engine.shape.packing import PackLayout
from .engine.storage.consolidate import from_consolidated
from .engine.storage.formats.persistent import PersistentTensorDict
from .engine.storage.memmap import EntryInfo, MemmapInfo, MemoryMappedTensor, read_metadata
from .engine.storage.memmap.append import append_memmap
from .engine.storage.memmap.archive import (
    is_memmap_archive,
    pack_memmap,
    refresh_archive_checksums,
    unpack_memmap,
)
from .engine.storage.parallel.collate import collate
from .engine.storage.tables.functions import (
    from_arrow,
    from_csv,
    from_json,
    from_pandas,
    from_parquet,
    to_arrow,
)
from .engine.torch_api.padding import pad, pad_sequence, unpad_sequence
from .errors import (
    BatchSizeError,
    FieldTypeError,
    FileFormatError,
    FrozenInstanceError,
    InvalidKeyError,
    KeyNotFoundError,
    LockedError,
    MemmapFormatError,
    ModeError,
    NotSerializableError,
    OperandError,
    RecordedClassError,
    SchemaError,
    StructureMismatchError,
    TableFormatError,
    TensorClassError,
)
from .fields import field
from .file_formats import from_h5, from_safetensors, from_zarr, to_safetensors
from .keys import (
    KEY_SEPARATOR,
    NestedKey,
    unravel_key,
    unravel_key_list,
    unravel_key_to_tuple,
    unravel_keys,
)
from .loading import load, load_memmap
from .non_tensor import (
    MetaData,
    NonTensorData,
    NonTensorDataBase,
    NonTensorStack,
    is_non_tensor,
)
from .saving import memmap, save
from .schema import Field, FieldKind, Schema
from .specs import Spec
from .switches import (
    capture_non_tensor_stack,
    get_defaults_to_none,
    get_printoptions,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
    set_printoptions,
)
from .tensor_attrs import TensorAttrs
from .tensordict import TensorDict
from .typed import TensorClass
from .typed_tensordict import TypedTensorDict
from .unbatched import UnbatchedTensor

from . import nn as nn  # isort: skip  (registers TensorDictParams, built by from_module)
from .nn.params import TensorDictParams  # isort: skip  (tensordict exports it at the top)
from .nn.tensorclass_module import TensorClassModuleBase  # isort: skip  (top-level in tensordict)
from .nn.tensorclass_module import TensorClassModuleWrapper  # isort: skip
from .nn.wrappers import as_tensordict_module  # isort: skip  (top-level in tensordict)

from . import __all__ as __all__  # the same names as the package (isort: skip)
