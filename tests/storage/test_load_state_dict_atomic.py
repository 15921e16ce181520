"""``load_state_dict`` is all or nothing: every problem raises before the first write, keys
that collide raise the library's error naming both, and ``strict=False`` never drops a key
the state dict does not name."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
import torch

from tensorclass import (
    BatchSizeError,
    FieldTypeError,
    KeyNotFoundError,
    LockedError,
    StructureMismatchError,
    TensorClass,
    TensorClassError,
    TensorDict,
)


class Named(TensorClass):
    x: torch.Tensor
    name: str


def snapshot(obj: Any) -> tuple[Any, ...]:
    """Everything a failed load must leave as it was: keys, values (and the tensors
    themselves), batch sizes of every level, lock state."""
    leaves = {}
    for key, value in obj.items(True, True):
        leaves[key] = (value.clone(), id(value)) if isinstance(value, torch.Tensor) else value
    levels = {k: v.batch_size for k, v in obj.items(True) if hasattr(v, "batch_size")}
    return leaves, levels, obj.batch_size, obj.is_locked


def same(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    (leaves, levels, batch, locked), (leaves2, levels2, batch2, locked2) = before, after
    if leaves.keys() != leaves2.keys() or (levels, batch, locked) != (levels2, batch2, locked2):
        return False
    for key, value in leaves.items():
        other = leaves2[key]
        if isinstance(value, tuple):
            if not (torch.equal(value[0], other[0]) and value[1] == other[1]):
                return False
        elif value != other:
            return False
    return True


def state(*items: tuple[str, Any], metadata: dict[str, Any] | None = None) -> Any:
    out: Any = OrderedDict(items)
    if metadata is not None:
        out._metadata = OrderedDict(metadata)
    return out


def nested_td() -> TensorDict:
    return TensorDict({"a": torch.zeros(2), "n": {"b": torch.zeros(2), "c": torch.zeros(2)}}, [2])


def refused(
    target: Any, sd: Any, error: type[BaseException], match: str, **kwargs: Any
) -> BaseException:
    before = snapshot(target)
    with pytest.raises(error, match=match) as info:
        target.load_state_dict(sd, **kwargs)
    assert isinstance(info.value, TensorClassError)  # the library's error, never a raw one
    assert same(before, snapshot(target)), "a failed load_state_dict wrote part of the state"
    return info.value


# -- keys that collide -------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_a_nested_key_then_its_level_as_a_value_is_refused(strict: bool) -> None:
    sd = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n", torch.ones(2)))
    err = refused(nested_td(), sd, StructureMismatchError, "collide", strict=strict)
    assert "'n.b'" in str(err) and "'n'" in str(err)


def test_a_value_then_a_key_nested_under_it_is_refused() -> None:
    sd = state(("a", torch.ones(2)), ("a.b", torch.ones(2)))
    err = refused(nested_td(), sd, StructureMismatchError, "collide", strict=False)
    assert "'a'" in str(err) and "'a.b'" in str(err)


def test_the_same_key_in_both_formats_is_refused() -> None:
    sd = state(("n.b", torch.ones(2)), ("n", {"b": torch.ones(2)}))
    refused(nested_td(), sd, StructureMismatchError, "both give one key", strict=False)


def test_a_tensor_over_a_nested_level_is_refused_not_dropping_its_keys() -> None:
    sd = state(("a", torch.ones(2)), ("n", torch.ones(2)))
    err = refused(nested_td(), sd, StructureMismatchError, "nested level", strict=False)
    assert "'n'" in str(err) and "drop" in str(err)


def test_a_key_under_a_tensor_or_a_non_tensor_value_is_refused() -> None:
    td = TensorDict({"a": torch.zeros(2), "s": "text"}, [2])
    refused(
        td, state(("a.q", torch.ones(2))), StructureMismatchError, "nests under 'a'", strict=False
    )
    refused(
        td, state(("s.q", torch.ones(2))), StructureMismatchError, "nests under 's'", strict=False
    )


def test_keys_that_are_not_strings_are_refused() -> None:
    numbered: Any = OrderedDict([(1, torch.ones(2))])
    refused(nested_td(), numbered, StructureMismatchError, "strings", strict=False)


def test_strict_false_keeps_every_key_it_was_not_told_about() -> None:
    td = nested_td()
    td.load_state_dict(state(("n", {"c": torch.ones(2)}), ("new", torch.ones(2))), strict=False)
    assert set(td.keys(True, True)) == {"a", ("n", "b"), ("n", "c"), "new"}
    assert td["n", "c"].tolist() == [1.0, 1.0] and td["n", "b"].tolist() == [0.0, 0.0]


# -- values that cannot be written ----------------------------------------------------------


def test_a_meta_device_value_is_refused_before_the_others_are_copied() -> None:
    sd = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n.c", torch.empty(2, device="meta")))
    refused(nested_td(), sd, StructureMismatchError, "'meta' device")
    refused(nested_td(), sd, StructureMismatchError, "'meta' device", assign=True)


def test_a_new_key_into_a_locked_instance_is_refused_first() -> None:
    sd = state(("a", torch.ones(2)), ("z", torch.ones(2)))
    refused(nested_td().lock_(), sd, LockedError, "locked", strict=False)
    inner_locked = nested_td()
    inner_locked["n"].lock_()
    sd = state(("a", torch.ones(2)), ("n.z", torch.ones(2)))
    refused(inner_locked, sd, LockedError, "locked", strict=False)


def test_assign_into_a_locked_instance_is_refused_first() -> None:
    sd = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n.c", torch.ones(2)))
    refused(nested_td().lock_(), sd, LockedError, "locked", assign=True)


def test_typed_fields_unknown_keys_and_wrong_types_are_refused_first() -> None:
    def named() -> Named:
        return Named(x=torch.zeros(2), name="n", batch_size=[2])

    sd = state(("x", torch.ones(2)), ("zz", torch.ones(2)))
    refused(named(), sd, KeyNotFoundError, "no field 'zz'", strict=False)
    refused(named(), sd, KeyNotFoundError, "no field 'zz'", strict=False, assign=True)
    sd = state(("x", torch.ones(2)), ("name", torch.ones(2)))
    refused(named(), sd, FieldTypeError, "str field", strict=False)


def test_a_recorded_batch_size_that_does_not_fit_is_refused_first() -> None:
    def wide() -> TensorDict:
        return TensorDict({"a": torch.zeros(2, 3), "n": {"b": torch.zeros(2, 3)}}, [2])

    leaves = (("a", torch.ones(2, 3)), ("n.b", torch.ones(2, 3)))
    bad_level = state(*leaves, metadata={"": {"batch_size": [2, 3]}, "n": {"batch_size": [5]}})
    refused(wide(), bad_level, BatchSizeError, r"\[5\]")
    bad_type = state(*leaves, metadata={"": {"batch_size": [2, 3]}, "n": {"batch_size": "x"}})
    refused(wide(), bad_type, StructureMismatchError, "batch size recorded for the level 'n'")
    bad_root = state(*leaves, metadata={"": {"batch_size": [-1]}})
    refused(wide(), bad_root, StructureMismatchError, "non-negative ints")
    not_a_name = state(*leaves, metadata={"": {"batch_size": [2, 3]}, 3: {"batch_size": [2]}})
    refused(wide(), not_a_name, StructureMismatchError, "metadata names levels")
    good = state(*leaves, metadata={"": {"batch_size": [2, 3]}, "n": {"batch_size": [2, 3]}})
    target = wide()
    target.load_state_dict(good)
    assert target.batch_size == (2, 3) and target["n"].batch_size == (2, 3)
    assert target["n", "b"].sum() == 6


def test_a_shape_error_on_the_last_key_writes_nothing() -> None:
    sd = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n.c", torch.ones(3)))
    refused(nested_td(), sd, BatchSizeError, "n.c")
    sd = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n.c", torch.ones(2, 4)))
    refused(nested_td(), sd, StructureMismatchError, "assign=True")


def test_module_metadata_without_batch_sizes_is_accepted() -> None:
    td = nested_td()
    module_like = state(("a", torch.ones(2)), ("n.b", torch.ones(2)), ("n.c", torch.ones(2)))
    module_like._metadata = OrderedDict([("", {"version": 1}), ("n", {"version": 2})])
    td.load_state_dict(module_like)
    assert td["n", "c"].tolist() == [1.0, 1.0]
