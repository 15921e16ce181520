"""Shape operations and torch functions, compared with the same operation on tensors.

Each case is a pair: the operation on a TensorDict of batch size [2, 3, 4] and the matching
operation on a tensor whose shape starts with the batch dims (a feature dim of 5 follows).
"""

from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import StructureMismatchError, TensorClass, TensorDict, lazy_stack

B = (2, 3, 4)

CASES: dict[str, tuple[Callable[[Any], Any], Callable[[torch.Tensor], torch.Tensor]]] = {
    "view": (lambda td: td.view(6, 4), lambda x: x.view(6, 4, 5)),
    "view -1": (lambda td: td.view(-1), lambda x: x.view(24, 5)),
    "reshape": (lambda td: td.reshape(4, -1), lambda x: x.reshape(4, 6, 5)),
    "flatten": (lambda td: td.flatten(0, 1), lambda x: x.flatten(0, 1)),
    "flatten all": (lambda td: td.flatten(), lambda x: x.flatten(0, 2)),
    "unflatten": (lambda td: td.unflatten(2, (2, 2)), lambda x: x.unflatten(2, (2, 2))),
    "squeeze none": (lambda td: td.unsqueeze(1).squeeze(), lambda x: x),
    "squeeze dim": (lambda td: td.unsqueeze(0).squeeze(0), lambda x: x),
    "unsqueeze -1": (lambda td: td.unsqueeze(-1), lambda x: x.unsqueeze(3)),
    "unsqueeze 0": (lambda td: td.unsqueeze(0), lambda x: x.unsqueeze(0)),
    "permute": (lambda td: td.permute(2, 0, 1), lambda x: x.permute(2, 0, 1, 3)),
    "permute list": (lambda td: td.permute([1, 2, 0]), lambda x: x.permute(1, 2, 0, 3)),
    "transpose": (lambda td: td.transpose(0, -1), lambda x: x.transpose(0, 2)),
    "expand": (lambda td: td[:, :1].expand(2, 3, 4), lambda x: x[:, :1].expand(2, 3, 4, 5)),
    "expand new dim": (lambda td: td.expand(7, 2, 3, 4), lambda x: x.expand(7, 2, 3, 4, 5)),
    "repeat": (lambda td: td.repeat(1, 2, 1), lambda x: x.repeat(1, 2, 1, 1)),
    "flip": (lambda td: td.flip([0, 2]), lambda x: x.flip([0, 2])),
    "roll": (lambda td: td.roll(1, 1), lambda x: x.roll(1, 1)),
    "torch.permute": (lambda td: torch.permute(td, (1, 0, 2)), lambda x: x.permute(1, 0, 2, 3)),
    "torch.squeeze": (lambda td: torch.squeeze(td[:, :1], 1), lambda x: x[:, :1].squeeze(1)),
    "torch.unsqueeze": (lambda td: torch.unsqueeze(td, 1), lambda x: x.unsqueeze(1)),
    "torch.reshape": (lambda td: torch.reshape(td, (24,)), lambda x: x.reshape(24, 5)),
    "torch.flatten": (lambda td: torch.flatten(td, 1, 2), lambda x: x.flatten(1, 2)),
    "torch.transpose": (lambda td: torch.transpose(td, 0, 1), lambda x: x.transpose(0, 1)),
    "torch.flip": (lambda td: torch.flip(td, [1]), lambda x: x.flip([1])),
    "torch.roll": (lambda td: torch.roll(td, 2, 2), lambda x: x.roll(2, 2)),
    "torch.clone": (lambda td: torch.clone(td), lambda x: x.clone()),
    "masked_fill": (
        lambda td: td.masked_fill(torch.tensor([True, False]), -1.0),  # leading batch dims
        lambda x: x.masked_fill(
            torch.tensor([True, False]).reshape((2,) + (1,) * (x.ndim - 1)), -1.0
        ),
    ),
    "masked_fill full": (
        lambda td: td.masked_fill(torch.arange(24).reshape(B) % 5 == 0, -1.0),
        lambda x: x.masked_fill((torch.arange(24).reshape(B) % 5 == 0).unsqueeze(-1), -1.0),
    ),
    "where": (
        lambda td: td.where(torch.arange(2) > 0, 0.0),  # the leading batch dims
        lambda x: torch.where(torch.arange(2).reshape((2,) + (1,) * (x.ndim - 1)) > 0, x, 0.0),
    ),
    "torch.where": (
        lambda td: torch.where(torch.arange(2) > 0, td, 0.0),  # the leading batch dims
        lambda x: torch.where(torch.arange(2).reshape((2,) + (1,) * (x.ndim - 1)) > 0, x, 0.0),
    ),
}


def make() -> TensorDict:
    x = torch.arange(2 * 3 * 4 * 5.0).reshape(*B, 5)
    return TensorDict({"x": x, "n": {"y": x[..., 0].clone()}, "s": "text"}, batch_size=B)


@pytest.mark.parametrize("name", list(CASES))
def test_shape_op_matches_tensor(name: str) -> None:
    on_td, on_tensor = CASES[name]
    td = make()
    result = on_td(td)
    expected = on_tensor(td["x"])
    assert isinstance(result, TensorDict)
    assert torch.equal(result["x"], expected)
    assert result.batch_size == expected.shape[:-1]
    assert result["n"].batch_size == result.batch_size
    assert torch.equal(result["n", "y"], expected[..., 0])
    assert result["s"] == "text"


def test_view_shares_storage_and_expand_does_not_copy() -> None:
    td = make()
    td.view(-1)["x"][0, 0] = -5
    assert td["x"][0, 0, 0, 0] == -5
    assert td[:, :1].expand(2, 3, 4)["x"].stride()[1] == 0


def test_unbind_split_chunk() -> None:
    td = make()
    parts = td.unbind(1)
    assert len(parts) == 3 and all(p.batch_size == (2, 4) for p in parts)
    assert torch.equal(parts[2]["x"], td["x"][:, 2])
    assert all(torch.equal(a["x"], b["x"]) for a, b in zip(torch.unbind(td, 1), parts))
    split = td.split([1, 2], 1)
    assert [p.batch_size for p in split] == [(2, 1, 4), (2, 2, 4)]
    assert torch.equal(torch.cat(split, 1)["x"], td["x"])
    assert [p.batch_size[2] for p in td.split(3, -1)] == [3, 1]
    assert [p.batch_size[0] for p in torch.split(td, 1)] == [1, 1]
    assert [p.batch_size[2] for p in td.chunk(3, 2)] == [2, 2]
    assert [p.batch_size[2] for p in torch.chunk(td, 2, 2)] == [2, 2]


def test_stack_and_cat() -> None:
    a, b = make(), make() + 1
    stacked = torch.stack([a, b], 1)
    assert stacked.batch_size == (2, 2, 3, 4)
    assert torch.equal(stacked["x"], torch.stack([a["x"], b["x"]], 1))
    cat = torch.cat([a, b], -1)
    assert cat.batch_size == (2, 3, 8)
    assert torch.equal(cat["n", "y"], torch.cat([a["n", "y"], b["n", "y"]], -1))
    assert cat["s"] == "text"


def test_stack_mismatches_are_clear_errors() -> None:
    a = TensorDict({"x": torch.zeros(3)}, [3])
    with pytest.raises(StructureMismatchError, match=r"item 1 has \['y'\]"):
        torch.stack([a, TensorDict({"x": torch.zeros(3), "y": torch.zeros(3)}, [3])])
    with pytest.raises(StructureMismatchError, match="batch sizes"):
        torch.stack([a, TensorDict({"x": torch.zeros(4)}, [4])])
    with pytest.raises(StructureMismatchError, match="key 'x'"):
        torch.stack([a, TensorDict({"x": torch.zeros(3, 2)}, [3])])

    class A(TensorClass):
        x: torch.Tensor

    with pytest.raises(StructureMismatchError, match="TensorDict with a A|A with a TensorDict"):
        torch.stack([A(torch.zeros(3), batch_size=[3]), a])


def test_like_factories() -> None:
    td = make()
    assert (torch.zeros_like(td)["x"] == 0).all()
    assert (torch.ones_like(td)["n", "y"] == 1).all()
    assert torch.full_like(td, 3.0)["x"].unique().item() == 3.0
    assert torch.empty_like(td)["x"].shape == td["x"].shape
    assert torch.zeros_like(td, dtype=torch.int64)["x"].dtype == torch.int64
    assert torch.rand_like(td)["x"].shape == td["x"].shape
    assert torch.zeros_like(td)["s"] == "text"


def test_batch_size_setter() -> None:
    td = TensorDict({"x": torch.zeros(3, 4), "n": {"y": torch.zeros(3, 4, 2)}}, [3])
    td.batch_size = [3, 4]
    assert td.batch_size == (3, 4) and td["n"].batch_size == (3, 4)
    with pytest.raises(ValueError, match="key 'x'"):
        td.batch_size = [3, 5]
    td.batch_size = []
    assert td.batch_size == ()


def test_dim_names_follow_ops() -> None:
    td = TensorDict({"x": torch.zeros(2, 3)}, [2, 3], names=["b", "t"])
    assert td.unsqueeze(0).names == [None, "b", "t"]
    assert td.permute(1, 0).names == ["t", "b"]
    assert td[0].names == ["t"]
    assert td[:, 1:].names == ["b", "t"]
    assert torch.stack([td, td]).names == [None, "b", "t"]
    assert td.reshape(6).names == [None]
    with pytest.raises(ValueError):
        TensorDict({}, [2], names=["a", "b"])


@pytest.mark.parametrize("total", [0, 1, 5, 7])
@pytest.mark.parametrize("parts", [1, 2, 3, 4, 8])
def test_chunk_and_split_sizes_match_tensors(total: int, parts: int) -> None:
    x = torch.arange(2.0 * total).reshape(2, total)
    td = TensorDict({"x": x}, [2, total])
    chunks = td.chunk(parts, -1)
    assert [c.batch_size for c in chunks] == [c.shape for c in x.chunk(parts, -1)]
    splits = td.split(parts, 1)
    assert [s.batch_size for s in splits] == [s.shape for s in x.split(parts, 1)]
    assert all(torch.equal(a["x"], b) for a, b in zip(chunks, x.chunk(parts, -1)))


@pytest.mark.parametrize("dims", [(0, 2), (0, 1), [-2, 0], (2,), ()])
def test_squeeze_takes_several_dims_as_torch(dims: tuple[int, ...]) -> None:
    """``squeeze((0, 2))`` removes those of the dims that have size 1 (torch >= 2.0)."""
    leaf = torch.randn(1, 3, 1, 2)
    td = TensorDict(a=leaf, b=leaf[..., None], batch_size=[1, 3, 1, 2])
    assert td.squeeze(dims).batch_size == leaf.squeeze(dims).shape
    assert torch.equal(td.squeeze(dims)["a"], leaf.squeeze(dims))
    assert torch.equal(td.squeeze(dims)["b"], leaf.squeeze(dims)[..., None])
    assert torch.squeeze(td, dims).batch_size == td.squeeze(dims).batch_size


@pytest.mark.parametrize("stack_dim", range(4))
@pytest.mark.parametrize("dims", [(0, 2), (0, 3), (1, 2, 3), (-1, 0)])
def test_squeeze_of_several_dims_on_a_lazy_stack(stack_dim: int, dims: tuple[int, ...]) -> None:
    members = [TensorDict(a=torch.randn(1, 3, 1), batch_size=[1, 3, 1]) for _ in range(2)]
    dense = torch.stack([m["a"] for m in members], stack_dim)
    assert torch.equal(lazy_stack(members, stack_dim).squeeze(dims)["a"], dense.squeeze(dims))


def test_squeeze_refuses_a_dim_named_twice() -> None:
    td = TensorDict(a=torch.zeros(1, 3), batch_size=[1, 3])
    with pytest.raises(IndexError, match="more than once"):
        td.squeeze((0, 0))
