"""The API reference (``docs/api/*.md``, rendered by mkdocstrings) covers every public name."""

from __future__ import annotations

import importlib
import pkgutil
import re
import types

import pytest

import tensorclass
import tensorclass.nn

from .fences import ROOT

#: the reference's pages, one per concept (``docs/api/index.md`` links them)
API_PAGES = sorted((ROOT / "docs" / "api").glob("*.md"))
DIRECTIVES = [
    directive
    for page in API_PAGES
    for directive in re.findall(r"^::: (\S+)$", page.read_text(), re.MULTILINE)
]
PUBLIC = [
    f"{module.__name__}.{name}"
    for module in (tensorclass, tensorclass.nn)
    for name in module.__all__
]


DOCUMENTED_MODULES = {
    d for d in DIRECTIVES if isinstance(pkgutil.resolve_name(d), types.ModuleType)
}


@pytest.mark.parametrize("path", DIRECTIVES)
def test_every_directive_names_an_object(path: str) -> None:
    pkgutil.resolve_name(path)


@pytest.mark.parametrize("path", PUBLIC)
def test_every_public_name_is_documented(path: str) -> None:
    module, _, name = path.rpartition(".")
    obj = getattr(importlib.import_module(module), name)
    assert (
        path in DIRECTIVES
        or f"tensorclass.{name}" in DIRECTIVES
        or getattr(obj, "__module__", None) in DOCUMENTED_MODULES
        # documented where it is defined (a public name that a submodule's name shadows for
        # the docs builder: tensorclass.tensorclass, tensorclass.memmap)
        or any(pkgutil.resolve_name(d) is obj for d in DIRECTIVES)
    ), f"{path} is on no page of docs/api/"


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [p.name for p in API_PAGES if f"api/{p.name}" not in nav]
    assert len(API_PAGES) > 1 and not missing, missing
