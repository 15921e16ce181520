"""tensorclass: typed, batch-shaped tensor data for PyTorch.

Declare a tensor class with annotated fields; it behaves like one tensor along its batch
dims (index it, reshape it, stack it, move it), and ``TensorDict`` is the same engine with
any string key.

The public names are loaded on first use (``from tensorclass import TensorDict`` loads the
library, torch included): importing the package alone, as mypy does when it loads
``tensorclass.plugins.mypy``, imports neither torch nor the engine.

Each public name is written once, as an import in ``tensorclass/_api.py``
(``from .module import Name as Name``). Type checkers see them all, with their types,
through ``from ._api import *`` below. At run time ``__all__`` is read from the source of
``_api.py`` (its ``Name as Name`` imports, in order) without importing it, so ``dir()`` and
the first-use loader know the names while torch is not loaded; a star import of a module
type checkers accept only literal forms of ``__all__``, hence the ``else`` branch, which they
do not read. ``tests/api/test_public_names.py`` checks the package against
``_api``.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import registry as _registry

__version__ = "0.1.0"


def _public_names() -> list[str]:
    """The names ``_api.py`` exports (``from .module import Name as Name``), in order."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "_api.py"), encoding="utf-8") as file:
            source = file.read()
    except OSError:  # no source shipped (a zip, bytecode only): import it, torch included
        api = importlib.import_module(f"{__name__}._api")
        return [name for name in vars(api) if not name.startswith("_") and name != "nn"]
    return [
        alias.name
        for node in ast.parse(source).body
        if isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names
        if alias.asname == alias.name and not alias.name.startswith("_")
    ]


_NAMES = _public_names()


def _load_library() -> ModuleType:
    """Import every public name's module (torch included): the first use of a public name,
    and a class role asked for before the module that registers it was imported."""
    return importlib.import_module(f"{__name__}._api")


_registry.register_loader(_load_library)

if TYPE_CHECKING:
    from ._api import *  # noqa: F403
else:
    __all__ = _NAMES


#: tensordict's public modules that are attributes of its package (``tensordict.utils``):
#: imported here on first use, as the public names are
_MODULES = ("base", "functional", "persistent", "tensordict", "typedtensordict", "utils")


def __getattr__(name: str) -> Any:
    if name in _NAMES or name == "nn":
        api = _load_library()
        globals().update({export: getattr(api, export) for export in _NAMES})
        return importlib.import_module("tensorclass.nn") if name == "nn" else globals()[name]
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tensorclass' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES})


class _Package(ModuleType):
    """The package's module type: a public name stays itself when a submodule shares it.

    Two modules of tensordict's paths share their name with a public function:
    ``tensorclass.tensorclass`` (``from tensorclass.tensorclass import NonTensorData``) and
    the decorator ``tensorclass``, ``tensorclass.memmap`` and the function ``memmap``.
    Importing a submodule binds it on its package once it has loaded, which would replace the
    function; this type declines those bindings, so the attribute keeps reading the function
    (loaded on first use, as every public name) and the import system reaches the module
    through ``sys.modules``: what tensordict does (``tensordict.tensorclass`` is its
    decorator, ``tensordict.memmap`` its function).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NAMES and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
