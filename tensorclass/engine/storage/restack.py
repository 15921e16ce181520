"""Between dense and lazy: ``to_lazystack`` and ``densify``.

They are operations of every class (attached in ``TensorDictBase``) that build and read lazy
stacks, which they reach through :mod:`..core.lazy_stacks`, as the storage operations do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from ..core.lazy_stacks import is_lazy_stack, stack_lazily
from ..core.self_types import B
from ..core.state import TensorCore
from ..shape.batch_dims import batch_dim

if TYPE_CHECKING:
    from ..lazy.stack import LazyStackedTensorDict

__all__ = ["densify", "to_lazystack"]


def _densify_stack(stack: LazyStackedTensorDict, layout: torch.layout) -> Any:
    """One dense instance from a lazy stack: leaves of different shapes become nested
    tensors (``torch.nested``) along the stack dim; nested lazy stacks are densified."""
    members = stack.members
    dim = stack.stack_dim
    data: dict[str, object] = {}
    for key in members[0]._data:
        if not all(key in member._data for member in members):
            continue  # held by some members only: left out, as keys() leaves it out
        leaves = [member._data[key] for member in members]
        if isinstance(leaves[0], TensorCore):
            data[key] = _densify(stack_lazily(leaves, dim), layout)
        elif isinstance(leaves[0], Tensor) and len({leaf.shape for leaf in leaves}) > 1:
            if dim != 0:
                raise ValueError(
                    f"densify: key {key!r} has members of different shapes; nested tensors "
                    f"need the stack along dim 0, not {dim}"
                )
            data[key] = torch.nested.nested_tensor(leaves, layout=layout)
        else:
            data[key] = stack._data[key]
    return stack.member_class._new(data, stack.batch_size, stack.device, stack._names)


def _densify(node: TensorCore, layout: torch.layout) -> Any:
    if is_lazy_stack(node):
        return _densify_stack(node, layout)
    changed = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            dense = _densify(leaf, layout)
            if dense is not leaf:
                changed[key] = dense
    if not changed:
        return node
    return type(node)._new({**node._data, **changed}, node._batch_size, node._device, node._names)


def to_lazystack(self: B, dim: int = 0) -> B:
    """A lazy stack of the slices along the batch dim ``dim`` (they share storage).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a": torch.zeros(3, 2)}, [3, 2])
    >>> stack = td.to_lazystack(1)
    >>> len(stack.members), stack.batch_size
    (2, torch.Size([3, 2]))
    """
    d = batch_dim(dim, len(self._batch_size))
    return stack_lazily(list(self.unbind(d)), d)


def densify(self: B, layout: torch.layout = torch.strided) -> B:
    """This instance with its lazy stacks made dense (itself if it holds none).

    Leaves whose shapes differ across the members become nested tensors
    (``torch.nested``, ``layout`` ``torch.strided`` or ``torch.jagged``) along the
    stack dim; keys that only some members hold are left out.
    """
    return _densify(self, layout)  # type: ignore[no-any-return]
