"""The mypy plugin of tensorclass: what standard typing cannot say about tensor classes.

Enable it in your mypy configuration::

    [tool.mypy]
    plugins = ["tensorclass.plugins.mypy"]

It adds, on top of what ``dataclass_transform`` and the ``Self`` annotations give every
checker:

- ``@tensorclass class X``: ``TensorClass`` becomes a base of ``X``, so the decorator
  spelling has the full constructor (``batch_size``/``device``/``names``) and every method;
- a subclass of a frozen tensor class is frozen (as at run time);
- ``x["field"]``, ``x["a", "b"]``, ``x.get("field")``, ``x.pop(...)``: the field's type;
  unknown keys (also in writes, ``select``/``exclude``/``update``/``rename_key_``...) are
  errors with the code ``tensorclass-key``; a key through an optional nested field reads
  as possibly ``None``;
- ``x["field"] = v``, ``x.set("field", v)``, ``x.update({"field": v})`` (or ``dict(field=v)``),
  ``setdefault``, ``set_at_``, ``update_at_``, ``set_non_tensor``: a value whose type the
  field does not accept is an error with the code ``tensorclass-value``;
- ``torch.stack``/``torch.cat`` of tensor classes return the class, and the other torch and
  ``torch.nn.functional`` functions the library runs on them (``torch.maximum(x, t)``,
  ``F.relu(x)``, ``torch.unbind(x)``...) accept the class where torch takes a tensor and
  return it where torch returns one (``_mypy_torch_functions.py``);
- ``lazy_stack(xs)``, ``X.lazy_stack(xs)``, ``LazyStackedTensorDict.lazy_stack(xs)``: both
  ``LazyStackedTensorDict`` and the class of ``xs`` (as at run time);
- ``TensorDictModule(..., schema=X)``/``TensorDictSequential(..., schema=X)``: literal
  keys are checked against X's fields.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mypy.nodes import TypeInfo
from mypy.plugin import (
    ClassDefContext,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import FunctionLike, Type

from ._mypy_classes import (
    DECORATOR,
    add_tensor_class_base,
    finish_decorated_class,
    inherit_frozen,
)
from ._mypy_fields import TENSOR_CLASS, TENSOR_CORE, TENSORCLASS_KEY
from ._mypy_keys import KEY_METHODS, TENSORCLASS_VALUE, key_method_hook
from ._mypy_lazy import LAZY_STACK_FUNCTION, LAZY_STACK_METHOD, lazy_stack_hook
from ._mypy_nn import KEYED_CALLS, MODULE_BASE, SEQUENTIAL, module_hook, sequential_hook
from ._mypy_torch import TORCH_JOINS, torch_join_signature
from ._mypy_torch_functions import torch_function_hook
from ._mypy_torch_names import TORCH_FUNCTIONS

__all__ = ["TENSORCLASS_KEY", "TENSORCLASS_VALUE", "TensorClassPlugin", "plugin"]

_NEVER_MODULES = ("builtins.", "typing.", "torch.", "numpy.", "tensorclass.")


def _source_digest() -> str:
    """A digest of the plugin's own modules (mypy's cache only tracks this entry module)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*mypy*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class TensorClassPlugin(Plugin):
    """The mypy plugin (see the module docstring)."""

    _digest = _source_digest()

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        """The plugin version, so a changed plugin invalidates mypy's incremental cache."""
        return self._digest

    def _class(self, fullname: str) -> TypeInfo | None:
        sym = self.lookup_fully_qualified(fullname)
        return sym.node if sym is not None and isinstance(sym.node, TypeInfo) else None

    def get_class_decorator_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        """``@tensorclass``: add ``TensorClass`` to the bases (every semantic pass)."""
        return add_tensor_class_base if fullname == DECORATOR else None

    def get_class_decorator_hook_2(self, fullname: str) -> Callable[[ClassDefContext], bool] | None:
        """``@tensorclass``: the metaclass builds the constructor, not the decorator."""
        return finish_decorated_class if fullname == DECORATOR else None

    def get_base_class_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        """A subclass of a frozen tensor class is frozen (as at run time)."""
        if fullname.startswith(_NEVER_MODULES):
            return None
        info = self._class(fullname)
        if info is not None and not info.has_base(TENSOR_CLASS):
            return None  # not a tensor class (a local class is looked at in the hook)
        return inherit_frozen

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """Key methods of typed tensor classes (``__getitem__``, ``get``...); ``lazy_stack``."""
        owner, _, method = fullname.rpartition(".")
        if method == LAZY_STACK_METHOD:
            info = self._class(owner)
            if info is not None and not info.has_base(TENSOR_CORE):
                return None
            return lazy_stack_hook(self._class)
        if method not in KEY_METHODS:
            return None
        info = self._class(owner)
        if info is not None and not info.has_base(TENSOR_CLASS):
            return None  # not a tensor class (a local class is looked at in the hook)
        return key_method_hook(method)

    def get_function_signature_hook(
        self, fullname: str
    ) -> Callable[[FunctionSigContext], FunctionLike] | None:
        """``torch.stack``/``torch.cat`` and the other supported torch functions of tensor
        classes."""
        if fullname in TORCH_JOINS:
            return torch_join_signature
        name = TORCH_FUNCTIONS.get(fullname)
        return None if name is None else torch_function_hook(name, self.lookup_fully_qualified)

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """Key-reading modules (``TensorDictModule``, sequentials...) built with ``schema=``;
        ``lazy_stack``."""
        if fullname == LAZY_STACK_FUNCTION:
            return lazy_stack_hook(self._class)
        if fullname.startswith(_NEVER_MODULES) and not fullname.startswith("tensorclass.nn."):
            return None  # cheap exit for the calls that are never tensorclass modules
        if fullname in KEYED_CALLS:
            return module_hook
        info = self._class(fullname)
        if info is None:
            return None
        if info.has_base(SEQUENTIAL):
            return sequential_hook
        if info.has_base(MODULE_BASE):
            return module_hook
        return None


def plugin(version: str) -> type[Plugin]:
    """The entry point mypy calls (``plugins = tensorclass.plugins.mypy``)."""
    return TensorClassPlugin
