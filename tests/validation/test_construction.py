"""``validate=True``: classes that check themselves when constructed (and only then)."""

from typing import Annotated

import pytest
import torch
from pydantic import ValidationError
from torch import Tensor

from tensorclass import Spec, TensorClass, field, tensorclass


class Checked(TensorClass, validate=True):
    x: Annotated[Tensor, Spec("*B 3", torch.float32)]
    n: int = 0


def test_valid_construction_converts_non_tensor_values() -> None:
    value = Checked(torch.zeros(2, 3), n="4", batch_size=[2])  # type: ignore[arg-type]
    assert value.n == 4


def test_invalid_construction_lists_every_problem() -> None:
    with pytest.raises(ValidationError) as info:
        Checked(torch.zeros(2, 4, dtype=torch.int64), n="x", batch_size=[2])  # type: ignore[arg-type]
    assert info.value.title == "Checked"
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("x",), "tensor_dtype"),
        (("x",), "tensor_dim"),
        (("n",), "int_parsing"),
    ]
    assert "input_value=tensor(int64[2, 4], device=cpu)" in str(info.value)


def test_absent_required_field_is_missing() -> None:
    with pytest.raises(ValidationError, match="Field required"):
        Checked(None, batch_size=[2])  # type: ignore[arg-type]


def test_checks_run_before_post_init() -> None:
    seen = []

    class WithPost(TensorClass, validate=True):
        n: int

        def __post_init__(self) -> None:
            seen.append(self.n)

    WithPost("5")  # type: ignore[arg-type]
    assert seen == [5]
    with pytest.raises(ValidationError):
        WithPost("five")  # type: ignore[arg-type]
    assert seen == [5]


def test_nested_and_bindings_on_construction() -> None:
    class Inner(TensorClass):
        a: Annotated[Tensor, "*B D"]

    class Outer(TensorClass, validate=True):
        x: Annotated[Tensor, "*B D"]
        inner: Inner

    Outer(torch.zeros(2, 3), Inner(torch.zeros(2, 3), batch_size=[2]), batch_size=[2])
    with pytest.raises(ValidationError, match=r"D=3 from x, 4 here"):
        Outer(torch.zeros(2, 3), {"a": torch.zeros(2, 4)}, batch_size=[2])  # type: ignore[arg-type]


def test_operations_do_not_validate() -> None:
    value = Checked(torch.zeros(2, 3), batch_size=[2])
    value.x = value.x.double()  # writes go through the converter only
    assert value[0].x.dtype == torch.float64
    assert torch.stack([value, value]).batch_size == torch.Size([2, 2])
    with pytest.raises(ValidationError, match="expected dtype float32"):
        Checked.validate(value)


def test_subclasses_inherit_and_decorator_spelling() -> None:
    class Child(Checked):
        y: Tensor | None = None

    with pytest.raises(ValidationError):
        Child(torch.zeros(2, 4), batch_size=[2])

    @tensorclass(validate=True)
    class Decorated:
        x: Annotated[Tensor, Spec(dtype=torch.uint8)]
        tags: list[str] = field(default_factory=list)

    assert Decorated(torch.zeros(1, dtype=torch.uint8)).tags == []
    with pytest.raises(ValidationError, match="expected dtype uint8"):
        Decorated(torch.zeros(1))


def test_non_validating_classes_do_not_check() -> None:
    class Loose(TensorClass):
        x: Annotated[Tensor, Spec("*B 3", torch.float32)]

    Loose(torch.zeros(2, 4, dtype=torch.int64), batch_size=[2])  # no error
    with pytest.raises(ValidationError):
        Loose.validate(Loose(torch.zeros(2, 4, dtype=torch.int64), batch_size=[2]))


def test_classmethod_validate_returns_the_class() -> None:
    value = Checked.validate({"x": torch.zeros(5, 3), "n": 2})
    assert type(value) is Checked and value.batch_size == torch.Size([5])
    assert Checked.validate({"x": torch.zeros(5, 3)}, batch_size=[5]).n == 0


def test_validate_is_a_reserved_field_name() -> None:
    from tensorclass import SchemaError

    with pytest.raises(SchemaError, match="reserved"):

        class Clash(TensorClass):
            validate: int  # type: ignore[assignment]


def test_redecorating_a_class_turns_checks_on() -> None:
    class Plain(TensorClass):
        x: Annotated[Tensor, "*B 3"]

    Plain(torch.zeros(2, 4), batch_size=[2])
    Plain.json_schema()  # fills the class's caches
    checked = tensorclass(validate=True)(Plain)
    assert checked is not Plain and checked.__tensorclass_schema__.validate
    with pytest.raises(ValidationError, match=r"dim 1 should be 3"):
        checked(torch.zeros(2, 4), batch_size=[2])
    assert type(checked.validate({"x": torch.zeros(2, 3)})) is checked
    assert checked.json_schema()["x-tensorclass"]["class"].endswith("Plain")


class Pixels(TensorClass, validate=True):
    pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]


class Frame(TensorClass, validate=True):
    obs: Pixels
    mask: Annotated[Tensor, "*B H W"]
    n: int = 0
    tags: list[str] = field(default_factory=list)


def test_a_value_the_constructor_cannot_store_is_reported_with_the_others() -> None:
    pixels = Pixels(torch.zeros(2, 3, 4, 5, dtype=torch.uint8), batch_size=[2])
    with pytest.raises(ValidationError) as info:
        Frame(pixels, "left", n="x", batch_size=[2])  # type: ignore[arg-type]
    assert info.value.title == "Frame"
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("mask",), "tensor_type"),
        (("n",), "int_parsing"),
    ]
    with pytest.raises(ValidationError) as info:
        Frame(pixels, torch.zeros(3, 4, 5), n="x", batch_size=[2])  # type: ignore[arg-type]
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("mask",), "tensor_batch"),
        (("n",), "int_parsing"),
    ]
    assert info.value.errors()[0]["ctx"]["expected"] == [2]


def test_a_nested_validating_class_from_a_mapping_reports_full_locations() -> None:
    bad = {"pixels": torch.zeros(2, 3, 4, 5)}  # float32, where uint8 is declared
    with pytest.raises(ValidationError) as info:
        Frame(bad, torch.zeros(2, 6, 5), n="x", batch_size=[2])  # type: ignore[arg-type]
    assert info.value.title == "Frame"
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [
        (("obs", "pixels"), "tensor_dtype"),
        (("mask",), "tensor_binding"),
        (("n",), "int_parsing"),
    ]
    assert "H=4 from obs.pixels, 6 here" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_construction_errors_that_are_not_about_the_data_are_kept() -> None:
    from tensorclass import TensorClassError

    pixels = torch.zeros(2, 3, 4, 5, dtype=torch.uint8)
    with pytest.raises(TensorClassError, match="names"):
        Pixels(pixels, batch_size=[2], names=["a", "b", "c"])
    value = Frame(Pixels(pixels, batch_size=[2]), torch.zeros(2, 4, 5), batch_size=[2])
    assert value.tags == [] and value.n == 0  # the factory still runs once per instance


def test_operations_never_call_the_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    import tensorclass.validation.run as run

    calls: list[int] = []
    check_level = run.check_level

    def counting(*args: object, **kwargs: object) -> None:
        calls.append(1)
        check_level(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "check_level", counting)
    pixels = Pixels(torch.zeros(4, 3, 2, 2, dtype=torch.uint8), batch_size=[4])
    frame = Frame(pixels, torch.zeros(4, 2, 2), batch_size=[4])
    assert len(calls) == 2  # the two constructors
    calls.clear()
    results = [
        frame[0],
        frame[1:3],
        frame[torch.tensor([True, False, True, True])],
        frame.clone(),
        frame.apply(lambda t: t + 1),
        frame.to("cpu"),
        torch.stack([frame, frame]),
        torch.cat([frame, frame]),
        frame.reshape(2, 2),
        frame.unsqueeze(0),
        frame.expand(3, 4),
        frame.detach(),
        *frame.unbind(0),
        *frame.split(2),
    ]
    frame[0] = frame[1]
    frame.mask = frame.mask.double()  # a write: the converter only, no spec check
    assert all(type(r) is Frame for r in results) and calls == []


def test_construction_problems_are_checked_where_the_tensors_would_go() -> None:
    class OnMeta(TensorClass, validate=True):
        x: Annotated[Tensor, Spec("*B 3", device="meta")]
        n: int = 0

    assert OnMeta(torch.zeros(2, 3), batch_size=[2], device="meta").x.device.type == "meta"
    with pytest.raises(ValidationError) as info:
        OnMeta({"a": 1}, n="x", batch_size=[2], device="meta")  # type: ignore[arg-type]
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("x",), "tensor_type"),
        (("n",), "int_parsing"),
    ]
    with pytest.raises(ValidationError) as info:
        OnMeta(torch.zeros(3, 3), n="x", batch_size=[2], device="meta")  # type: ignore[arg-type]
    assert [e["type"] for e in info.value.errors()] == ["tensor_batch", "int_parsing"]
