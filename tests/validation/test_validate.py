"""``validate``: every kind of problem, reported with its location, all at once."""

from typing import Annotated, Any

import numpy as np
import pytest
import torch
from pydantic import ValidationError
from torch import Tensor

from tensorclass import NonTensorStack, Spec, TensorClass, TensorDict, stack
from tensorclass.validation import validate

from .conftest import Color, Meta, Obs, Step, step_data


def errors(data: Any, cls: type = Step, **kwargs: Any) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as info:
        validate(data, cls, **kwargs)
    assert info.value.title == cls.__name__
    return info.value.errors()


def only(found: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(found) == 1, found
    return found[0]


# -- valid data ---------------------------------------------------------------------------


def test_valid_mapping_gives_an_instance_sharing_tensors() -> None:
    data = step_data()
    result = validate(data, Step)
    assert type(result) is Step and type(result.obs) is Obs
    assert result.batch_size == torch.Size([4])
    assert result.obs.batch_size == torch.Size([4])
    assert result.obs.pixels is data["obs"]["pixels"]  # type: ignore[index]
    assert result.action is data["action"]
    assert result.mode == "train" and result.step == 0 and result.color is Color.RED
    assert result.reward is None and result.meta is None


def test_valid_instance_of_the_class() -> None:
    step = Step(**step_data(), batch_size=[4])
    result = validate(step, Step)
    assert type(result) is Step and result is not step
    assert result.obs.pixels is step.obs.pixels


def test_valid_tensordict_and_other_class() -> None:
    td = TensorDict(step_data(), batch_size=[4])
    result = validate(td, Step)
    assert type(result.obs) is Obs
    assert result.obs.pixels is td["obs", "pixels"]

    class OtherObs(TensorClass):
        pixels: Tensor
        state: Tensor

    other = OtherObs(torch.zeros(4, 3, 8, 8, dtype=torch.uint8), torch.zeros(4, 5), batch_size=[4])
    assert type(validate(other, Obs)) is Obs


def test_non_tensor_values_are_validated_and_converted() -> None:
    data = step_data() | {"step": "3", "color": "blue", "meta": {"source": "cam"}, "mode": "eval"}
    result = validate(data, Step)
    assert result.step == 3
    assert result.color is Color.BLUE
    assert result.meta == Meta(source="cam")
    assert result.mode == "eval"


def test_lists_and_arrays_become_tensors() -> None:
    class Small(TensorClass):
        x: Annotated[Tensor, Spec("*B 2", torch.int64)]
        y: Annotated[Tensor, "*B"]

    result = validate({"x": [[1, 2], [3, 4]], "y": np.zeros(2)}, Small)
    assert result.batch_size == torch.Size([2])
    assert result.x.dtype == torch.int64 and result.y.dtype == torch.float64


def test_flat_tuple_keys() -> None:
    data = step_data()
    flat = {("obs", "pixels"): data["obs"]["pixels"], ("obs", "state"): data["obs"]["state"]}  # type: ignore[index]
    result = validate(flat | {"action": data["action"], "mask": data["mask"]}, Step)
    assert result.obs.state.shape == (4, 7)


def test_default_factory_is_used() -> None:
    from tensorclass import field

    class WithDefaults(TensorClass):
        x: Tensor
        tags: list[str] = field(default_factory=list)

    result = validate({"x": torch.zeros(3)}, WithDefaults)
    assert result.tags == []


def test_frozen_results_are_locked() -> None:
    class Frozen(TensorClass, frozen=True):
        x: Tensor

    assert validate({"x": torch.zeros(3)}, Frozen).is_locked


def test_no_spec_means_no_shape_check() -> None:
    class Loose(TensorClass):
        x: Tensor

    assert validate({"x": torch.zeros(3, 5)}, Loose, batch_size=[3]).x.shape == (3, 5)


# -- batch size -----------------------------------------------------------------------------


def test_batch_size_is_inferred_from_star_b() -> None:
    assert validate(step_data((2, 5)), Step).batch_size == torch.Size([2, 5])
    assert validate(step_data(()), Step).batch_size == torch.Size([])


def test_inference_follows_the_majority() -> None:
    data = step_data()
    data["action"] = torch.zeros(5, 2)
    err = only(errors(data))
    assert err["loc"] == ("action",)
    assert err["type"] == "tensor_batch"
    assert err["ctx"]["expected"] == [4] and err["ctx"]["actual"] == [5]


def test_inference_from_nested_fields_only() -> None:
    class Pair(TensorClass):
        first: Obs
        second: Obs

    obs = step_data((3,))["obs"]
    assert validate({"first": obs, "second": obs}, Pair).batch_size == torch.Size([3])


def test_explicit_batch_size() -> None:
    result = validate(step_data((4,)), Step, batch_size=[4])
    assert result.batch_size == torch.Size([4])
    err = errors(step_data((4,)), batch_size=[3])
    assert {e["type"] for e in err} == {"tensor_batch"}
    assert {e["loc"] for e in err} == {("action",), ("mask",), ("obs", "pixels"), ("obs", "state")}


def test_explicit_batch_size_overrides_an_instance() -> None:
    td = TensorDict(step_data((4,)), batch_size=[])
    with pytest.raises(ValidationError):
        validate(td, Step)
    assert validate(td, Step, batch_size=[4]).batch_size == torch.Size([4])


def test_nested_batch_may_be_longer() -> None:
    class Outer(TensorClass):
        obs: Obs
        x: Annotated[Tensor, "*B"]

    obs = Obs(**step_data((4, 2))["obs"], batch_size=[4, 2])  # type: ignore[arg-type]
    result = validate({"obs": obs, "x": torch.zeros(4)}, Outer)
    assert result.batch_size == torch.Size([4]) and result.obs.batch_size == torch.Size([4, 2])


def test_nested_batch_must_start_with_the_parent() -> None:
    class Outer(TensorClass):
        obs: Obs
        x: Annotated[Tensor, "*B"]

    obs = Obs(**step_data((3,))["obs"], batch_size=[3])  # type: ignore[arg-type]
    found = errors({"obs": obs, "x": torch.zeros(4), "y": 1}, Outer)
    assert [(e["loc"], e["type"]) for e in found] == [
        (("obs",), "tensor_batch"),
        (("y",), "extra_forbidden"),
    ]


# -- each kind of problem -------------------------------------------------------------------


def test_missing_field() -> None:
    data = step_data()
    del data["action"]
    del data["obs"]["state"]  # type: ignore[attr-defined]
    found = errors(data)
    assert [(e["loc"], e["type"]) for e in found] == [
        (("obs", "state"), "missing"),
        (("action",), "missing"),
    ]


def test_extra_field() -> None:
    data = step_data()
    data["obs"]["depth"] = torch.zeros(4)  # type: ignore[index]
    data["extra"] = "surprise"
    found = errors(data)
    assert [(e["loc"], e["type"], e["input"]) for e in found[1:]] == [
        (("extra",), "extra_forbidden", "surprise"),
    ]
    assert found[0]["loc"] == ("obs", "depth") and found[0]["type"] == "extra_forbidden"


def test_wrong_dtype() -> None:
    data = step_data()
    data["obs"]["pixels"] = torch.zeros(4, 3, 84, 84)  # type: ignore[index]
    data["action"] = torch.zeros(4, 2, dtype=torch.int32)
    found = errors(data)
    assert [(e["loc"], e["type"], e["ctx"]) for e in found] == [
        (("obs", "pixels"), "tensor_dtype", {"expected": "uint8", "actual": "float32"}),
        (("action",), "tensor_dtype", {"expected": "float32 or float64", "actual": "int32"}),
    ]
    assert found[0]["msg"] == "expected dtype uint8, got float32"


def test_wrong_rank() -> None:
    data = step_data()
    data["obs"]["pixels"] = torch.zeros(4, 84, 84, dtype=torch.uint8)  # type: ignore[index]
    err = only(errors(data))
    assert err["loc"] == ("obs", "pixels") and err["type"] == "tensor_rank"
    assert err["msg"] == "expected 4 dims ('*B 3 H W'), got 3: shape [4, 84, 84]"

    class Exact(TensorClass):
        x: Annotated[Tensor, "N 3"]

    err = only(errors({"x": torch.zeros(4, 3, 1)}, Exact, batch_size=[4]))
    assert err["msg"] == "expected 2 dims ('N 3'), got 3: shape [4, 3, 1]"


def test_wrong_fixed_dim() -> None:
    data = step_data()
    data["obs"]["pixels"] = torch.zeros(4, 4, 84, 84, dtype=torch.uint8)  # type: ignore[index]
    err = only(errors(data))
    assert err["type"] == "tensor_dim"
    assert err["msg"] == "dim 1 should be 3 ('*B 3 H W'), got 4: shape [4, 4, 84, 84]"


def test_conflicting_symbolic_dim() -> None:
    data = step_data()
    data["mask"] = torch.ones(4, 64, 84, dtype=torch.bool)
    err = only(errors(data))
    assert err["loc"] == ("mask",) and err["type"] == "tensor_binding"
    assert err["msg"].startswith("H=84 from obs.pixels, 64 here")
    assert err["ctx"]["bound_at"] == "obs.pixels"


def test_symbolic_dims_bind_across_nested_levels() -> None:
    class Inner(TensorClass):
        a: Annotated[Tensor, "*B D"]

    class Outer(TensorClass):
        x: Annotated[Tensor, "*B D"]
        inner: Inner
        y: Annotated[Tensor, "*B D"]

    found = errors(
        {"x": torch.zeros(2, 3), "inner": {"a": torch.zeros(2, 4)}, "y": torch.zeros(2, 5)}, Outer
    )
    assert [(e["loc"], e["msg"].split(" (")[0]) for e in found] == [
        (("inner", "a"), "D=3 from x, 4 here"),
        (("y",), "D=3 from x, 5 here"),
    ]


def test_variadic_names_and_broadcast_dims() -> None:
    class Seq(TensorClass):
        x: Annotated[Tensor, "*B *T C"]
        y: Annotated[Tensor, "*B *T"]
        z: Annotated[Tensor, "*B #C ..."]
        w: Annotated[Tensor, "*B _ #3"]

    good = {
        "x": torch.zeros(2, 5, 6, 3),
        "y": torch.zeros(2, 5, 6),
        "z": torch.zeros(2, 1, 9, 9),
        "w": torch.zeros(2, 7, 1),
    }
    assert validate(good, Seq, batch_size=[2]).z.shape == (2, 1, 9, 9)
    bad = good | {"y": torch.zeros(2, 5, 7), "z": torch.zeros(2, 2), "w": torch.zeros(2, 7, 2)}
    found = errors(bad, Seq, batch_size=[2])
    assert [(e["loc"], e["type"]) for e in found] == [
        (("y",), "tensor_binding"),
        (("z",), "tensor_binding"),
        (("w",), "tensor_dim"),
    ]
    assert found[0]["msg"].startswith("T=[5, 6] from x, [5, 7] here")


def test_wrong_non_tensor_type() -> None:
    data = step_data() | {"step": "many", "mode": "test", "color": "green", "meta": {"fps": 2}}
    found = errors(data)
    assert [(e["loc"], e["type"]) for e in found] == [
        (("mode",), "literal_error"),
        (("step",), "int_parsing"),
        (("color",), "enum"),
        (("meta", "source"), "missing"),
    ]


def test_wrong_device() -> None:
    class OnCpu(TensorClass):
        x: Annotated[Tensor, Spec("*B", device="cpu")]

    err = only(errors({"x": torch.zeros(3, device="meta")}, OnCpu))
    assert err["loc"] == ("x",) and err["type"] == "tensor_device"
    assert err["ctx"] == {"expected": "cpu", "actual": "meta"}


def test_device_index() -> None:
    from tensorclass.validation.tensors import device_ok as _device_ok

    cuda, cuda1 = torch.device("cuda"), torch.device("cuda:1")
    assert _device_ok(cuda, cuda1) and _device_ok(cuda1, cuda1)
    assert not _device_ok(cuda1, torch.device("cuda:0"))
    assert not _device_ok(cuda, torch.device("cpu"))


def test_not_a_tensor() -> None:
    data = step_data() | {"action": "left"}
    err = only(errors(data))
    assert err["loc"] == ("action",) and err["type"] == "tensor_type"
    assert err["msg"] == "expected a tensor, got str"


def test_wrong_nested_value() -> None:
    err = only(errors(step_data() | {"obs": 3}))
    assert err["loc"] == ("obs",) and err["type"] == "tensorclass_type"
    err = only(errors([1, 2], Obs))
    assert err["loc"] == () and err["msg"].startswith("expected an Obs instance, a TensorDict")


def test_plain_tensor_field_must_start_with_the_batch() -> None:
    err = only(errors(step_data() | {"reward": torch.zeros(3)}))
    assert err["loc"] == ("reward",) and err["type"] == "tensor_batch"
    assert err["msg"] == "shape [3] does not start with the batch size [4]"


def test_non_tensor_stacks_are_checked_per_element() -> None:
    class Tagged(TensorClass):
        x: Annotated[Tensor, "*B"]
        n: int

    a = Tagged(torch.zeros(2), 1, batch_size=[2])
    b = Tagged(torch.zeros(2), "x", batch_size=[2])
    stacked = stack([a, b])
    assert type(stacked._data["n"]) is NonTensorStack
    found = errors(stacked, Tagged)
    assert [e["loc"] for e in found] == [("n", 1, 0), ("n", 1, 1)]
    c = Tagged(torch.zeros(2), "3", batch_size=[2])
    assert validate(stack([a, c]), Tagged).n == [[1, 1], [3, 3]]


# -- every problem at once -------------------------------------------------------------------


def test_several_problems_are_all_reported() -> None:
    data = {
        "obs": {"pixels": torch.zeros(4, 3, 64, 84), "state": torch.zeros(4, 7, device="meta")},
        "action": torch.zeros(4),
        "mask": torch.ones(4, 84, 84),
        "mode": "test",
        "extra": 1,
    }
    with pytest.raises(ValidationError) as info:
        validate(data, Step)
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [
        (("obs", "pixels"), "tensor_dtype"),
        (("action",), "tensor_rank"),
        (("mask",), "tensor_binding"),
        (("mode",), "literal_error"),
        (("extra",), "extra_forbidden"),
    ]
    text = str(info.value)
    assert text.startswith("5 validation errors for Step")
    assert "obs.pixels\n  expected dtype uint8, got float32" in text
    assert "H=64 from obs.pixels, 84 here" in text


def test_validate_needs_a_schema_class() -> None:
    with pytest.raises(TypeError, match="needs a tensor class"):
        validate({}, TensorDict)


def test_arbitrary_classes_and_custom_pydantic_errors() -> None:
    from collections.abc import Callable

    from pydantic import BaseModel, field_validator
    from pydantic_core import PydanticCustomError

    class Config(BaseModel):
        lr: float

        @field_validator("lr")
        @classmethod
        def positive(cls, value: float) -> float:
            if value <= 0:
                raise PydanticCustomError(
                    "not_positive", "lr must be positive, got {v}", {"v": value}
                )
            return value

    class Odd(TensorClass):
        arr: np.ndarray
        fn: Callable[[int], int] | None = None
        config: Config | None = None

    assert validate({"arr": np.zeros(3), "fn": abs}, Odd).fn is abs
    found = errors({"arr": [1, 2], "fn": 3, "config": {"lr": -1}}, Odd)
    assert [(e["loc"], e["type"]) for e in found] == [
        (("arr",), "is_instance_of"),
        (("fn",), "callable_type"),
        (("config", "lr"), "not_positive"),
    ]
    assert found[2]["msg"] == "lr must be positive, got -1.0"
    schema = Odd.json_schema()  # no JSON form for a callable: an empty schema, no failure
    assert schema["properties"]["fn"]["anyOf"][0] == {}


def test_specs_pickle() -> None:
    import copy
    import pickle

    spec = Spec("*B 3", torch.uint8, device="cpu")
    assert spec.layout is not None
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert copy.deepcopy(spec) == spec


# -- data without dtypes (lists, numbers: e.g. read from JSON) ------------------------------


def test_lists_take_the_spec_dtype_when_exact_and_imply_the_batch_size() -> None:
    class Img(TensorClass):
        pixels: Annotated[Tensor, Spec("*B 2", torch.uint8)]
        depth_map: Annotated[Tensor, Spec("*B", (torch.float16, torch.float32))]

    class Scalar(TensorClass):
        scale: Annotated[Tensor, Spec("", torch.float64)]

    result = validate({"pixels": [[0, 255], [1, 2], [3, 4]], "depth_map": [1, 2, 3]}, Img)
    assert result.batch_size == torch.Size([3])  # from the lists' shapes
    assert result.pixels.dtype == torch.uint8 and result.depth_map.dtype == torch.float32
    scalar = validate({"scale": 1}, Scalar)
    assert scalar.scale.dtype == torch.float64 and scalar.scale.item() == 1
    found = errors({"pixels": [[0, 256]], "depth_map": [True]}, Img)
    assert [(e["loc"], e["ctx"]["actual"]) for e in found] == [(("pixels",), "int64")]
    found = errors({"pixels": [[0.5, 1.0]], "depth_map": [0.1]}, Img)
    assert [(e["loc"], e["ctx"]["actual"]) for e in found] == [(("pixels",), "float32")]
    arrays = errors({"pixels": np.zeros((1, 2)), "depth_map": np.zeros(1, np.float32)}, Img)
    assert [e["loc"] for e in arrays] == [("pixels",)]  # arrays keep their dtype


def test_json_input_through_a_pydantic_model() -> None:
    from pydantic import BaseModel

    class Run(BaseModel):
        obs: Obs

    text = '{"obs": {"pixels": [[[[0]], [[1]], [[2]]]], "state": [[0.5, 1.5]]}}'
    obs = Run.model_validate_json(text).obs
    assert obs.batch_size == torch.Size([1]) and obs.pixels.dtype == torch.uint8
    assert obs.state.tolist() == [[0.5, 1.5]]


def test_lazy_stacks_are_validated() -> None:
    from tensorclass import lazy_stack

    obs = Obs(**step_data((2,))["obs"], batch_size=[2])  # type: ignore[arg-type]
    result = validate(lazy_stack([obs, obs]), Obs)
    assert type(result) is Obs and result.batch_size == torch.Size([2, 2])
    ragged = lazy_stack(
        [
            TensorDict({"pixels": torch.zeros(3, 4, 5, dtype=torch.uint8)}, []),
            TensorDict({"pixels": torch.zeros(3, 4, 6, dtype=torch.uint8)}, []),
        ]
    )
    found = errors(ragged, Obs)
    assert [(e["loc"], e["type"]) for e in found] == [
        (("pixels",), "invalid_value"),
        (("state",), "missing"),
    ]
    assert "cannot stack key 'pixels'" in found[0]["msg"]


def test_shape_tokens_ellipsis_underscore_and_repeated_names() -> None:
    class Shapes(TensorClass):
        square: Annotated[Tensor, "*B N N"]
        tail: Annotated[Tensor, "*B ... 2"]
        skip: Annotated[Tensor, "*B _ _ N"]

    good = {
        "square": torch.zeros(3, 4, 4),
        "tail": torch.zeros(3, 2),
        "skip": torch.zeros(3, 9, 1, 4),
    }
    assert validate(good, Shapes).batch_size == torch.Size([3])
    assert validate(good | {"tail": torch.zeros(3, 5, 6, 2)}, Shapes).tail.dim() == 4
    bad = {
        "square": torch.zeros(3, 4, 5),
        "tail": torch.zeros(3, 2, 1),
        "skip": torch.zeros(3, 1, 4),
    }
    found = errors(bad, Shapes, batch_size=[3])
    assert [(e["loc"], e["type"]) for e in found] == [
        (("square",), "tensor_binding"),
        (("tail",), "tensor_dim"),
        (("skip",), "tensor_rank"),
    ]
    assert found[0]["msg"].startswith("N=4 from square, 5 here (dim 2 of '*B N N'")
