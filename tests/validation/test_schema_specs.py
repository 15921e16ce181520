"""The schema keeps each tensor field's spec; specs on other fields are refused."""

from typing import Annotated

import pytest
import torch
from torch import Tensor

from tensorclass import SchemaError, Spec, TensorClass, tensorclass


def test_fields_carry_their_spec() -> None:
    class Frames(TensorClass):
        pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
        mask: Annotated[Tensor, "*B H W"] | None = None
        raw: Tensor | None = None
        label: str = ""

    specs = {f.name: f.spec for f in Frames.fields()}
    assert specs == {
        "pixels": Spec("*B 3 H W", torch.uint8),
        "mask": Spec("*B H W"),
        "raw": None,
        "label": None,
    }


def test_forward_references_get_their_spec_when_resolved() -> None:
    class Later(TensorClass):
        x: "Annotated[Tensor, Spec('*B 2')]"
        nested: "Undefined | None" = None

    class Undefined(TensorClass):
        y: Tensor

    globals()["Undefined"] = Undefined
    try:
        assert Later.fields()[0].spec == Spec("*B 2")
        schema = Later.__tensorclass_schema__.resolve()
        assert schema.by_name["nested"].nested_class is Undefined
    finally:
        del globals()["Undefined"]


def test_spec_on_a_non_tensor_field_is_refused() -> None:
    with pytest.raises(SchemaError, match="a Spec describes a tensor"):

        class Wrong(TensorClass):
            name: Annotated[str, Spec("*B")]


def test_bad_bare_string_fails_at_class_creation() -> None:
    with pytest.raises(SchemaError, match="cannot read"):

        class Wrong(TensorClass):
            x: Annotated[Tensor, "B+1"]


def test_validate_option_is_stored_and_inherited() -> None:
    class Plain(TensorClass):
        x: Tensor

    class Checked(TensorClass, validate=True):
        x: Tensor

    class Child(Checked):
        y: Tensor | None = None

    class Opted(Checked, validate=False):
        pass

    @tensorclass(validate=True)
    class Decorated:
        x: Tensor

    assert not Plain.__tensorclass_schema__.validate
    assert Checked.__tensorclass_schema__.validate
    assert Child.__tensorclass_schema__.validate
    assert not Opted.__tensorclass_schema__.validate
    assert Decorated.__tensorclass_schema__.validate
    assert tensorclass(validate=True)(Plain).__tensorclass_schema__.validate
    assert tensorclass(Checked) is Checked


def test_redecorating_keeps_defaults() -> None:
    from tensorclass import field

    class Base(TensorClass):
        x: Tensor
        n: int = 3
        tags: list[str] = field(default_factory=list, kw_only=True)

    rebuilt = tensorclass(validate=True)(Base)
    assert [(f.name, f.default) for f in rebuilt.fields()][:2] == [
        ("x", Base.fields()[0].default),
        ("n", 3),
    ]
    value = rebuilt(torch.zeros(2))
    assert value.n == 3 and value.tags == []
    assert tensorclass(frozen=True)(Base)(torch.zeros(2)).n == 3
