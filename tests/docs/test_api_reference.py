"""The API reference (``docs/api.md``, rendered by mkdocstrings) covers every public name."""

from __future__ import annotations

import importlib
import re

import pytest

import tensorclass
import tensorclass.nn

from .fences import ROOT

DIRECTIVES = re.findall(r"^::: (\S+)$", (ROOT / "docs" / "api.md").read_text(), re.MULTILINE)
PUBLIC = [
    f"{module.__name__}.{name}"
    for module in (tensorclass, tensorclass.nn)
    for name in module.__all__
]


def resolve(path: str) -> object:
    """The object a ``::: path`` directive documents."""
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(path)


@pytest.mark.parametrize("path", DIRECTIVES)
def test_every_directive_names_an_object(path: str) -> None:
    resolve(path)


@pytest.mark.parametrize("path", PUBLIC)
def test_every_public_name_is_documented(path: str) -> None:
    module, _, name = path.rpartition(".")
    obj = getattr(importlib.import_module(module), name)
    documented_modules = {d for d in DIRECTIVES if isinstance(resolve(d), type(tensorclass))}
    assert (
        path in DIRECTIVES
        or f"tensorclass.{name}" in DIRECTIVES
        or getattr(obj, "__module__", None) in documented_modules
    ), f"{path} is not in docs/api.md"
