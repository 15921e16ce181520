"""The public names of ``tensorclass``: the one place a public top-level name is written.

Each public name is imported here once, from the module that defines it, in the re-export
form ``from .module import Name as Name`` (so mypy, which implies no re-export, and
pyright see it as an export). ``tensorclass/__init__.py`` derives everything else from this
file: type checkers read it through ``from ._api import *``, the package's ``__all__`` (and
so ``dir(tensorclass)`` and ``from tensorclass import *``) is read from this file's source
without importing it, and the first use of a public name imports this module. To add a
public name, add its import here; ``tests/api/test_public_names.py`` checks the three agree.

Importing this module builds the whole library and fills :mod:`tensorclass.registry`
(``TensorDict``, ``ParamSwap``, ``TensorDictParams``).
"""

# ruff: noqa: F401  (every import is an export: the package re-exports it)
from . import param_swap as _param_swap  # registers what to_module returns
from .collection import TensorCollection as TensorCollection
from .collection import is_tensor_collection as is_tensor_collection
from .constructors import from_any as from_any
from .constructors import from_dataclass as from_dataclass
from .constructors import from_dict as from_dict
from .constructors import from_module as from_module
from .constructors import from_namedtuple as from_namedtuple
from .constructors import from_pytree as from_pytree
from .constructors import from_struct_array as from_struct_array
from .constructors import from_tuple as from_tuple
from .constructors import fromkeys as fromkeys
from .constructors import maybe_dense_stack as maybe_dense_stack
from .decorator import tensorclass as tensorclass
from .engine import TensorDictBase as TensorDictBase
from .engine import cat as cat
from .engine import from_modules as from_modules
from .engine import stack as stack
from .engine.build.parse_repr import parse_tensor_dict_string as parse_tensor_dict_string
from .engine.keys.merging import group_by as group_by
from .engine.keys.merging import merge_tensordicts as merge_tensordicts
from .engine.keys.predicates import default_is_leaf as default_is_leaf
from .engine.keys.predicates import is_bool as is_bool
from .engine.keys.predicates import is_floating as is_floating
from .engine.keys.predicates import is_inexact as is_inexact
from .engine.keys.predicates import is_integer as is_integer
from .engine.keys.predicates import is_leaf_nontensor as is_leaf_nontensor
from .engine.lazy.collate import collate as collate
from .engine.lazy.stack import LazyStackedTensorDict as LazyStackedTensorDict
from .engine.lazy.stack import lazy_stack as lazy_stack
from .engine.leafwise.comparing import assert_allclose_td as assert_allclose_td
from .engine.leafwise.comparing import assert_close as assert_close
from .engine.leafwise.reductions import ValuesIndices as ValuesIndices
from .engine.shape.packing import PackLayout as PackLayout
from .engine.storage.consolidate import from_consolidated as from_consolidated
from .engine.storage.formats.persistent import PersistentTensorDict as PersistentTensorDict
from .engine.storage.memmap import EntryInfo as EntryInfo
from .engine.storage.memmap import MemmapInfo as MemmapInfo
from .engine.storage.memmap import MemoryMappedTensor as MemoryMappedTensor
from .engine.storage.memmap import read_metadata as read_metadata
from .engine.storage.memmap.append import append_memmap as append_memmap
from .engine.storage.memmap.archive import is_memmap_archive as is_memmap_archive
from .engine.storage.memmap.archive import pack_memmap as pack_memmap
from .engine.storage.memmap.archive import refresh_archive_checksums as refresh_archive_checksums
from .engine.storage.memmap.archive import unpack_memmap as unpack_memmap
from .engine.storage.tables.functions import from_arrow as from_arrow
from .engine.storage.tables.functions import from_csv as from_csv
from .engine.storage.tables.functions import from_json as from_json
from .engine.storage.tables.functions import from_pandas as from_pandas
from .engine.storage.tables.functions import from_parquet as from_parquet
from .engine.storage.tables.functions import to_arrow as to_arrow
from .engine.torch_api.padding import pad as pad
from .engine.torch_api.padding import pad_sequence as pad_sequence
from .engine.torch_api.padding import unpad_sequence as unpad_sequence
from .errors import BatchSizeError as BatchSizeError
from .errors import FieldTypeError as FieldTypeError
from .errors import FileFormatError as FileFormatError
from .errors import FormatError as FormatError
from .errors import FrozenInstanceError as FrozenInstanceError
from .errors import InvalidKeyError as InvalidKeyError
from .errors import KeyNotFoundError as KeyNotFoundError
from .errors import LockedError as LockedError
from .errors import MemmapFormatError as MemmapFormatError
from .errors import MemmapNotFoundError as MemmapNotFoundError
from .errors import ModeError as ModeError
from .errors import NotSerializableError as NotSerializableError
from .errors import OperandError as OperandError
from .errors import RecordedClassError as RecordedClassError
from .errors import SaveReplacedError as SaveReplacedError
from .errors import SchemaError as SchemaError
from .errors import StructureMismatchError as StructureMismatchError
from .errors import TableFormatError as TableFormatError
from .errors import TensorClassError as TensorClassError
from .errors import UnsafePathError as UnsafePathError
from .fields import field as field
from .file_formats import from_h5 as from_h5
from .file_formats import from_safetensors as from_safetensors
from .file_formats import from_zarr as from_zarr
from .file_formats import to_safetensors as to_safetensors
from .keys import KEY_SEPARATOR as KEY_SEPARATOR
from .keys import NestedKey as NestedKey
from .keys import unravel_key as unravel_key
from .keys import unravel_key_list as unravel_key_list
from .keys import unravel_key_to_tuple as unravel_key_to_tuple
from .keys import unravel_keys as unravel_keys
from .loading import load as load
from .loading import load_memmap as load_memmap
from .non_tensor import MetaData as MetaData
from .non_tensor import NonTensorData as NonTensorData
from .non_tensor import NonTensorDataBase as NonTensorDataBase
from .non_tensor import NonTensorStack as NonTensorStack
from .non_tensor import is_non_tensor as is_non_tensor
from .saving import memmap as memmap
from .saving import save as save
from .schema import Field as Field
from .schema import FieldKind as FieldKind
from .schema import Schema as Schema
from .specs import Spec as Spec
from .switches import capture_non_tensor_stack as capture_non_tensor_stack
from .switches import get_defaults_to_none as get_defaults_to_none
from .switches import get_printoptions as get_printoptions
from .switches import lazy_legacy as lazy_legacy
from .switches import list_to_stack as list_to_stack
from .switches import set_capture_non_tensor_stack as set_capture_non_tensor_stack
from .switches import set_get_defaults_to_none as set_get_defaults_to_none
from .switches import set_lazy_legacy as set_lazy_legacy
from .switches import set_list_to_stack as set_list_to_stack
from .switches import set_printoptions as set_printoptions
from .tensor_attrs import TensorAttrs as TensorAttrs
from .tensordict import TensorDict as TensorDict
from .tensordict import dense_stack_tds as dense_stack_tds
from .tensordict import make_tensordict as make_tensordict
from .typed import TensorClass as TensorClass
from .typed import is_tensorclass as is_tensorclass
from .typed_tensordict import TypedTensorDict as TypedTensorDict
from .unbatched import UnbatchedTensor as UnbatchedTensor

from . import nn as nn  # isort: skip  (registers TensorDictParams, built by from_module)
from .nn.params import TensorDictParams as TensorDictParams  # isort: skip  (tensordict exports it at the top)
from .nn.tensorclass_module import TensorClassModuleBase as TensorClassModuleBase  # isort: skip  (top-level in tensordict)
from .nn.tensorclass_module import TensorClassModuleWrapper as TensorClassModuleWrapper  # isort: skip
from .nn.wrappers import as_tensordict_module as as_tensordict_module  # isort: skip  (top-level in tensordict)
from .compat.alias import install_as_tensordict as install_as_tensordict  # isort: skip  (above nn in the layers)
