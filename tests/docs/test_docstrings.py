"""Docstrings: every public name has one, and every ``>>>`` example in them runs.

The public names are ``tensorclass.__all__`` and ``tensorclass.nn.__all__``; for a class,
also every public method and property it (or a tensorclass base) defines. A type alias
cannot hold ``__doc__``: it needs a docstring right below its assignment, where the API
reference (mkdocstrings) reads it.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import itertools
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import tensorclass
import tensorclass.nn

from .extras import missing_extra

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(tensorclass.__path__, "tensorclass.")
    if ".plugins" not in name  # plugins import their host (mypy), tested in tests/typing
)
PUBLIC = [(module, name) for module in (tensorclass, tensorclass.nn) for name in module.__all__]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = ExtrasAwareRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.FAIL_FAST
    )
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    if result.failed and result.failed == len(runner.needs):
        pytest.skip(
            f"examples need the optional extras {sorted(set(runner.needs))} (not installed)"
        )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


class ExtrasAwareRunner(doctest.DocTestRunner):
    """A runner that stops a docstring at its first failure (``FAIL_FAST``) and remembers
    the failures that only say an optional extra is not installed."""

    def __init__(self, optionflags: int) -> None:
        super().__init__(optionflags=optionflags)
        self.needs: list[str] = []

    def report_unexpected_exception(self, out: Any, test: Any, example: Any, exc_info: Any) -> None:
        extra = missing_extra(exc_info[1])
        if extra is not None:
            self.needs.append(extra)
        super().report_unexpected_exception(out, test, example, exc_info)


def test_docstring_examples_exist() -> None:
    finder = doctest.DocTestFinder(exclude_empty=True)
    examples = sum(
        len(test.examples)
        for name in MODULES
        for test in finder.find(importlib.import_module(name), name)
    )
    assert examples > 100  # the examples above really are collected


def own_doc(obj: object) -> str:
    """The object's own docstring (``inspect.getdoc`` would borrow a base class's)."""
    doc = obj.__doc__ if isinstance(obj, type) else getattr(obj, "__doc__", None)
    return doc.strip() if isinstance(doc, str) else ""


def alias_docstring(name: str) -> str:
    """The docstring below the module-level assignment of ``name`` in the package, if any."""
    for path in Path(tensorclass.__file__).parent.rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for statement, following in itertools.pairwise(body):
            target = getattr(statement, "target", None) or next(
                iter(getattr(statement, "targets", [])), None
            )
            if isinstance(target, ast.Name) and target.id == name:
                if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
                    return str(following.value.value).strip()
    return ""


@pytest.mark.parametrize(("module", "name"), PUBLIC, ids=lambda x: getattr(x, "__name__", x))
def test_public_names_have_docstrings(module: ModuleType, name: str) -> None:
    obj = getattr(module, name)
    if inspect.isclass(obj) or inspect.isroutine(obj):
        assert own_doc(obj), f"{module.__name__}.{name} has no docstring"
    else:  # a type alias or a constant
        assert alias_docstring(name), f"{module.__name__}.{name} has no docstring below it"


def public_members(cls: type) -> dict[str, object]:
    """The public methods and properties ``cls`` and its tensorclass bases define."""
    members: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("tensorclass"):
            continue
        for key, value in vars(klass).items():
            if key.startswith("_"):
                continue
            if isinstance(value, (classmethod, staticmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value):
                members[key] = value
    return members


CLASSES = [(name, obj) for module, name in PUBLIC if inspect.isclass(obj := getattr(module, name))]


@pytest.mark.parametrize(("name", "cls"), CLASSES, ids=[name for name, _ in CLASSES])
def test_public_members_have_docstrings(name: str, cls: type) -> None:
    schema = getattr(cls, "__tensorclass_schema__", None)
    fields = set(schema.names) if schema is not None else set()  # documented by the class
    missing = [
        key
        for key, value in public_members(cls).items()
        if not own_doc(value) and key not in fields
    ]
    assert not missing, f"{name}: no docstring on {', '.join(sorted(missing))}"
