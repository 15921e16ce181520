"""``torch.stack`` and ``torch.cat`` of tensor classes return the class.

torch's stubs accept only tensors. When the first argument is a sequence of tensor
classes (typed ones or ``TensorDict``), these calls get the signature of
``tensorclass.stack``/``tensorclass.cat`` for that class instead.
"""

from __future__ import annotations

from mypy.plugin import FunctionSigContext
from mypy.types import (
    FunctionLike,
    Instance,
    NoneType,
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

from ._mypy_fields import TENSOR_CORE

__all__ = ["TORCH_JOINS", "item_class", "tensor_class", "torch_join_signature"]

TORCH_JOINS = frozenset(
    f"{module}.{name}"
    for module in ("torch", "torch._C._VariableFunctions", "torch.functional")
    for name in ("stack", "cat", "concat", "concatenate")
)
"""The fullnames of ``torch.stack``/``torch.cat`` (and aliases) across torch versions."""


def tensor_class(typ: Type) -> Instance | None:
    """The type as a tensor-class instance (``TensorDict``, a typed class...), if it is one."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.has_base(TENSOR_CORE):
        return proper
    return None


def item_class(typ: Type) -> Instance | None:
    """The tensor-class item type of a list/tuple/sequence type, if it is one."""
    proper = get_proper_type(typ)
    if isinstance(proper, TupleType):
        items = [tensor_class(item) for item in proper.items]
        first = items[0] if items else None
        if first is not None and all(item == first for item in items):
            return first
        proper = get_proper_type(proper.partial_fallback)
    if not isinstance(proper, Instance) or len(proper.args) != 1:
        return None
    return tensor_class(proper.args[0])


def torch_join_signature(ctx: FunctionSigContext) -> FunctionLike:
    """``(tensors: Sequence[X], dim: int = 0, *, out: X | None = None) -> X`` for a
    sequence of tensor class ``X``; the torch signature otherwise."""
    signature = ctx.default_signature
    if not ctx.args or not ctx.args[0]:
        return signature
    with ctx.api.msg.filter_errors(filter_revealed_type=True):
        first = ctx.api.get_expression_type(ctx.args[0][0])
    item = item_class(first)
    if item is None:
        return signature
    sequence = ctx.api.named_generic_type("typing.Sequence", [item])
    arg_types = list(signature.arg_types)
    arg_types[0] = sequence
    for index, name in enumerate(signature.arg_names):
        if name == "out":
            arg_types[index] = UnionType([item, NoneType()])
    return signature.copy_modified(arg_types=arg_types, ret_type=item)
