"""pad, pad_sequence and unpad_sequence, compared key by key with torch's padding."""

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence as torch_pad_sequence

from tensorclass import (
    StructureMismatchError,
    TensorClass,
    TensorDict,
    pad,
    pad_sequence,
    unpad_sequence,
)


class Step(TensorClass):
    obs: torch.Tensor
    reward: torch.Tensor


def items(lengths: tuple[int, ...] = (2, 4, 3)) -> list[TensorDict]:
    g = torch.Generator().manual_seed(0)
    return [
        TensorDict(
            {"obs": torch.randn(n, 3, generator=g), "sub": {"r": torch.randn(n, generator=g)}},
            [n],
        )
        for n in lengths
    ]


@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_along_the_batch_dim(side: str) -> None:
    seqs = items()
    padded = pad_sequence(seqs, padding_value=-1.0, padding_side=side, return_mask=True)
    assert padded.batch_size == (3, 4)
    for key in ("obs", ("sub", "r")):
        expected = torch_pad_sequence(
            [s.get(key) for s in seqs], batch_first=True, padding_value=-1.0, padding_side=side
        )
        assert torch.equal(padded.get(key), expected)
        mask = torch_pad_sequence(
            [torch.ones(s.batch_size, dtype=torch.bool) for s in seqs],
            batch_first=True,
            padding_side=side,
        )
        assert torch.equal(padded.get(("masks", *((key,) if isinstance(key, str) else key))), mask)
    back = unpad_sequence(padded)
    assert [b.batch_size[0] for b in back] == [2, 4, 3]
    for original, restored in zip(seqs, back):
        assert torch.equal(original["obs"], restored["obs"])
        assert torch.equal(original["sub", "r"], restored["sub", "r"])


def test_pad_sequence_along_a_feature_dim() -> None:
    seqs = [TensorDict({"x": torch.randn(2, n)}, [2]) for n in (3, 1)]
    padded = pad_sequence(seqs, pad_dim=-1, return_mask="valid")
    assert padded.batch_size == (2, 2)
    expected = torch.stack([F.pad(s["x"], [0, 3 - s["x"].shape[-1]]) for s in seqs])
    assert torch.equal(padded["x"], expected)
    assert padded["valid", "x"].shape == (2, 2, 3)
    assert padded["valid", "x"][1].sum() == 2
    back = unpad_sequence(padded.exclude("valid"), padded["valid"], pad_dim=-1)
    assert [torch.equal(b["x"], s["x"]) for b, s in zip(back, seqs)] == [True, True]


def test_pad_sequence_per_key_values_out_and_typed_classes() -> None:
    seqs = items((1, 2))
    padded = pad_sequence(seqs, padding_value={"obs": 5.0})
    assert padded["obs"][0, 1].tolist() == [5.0, 5.0, 5.0]
    assert padded["sub", "r"][0, 1] == 0.0
    out = padded.clone().zero_()
    assert pad_sequence(seqs, padding_value={"obs": 5.0}, out=out) is out
    assert torch.equal(out["obs"], padded["obs"])
    steps = [Step(torch.ones(n, 2), torch.ones(n), batch_size=[n]) for n in (1, 3)]
    stacked = pad_sequence(steps)
    assert type(stacked) is Step and stacked.batch_size == (2, 3)
    with pytest.raises(StructureMismatchError):
        pad_sequence(steps, return_mask=True)  # a typed class has no "masks" field
    with pytest.raises(KeyError):
        pad_sequence(seqs, padding_value={"nope": 1.0})
    with pytest.raises(ValueError):
        pad_sequence([])


def test_unpad_sequence_with_a_tensor_mask() -> None:
    padded = pad_sequence(items((2, 3)))
    mask = torch.tensor([[True, True, False], [True, True, True]])
    assert [b.batch_size[0] for b in unpad_sequence(padded, mask)] == [2, 3]
    with pytest.raises(ValueError, match="mask"):
        unpad_sequence(padded)  # no masks entry


@pytest.mark.parametrize("kind", ["tensordict", "typed"])
def test_top_level_pad_is_the_method(kind: str) -> None:
    td: Any = (
        TensorDict({"obs": torch.ones(2, 2), "reward": torch.ones(2)}, [2])
        if kind == "tensordict"
        else Step(torch.ones(2, 2), torch.ones(2), batch_size=[2])
    )
    out = pad(td, [1, 1], value=0.5)
    assert type(out) is type(td) and out.batch_size == (4,)
    assert torch.equal(out.get("obs"), F.pad(td.get("obs"), [0, 0, 1, 1], value=0.5))


def test_pad_sequence_with_non_tensor_values_pads_item_by_item() -> None:
    a = TensorDict({"x": torch.ones(2), "tag": "a"}, [2])
    b = TensorDict({"x": torch.ones(3), "tag": "b"}, [3])
    padded = pad_sequence([a, b], padding_value=-1.0)
    assert padded["x"].tolist() == [[1.0, 1.0, -1.0], [1.0, 1.0, 1.0]]
    assert padded["tag"] == [["a"] * 3, ["b"] * 3]
