"""Tensor classes as pydantic model fields, and their JSON Schema."""

import json
from typing import Annotated

import pytest
import torch
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError
from torch import Tensor

from tensorclass import Spec, TensorClass, TensorDict, field

from .conftest import Obs, Step, step_data


class Run(BaseModel):
    name: str
    step: Step
    history: list[Obs] = []


def test_model_field_validates_mappings_and_instances() -> None:
    run = Run(name="a", step=step_data())  # type: ignore[arg-type]
    assert type(run.step) is Step and run.step.batch_size == torch.Size([4])
    step = Step(**step_data(), batch_size=[4])  # type: ignore[arg-type]
    again = Run(name="b", step=step, history=[step.obs, step.obs])
    assert again.step.obs.pixels is step.obs.pixels
    assert all(type(obs) is Obs for obs in again.history)
    from_td = Run(name="c", step=TensorDict(step_data(), batch_size=[4]))  # type: ignore[arg-type]
    assert type(from_td.step) is Step


def test_model_errors_have_full_locations() -> None:
    bad = step_data()
    bad["mask"] = torch.zeros(4, 64, 84)
    bad["obs"]["state"] = torch.zeros(4, 7, dtype=torch.int8)  # type: ignore[index]
    with pytest.raises(ValidationError) as info:
        Run(name=3, step=bad, history=[{"pixels": 0.5}])  # type: ignore[arg-type, list-item]
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [
        (("name",), "string_type"),
        (("step", "obs", "state"), "tensor_dtype"),
        (("step", "mask"), "tensor_binding"),
        (("history", 0, "pixels"), "tensor_dtype"),
        (("history", 0, "pixels"), "tensor_rank"),
        (("history", 0, "state"), "missing"),
    ]


def test_python_dump_keeps_the_instance_and_json_refuses() -> None:
    run = Run(name="a", step=step_data())  # type: ignore[arg-type]
    dumped = run.model_dump()
    assert dumped["step"] is run.step
    with pytest.raises(PydanticSerializationError, match="Step holds tensors"):
        run.model_dump_json()
    dumped = run.model_dump_json(exclude={"step"})
    assert json.loads(dumped) == {"name": "a", "history": []}


def test_type_adapter() -> None:
    adapter = TypeAdapter(Obs)
    obs = adapter.validate_python(step_data()["obs"])
    assert type(obs) is Obs
    with pytest.raises(ValidationError):
        adapter.validate_python({"pixels": torch.zeros(3)})


def test_json_schema_of_a_class() -> None:
    schema = Step.json_schema()
    assert schema["title"] == "Step"
    assert schema["description"] == "One step of an episode."
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["x-tensorclass"] == {"class": "tests.validation.conftest.Step"}
    assert schema["required"] == ["obs", "action", "mask"]
    props = schema["properties"]
    assert props["obs"] == {"$ref": "#/$defs/Obs"}
    assert props["action"]["x-tensor"] == {"shape": "*B A", "dtype": ["float32", "float64"]}
    assert props["mask"]["x-tensor"] == {"shape": "*B H W"}
    assert props["reward"]["x-tensor"] == {}
    assert props["mode"] == {
        "enum": ["train", "eval"],
        "title": "Mode",
        "type": "string",
        "default": "train",
    }
    assert props["step"] == {"title": "Step", "type": "integer", "default": 0}
    assert props["color"] == {"$ref": "#/$defs/Color", "default": "red"}
    obs = schema["$defs"]["Obs"]
    assert obs["properties"]["pixels"]["x-tensor"] == {"shape": "*B 3 H W", "dtype": "uint8"}
    assert obs["required"] == ["pixels", "state"]
    assert set(schema["$defs"]) == {"Obs", "Color", "Meta"}
    assert Step.json_schema() == schema  # cached adapter, same answer
    json.dumps(schema)


def test_json_schema_details() -> None:
    class Described(TensorClass):
        x: Annotated[Tensor, Spec(device="cpu")] = field(metadata={"description": "positions"})
        extra: TensorDict | None = None

    schema = Described.json_schema()
    assert "description" not in schema
    assert schema["properties"]["x"]["description"] == "positions"
    assert schema["properties"]["x"]["x-tensor"] == {"device": "cpu"}
    assert schema["properties"]["extra"]["x-tensordict"] is True
    assert schema["required"] == ["x"]


def test_recursive_classes() -> None:
    class Tree(TensorClass):
        value: Annotated[Tensor, "*B"]
        child: "Tree | None" = None

    schema = Tree.json_schema()
    assert schema["$ref"] == "#/$defs/Tree"
    assert schema["$defs"]["Tree"]["properties"]["child"] == {
        "anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]
    }
    leaf = {"value": torch.zeros(2)}
    tree = TypeAdapter(Tree).validate_python({"value": torch.zeros(2), "child": leaf})
    assert type(tree.child) is Tree


def test_model_json_schema_includes_the_class() -> None:
    schema = Run.model_json_schema()
    assert schema["properties"]["step"] == {"$ref": "#/$defs/Step"}
    assert schema["$defs"]["Step"]["x-tensorclass"]["class"].endswith("Step")
    assert schema["properties"]["history"]["items"] == {"$ref": "#/$defs/Obs"}


def test_optional_nested_classes_and_models_holding_classes() -> None:
    from pydantic import BaseModel

    class Camera(BaseModel):
        obs: Obs
        fps: int = 30

    class Rig(TensorClass):
        main: Obs
        spare: Obs | None = None
        camera: Camera | None = None

    schema = Rig.json_schema()
    props = schema["properties"]
    assert props["main"] == {"$ref": "#/$defs/Obs"}
    assert props["spare"] == {"anyOf": [{"$ref": "#/$defs/Obs"}, {"type": "null"}]}
    assert props["camera"]["anyOf"][0] == {"$ref": "#/$defs/Camera"}
    assert schema["$defs"]["Camera"]["properties"]["obs"] == {"$ref": "#/$defs/Obs"}
    obs = step_data()["obs"]
    rig = Rig.validate({"main": obs, "camera": {"obs": obs}})
    assert type(rig.camera.obs) is Obs and rig.spare is None  # type: ignore[union-attr]
    with pytest.raises(ValidationError) as info:
        Rig.validate({"main": obs, "camera": {"obs": {"pixels": torch.zeros(2)}}})
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found[0] == (("camera", "obs", "pixels"), "tensor_dtype")
    assert (("camera", "obs", "state"), "missing") in found
