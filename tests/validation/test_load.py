"""Loading checks typed levels: ``load_memmap(path, cls=X)``, ``X.load_memmap`` and saves
whose recorded classes are typed."""

import enum
from pathlib import Path
from typing import Annotated, Literal

import pytest
import torch
from pydantic import BaseModel, ValidationError
from torch import Tensor

from tensorclass import MemmapFormatError, Spec, TensorClass, TensorDict, lazy_stack, load_memmap


class Cam(TensorClass):
    pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]


class Shot(TensorClass):
    cam: Cam
    mask: Annotated[Tensor, "*B H W"]
    mode: Literal["train", "eval"] = "train"
    count: int = 0


def shot(height: int = 4, dtype: torch.dtype = torch.uint8, mode: str = "eval") -> Shot:
    cam = Cam(torch.zeros(2, 3, 4, 5, dtype=dtype), batch_size=[2])
    return Shot(cam, torch.zeros(2, height, 5), mode=mode, batch_size=[2])  # type: ignore[arg-type]


def located(err: ValidationError) -> list[tuple[tuple[str | int, ...], str]]:
    return [(e["loc"], e["type"]) for e in err.errors()]


BAD = [
    (("cam", "pixels"), "tensor_dtype"),
    (("mask",), "tensor_binding"),
    (("mode",), "literal_error"),
]


def test_conforming_saves_load(tmp_path: Path) -> None:
    shot().memmap(tmp_path / "ok")
    for loaded in (
        Shot.load_memmap(tmp_path / "ok"),
        load_memmap(tmp_path / "ok", cls=Shot),
        load_memmap(tmp_path / "ok"),  # the recorded class
    ):
        assert type(loaded) is Shot and type(loaded.cam) is Cam and loaded.mode == "eval"


@pytest.mark.parametrize("how", ["cls", "method", "recorded"])
def test_every_problem_is_reported_on_loading(tmp_path: Path, how: str) -> None:
    shot(height=6, dtype=torch.float32, mode="test").memmap(tmp_path / "bad")  # not checked
    with pytest.raises(ValidationError) as info:
        if how == "cls":
            load_memmap(tmp_path / "bad", cls=Shot)
        elif how == "method":
            Shot.load_memmap(tmp_path / "bad")
        else:
            load_memmap(tmp_path / "bad")
    assert info.value.title == "Shot" and located(info.value) == BAD
    assert "H=4 from cam.pixels, 6 here" in str(info.value)


def test_validate_false_loads_as_saved(tmp_path: Path) -> None:
    shot(height=6, mode="test").memmap(tmp_path / "bad")
    loaded = Shot.load_memmap(tmp_path / "bad", validate=False)
    assert loaded.mask.shape == (2, 6, 5) and loaded.mode == "test"
    assert load_memmap(tmp_path / "bad", validate=False).mode == "test"


def test_a_save_that_does_not_fit_the_class_lists_every_problem(tmp_path: Path) -> None:
    data = TensorDict(
        {"cam": {"pixels": torch.zeros(2, 3, 4, 5)}, "mask": torch.zeros(2, 6, 5)}, [2]
    )
    data["reward"] = torch.zeros(2)
    data["mode"] = "test"
    data.memmap(tmp_path / "td")
    with pytest.raises(ValidationError) as info:
        Shot.load_memmap(tmp_path / "td")
    assert located(info.value) == [*BAD, (("reward",), "extra_forbidden")]
    assert not info.value.__cause__ and info.value.__suppress_context__
    with pytest.raises(MemmapFormatError, match="'reward' is not a field of Shot"):
        Shot.load_memmap(tmp_path / "td", validate=False)
    assert type(TensorDict.load_memmap(tmp_path / "td")) is TensorDict  # plain data: no check


def test_loading_converts_non_tensor_values(tmp_path: Path) -> None:
    class Counted(TensorClass):
        x: Tensor
        count: int = 0

    Counted(torch.zeros(2), count="7", batch_size=[2]).memmap(tmp_path / "c")  # type: ignore[arg-type]
    assert Counted.load_memmap(tmp_path / "c").count == 7  # pydantic's lax conversion

    class Color(enum.Enum):
        RED = "red"

    class Source(BaseModel):
        fps: int

    class Described(TensorClass):
        x: Tensor
        color: Color
        source: Source

    # JSON forms saved (enum members and models cannot be), real values loaded
    value = Described(torch.zeros(2), "red", {"fps": 30}, batch_size=[2])  # type: ignore[arg-type]
    value.memmap(tmp_path / "d")
    loaded = Described.load_memmap(tmp_path / "d")
    assert loaded.color is Color.RED and loaded.source == Source(fps=30)


def test_typed_levels_inside_plain_data_and_lazy_stacks(tmp_path: Path) -> None:
    good, bad = shot(), shot(height=6)
    TensorDict({"a": good, "b": bad}, [2]).memmap(tmp_path / "mixed")
    with pytest.raises(ValidationError) as info:
        load_memmap(tmp_path / "mixed")
    assert located(info.value) == [(("b", "mask"), "tensor_binding")]
    assert info.value.title == "TensorDict"

    lazy_stack([good, bad, bad.clone()]).memmap(tmp_path / "lazy")
    with pytest.raises(ValidationError) as info:
        load_memmap(tmp_path / "lazy")
    # each member binds its own symbolic dims; locations start with the member's index
    assert located(info.value) == [((1, "mask"), "tensor_binding"), ((2, "mask"), "tensor_binding")]


def test_devices_are_checked_after_moving(tmp_path: Path) -> None:
    class OnMeta(TensorClass):
        x: Annotated[Tensor, Spec("*B", device="meta")]

    OnMeta(torch.zeros(3), batch_size=[3]).memmap(tmp_path / "m")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="expected device meta, got cpu"):
        OnMeta.load_memmap(tmp_path / "m")
    assert OnMeta.load_memmap(tmp_path / "m", device="meta").x.device.type == "meta"


def test_plain_loads_do_not_import_validation(tmp_path: Path) -> None:
    import subprocess
    import sys

    TensorDict({"a": torch.zeros(3)}, [3]).memmap(tmp_path / "td")
    code = (
        "import sys, tensorclass\n"
        f"tensorclass.load_memmap({str(tmp_path / 'td')!r})\n"
        "assert 'tensorclass.validation.run' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
