"""Element-wise ``torch.*`` and ``torch.nn.functional`` functions on tensor classes.

``torch.sin(td)`` is ``td.sin()``: each torch function named after an element-wise method
of the table (leaf_ops.py) calls it. A binary function also takes the instance second
(``torch.maximum(t, td)``, ``torch.sub(1.0, td)``). Element-wise activations
(``F.relu(td)``, ``F.gelu(td)``, ...) run on every tensor leaf, and the losses
``F.mse_loss``, ``F.l1_loss``, ``F.smooth_l1_loss`` and ``F.huber_loss`` pair the leaves
of input and target by key: ``reduction="none"`` keeps the batch size, ``"mean"`` and
``"sum"`` reduce each leaf to one number (a result with no batch dims).
:data:`ELEMENTWISE_FUNCTIONS` holds them; torch_functions.py adds them to its table.

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
import operator
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from ..core.state import TensorCore
from ..leafwise import functions as leaf_functions
from ..leafwise.elementwise import leafwise

__all__ = ["ELEMENTWISE_FUNCTIONS"]

#: torch function -> implementation (torch_functions.py merges it into its table)
ELEMENTWISE_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}

_UNARY = (
    "abs neg exp expm1 log log1p log2 log10 sqrt rsqrt sin cos tan sinh cosh tanh asin acos "
    "atan sigmoid erf erfc lgamma floor ceil round trunc frac sign reciprocal logical_not "
    "bitwise_not isnan isfinite isposinf isneginf isreal nan_to_num clamp lerp addcmul addcdiv"
).split()

#: binary torch function -> (the method, the leaf operation for an instance given second)
_BINARY: dict[str, tuple[str, Callable[[Any, Any], Any]]] = {
    "add": ("add", operator.add),
    "sub": ("sub", operator.sub),
    "subtract": ("sub", operator.sub),
    "mul": ("mul", operator.mul),
    "multiply": ("mul", operator.mul),
    "div": ("div", operator.truediv),
    "divide": ("div", operator.truediv),
    "true_divide": ("div", operator.truediv),
    "pow": ("pow", operator.pow),
    "remainder": ("mod", operator.mod),
    "rsub": ("rsub", torch.rsub),
    "maximum": ("maximum", leaf_functions.maximum),
    "minimum": ("minimum", leaf_functions.minimum),
    "clamp_min": ("clamp_min", torch.clamp_min),
    "clamp_max": ("clamp_max", torch.clamp_max),
    "logical_and": ("logical_and", leaf_functions.logical_and),
    "logical_or": ("logical_or", leaf_functions.logical_or),
    "logical_xor": ("logical_xor", leaf_functions.logical_xor),
    "bitwise_and": ("bitwise_and", torch.bitwise_and),
    "bitwise_or": ("bitwise_or", torch.bitwise_or),
    "bitwise_xor": ("bitwise_xor", torch.bitwise_xor),
}

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


def _method(name: str) -> Callable[..., Any]:
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(obj, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _binary(name: str, op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def call(input: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(input, TensorCore):
            return getattr(input, name)(other, *args, **kwargs)
        if args or kwargs:
            raise TypeError(
                f"torch.{name} with a tensor class second takes no other argument "
                f"(call the method on the tensor class)"
            )
        return other._binary(op, input, True)

    call.__name__ = name
    return call


def _activation(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except ValueError:  # a builtin without a signature (gelu, softplus): no inplace=
        signature = None

    def call(input: Any, *args: Any, **kwargs: Any) -> Any:
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


def _loss(fn: Callable[..., Tensor]) -> Callable[..., Any]:
    signature = inspect.signature(fn)

    def call(input: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(input, target, *args, **kwargs).arguments
        reduction = bound.get("reduction", "mean")
        if bound.get("size_average") is not None or bound.get("reduce") is not None:
            reduction = torch.nn._reduction.legacy_get_string(
                bound.get("size_average"), bound.get("reduce")
            )
        size = None if reduction == "none" else torch.Size()
        if not isinstance(input, TensorCore):  # the target is the instance: same pairing
            full = _full if isinstance(input, Tensor) else _kept
            return leafwise(
                target, lambda t, i: fn(full(i, t), t, *args, **kwargs), (input,), {}, size
            )
        full = _full if isinstance(target, Tensor) else _kept
        return leafwise(input, lambda i, t: fn(i, full(t, i), *args, **kwargs), (target,), {}, size)

    return call


for _name in _UNARY:
    ELEMENTWISE_FUNCTIONS[getattr(torch, _name)] = _method(_name)
    if hasattr(torch, f"{_name}_"):  # torch.exp_(td): in place
        ELEMENTWISE_FUNCTIONS[getattr(torch, f"{_name}_")] = _method(f"{_name}_")
ELEMENTWISE_FUNCTIONS[torch.clip] = _method("clamp")
ELEMENTWISE_FUNCTIONS[torch.clip_] = _method("clamp_")
for _name, (_attr, _op) in _BINARY.items():
    ELEMENTWISE_FUNCTIONS[getattr(torch, _name)] = _binary(_attr, _op)
    if hasattr(torch, f"{_name}_"):  # torch.clamp_min_(td, 0.0)
        ELEMENTWISE_FUNCTIONS[getattr(torch, f"{_name}_")] = _method(f"{_attr}_")
for _activation_fn in _ACTIVATIONS:
    ELEMENTWISE_FUNCTIONS[_activation_fn] = _activation(_activation_fn)
for _loss_fn in _LOSSES:
    ELEMENTWISE_FUNCTIONS[_loss_fn] = _loss(_loss_fn)
