"""What the tensor leaves say as tensors: copies into existing storage (``copy_``,
``copy``), autograd (``data``, ``grad``, ``zero_grad``, ``backward``), memory (``data_ptr``,
``pin_memory``, ``record_stream``) and device and dtype questions (``is_cpu``,
``is_floating_point``...).

>>> import torch
>>> from tensorclass import TensorDict
>>> w = torch.ones(3, requires_grad=True)
>>> td = TensorDict({"loss": (w * 2).sum()}, batch_size=[])
>>> td.backward()
>>> w.grad.tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch
from torch import Tensor

from ...errors import StructureMismatchError
from ...registry import dynamic_class
from ..core.lazy_stacks import stack_lazily, stacked_leaves
from ..core.self_types import E, Node
from ..core.state import TensorCore
from .apply import tensor_leaf_keys, tensor_leaves

__all__ = [
    "backward",
    "copy",
    "copy_",
    "data",
    "data_ptr",
    "grad",
    "is_cpu",
    "is_cuda",
    "is_floating_point",
    "is_meta",
    "pin_memory",
    "pin_memory_",
    "pinning_available",
    "record_stream",
    "zero_grad",
]


def pinning_available() -> bool:
    """Whether torch can pin memory here (it needs an accelerator such as CUDA)."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        return bool(accelerator.is_available())
    return bool(torch.cuda.is_available())


def _shown(key: tuple[str, ...]) -> str | tuple[str, ...]:
    return key[0] if len(key) == 1 else key


def copy_(self: E, tensordict: Mapping[Any, Any] | TensorCore, non_blocking: bool = False) -> E:
    """Copy the values of ``tensordict`` into this instance's tensors, in place (every
    key must exist; as ``Tensor.copy_``, the values broadcast)."""
    if isinstance(tensordict, TensorCore):
        targets: list[Tensor] = []
        sources: list[Tensor] = []
        if _pair_exact(self, tensordict, targets, sources):
            if torch._C._are_functorch_transforms_active():  # no batching rule for foreach
                for target, source in zip(targets, sources):
                    target.copy_(source, non_blocking)
            elif targets:  # one fused copy
                torch._foreach_copy_(targets, sources, non_blocking)
            return self
    return self.update_(tensordict)


def copy(self: E) -> E:
    """A shallow copy: a new instance, with new nested instances, sharing the tensors
    (adding or replacing a key in the copy leaves this instance as it is)."""
    stacked = stacked_leaves(self)
    if stacked is not None:  # a lazy stack: a lazy stack of the members' copies
        result: E = stack_lazily([m.copy() for m in stacked.members], stacked.dim)
        return result
    data = {
        key: leaf.copy() if isinstance(leaf, Node) else leaf for key, leaf in self._data.items()
    }
    return type(self)._new(data, self._batch_size, self._device, self._names)


# -- autograd ----------------------------------------------------------------------------


def data(self: E) -> Any:
    """The tensors detached from autograd, sharing their storage (as ``Tensor.data``),
    in an instance of the same class. A typed class may declare a field named ``data``,
    which then hides this property on that class."""
    return self._map_tensors(lambda t: t.data)


def grad(self: E) -> E | None:
    """The gradients of the tensor leaves, under the same keys (leaves without one are
    left out); ``None`` when no leaf has a gradient."""
    if not any(t.grad is not None for t in tensor_leaves(self)):
        return None
    return _grads(self)


def _grads(self: E) -> E:
    data: dict[str, object] = {}
    for key, leaf in self._data.items():
        if isinstance(leaf, Tensor):
            if leaf.grad is not None:
                data[key] = leaf.grad
        elif isinstance(leaf, Node):
            data[key] = _grads(leaf)
    return type(self)._new(data, self._batch_size, self._device, self._names)


def zero_grad(self: E, set_to_none: bool = True) -> E:
    """Clear the gradients of every tensor (``set_to_none=False`` zeroes them)."""
    for leaf in tensor_leaves(self):
        if set_to_none:
            leaf.grad = None
        elif leaf.grad is not None:
            leaf.grad.zero_()
    return self


def backward(
    self: E,
    gradient: TensorCore | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: TensorCore | Sequence[Tensor] | None = None,
) -> None:
    """Backpropagate from every tensor leaf that requires grad (as ``Tensor.backward``).

    Without ``gradient`` every such leaf must hold one element (a loss); otherwise
    ``gradient`` is an instance with a gradient under each of their keys.
    """
    keys, tensors = [], []
    for key, leaf in zip(tensor_leaf_keys(self), tensor_leaves(self)):
        if leaf.requires_grad:
            keys.append(key)
            tensors.append(leaf)
    if not tensors:
        raise RuntimeError(f"backward: no tensor of this {type(self).__name__} requires grad")
    grads: list[Tensor] | None = None
    if gradient is None:
        for key, leaf in zip(keys, tensors):
            if leaf.numel() != 1:
                raise RuntimeError(
                    f"backward: key {_shown(key)!r} has shape {list(leaf.shape)}; without "
                    f"gradient= every tensor that requires grad must hold one element"
                )
    else:
        if not isinstance(gradient, TensorCore):
            raise TypeError(
                f"backward: gradient must be a tensor class; got {type(gradient).__name__}"
            )
        grads = []
        for key, leaf in zip(keys, tensors):
            grad = gradient._leaf(_shown(key))
            if not isinstance(grad, Tensor) or grad.shape != leaf.shape:
                shape = list(getattr(grad, "shape", ()))
                raise StructureMismatchError(
                    f"backward: the gradient of key {_shown(key)!r} has shape {shape}; "
                    f"expected {list(leaf.shape)}"
                )
            grads.append(grad)
    if isinstance(inputs, TensorCore):
        inputs = tensor_leaves(inputs)
    torch.autograd.backward(
        tensors,
        grad_tensors=grads,
        retain_graph=retain_graph,
        create_graph=create_graph,
        inputs=inputs,
    )


# -- memory ------------------------------------------------------------------------------


def data_ptr(self: E, *, storage: bool = False) -> Any:
    """A ``TensorDict`` (no batch dims) of the tensors' data pointers, under the same
    keys; ``storage=True`` gives the pointers of their storages."""

    def pointer(t: Tensor) -> Tensor:
        ptr = t.untyped_storage().data_ptr() if storage else t.data_ptr()
        return torch.tensor(ptr, dtype=torch.int64)

    return _as_dynamic_tree(self, pointer)


def pin_memory(self: E, num_threads: int | None = None, inplace: bool = False) -> E:
    """A copy with every tensor in pinned (page-locked) memory, for fast transfers to an
    accelerator; ``num_threads`` pins with that many threads, ``inplace=True`` stores
    the pinned tensors in this instance.

    Pinning needs an accelerator. Where torch says none is available
    (``torch.accelerator.is_available()`` is false), this is a no-op returning this
    instance with its tensors unchanged, so ``DataLoader(pin_memory=True)`` code runs
    on CPU-only machines too.
    """
    if not pinning_available():
        return self
    fn: Callable[[Tensor], Tensor] = Tensor.pin_memory
    if num_threads:
        fn = _threaded(fn, num_threads, tensor_leaves(self))
    if not inplace:
        return self._map_tensors(fn)
    _rebind_tensors(self, fn)
    return self


def pin_memory_(self: E, num_threads: int = 0) -> E:
    """:meth:`pin_memory` in place."""
    return self.pin_memory(num_threads, inplace=True)


def record_stream(self: E, stream: Any) -> E:
    """Mark every tensor as used by ``stream`` (as ``Tensor.record_stream``), so its
    memory is not reused before the stream's work on it is done."""
    for leaf in tensor_leaves(self):
        leaf.record_stream(stream)
    return self


# -- questions ---------------------------------------------------------------------------


def is_floating_point(self: E) -> bool:
    """Whether every tensor leaf has a floating-point dtype."""
    return all(leaf.is_floating_point() for leaf in tensor_leaves(self))


def is_cpu(self: E) -> bool:
    """Whether the instance's device is the CPU (``False`` without a device)."""
    return self._device is not None and self._device.type == "cpu"


def is_cuda(self: E) -> bool:
    """Whether the instance's device is a CUDA device (``False`` without a device)."""
    return self._device is not None and self._device.type == "cuda"


def is_meta(self: E) -> bool:
    """Whether the instance's device is the meta device (``False`` without a device)."""
    return self._device is not None and self._device.type == "meta"


def _pair_exact(
    node: TensorCore, other: TensorCore, targets: list[Tensor], sources: list[Tensor]
) -> bool:
    """Collect (target, source) tensor pairs when ``other`` has exactly this structure and
    shapes, all tensors, in plain storage (else False: the general path checks and copies)."""
    data, other_data = node._data, other._data
    if type(data) is not dict or type(other_data) is not dict or data.keys() != other_data.keys():
        return False
    for key, leaf in data.items():
        value = other_data[key]
        if isinstance(leaf, Tensor):
            if not isinstance(value, Tensor) or value.shape != leaf.shape:
                return False
            targets.append(leaf)
            sources.append(value)
        elif isinstance(leaf, TensorCore) and isinstance(value, TensorCore):
            if not _pair_exact(leaf, value, targets, sources):
                return False
        else:
            return False
    return True


def _as_dynamic_tree(node: TensorCore, fn: Callable[[Tensor], Tensor]) -> Any:
    data: dict[str, object] = {}
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            data[key] = fn(leaf)
        elif isinstance(leaf, TensorCore):
            data[key] = _as_dynamic_tree(leaf, fn)
    return dynamic_class()._new(data, torch.Size(()), torch.device("cpu"))


def _threaded(
    fn: Callable[[Tensor], Tensor], threads: int, leaves: list[Tensor]
) -> Callable[[Tensor], Tensor]:
    """``fn``, computed ahead for ``leaves`` by a pool of ``threads`` threads."""
    with ThreadPoolExecutor(threads) as pool:
        done = dict(zip(map(id, leaves), pool.map(fn, leaves)))

    def lookup(t: Tensor) -> Tensor:
        found = done.get(id(t))
        return fn(t) if found is None else found

    return lookup


def _rebind_tensors(node: TensorCore, fn: Callable[[Tensor], Tensor]) -> None:
    members = getattr(node._data, "members", None)
    if members is not None:  # a lazy stack: its members
        for member in members:
            _rebind_tensors(member, fn)
        return
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            node._data[key] = fn(leaf)
        elif isinstance(leaf, TensorCore):
            _rebind_tensors(leaf, fn)
