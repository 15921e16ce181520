"""Indexing along batch dims, read and write, compared with the same index on tensors."""

from typing import Any

import numpy as np
import pytest
import torch

from tensorclass import TensorClass, TensorDict

ALL = slice(None)
# On tensors with a feature dim, "..." would reach the feature dim: spell it out.
EXPLICIT = {repr((..., 2)): (ALL, 2), repr((..., slice(0, 2))): (ALL, slice(0, 2)), repr(...): ()}


def as_tensor_index(index: Any) -> Any:
    if isinstance(index, (list, range)):
        return torch.tensor(list(index))
    if isinstance(index, np.ndarray):
        return torch.from_numpy(index)
    return EXPLICIT.get(repr(index), index)


def make() -> TensorDict:
    return TensorDict(
        {
            "x": torch.arange(3 * 4 * 5.0).reshape(3, 4, 5),
            "n": {"y": torch.arange(12).reshape(3, 4)},
            "s": "shared",
        },
        batch_size=[3, 4],
    )


INDICES: list[Any] = [
    0,
    -1,
    slice(1, None),
    slice(None, None, 2),
    (slice(None), 1),
    (..., 2),
    (..., slice(0, 2)),
    None,
    (None, 0),
    (0, None, slice(1, 3)),
    torch.tensor([0, 2]),
    [2, 0],
    range(2),
    np.array([1, 2]),
    torch.tensor([True, False, True]),
    torch.ones(3, 4, dtype=torch.bool).triu(),
    (slice(None), torch.tensor([3, 1])),
    (torch.tensor([0, 1]), torch.tensor([2, 3])),
    ...,
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_matches_tensors(index: Any) -> None:
    td = make()
    result = td[index]
    tensor_index = as_tensor_index(index)
    expected = td["x"][tensor_index]
    assert isinstance(result, TensorDict)
    assert torch.equal(result["x"], expected)
    assert result.batch_size == expected.shape[:-1]
    assert result["n"].batch_size == result.batch_size
    assert torch.equal(result["n", "y"], td["n", "y"][tensor_index])
    assert result["s"] == "shared"


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_setitem_matches_tensors(index: Any) -> None:
    td = make()
    expected = td["x"].clone()
    expected[as_tensor_index(index)] = -1.0
    sub = td[index]
    td[index] = sub.apply(lambda t: torch.full_like(t, -1))
    assert torch.equal(td["x"], expected)
    assert (td["n", "y"] == -1).sum() == (expected[..., 0] == -1).sum()


def test_setitem_with_scalar_and_dict() -> None:
    td = make()
    td[0] = 0.0
    assert (td["x"][0] == 0).all() and (td["n", "y"][0] == 0).all()
    assert td["s"] == "shared"
    td[1, 2] = {"x": torch.full((5,), 7.0)}
    assert (td["x"][1, 2] == 7).all()


def test_setitem_non_tensor_values_become_per_element() -> None:
    td = make()
    sub = td[0]
    sub["s"] = "changed"
    td[0] = sub
    # one element reads as its value; a selection of several reads as a list, even when
    # the values are equal (as tensordict 0.15.3 gives it)
    assert td[0]["s"] == ["changed"] * 4 and td[1, 2]["s"] == "shared"
    assert td["s"] == [["changed"] * 4, ["shared"] * 4, ["shared"] * 4]


def test_index_errors() -> None:
    td = make()
    with pytest.raises(IndexError, match="out of range for batch dim 0 of size 3"):
        td[3]
    with pytest.raises(IndexError, match="too many indices"):
        td[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        td[..., ...]
    with pytest.raises(TypeError, match="invalid index"):
        td[1.5]
    with pytest.raises(IndexError):
        td[torch.tensor([5])]


def test_failed_setitem_leaves_instance_unchanged() -> None:
    td = make()
    before = td.clone()
    bad = TensorDict({"x": torch.zeros(5), "n": {"y": torch.zeros(7)}, "new": torch.zeros(2)}, [])
    with pytest.raises(ValueError):
        td[0, 0] = bad
    assert "new" not in td
    assert (td == before).all()


def test_lazy_preallocation_nested_typed() -> None:
    class Sample(TensorClass):
        obs: torch.Tensor
        label: str = ""

    class Buffer(TensorClass):
        sample: Sample | None = None

    buffer = Buffer(batch_size=[4])
    for i in (3, 0, 2, 1):
        buffer[i] = Buffer(Sample(torch.full((2,), float(i)), label=f"#{i}"))
    assert isinstance(buffer.sample, Sample)
    assert torch.equal(buffer.sample.obs[:, 0], torch.arange(4.0))
    assert buffer.sample.label == ["#0", "#1", "#2", "#3"]


def test_masked_read_and_write_typed() -> None:
    class Item(TensorClass):
        x: torch.Tensor

    item = Item(torch.arange(6.0), batch_size=[6])
    mask = item.x > 2
    assert torch.equal(item[mask].x, torch.tensor([3.0, 4.0, 5.0]))
    item[mask] = Item(torch.zeros(3), batch_size=[3])
    assert torch.equal(item.x, torch.tensor([0.0, 1.0, 2.0, 0.0, 0.0, 0.0]))


@pytest.mark.parametrize("cls", ["TensorDict", "typed"])
def test_ellipsis_with_a_mask_over_several_trailing_dims(cls: str) -> None:
    class Item(TensorClass):
        x: torch.Tensor

    x = torch.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    obj: Any = (
        TensorDict({"x": x}, [2, 3, 4]) if cls == "TensorDict" else Item(x, batch_size=[2, 3, 4])
    )
    mask = torch.arange(12).reshape(3, 4) % 3 == 0
    picked = obj[..., mask]
    assert picked.batch_size == (2, 4) and torch.equal(picked["x"], x[:, mask])
    obj[..., mask] = -1.0
    expected = x.clone()
    expected[:, mask] = -1.0
    assert torch.equal(obj["x"], expected)
    assert obj[None, ..., mask].batch_size == (1, 2, 4)


def test_lazy_preallocation_keeps_nested_batch_dims_and_classes() -> None:
    class Inner(TensorClass):
        z: torch.Tensor

    def item(i: int) -> TensorDict:
        nested = TensorDict({"c": torch.full((2, 4), float(i)), "d": {"e": torch.ones(2, 5)}}, [2])
        inner = Inner(torch.full((3,), float(i)), batch_size=[3])
        return TensorDict({"a": torch.full((3,), float(i)), "b": nested, "inner": inner}, [])

    buffer = TensorDict({}, batch_size=[4])
    for i in (2, 0, 3, 1):
        buffer[i] = item(i)
    stacked = torch.stack([item(i) for i in range(4)])
    for key in ("b", ("b", "d"), "inner"):
        assert buffer[key].batch_size == stacked[key].batch_size, key  # [4, 2], [4, 3]
        assert type(buffer[key]) is type(stacked[key]), key
    assert (buffer == stacked).all()
