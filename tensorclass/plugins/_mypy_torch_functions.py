"""``torch.*`` and ``torch.nn.functional`` functions called on tensor classes.

At run time the library dispatches these calls through ``__torch_function__``
(``HANDLED_FUNCTIONS``; their names: ``_mypy_torch_names.py``), but torch's stubs accept
only tensors. When an argument passed where torch declares a ``Tensor`` is an instance of a
tensor class ``X``, the call gets torch's own signature (each overload) rewritten:

- each ``Tensor`` parameter (also a member of a union: ``Tensor | None``,
  ``Tensor | Number``...) accepts ``X`` too;
- in the return type ``Tensor`` becomes ``X`` (also in unions, tuples and lists), and
  torch's named tuples (``torch.return_types.max``...) become
  ``tensorclass.ValuesIndices[X]`` (values and indices are instances, as at run time).

Where the run time differs, the signature says so:

- ``out=`` stays a tensor except for ``clamp``/``clip``/``where``/``norm`` (the other
  functions forward to methods that have no ``out``);
- ``condition`` (``where``), ``mask`` (``masked_fill``/``masked_select``) and ``index``
  (``gather``) stay tensors;
- ``torch.all(x)``/``torch.any(x)`` with no ``dim`` (or ``dim=None``) return ``bool``.

A ``TensorDictParams`` argument is accepted and gives ``TensorDict`` results (as its
operators). Other types stay: ``allclose`` returns ``bool`` as torch declares; functions
torch leaves untyped (``torch.norm``, ``torch.atleast_1d``...) stay untyped. With no
tensor-class argument the call keeps torch's signature.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import CallExpr, Context, NameExpr, SymbolTableNode, TypeInfo
from mypy.plugin import FunctionSigContext
from mypy.types import (
    CallableType,
    FunctionLike,
    Instance,
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

from ._mypy_fields import TENSOR_DICT
from ._mypy_torch import tensor_class

__all__ = ["TENSOR", "torch_function_hook"]

TENSOR = "torch._tensor.Tensor"
VALUES_INDICES = "tensorclass.engine.leafwise.reductions.ValuesIndices"
PARAMS = "tensorclass.nn.params.TensorDictParams"

_OUT_FUNCTIONS = frozenset({"clamp", "clip", "where", "norm"})
"""The functions whose ``out=`` may be an instance (the others call a method without it)."""

_TENSOR_ONLY = frozenset({"condition", "mask", "index"})
"""Parameters that stay tensors at run time: a mask or an index is a tensor."""

_TRUTH = frozenset({"all", "any"})
"""``torch.all(x)``/``torch.any(x)``: a ``bool`` when no ``dim`` is given."""

_Lookup = Callable[[str], "SymbolTableNode | None"]


def _is_tensor(typ: Type) -> bool:
    proper = get_proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname == TENSOR


def _takes_tensor(typ: Type) -> bool:
    """Whether a parameter type is ``Tensor`` or a union with ``Tensor`` in it."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        return any(_is_tensor(item) for item in proper.items)
    return _is_tensor(proper)


def _widens(name: str, arg: str | None, typ: Type) -> bool:
    """Whether the parameter ``arg`` of ``name`` (of type ``typ``) accepts an instance."""
    if arg in _TENSOR_ONLY or (arg == "out" and name not in _OUT_FUNCTIONS):
        return False
    return _takes_tensor(typ)


def _instance(typ: Type, lookup: _Lookup) -> tuple[Instance, Instance] | None:
    """For an instance argument: the type to accept and the type of the results.

    ``TensorDictParams`` (a module forwarding to the tensor class it holds) gives
    ``TensorDict`` results, as its operators do."""
    found = tensor_class(typ)
    if found is not None:
        return found, found
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.has_base(PARAMS):
        sym = lookup(TENSOR_DICT)
        if sym is not None and isinstance(sym.node, TypeInfo):
            return proper, Instance(sym.node, [])
    return None


def _argument_class(
    ctx: FunctionSigContext, name: str, lookup: _Lookup
) -> tuple[Instance, Instance] | None:
    """The first instance argument passed where the signature takes a tensor (see
    :func:`_instance`)."""
    signature = ctx.default_signature
    for arg, typ, actuals in zip(signature.arg_names, signature.arg_types, ctx.args):
        if not actuals or not _widens(name, arg, typ):
            continue
        for actual in actuals:
            with ctx.api.msg.filter_errors(filter_revealed_type=True):
                found = _instance(ctx.api.get_expression_type(actual), lookup)
            if found is not None:
                return found
    return None


def _widened(typ: Type, cls: Instance) -> Type:
    """``Tensor`` (alone or in a union) also accepting ``cls``."""
    proper = get_proper_type(typ)
    if _is_tensor(proper):
        return UnionType([typ, cls])
    if isinstance(proper, UnionType) and any(_is_tensor(item) for item in proper.items):
        return UnionType([*proper.items, cls])
    return typ


class _Returns:
    """Rewrites a return type for one tensor class."""

    def __init__(self, cls: Instance, lookup: _Lookup) -> None:
        self.cls = cls
        self.lookup = lookup

    def values_indices(self, typ: Type) -> Type:
        """``ValuesIndices[cls]`` for torch's named tuples (torch's type if not loaded)."""
        sym = self.lookup(VALUES_INDICES)
        if sym is None or not isinstance(sym.node, TypeInfo):
            return typ
        return TupleType([self.cls, self.cls], Instance(sym.node, [self.cls]))

    def __call__(self, typ: Type) -> Type:
        """The type with ``Tensor`` replaced by the class."""
        proper = get_proper_type(typ)
        if _is_tensor(proper):
            return self.cls
        if isinstance(proper, UnionType):
            return UnionType.make_union([self(item) for item in proper.items])
        if isinstance(proper, TupleType):
            fallback = proper.partial_fallback
            if fallback.type.fullname.startswith("torch.return_types."):
                return self.values_indices(typ)
            items = [self(item) for item in proper.items]
            if fallback.type.fullname == "builtins.tuple":
                fallback = fallback.copy_modified(args=[UnionType.make_union(items)])
            return proper.copy_modified(items=items, fallback=fallback)
        if isinstance(proper, Instance):
            if proper.type.fullname.startswith("torch.return_types."):
                return self.values_indices(typ)
            if proper.type.fullname in ("builtins.tuple", "builtins.list") and proper.args:
                return proper.copy_modified(args=[self(arg) for arg in proper.args])
        return typ


def _no_dim(call: Context) -> bool:
    """Whether a ``torch.all``/``torch.any`` call gives no dim (none, or a literal ``None``),
    so that the library reduces to a ``bool``."""
    if not isinstance(call, CallExpr):
        return False
    given = [
        arg
        for position, (arg, name) in enumerate(zip(call.args, call.arg_names))
        if name == "dim" or (name is None and position == 1)
    ]
    return all(isinstance(arg, NameExpr) and arg.fullname == "builtins.None" for arg in given)


def _rewrite(
    signature: CallableType,
    name: str,
    accepts: Instance,
    returns: _Returns,
    bool_type: Instance,
    no_dim: bool,
) -> CallableType:
    arg_types = [
        _widened(typ, accepts) if _widens(name, arg, typ) else typ
        for arg, typ in zip(signature.arg_names, signature.arg_types)
    ]
    if name in _TRUTH and ("dim" not in signature.arg_names or no_dim):
        return signature.copy_modified(arg_types=arg_types, ret_type=bool_type)
    return signature.copy_modified(arg_types=arg_types, ret_type=returns(signature.ret_type))


def torch_function_hook(name: str, lookup: _Lookup) -> Callable[[FunctionSigContext], FunctionLike]:
    """The signature hook of the supported function ``name`` (``torch.name`` or
    ``torch.nn.functional.name``); ``lookup`` finds a fullname among mypy's modules."""

    def hook(ctx: FunctionSigContext) -> FunctionLike:
        signature = ctx.default_signature
        found = _argument_class(ctx, name, lookup)
        if found is None:
            return signature
        accepts, result = found
        bool_type = ctx.api.named_generic_type("builtins.bool", [])
        no_dim = name in _TRUTH and _no_dim(ctx.context)
        return _rewrite(signature, name, accepts, _Returns(result, lookup), bool_type, no_dim)

    return hook
