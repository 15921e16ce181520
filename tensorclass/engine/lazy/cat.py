"""The torch functions lazy stacks answer themselves (``LAZY_FUNCTIONS``): ``torch.cat``
with lazy stacks among its inputs, and the ``*_like`` factories, member by member; the
results are lazy stacks.

Along the stack dim the members of every input follow each other (a dense input gives its
slices along that dim); along another dim each member is concatenated with the matching
slices of the other inputs. Nothing is copied along the stack dim:

>>> import torch
>>> from tensorclass import TensorDict, lazy_stack
>>> stack = lazy_stack([TensorDict(a=torch.zeros(3)), TensorDict(a=torch.zeros(3))])
>>> more = TensorDict(a=torch.ones(1, 3), batch_size=[1])
>>> joined = torch.cat([stack, more])
>>> joined.batch_size, joined.members[0] is stack.members[0]
(torch.Size([3]), True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from ...errors import StructureMismatchError
from ..core.lazy_stacks import is_lazy_stack
from ..core.self_types import as_op
from ..core.state import TensorCore
from ..shape.batch_dims import batch_dim
from ..torch_api.functions import LIKE_FACTORIES
from .maths import _each_member
from .self_type import S
from .shape import _restack

__all__ = ["LAZY_FUNCTIONS", "lazy_cat"]


def lazy_cat(items: Sequence[Any], dim: int = 0, *, out: TensorCore | None = None) -> Any:
    """Concatenate instances along batch dim ``dim`` when one of them is a lazy stack."""
    items = list(items)
    stacks = [item for item in items if is_lazy_stack(item)]
    like = stacks[0]
    for index, item in enumerate(items):
        if not isinstance(item, TensorCore):
            raise TypeError(f"cat: item {index} is a {type(item).__name__}, not a tensor class")
    ndim = len(like._batch_size)
    if ndim == 0 or any(len(item._batch_size) != ndim for item in items):
        sizes = [list(item._batch_size) for item in items]
        raise StructureMismatchError(
            f"cannot cat instances whose batch sizes {sizes} have different numbers of dims"
        )
    d = batch_dim(dim, ndim)
    # along the stack dim the members are joined as they are (their sizes may differ: a
    # ragged stack); along another dim each member is concatenated (torch checks sizes)
    for item in items if d != like._lazy.dim else ():
        if any(
            a != b for k, (a, b) in enumerate(zip(item._batch_size, like._batch_size)) if k != d
        ):
            sizes = [list(item._batch_size) for item in items]
            raise StructureMismatchError(
                f"cannot cat along dim {d}: batch sizes {sizes} differ in another dim"
            )
    stack = like._lazy.dim
    if d == stack:
        members = [part for item in items for part in item.unbind(d)]
        result = _restack(members, d, like)
    else:
        member_dim = d if d < stack else d - 1
        columns = [item.unbind(stack) for item in items]
        joined = [torch.cat(list(row), member_dim) for row in zip(*columns)]
        result = _restack(joined, stack, like)
    if out is not None:
        as_op(out).update_(result)
        return out
    return result


def _like(factory: Callable[..., Tensor]) -> Callable[..., object]:
    def like(stack: S, *args: object, **kwargs: object) -> S:
        return _each_member(stack, lambda m: factory(m, *args, **kwargs))

    return like


#: torch functions that lazy stacks answer themselves (results stay lazy)
LAZY_FUNCTIONS: dict[Callable[..., object], Callable[..., object]] = {
    torch.cat: lazy_cat,
    torch.concat: lazy_cat,
    torch.concatenate: lazy_cat,
    **{factory: _like(factory) for factory in LIKE_FACTORIES},
}
