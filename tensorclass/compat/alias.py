"""``install_as_tensordict()``: serve tensorclass under the name ``tensordict``.

A program written for tensordict (TorchRL, for one) imports ``tensordict`` and its
submodules; it cannot be edited to import ``tensorclass``. After :func:`install_as_tensordict`,
``import tensordict`` and every ``tensordict.*`` module of :data:`MODULES` resolve to
tensorclass's objects: each is a module named after the tensordict path whose attributes are
those of the tensorclass module the table maps it to, plus the private tensordict names
:mod:`tensorclass.compat.private` maps onto the engine for that path. A path the table does
not hold (``tensordict._C``, ``tensordict.store``) is not found, as a module that does not
exist.

It is opt-in: importing tensorclass never installs it. Installing twice is harmless; installing
after the real tensordict was imported is an error (the program would hold objects of both).
Processes started with ``spawn`` or ``forkserver`` (TorchRL's ``ParallelEnv`` and collectors
start their workers so) install it too before they unpickle anything.

>>> import subprocess, sys
>>> code = (
...     "import tensorclass; tensorclass.install_as_tensordict()\\n"
...     "import tensordict, tensordict.nn\\n"
...     "print(tensordict.__version__, tensordict.TensorDict is tensorclass.TensorDict)"
... )
>>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
'0.15.3 True\\n'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import multiprocessing.spawn
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from .. import __version__ as TENSORCLASS_VERSION
from ..registry import serve_as_tensordict
from . import private

__all__ = [
    "MODULES",
    "TENSORDICT_VERSION",
    "TensordictAlias",
    "install_as_tensordict",
    "is_installed",
]

TENSORDICT_VERSION = "0.15.3"
"""The tensordict release tensorclass stands in for (``tensordict.__version__`` under the alias)."""

MODULES: dict[str, str | None] = {
    "tensordict": "tensorclass",
    "tensordict.base": "tensorclass.base",
    "tensordict.functional": "tensorclass.functional",
    "tensordict.memmap": "tensorclass.memmap",
    "tensordict.persistent": "tensorclass.persistent",
    "tensordict.tensorclass": "tensorclass.tensorclass",
    "tensordict.tensordict": "tensorclass.tensordict",
    "tensordict.typedtensordict": "tensorclass.typedtensordict",
    "tensordict.utils": "tensorclass.utils",
    "tensordict._tensorcollection": "tensorclass.collection",
    "tensordict.nn": "tensorclass.nn",
    "tensordict.nn.common": "tensorclass.nn.common",
    "tensordict.nn.cudagraphs": "tensorclass.nn.cudagraphs",
    "tensordict.nn.ensemble": "tensorclass.nn.ensemble",
    "tensordict.nn.params": "tensorclass.nn.params",
    "tensordict.nn.probabilistic": "tensorclass.nn.probabilistic",
    "tensordict.nn.sequence": "tensorclass.nn.sequence",
    "tensordict.nn.tensorclass_module": "tensorclass.nn.tensorclass_module",
    "tensordict.nn.utils": "tensorclass.nn.utils",
    "tensordict.nn.functional_modules": None,  # private names only (compat.private)
    "tensordict.nn.distributions": "tensorclass.nn.distributions",
    "tensordict.nn.distributions.composite": "tensorclass.nn.distributions.composite",
    "tensordict.nn.distributions.continuous": "tensorclass.nn.distributions.continuous",
    "tensordict.nn.distributions.discrete": "tensorclass.nn.distributions.discrete",
    "tensordict.nn.distributions.truncated_normal": (
        "tensorclass.nn.distributions.truncated_normal"
    ),
}
"""The one table: each tensordict module path and the tensorclass module it stands for
(``None``: the path holds only private names of :mod:`tensorclass.compat.private`)."""

_PREPARATION_KEY = "tensorclass_as_tensordict"
_ABSENT = object()


class TensordictAlias(ModuleType):
    """A ``tensordict.*`` module under the alias: its attributes are those of the tensorclass
    module it stands for (read through, so they are the same objects), plus the private names
    compat maps for its path, which are stored on it."""

    __target__: ModuleType | None

    def __getattr__(self, name: str) -> Any:
        target = self.__dict__.get("__target__")
        child = f"{self.__name__}.{name}"
        found = getattr(target, name, _ABSENT) if not name.startswith("__") else _ABSENT
        if child in MODULES and (found is _ABSENT or isinstance(found, ModuleType)):
            return importlib.import_module(child)  # ``tensordict.nn``: the alias module
        if found is _ABSENT:
            where = f" (tensorclass's {target.__name__})" if target is not None else ""
            raise AttributeError(f"module {self.__name__!r}{where} has no attribute {name!r}")
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        # A submodule binds itself on its package once imported; where the package's name
        # is a function (``tensordict.tensorclass``, ``tensordict.memmap``), the function stays.
        target = self.__dict__.get("__target__")
        if isinstance(value, ModuleType) and not isinstance(
            getattr(target, name, value), ModuleType
        ):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        target = self.__dict__.get("__target__")
        return sorted({*self.__dict__, *(dir(target) if target is not None else ())})


class _Loader(importlib.abc.Loader):
    """Builds the alias module of one tensordict path."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        name = spec.name
        target_name = MODULES[name]
        target = importlib.import_module(target_name) if target_name is not None else None
        module = TensordictAlias(name, target.__doc__ if target is not None else None)
        module.__target__ = target
        if target is not None and hasattr(target, "__all__"):
            module.__all__ = list(target.__all__)
        module.__dict__.update(private.module_names(name))
        if name == "tensordict":
            module.__version__ = TENSORDICT_VERSION
            module.__tensorclass_version__ = TENSORCLASS_VERSION
            module.__implementation__ = f"tensorclass {TENSORCLASS_VERSION}"
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: :meth:`create_module` filled the module."""


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the paths of :data:`MODULES` (first on ``sys.meta_path``)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "tensordict" and not fullname.startswith("tensordict."):
            return None
        if fullname not in MODULES:
            # no counterpart: not found (the alias packages search no directory, so the
            # real tensordict's module is not found either)
            return None
        is_package = any(other.startswith(f"{fullname}.") for other in MODULES)
        spec = importlib.machinery.ModuleSpec(fullname, _LOADER, is_package=is_package)
        if is_package:
            spec.submodule_search_locations = []
        return spec


_LOADER = _Loader()
_FINDER = _Finder()


def is_installed() -> bool:
    """Whether :func:`install_as_tensordict` ran in this process.

    >>> from tensorclass.compat.alias import is_installed
    >>> is_installed() in (True, False)
    True
    """
    return _FINDER in sys.meta_path


def install_as_tensordict() -> None:
    """Serve tensorclass as ``tensordict`` in this process (and the processes it spawns).

    Call it before anything imports tensordict (TorchRL does when imported). Calling it again
    does nothing.

    Raises:
        ImportError: the real tensordict was imported already.

    >>> import subprocess, sys
    >>> code = (
    ...     "import tensordict\\n"
    ...     "import tensorclass\\n"
    ...     "try: tensorclass.install_as_tensordict()\\n"
    ...     "except ImportError: print('refused')\\n"
    ... )
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    'refused\\n'
    """
    if is_installed():
        return
    loaded = sys.modules.get("tensordict")
    if loaded is not None and not isinstance(loaded, TensordictAlias):
        raise ImportError(
            "install_as_tensordict(): the real tensordict is imported already "
            f"({getattr(loaded, '__file__', loaded)!r}); call it first, before anything "
            "imports tensordict (TorchRL imports it when imported)"
        )
    private.install_methods()
    serve_as_tensordict(True)  # stored TensorDictParams nest; classes get __getattr__
    sys.meta_path.insert(0, _FINDER)
    _spawned_processes_install()


class _Installer:
    """Unpickled in a spawned process's preparation data: installs the alias there before the
    parent's main module and the process object are loaded."""

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return (install_as_tensordict, ())


_original_preparation: Callable[[str], dict[str, object]] | None = None


def _preparation_data(name: str) -> dict[str, object]:
    assert _original_preparation is not None
    data = _original_preparation(name)
    data[_PREPARATION_KEY] = _Installer()
    return data


def _spawned_processes_install() -> None:
    """Make the processes multiprocessing spawns install the alias first: the preparation
    data a child unpickles before anything else carries an object whose unpickling installs
    it (the child's ``prepare`` ignores the key)."""
    global _original_preparation
    if _original_preparation is None:
        _original_preparation = multiprocessing.spawn.get_preparation_data
        multiprocessing.spawn.get_preparation_data = _preparation_data
