# checkers: plugin mypy pyright
# ruff: noqa: F722 - jaxtyping shape strings are not forward references
"""Fields with specs (Annotated, jaxtyping) are plain tensors to every checker."""

from typing import Annotated, Optional

import torch
from jaxtyping import Float, Int
from torch import Tensor
from typing_extensions import assert_type

from tensorclass import Spec, TensorClass, tensorclass

Image = Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]


class Frame(TensorClass):
    image: Image
    shape_only: Annotated[Tensor, "*B 2"]
    features: Float[Tensor, "*B D"]
    ids: Optional[Int[Tensor, "*B"]] = None  # noqa: UP045 (the typing.Optional spelling)


@tensorclass
class DecoratedFrame:
    image: Image
    features: Float[Tensor, "*B D"] | None = None


pixels = torch.zeros(2, 3, 4, 4, dtype=torch.uint8)
frame = Frame(pixels, torch.zeros(2, 2), torch.zeros(2, 5), batch_size=[2])
assert_type(frame.image, Tensor)
assert_type(frame.shape_only, Tensor)
assert_type(frame.features, Tensor)
assert_type(frame.ids, Optional[Tensor])  # noqa: UP045
assert_type(frame[0], Frame)
decorated = DecoratedFrame(pixels, torch.zeros(2, 5))
assert_type(decorated.features, Optional[Tensor])  # noqa: UP045
Frame(1, torch.zeros(2, 2), torch.zeros(2, 5))  # E: arg-type reportArgumentType
Frame(pixels, torch.zeros(2, 2), features="x")  # E: arg-type reportArgumentType
DecoratedFrame(pixels, features=[1.0])  # E: arg-type reportArgumentType
frame.image = "x"  # E: assignment reportAttributeAccessIssue

# keys (with the plugin) read the tensor type too
assert_type(frame["features"], Tensor)  # E[mypy,pyright]: assert-type reportAssertTypeFailure
assert_type(frame["ids"], Optional[Tensor])  # noqa: UP045  # E[mypy,pyright]: assert-type reportAssertTypeFailure
