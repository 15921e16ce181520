"""Generate tests/parity/tensordict_0_15_3.json: public names and keyword parameters.

Run once with tensordict 0.15.3 installed, from the repository root:
``python tests/parity/generate.py``. Only names and parameter names are recorded. It also
writes ``tensordict_0_15_3_modules.json``: each public module path of the release (no
underscore in it) and the names its ``__all__`` lists (``null``: no ``__all__``).
"""

import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from typing import Any

import tensordict
import tensordict.nn as tdnn
import torch
from tensordict import LazyStackedTensorDict, MemoryMappedTensor, TensorDict

OUT = Path(__file__).parent / "tensordict_0_15_3.json"
OUT_MODULES = Path(__file__).parent / "tensordict_0_15_3_modules.json"


def params(obj: Any) -> list[str] | None:
    """The names of ``obj``'s parameters (without self/cls and * / ** catch-alls)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [
        p.name
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def members(
    cls: type, skip: frozenset[str] | set[str] = frozenset()
) -> dict[str, list[str] | None]:
    """Public attributes of ``cls`` (not in ``skip``): parameters of methods, None otherwise."""
    out: dict[str, list[str] | None] = {}
    for name in sorted(dir(cls)):
        if name.startswith("_") or name in skip:
            continue
        static = inspect.getattr_static(cls, name)
        value = getattr(cls, name, None)
        out[name] = None if isinstance(static, property) or not callable(value) else params(value)
    return out


def module(mod: Any) -> dict[str, list[str] | None]:
    """``mod.__all__``: parameters of functions and class constructors."""
    out: dict[str, list[str] | None] = {}
    for name in sorted(mod.__all__):
        obj = getattr(mod, name)
        if inspect.isclass(obj):
            out[name] = params(obj.__init__)
        else:
            out[name] = params(obj) if callable(obj) else None
    return out


def main() -> None:
    data: dict[str, Any] = {
        "version": tensordict.__version__,
        "TensorDict": members(TensorDict),
        "LazyStackedTensorDict": members(LazyStackedTensorDict),
        "MemoryMappedTensor": members(MemoryMappedTensor, set(dir(torch.Tensor))),
        "tensordict": module(tensordict),
        "tensordict.nn": module(tdnn),
    }
    module_names = set(dir(torch.nn.Module))  # an nn class: only what it adds to nn.Module
    for name in sorted(tdnn.__all__):
        obj = getattr(tdnn, name)
        if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
            data[f"tensordict.nn.{name}"] = members(obj, module_names)
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def module_paths() -> None:
    """Write ``OUT_MODULES``: public module path -> its ``__all__`` (sorted) or None."""
    paths: dict[str, list[str] | None] = {}
    for info in pkgutil.walk_packages(tensordict.__path__, "tensordict."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        names = getattr(importlib.import_module(info.name), "__all__", None)
        paths[info.name] = None if names is None else sorted(names)
    OUT_MODULES.write_text(json.dumps(paths, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
    module_paths()
