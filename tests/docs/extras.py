"""Examples that need an optional extra (``pip install "tensorclass[formats]"``) skip, with
the reason, where that extra is not installed; they run (and must pass) where it is."""

from __future__ import annotations

import importlib.util

#: the packages of the ``formats`` extra, imported only when their feature is used
OPTIONAL_EXTRAS = frozenset({"safetensors", "h5py", "zarr", "pandas", "pyarrow"})


def installed(package: str) -> bool:
    """Whether ``package`` can be imported here."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules: blocked
        return False


def missing_extra(error: BaseException | None) -> str | None:
    """The optional extra whose absence raised ``error`` (or one of its causes), when that
    extra is really not installed; ``None`` for any other error."""
    while error is not None:
        name = error.name if isinstance(error, ImportError) else None
        package = (name or "").split(".")[0]
        if package in OPTIONAL_EXTRAS and not installed(package):
            return package
        error = error.__cause__
    return None
