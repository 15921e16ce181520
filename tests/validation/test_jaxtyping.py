"""jaxtyping annotations are read as specs (optional dependency)."""

# ruff: noqa: F722 - jaxtyping shape strings are not forward references

from typing import Optional

import pytest
import torch
from pydantic import ValidationError
from torch import Tensor

from tensorclass import FieldKind, Spec, TensorClass

jaxtyping = pytest.importorskip("jaxtyping")
Float, Shaped, UInt8 = jaxtyping.Float, jaxtyping.Shaped, jaxtyping.UInt8


class Frames(TensorClass):
    pixels: UInt8[Tensor, "*B 3 H W"]
    depth_map: Float[Tensor, "*B H W"]
    extra: Optional[Shaped[Tensor, "*B H-1 _"]] = None  # noqa: UP045
    anything: Float[Tensor, "..."] | None = None


def test_jaxtyping_fields_are_tensor_fields_with_specs() -> None:
    fields = {f.name: f for f in Frames.fields()}
    assert all(f.kind is FieldKind.TENSOR for f in fields.values())
    assert fields["pixels"].spec == Spec("*B 3 H W", torch.uint8)
    depth_map = fields["depth_map"].spec
    assert depth_map is not None and depth_map.shape == "*B H W"
    assert depth_map.dtype is not None and {torch.float16, torch.float32, torch.bfloat16} <= set(
        depth_map.dtype
    )
    extra = fields["extra"].spec
    assert extra is not None and extra.dtype is None  # Shaped: any dtype
    assert fields["extra"].optional


def test_valid_jaxtyping_data() -> None:
    frames = Frames.validate(
        {
            "pixels": torch.zeros(2, 3, 8, 9, dtype=torch.uint8),
            "depth_map": torch.zeros(2, 8, 9, dtype=torch.float16),
            "extra": torch.zeros(2, 7, 5, dtype=torch.int32),  # H-1 is not checked
            "anything": torch.zeros(2, 5),
        }
    )
    assert frames.batch_size == torch.Size([2])


def test_jaxtyping_problems_are_reported() -> None:
    with pytest.raises(ValidationError) as info:
        Frames.validate(
            {
                "pixels": torch.zeros(2, 3, 8, 9),
                "depth_map": torch.zeros(2, 6, 9, dtype=torch.int64),
                "anything": torch.zeros(2, dtype=torch.int64),
            }
        )
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [
        (("pixels",), "tensor_dtype"),
        (("depth_map",), "tensor_dtype"),
        (("depth_map",), "tensor_binding"),
        (("anything",), "tensor_dtype"),
    ]
    assert "H=8 from pixels, 6 here" in str(info.value)
    # a dtype family is named as jaxtyping names it, not by its eight members
    assert info.value.errors()[1]["msg"] == "expected dtype Float (jaxtyping), got int64"
    assert info.value.errors()[0]["msg"] == "expected dtype uint8, got float32"


def test_jaxtyping_json_schema() -> None:
    props = Frames.json_schema()["properties"]
    assert props["pixels"]["x-tensor"] == {"shape": "*B 3 H W", "dtype": "uint8"}
    assert props["extra"]["x-tensor"] == {"shape": "*B H-1 _"}


def test_more_jaxtyping_dtypes_and_named_variadics() -> None:
    from typing import Annotated

    Bool, Float32, Int = jaxtyping.Bool, jaxtyping.Float32, jaxtyping.Int

    class Mixed(TensorClass, validate=True):
        ids: Int[Tensor, "*batch n"]
        done: Bool[Tensor, "*batch"]
        value: Annotated[Float32[Tensor, "*batch n"], Spec(device="cpu")]

    spec = Mixed.fields()[2].spec
    assert spec == Spec("*batch n", torch.float32, device="cpu")  # both parts merged
    Mixed(
        torch.zeros(2, 3, 4, dtype=torch.int32),
        torch.zeros(2, 3, dtype=torch.bool),
        torch.zeros(2, 3, 4),
    )
    with pytest.raises(ValidationError) as info:
        Mixed(
            torch.zeros(2, 3, 4),
            torch.zeros(2, 5, dtype=torch.bool),
            torch.zeros(2, 3, 4, dtype=torch.float64, device="meta"),
        )
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [
        (("ids",), "tensor_dtype"),
        (("done",), "tensor_binding"),  # *batch is bound across fields, like a name
        (("value",), "tensor_dtype"),
        (("value",), "tensor_device"),
    ]
    assert "batch=[2, 3] from ids, [2, 5] here" in str(info.value)
