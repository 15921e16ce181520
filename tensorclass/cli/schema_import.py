"""Importing the schema class a user names on the command line (``module:Class``)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from ..typed import TensorClass
from ..validation.compiled import compiled, is_schema_class
from .common import UsageError

__all__ = ["import_schema"]


def import_schema(spec: str) -> type[Any]:
    """The tensor class named by ``spec``: ``"package.module:Class"`` or ``"file.py:Class"``.

    Imports the module (running its code: the user asked for it). The current directory is
    searched first, as ``python -m`` does. Any failure is a :class:`UsageError`.
    """
    module_name, sep, qualname = spec.partition(":")
    if not sep or not module_name or not qualname:
        raise UsageError(f"--schema {spec!r}: expected 'module:Class' (e.g. 'mypkg.data:Batch')")
    module = _import(module_name)
    found: Any = module
    for part in qualname.split("."):
        if not hasattr(found, part):
            raise UsageError(f"--schema {spec!r}: {module_name!r} has no attribute {qualname!r}")
        found = getattr(found, part)
    if not (isinstance(found, type) and is_schema_class(found)) or found is TensorClass:
        what = found.__name__ if isinstance(found, type) else type(found).__name__
        raise UsageError(
            f"--schema {spec!r}: {what} is not a tensor class with declared fields "
            "(declare one with TensorClass or @tensorclass)"
        )
    try:  # resolve its annotations (forward references) and compile its checks now
        compiled(found)
    except Exception as err:
        raise UsageError(
            f"--schema {spec!r}: cannot use {found.__name__} as a schema: "
            f"{type(err).__name__}: {err}"
        ) from err
    return found


def _import(module_name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        if module_name.endswith(".py"):
            return _import_file(Path(module_name))
        return importlib.import_module(module_name)
    except UsageError:
        raise
    except (Exception, SystemExit) as err:
        raise UsageError(
            f"cannot import the schema module {module_name!r}: {type(err).__name__}: {err}"
            f"{_where(err)}"
        ) from err


def _where(err: BaseException) -> str:
    """`` (at FILE, line N)``: the user's line that raised ``err`` (not ours, not Python's)."""
    ours = str(Path(__file__).resolve().parents[1])
    frames = [
        frame
        for frame in traceback.extract_tb(err.__traceback__)
        if not frame.filename.startswith(("<", ours)) and "importlib" not in frame.filename
    ]
    if not frames:
        return ""
    return f" (at {frames[-1].filename}, line {frames[-1].lineno})"


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"--schema: no such file {str(path)!r}")
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) == str(path.resolve()):
            return loaded
        name = f"_tensorclass_schema_{name}"  # never replace another module (json.py...)
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:
        raise UsageError(f"--schema: cannot import {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclass-style classes look their module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
