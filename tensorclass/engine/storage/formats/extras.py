"""Importing an optional extra when a format or a table needs it, with an error that says
what to install."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["require"]


def require(module: str, what: str) -> ModuleType:
    """The module ``module`` (imported now), or an ``ImportError`` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        package = module.split(".")[0]
        raise ImportError(
            f"{what} needs the optional package {package!r}, which is not installed; install "
            f'it with: pip install "tensorclass[formats]" (or pip install {package})'
        ) from err
