"""Import an optional dependency, or say which extra installs it."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["require"]


def require(module: str, what: str) -> Any:
    """Import ``module`` for ``what`` (e.g. ``"to_pandas"``), or raise ``ImportError``
    naming the ``formats`` extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        package = module.split(".")[0]
        raise ImportError(
            f"{what} needs the optional package {package!r}, which is not installed; "
            f'install it with: pip install "tensorclass[formats]"'
        ) from err
