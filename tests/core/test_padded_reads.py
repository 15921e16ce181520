"""get(as_padded_tensor=True) of a ragged lazy stack: each member padded to the largest
size of every dim, on either side, whether only the stacked dim differs or others too."""

import pytest
import torch
from torch.nn import functional

from tensorclass import TensorDict, lazy_stack


def _reference(tensors: list[torch.Tensor], side: str, value: float) -> torch.Tensor:
    largest = [max(s) for s in zip(*(t.shape for t in tensors))]
    padded = []
    for t in tensors:
        spec: list[int] = []
        for size, target in zip(reversed(t.shape), reversed(largest)):
            spec += [target - size, 0] if side == "left" else [0, target - size]
        padded.append(functional.pad(t, spec, value=value))
    return torch.stack(padded)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (4, 3), (1, 3)], [(2, 3), (4, 1)], [(3,), (5,), (0,)], [(2, 1, 2), (3, 1, 2)]],
)
def test_padded_read_matches_padding_each_member(side: str, shapes: list[tuple[int, ...]]) -> None:
    g = torch.Generator().manual_seed(0)
    tensors = [torch.randn(shape, generator=g) for shape in shapes]
    stack = lazy_stack([TensorDict(a=t) for t in tensors])
    got = stack.get("a", as_padded_tensor=True, padding_side=side, padding_value=-2.0)
    assert torch.equal(got, _reference(tensors, side, -2.0))


def test_integer_members_keep_their_dtype() -> None:
    stack = lazy_stack([TensorDict(a=torch.arange(2)), TensorDict(a=torch.arange(3))])
    got = stack.get("a", as_padded_tensor=True, padding_value=-1)
    assert got.dtype == torch.int64 and got.tolist() == [[0, 1, -1], [0, 1, 2]]
