"""unflatten_keys: the levels it makes, the leaves it shares, the clashes it refuses, in
every order of keys (new keys go straight into levels made by the call)."""

import pytest
import torch

from tensorclass import StructureMismatchError, TensorDict


def _z(*shape: int) -> torch.Tensor:
    return torch.zeros(3, *shape)


def test_made_levels_share_the_leaves_and_take_the_batch() -> None:
    a, b, c = _z(), _z(2), _z()
    td = TensorDict({"x.y.a": a, "x.b": b, "c": c}, batch_size=[3], device="cpu")
    out = td.unflatten_keys()
    assert out["x", "y", "a"] is a and out["x", "b"] is b and out["c"] is c
    for level in (out["x"], out["x", "y"]):
        assert type(level) is TensorDict
        assert level.batch_size == torch.Size([3]) and level.device == torch.device("cpu")
    assert list(out.keys()) == ["x", "c"] and list(out["x"].keys()) == ["y", "b"]


def test_a_nested_instance_of_the_source_merges_with_dotted_keys() -> None:
    inner = TensorDict(p=_z(), batch_size=[3])
    td = TensorDict({"n": inner, "n.q": _z(), "n.r.s": _z()}, batch_size=[3])
    out = td.unflatten_keys()
    assert sorted(out["n"].keys()) == ["p", "q", "r"]
    assert list(inner.keys()) == ["p"]  # the source is untouched


def test_separator_and_nested_sources() -> None:
    td = TensorDict({"a/b": _z(), "m": {"c/d": _z()}}, batch_size=[3])
    out = td.unflatten_keys("/")
    assert ("a", "b") in out.keys(True) and ("m", "c", "d") in out.keys(True)


@pytest.mark.parametrize(
    "keys",
    [["a", "a.b"], ["a.b", "a"], ["a.b.c", "a.b"], ["a.b", "a.b.c"]],
)
def test_a_value_and_a_level_at_one_path_clash(keys: list[str]) -> None:
    td = TensorDict({k: _z() for k in keys}, batch_size=[3])
    with pytest.raises(StructureMismatchError, match="one would be lost") as info:
        td.unflatten_keys()
    assert repr(keys[0]) in str(info.value) and repr(keys[1]) in str(info.value)


def test_in_place_rewrites_the_instance() -> None:
    td = TensorDict({"a.b": _z(), "c": _z()}, batch_size=[3])
    assert td.unflatten_keys(inplace=True) is td
    assert list(td.keys(True, True)) == [("a", "b"), "c"]
