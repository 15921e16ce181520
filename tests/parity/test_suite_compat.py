"""Behaviours that tensordict 0.15.3's own test suite relies on, stated side by side.

Found by running tensordict's tests against tensorclass under an import alias: each test
here states what tensordict 0.15.3 does (as a literal expectation, run without tensordict),
and the side-by-side tests at the end run the same code on both libraries when tensordict
is installed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch

import tensorclass
import tensorclass.nn
from tensorclass import (
    BatchSizeError,
    NonTensorData,
    NonTensorStack,
    TensorDict,
    lazy_stack,
)
from tensorclass import tensorclass as tensorclass_decorator
from tensorclass.errors import BatchSizeTypeError, KeyCollisionError, StructureMismatchError
from tensorclass.utils import isin, remove_duplicates

# -- errors: the built-in classes tensordict raises --------------------------------------


def test_a_batch_size_mismatch_is_a_runtime_error_saying_so() -> None:
    # tensordict: RuntimeError("batch dimension mismatch, got self.batch_size=...")
    with pytest.raises(RuntimeError, match="batch dimension mismatch") as info:
        TensorDict({"a": torch.zeros(4)}, [3])
    assert isinstance(info.value, BatchSizeError) and isinstance(info.value, ValueError)
    td = TensorDict({"a": torch.zeros(3)}, [3])
    with pytest.raises(RuntimeError, match="batch dimension mismatch"):
        td.set("b", torch.zeros(2))
    with pytest.raises(RuntimeError, match="batch dimension mismatch"):
        td["b"] = ["x", "y"]  # a list of the wrong length
    assert set(td.keys()) == {"a"}  # nothing half-written


def test_a_typed_field_of_the_wrong_batch_size_is_a_runtime_error() -> None:
    @tensorclass_decorator
    class Data:
        x: torch.Tensor
        y: torch.Tensor

    with pytest.raises(RuntimeError, match="batch dimension mismatch"):
        Data(x=torch.zeros(3), y=torch.zeros(2), batch_size=[3])


def test_a_batch_size_that_is_not_a_size_is_a_type_error() -> None:
    # tensordict passes it to torch.Size: TypeError
    with pytest.raises(TypeError, match="torch.Size") as info:
        TensorDict({}, batch_size="bad")  # type: ignore[arg-type]
    assert isinstance(info.value, BatchSizeTypeError)
    with pytest.raises(ValueError, match="negative"):
        TensorDict({}, batch_size=[-2])


# -- keys ----------------------------------------------------------------------------------


def test_flatten_and_unflatten_collisions_are_key_errors() -> None:
    # tensordict: KeyError("Flattening keys in tensordict causes keys collision ...") and
    # KeyError("Unflattening key(s) in tensordict will override an existing for ...")
    td = TensorDict({"a.b": torch.zeros(()), "a": {"b": torch.zeros(())}})
    with pytest.raises(KeyError, match="Flattening keys in tensordict causes keys") as info:
        td.flatten_keys(".")
    assert isinstance(info.value, KeyCollisionError)
    assert isinstance(info.value, StructureMismatchError)
    with pytest.raises(
        KeyError, match=re.escape("Unflattening key(s) in tensordict will override")
    ):
        td.unflatten_keys(".")
    # no collision: both keys are kept
    td = TensorDict({"a.b.c.d": torch.zeros(()), "a": {"b": {"c": torch.zeros(())}}})
    assert set(td.flatten_keys(".").keys()) == {"a.b.c.d", "a.b.c"}
    with pytest.raises(KeyError):  # a.b.c holds a tensor: d cannot go under it
        td.unflatten_keys(".")


def test_depth_counts_the_levels_of_the_leaves() -> None:
    # tensordict: the longest key of keys(True, True), less one
    td = TensorDict({"a": {"b": {"c": {"d": 0}, "e": 0}, "f": 0}, "g": 0})
    assert td.depth == 3
    del td["a", "b", "c", "d"]  # leaves a nested instance without entries
    assert td.depth == 2
    assert TensorDict({"a": {}}).depth == 0 and TensorDict({"a": {"b": 0}}).depth == 1


def test_entries_as_source_and_keywords_at_once_are_refused() -> None:
    # tensordict: ValueError("... not both")
    with pytest.raises(ValueError, match="not both"):
        TensorDict({"b": 2}, a=1)
    assert TensorDict(a=1, b=1, batch_size=[]).batch_size == ()


# -- consolidate and non-tensor stacks ---------------------------------------------------


def test_consolidate_into_a_file_is_on_the_cpu(tmp_path: Any) -> None:
    # tensordict: the result of consolidate(filename=...) has device cpu, nested too
    td = TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(2)}, "d": "x"}, [2])
    assert td.device is None
    done = td.consolidate(filename=tmp_path / "file.mmap")
    assert done.device == torch.device("cpu") and done["b"].device == torch.device("cpu")
    assert td.consolidate().device is None  # in memory: the device is unchanged
    stacked = lazy_stack([td, td.clone()]).consolidate(filename=tmp_path / "stack.mmap")
    assert stacked.device == torch.device("cpu")


def test_non_tensor_stack_takes_a_stack_dim() -> None:
    # tensordict: NonTensorStack(*values, stack_dim=...) stacks along that dim
    rows = NonTensorData("a", batch_size=[3]), NonTensorData("b", batch_size=[3])
    stack = NonTensorStack(*rows, stack_dim=1)
    assert stack.shape == (3, 2) and stack[0].tolist() == ["a", "b"]
    assert stack[:, 0].tolist() == ["a", "a", "a"]
    assert NonTensorStack(*rows, stack_dim=-1).shape == (3, 2)
    assert NonTensorStack(NonTensorStack("2", "3"), stack_dim=1).batch_size == (2, 1)
    with pytest.raises(IndexError, match="stack_dim"):
        NonTensorStack(*rows, stack_dim=3)


def test_non_tensor_stack_repeat_interleave() -> None:
    # tensordict: as torch.repeat_interleave, one count or one per value, along dim
    stack = NonTensorStack(
        NonTensorData("a", batch_size=[3]), NonTensorData("b", batch_size=[3]), stack_dim=1
    )
    repeated = stack.repeat_interleave(3, dim=1)
    assert isinstance(repeated, NonTensorStack) and repeated.shape == (3, 6)
    assert repeated[0].tolist() == ["a", "a", "a", "b", "b", "b"]
    assert stack.repeat_interleave(torch.tensor([1, 2]), dim=1)[0].tolist() == ["a", "b", "b"]
    assert stack.repeat_interleave(2).shape == (12,)  # no dim: the flattened values


# -- utils: isin and remove_duplicates say tensordict's words ------------------------------


def test_isin_and_remove_duplicates_errors() -> None:
    # tensordict's messages, which its tests match
    td = TensorDict({"t": torch.tensor([[1, 2], [3, 4]]), "n": {"x": torch.zeros(2)}}, [2])
    with pytest.raises(KeyError, match="Key 'z' not found in input or not a tensor."):
        isin(td, td, "z")
    with pytest.raises(ValueError, match="dimension '1' is invalid for an input TensorDict"):
        isin(td, td, "t", 1)
    with pytest.raises(ValueError, match="The number of dimensions in the batch size"):
        isin(td, td[0], "t")
    with pytest.raises(KeyError, match="The key 'z' does not exist in the TensorDict."):
        remove_duplicates(td, "z")
    with pytest.raises(KeyError, match="'n' does not point to a tensor in the TensorDict."):
        remove_duplicates(td, "n")
    with pytest.raises(ValueError, match="dimension '-2' is invalid for a TensorDict"):
        remove_duplicates(td, "t", -2)
    assert isin(td, td[:1], "t").tolist() == [True, False]


# -- nn: InteractionType prints its value --------------------------------------------------


def test_interaction_type_prints_its_value() -> None:
    interaction = tensorclass.nn.InteractionType
    assert str(interaction.MODE) == "mode" and f"{interaction.RANDOM}" == "random"
    assert repr(interaction.MEAN) == "<InteractionType.MEAN: 'mean'>"
    with pytest.raises(ValueError, match="'foo' is not a valid InteractionType"):
        interaction.from_str("foo")


# -- side by side with tensordict ----------------------------------------------------------


def both(check: Callable[[Any], Any]) -> None:
    """``check(lib)`` on tensordict and on tensorclass: equal results."""
    tensordict = pytest.importorskip("tensordict")
    results = [check(lib) for lib in (tensordict, tensorclass)]
    assert results[0] == results[1], results


def _raised(call: Callable[[], Any]) -> tuple[bool, bool, bool]:
    try:
        call()
    except Exception as err:
        return (
            isinstance(err, RuntimeError),
            isinstance(err, TypeError),
            "batch dimension mismatch" in str(err),
        )
    return (False, False, False)


def test_side_by_side_batch_size_errors() -> None:
    both(lambda lib: _raised(lambda: lib.TensorDict({"a": torch.zeros(4)}, [3])))
    both(
        lambda lib: _raised(
            lambda: lib.TensorDict({"a": torch.zeros(3)}, [3]).set("b", torch.zeros(2))
        )
    )


def test_side_by_side_typed_batch_size_of_the_wrong_type() -> None:
    def check(lib: Any) -> tuple[bool, bool, bool]:
        @lib.tensorclass
        class Data:
            x: torch.Tensor

        return _raised(lambda: Data(x=torch.zeros(3), batch_size="bad"))

    both(lambda lib: check(lib)[1])


def test_side_by_side_keys() -> None:
    def collisions(lib: Any) -> list[bool]:
        td = lib.TensorDict({"a.b": torch.zeros(()), "a": {"b": torch.zeros(())}})
        out = []
        for call in (lambda: td.flatten_keys("."), lambda: td.unflatten_keys(".")):
            try:
                call()
                out.append(False)
            except KeyError:
                out.append(True)
        return out

    both(collisions)
    both(lambda lib: lib.TensorDict({"a": {"b": {"c": {}}, "e": 0}, "g": 0}).depth)
    both(lambda lib: lib.TensorDict({"a": {}}).depth)


def test_side_by_side_consolidate_and_stack_dim(tmp_path: Any) -> None:
    def check(lib: Any) -> tuple[Any, ...]:
        td = lib.TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(2)}}, [2])
        done = td.consolidate(filename=tmp_path / f"{lib.__name__}.mmap")
        rows = lib.NonTensorData("a", batch_size=[3]), lib.NonTensorData("b", batch_size=[3])
        stack = lib.NonTensorStack(*rows, stack_dim=1)
        repeated = stack.repeat_interleave(torch.tensor([1, 2]), dim=1)
        return done.device, done["b"].device, stack.shape, repeated[0].tolist()

    both(check)


def test_side_by_side_duplicate_argument_differs_on_purpose() -> None:
    # a deliberate difference (docs/migrating.md): tensordict ValueError("... already set"),
    # tensorclass the dataclass signature's TypeError
    def check(lib: Any) -> str:
        @lib.tensorclass
        class Data:
            x: torch.Tensor

        x = torch.zeros(3)
        try:
            Data(x, x=x, batch_size=[3])
        except TypeError:
            return "TypeError"
        except ValueError:
            return "ValueError"
        raise AssertionError("accepted")

    pytest.importorskip("tensordict")
    import tensordict

    assert check(tensordict) == "ValueError" and check(tensorclass) == "TypeError"


def test_side_by_side_interaction_type_str() -> None:
    both(
        lambda lib: [
            str(member)
            for member in __import__(
                lib.__name__ + ".nn", fromlist=["InteractionType"]
            ).InteractionType
        ]
    )
