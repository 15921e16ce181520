"""Element-wise ``torch.*`` and ``torch.nn.functional`` functions on tensor classes.

``torch.sin(td)`` is ``td.sin()``: each entry of the leaf-op table (``leafwise/table.py``,
read through ``leafwise.kind.TABLE``) named after a torch function is called by it
(element-wise methods, their in-place forms, reductions and scans: a new entry is
dispatched with no other change), and so are torch's aliases (``torch.subtract``...). A
binary function also takes the instance second (``torch.maximum(t, td)``,
``torch.sub(1.0, td)``). Element-wise activations (``F.relu(td)``, ``F.gelu(td)``, ...)
run on every tensor leaf, and the losses ``F.mse_loss``, ``F.l1_loss``,
``F.smooth_l1_loss`` and ``F.huber_loss`` pair the leaves of input and target by key:
``reduction="none"`` keeps the batch size, ``"mean"`` and ``"sum"`` reduce each leaf to one
number (a result with no batch dims). :data:`ELEMENTWISE_FUNCTIONS` holds them;
functions.py adds them to its table, and ``generate_names.py`` writes the mypy plugin's
copy of that table.

>>> import torch
>>> import torch.nn.functional as F
>>> from tensorclass import TensorDict
>>> td = TensorDict({"a": torch.tensor([-1.0, 2.0])}, [2])
>>> F.relu(td)["a"]
tensor([0., 2.])
>>> F.mse_loss(td, td * 0, reduction="none")["a"]
tensor([1., 4.])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..core.self_types import Node, is_op
from ..core.state import TensorCore
from ..leafwise import table as _table  # noqa: F401  (defining the table fills TABLE, read below)
from ..leafwise.elementwise import leafwise
from ..leafwise.elementwise_kinds import binary, binary_alpha, cast, cast_to, reversed_alpha
from ..leafwise.functions import Operator
from ..leafwise.kind import TABLE, Kind

__all__ = ["ELEMENTWISE_FUNCTIONS", "method_caller"]

#: torch function -> implementation (torch_functions.py merges it into its table)
ELEMENTWISE_FUNCTIONS: dict[Callable[..., object], Callable[..., object]] = {}

#: torch functions that call a method other than the table entry of their own name (an
#: alias of torch's, or a method written by hand, not a table entry: ``clamp``)
_SPELLINGS: dict[str, str] = {
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "remainder": "mod",
    "clamp": "clamp",
    "clamp_": "clamp_",
    "clip": "clamp",
    "clip_": "clamp_",
}

#: the kinds whose torch function also takes the instance second (``torch.sub(1.0, td)``)
_BINARY_KINDS: tuple[Kind[Any, Any], ...] = (binary, binary_alpha, reversed_alpha)

#: the kinds with no torch function (``torch.float`` is a dtype)
_CAST_KINDS: tuple[Kind[Any, Any], ...] = (cast, cast_to)

_ACTIVATIONS: tuple[Callable[..., Tensor], ...] = (
    F.relu,
    F.relu6,
    F.elu,
    F.selu,
    F.celu,
    F.leaky_relu,
    F.gelu,
    F.silu,
    F.mish,
    F.softplus,
    F.softsign,
    F.hardtanh,
    F.hardsigmoid,
    F.hardswish,
    F.logsigmoid,
    F.tanhshrink,
    F.softshrink,
    F.hardshrink,
    F.threshold,
    F.dropout,
)

_LOSSES: tuple[Callable[..., Tensor], ...] = (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss)


def method_caller(name: str) -> Callable[..., object]:
    """The implementation of a torch function that calls the method ``name`` of its first
    argument with the other arguments (``torch.exp(td)`` is ``td.exp()``)."""

    def call(obj: object, *args: object, **kwargs: object) -> object:
        return getattr(obj, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _binary(name: str, op: Operator) -> Callable[..., object]:
    def call(input: object, other: object, *args: object, **kwargs: object) -> object:
        if isinstance(input, TensorCore):
            return getattr(input, name)(other, *args, **kwargs)
        if args or kwargs:
            raise TypeError(
                f"torch.{name} with a tensor class second takes no other argument "
                f"(call the method on the tensor class)"
            )
        assert is_op(other)  # torch calls this for an instance: the other operand is one
        return other._binary(op, input, True)

    call.__name__ = name
    return call


def _activation(fn: Callable[..., Tensor]) -> Callable[..., object]:
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except ValueError:  # a builtin without a signature (gelu, softplus): no inplace=
        signature = None

    def call(input: Node, *args: object, **kwargs: object) -> Node:
        inplace = False
        if signature is not None and "inplace" in signature.parameters:
            inplace = bool(signature.bind(input, *args, **kwargs).arguments.get("inplace"))
        if inplace:  # the stored tensors (a lazy stack's are its members'), each once
            for leaf in {id(t): t for t in input._own_tensors()}.values():
                fn(leaf, *args, **kwargs)
            return input
        return input._map_tensors(lambda t: fn(t, *args, **kwargs))

    return call


def _full(operand: Tensor, leaf: Tensor) -> Tensor:
    """A batch-aligned tensor operand (trailing singleton dims) expanded to its leaf's
    shape: a loss warns of operands of different shapes."""
    if operand.ndim == leaf.ndim and operand.shape != leaf.shape:
        try:
            return operand.expand_as(leaf)
        except RuntimeError:
            pass  # torch's own error, from the loss
    return operand


def _kept(operand: Tensor, leaf: Tensor) -> Tensor:
    """An instance's leaf, as it is (a shape that differs is torch's to warn of)."""
    return operand


def _loss(fn: Callable[..., Tensor]) -> Callable[..., object]:
    signature = inspect.signature(fn)

    def call(input: object, target: object, *args: object, **kwargs: object) -> TensorCore:
        bound = signature.bind(input, target, *args, **kwargs).arguments
        reduction = bound.get("reduction", "mean")
        if bound.get("size_average") is not None or bound.get("reduce") is not None:
            reduction = torch.nn._reduction.legacy_get_string(
                bound.get("size_average"), bound.get("reduce")
            )
        size = None if reduction == "none" else torch.Size()
        if not isinstance(input, TensorCore):  # the target is the instance: same pairing
            assert isinstance(target, TensorCore)  # (torch calls this for an instance)
            full = _full if isinstance(input, Tensor) else _kept
            return leafwise(
                target, lambda t, i: fn(full(i, t), t, *args, **kwargs), (input,), {}, size
            )
        full = _full if isinstance(target, Tensor) else _kept
        return leafwise(input, lambda i, t: fn(i, full(t, i), *args, **kwargs), (target,), {}, size)

    return call


def _table_function(torch_name: str, method: str) -> Callable[..., object] | None:
    """The implementation of ``torch.<torch_name>`` calling ``method``, or ``None`` where torch
    has no such function or the method is a cast."""
    function = getattr(torch, torch_name, None)
    entry = TABLE.get(method)
    if not callable(function) or (entry is not None and entry.kind in _CAST_KINDS):
        return None
    if entry is not None and entry.kind in _BINARY_KINDS:
        return _binary(method, entry.fn)
    return method_caller(method)


# Every entry of the leaf-op table named after a torch function (element-wise, in place,
# reductions, scans): torch.exp(td) is td.exp(), torch.exp_(td) is td.exp_(), torch.sum(td,
# 0) is td.sum(0); then the torch functions of another name (_SPELLINGS).
for _torch_name, _method_name in [*((name, name) for name in TABLE), *_SPELLINGS.items()]:
    _implementation = _table_function(_torch_name, _method_name)
    if _implementation is not None:
        ELEMENTWISE_FUNCTIONS[getattr(torch, _torch_name)] = _implementation
for _activation_fn in _ACTIVATIONS:
    ELEMENTWISE_FUNCTIONS[_activation_fn] = _activation(_activation_fn)
for _loss_fn in _LOSSES:
    ELEMENTWISE_FUNCTIONS[_loss_fn] = _loss(_loss_fn)
