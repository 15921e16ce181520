"""Spec objects, shape strings, and reading specs from annotations."""

from typing import Annotated, Optional

import pytest
import torch
from torch import Tensor

from tensorclass import SchemaError
from tensorclass.specs import Dim, DimKind, Spec, parse_shape, spec_from_annotation


def test_parse_every_token_kind() -> None:
    dims = parse_shape("*B 3 rows=4 H #W _ _skip")
    assert dims == (
        Dim(DimKind.BATCH, "B"),
        Dim(DimKind.FIXED, None, 3),
        Dim(DimKind.FIXED, "rows", 4),
        Dim(DimKind.NAMED, "H"),
        Dim(DimKind.NAMED, "W", broadcast=True),
        Dim(DimKind.ANY),
        Dim(DimKind.ANY),
    )
    assert parse_shape("... 3") == (Dim(DimKind.ANY_VARIADIC), Dim(DimKind.FIXED, None, 3))
    assert parse_shape("*_ 3")[0].kind is DimKind.ANY_VARIADIC
    assert parse_shape("*T C")[0] == Dim(DimKind.VARIADIC, "T")
    assert parse_shape("") == ()


@pytest.mark.parametrize(
    "shape, message",
    [
        ("*B *T ...", "more than one variadic"),
        ("B ... *T", "more than one variadic"),
        ("3 *B", "must come first"),
        ("H-1", "cannot read 'H-1'"),
        ("3.5", "cannot read"),
    ],
)
def test_bad_shape_strings(shape: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        Spec(shape)


def test_spec_parts_repr_and_equality() -> None:
    spec = Spec(" *B  3 H W ", torch.uint8, device="cpu")
    assert spec.shape == "*B 3 H W"
    assert spec.dtype == (torch.uint8,)
    assert spec.device == torch.device("cpu")
    assert repr(spec) == "Spec('*B 3 H W', dtype=torch.uint8, device='cpu')"
    assert spec == Spec("*B 3 H W", "uint8", device=torch.device("cpu"))
    assert hash(spec) == hash(Spec("*B 3 H W", "uint8", device="cpu"))
    several = Spec(dtype=(torch.float16, "float32"))
    assert several.dtype == (torch.float16, torch.float32)
    assert repr(several) == "Spec(dtype=(torch.float16, torch.float32))"
    assert Spec().to_json() == {}
    assert several.to_json() == {"dtype": ["float16", "float32"]}
    assert spec.to_json() == {"shape": "*B 3 H W", "dtype": "uint8", "device": "cpu"}


def test_bad_spec_arguments() -> None:
    with pytest.raises(SchemaError, match="not a torch dtype"):
        Spec(dtype="floaty")
    with pytest.raises(SchemaError, match="shape spec is a string"):
        Spec(3)  # type: ignore[arg-type]


def test_batch_of() -> None:
    assert Spec("*B 3 H W").batch_of(torch.Size([4, 5, 3, 8, 8])) == torch.Size([4, 5])
    assert Spec("*B 3").batch_of(torch.Size([3])) == torch.Size([])
    assert Spec("*B 3 H W").batch_of(torch.Size([3, 8])) is None
    assert Spec("N 3").batch_of(torch.Size([4, 3])) is None
    assert Spec(dtype=torch.uint8).batch_of(torch.Size([4])) is None
    assert Spec("*B *T").batch_of(torch.Size([4])) is None


def test_merge() -> None:
    merged = Spec("*B 3").merge(Spec(dtype=torch.uint8, device="cpu"))
    assert merged == Spec("*B 3", torch.uint8, device="cpu")
    assert merged.dims == parse_shape("*B 3")
    with pytest.raises(SchemaError, match="disagree on the shape"):
        Spec("*B 3").merge(Spec("*B 4"))


def test_spec_from_annotation_forms() -> None:
    spec = Spec("*B 3", torch.uint8)
    assert spec_from_annotation(Annotated[Tensor, spec]) == spec
    assert spec_from_annotation(Annotated[Tensor, "*B 3"]) == Spec("*B 3")
    assert spec_from_annotation(Optional[Annotated[Tensor, spec]]) == spec  # noqa: UP045
    assert spec_from_annotation(Annotated[Tensor, spec] | None) == spec
    assert spec_from_annotation(Annotated[Tensor | None, spec]) == spec
    both = Annotated[Tensor, "*B 3", Spec(dtype=torch.uint8)]
    assert spec_from_annotation(both) == spec
    assert spec_from_annotation(Tensor) is None
    with pytest.raises(SchemaError, match="read as a shape spec"):
        spec_from_annotation(Annotated[Tensor, "pixels (uint8)"])
