"""The common mistakes of a first hour, each with its message and a short traceback.

Each error names what was given and what was expected, and is not chained onto an
internal exception (the traceback is a few frames, with no "During handling of the
above exception" section).
"""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn

import tensorclass
from tensorclass import (
    BatchSizeError,
    KeyNotFoundError,
    MemmapFormatError,
    MemmapNotFoundError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
)
from tensorclass.nn import TensorDictModule

#: the most lines a traceback of these errors prints (from the test's frame down)
MAX_LINES = 20


class Inner(TensorClass):
    """A tensor class nested in :class:`Outer`."""

    a: Tensor


class Outer(TensorClass):
    """A tensor class holding an :class:`Inner` and a tensor."""

    inner: Inner
    b: Tensor


def assert_short(err: BaseException) -> None:
    """``err`` is not chained onto an internal exception and prints in a few lines."""
    assert err.__suppress_context__ or err.__context__ is None
    assert err.__cause__ is None
    lines = "".join(traceback.format_exception(err)).splitlines()
    assert "During handling of the above exception" not in "\n".join(lines)
    assert len(lines) <= MAX_LINES, "\n".join(lines)


def test_a_module_input_key_missing() -> None:
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
    with pytest.raises(KeyNotFoundError) as info:
        module(TensorDict(z=torch.zeros(2, 3), batch_size=[2]))
    message = str(info.value)
    assert "TensorDictModule reads 'x'" in message and "holds ['z']" in message
    assert info.value.key == "x"
    assert_short(info.value)


def test_a_module_output_without_the_batch_dims_names_the_module() -> None:
    module = TensorDictModule(lambda x: x.sum(), in_keys=["x"], out_keys=["y"])
    with pytest.raises(BatchSizeError) as info:
        module(TensorDict(x=torch.zeros(2, 3), batch_size=[2]))
    message = str(info.value)
    assert message.startswith("TensorDictModule over <lambda> (out_keys=['y'])")
    assert "key 'y' has shape []" in message and "batch size [2]" in message
    assert info.value.key == "y"
    assert_short(info.value)


def test_a_named_module_is_named_by_its_class() -> None:
    module = TensorDictModule(nn.Flatten(0), in_keys=["x"], out_keys=["y"])
    with pytest.raises(BatchSizeError, match=r"TensorDictModule over Flatten .*shape \[6\]"):
        module(TensorDict(x=torch.zeros(2, 3), batch_size=[2, 3]))


def test_stacking_instances_with_different_keys() -> None:
    with pytest.raises(StructureMismatchError) as info:
        torch.stack([TensorDict(a=torch.zeros(2)), TensorDict(b=torch.zeros(2))])
    message = str(info.value)
    assert "item 0 has ['a'] that item 1 lacks" in message
    assert "item 1 has ['b'] that item 0 lacks" in message
    assert_short(info.value)


@pytest.mark.parametrize(
    "load",
    [
        tensorclass.load_memmap,
        tensorclass.load,
        TensorDict.load_memmap,
        TensorDict.load,
    ],
    ids=["load_memmap", "load", "TensorDict.load_memmap", "TensorDict.load"],
)
def test_loading_a_missing_path(tmp_path: Path, load: object) -> None:
    missing = tmp_path / "nowhere"
    assert callable(load)
    with pytest.raises(FileNotFoundError) as info:
        load(missing)
    err = info.value
    assert isinstance(err, MemmapNotFoundError) and isinstance(err, MemmapFormatError)
    assert str(err) == f"{missing}: no such file or directory (expected a tensorclass save)"
    assert err.filename == str(missing)
    assert_short(err)


def test_loading_a_file_that_is_not_a_save_is_not_file_not_found(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("hello")
    with pytest.raises(MemmapFormatError, match="is not a directory") as info:
        tensorclass.load_memmap(tmp_path / "file.txt")
    assert not isinstance(info.value, FileNotFoundError)


def test_a_nested_instance_built_without_batch_size() -> None:
    with pytest.raises(BatchSizeError) as info:
        Outer(Inner(torch.zeros(4, 3)), torch.zeros(4), batch_size=[4])
    message = str(info.value)
    assert "the nested Inner for key 'inner' has batch size []" in message
    assert "does not fit the batch size [4]" in message
    assert "built without batch_size=" in message
    assert "build it with Inner(..., batch_size=[4])" in message
    assert info.value.key == "inner"
    assert_short(info.value)


def test_a_nested_instance_with_another_batch_size() -> None:
    with pytest.raises(BatchSizeError) as info:
        Outer(Inner(torch.zeros(3, 2), batch_size=[3]), torch.zeros(4), batch_size=[4])
    message = str(info.value)
    assert "has batch size [3]" in message
    assert "its batch size [3] does not start with [4]" in message
    assert "built without" not in message
    assert_short(info.value)


def test_a_nested_instance_that_fits_is_kept() -> None:
    outer = Outer(Inner(torch.zeros(4, 3), batch_size=[4]), torch.zeros(4), batch_size=[4])
    assert outer.inner.a.shape == (4, 3)
