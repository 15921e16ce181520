"""``docs_ext/attached_ops.py`` shows operations attached in a class body as methods.

The fixture ``tests/docs/attached_fixture`` attaches functions the way the engine does
(``permute = ops.permute``, ``class_op(...)``, ``op_property(...)``, ``staticmethod(...)``);
griffe alone reads those lines as attributes, without signature or docstring.
"""

from __future__ import annotations

from typing import Any

import pytest

from .fences import ROOT

griffe = pytest.importorskip("griffe")


@pytest.fixture(scope="module")
def box() -> Any:
    extensions = griffe.load_extensions(str(ROOT / "docs_ext" / "attached_ops.py"))
    package = griffe.load(
        "tests.docs.attached_fixture",
        search_paths=[str(ROOT)],
        extensions=extensions,
        resolve_aliases=False,
    )
    return package["assembly.Box"]


def _parameters(function: Any) -> list[str]:
    return [parameter.name for parameter in function.parameters]


def test_a_plain_function_is_a_method(box: Any) -> None:
    permute = box.members["permute"]
    assert isinstance(permute, griffe.Function)
    assert not permute.labels
    assert _parameters(permute) == ["dims"]  # self is dropped
    assert str(permute.returns) == "E"
    assert permute.docstring.value.startswith("Permute the batch dims of the box.")
    assert permute.docstring.parent is permute


@pytest.mark.parametrize("name", ["from_items", "plain_classmethod"])
def test_class_op_and_classmethod_are_class_methods(box: Any, name: str) -> None:
    method = box.members[name]
    assert isinstance(method, griffe.Function)
    assert method.labels == {"classmethod"}
    assert _parameters(method) == ["items", "strict"]  # cls is dropped
    assert method.parameters["strict"].kind is griffe.ParameterKind.keyword_only
    assert method.parameters["strict"].default == "True"
    assert method.docstring.value == "Build a box from items (a class method)."


def test_staticmethod_keeps_every_parameter(box: Any) -> None:
    check = box.members["check"]
    assert isinstance(check, griffe.Function)
    assert check.labels == {"staticmethod"}
    assert _parameters(check) == ["value"]
    assert str(check.returns) == "bool"


def test_op_property_is_a_property(box: Any) -> None:
    size = box.members["size"]
    assert isinstance(size, griffe.Attribute)
    assert size.labels == {"property"}
    assert str(size.annotation) == "int"
    assert size.docstring.value == "The number of items in the box (a property)."
    assert box.members["writable_size"].labels == {"property", "writable"}


def test_other_attributes_are_untouched(box: Any) -> None:
    limit = box.members["limit"]
    label = box.members["label"]
    assert isinstance(limit, griffe.Attribute) and limit.value == "3"
    assert isinstance(label, griffe.Attribute) and str(label.annotation) == "str"


def test_the_functions_themselves_are_untouched(box: Any) -> None:
    ops = box.parent.parent["ops"]
    assert _parameters(ops["permute"]) == ["self", "dims"]
    assert ops["permute"].parameters["self"].function is ops["permute"]


def test_a_name_of_the_class_body_is_read_before_the_module(box: Any) -> None:
    """``dumps = save`` after ``def save``: the method, not a module-level ``save``."""
    dumps = box.members["dumps"]
    assert isinstance(dumps, griffe.Function)
    assert _parameters(dumps) == ["path"]
    assert dumps.docstring.value == "Save the box."
