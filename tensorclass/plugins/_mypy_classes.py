"""The decorator spelling: ``@tensorclass class X`` gets ``TensorClass`` as a base.

At run time the decorator rebuilds the class with ``TensorClass`` among its bases; these
hooks make mypy see the same class. The first hook runs on every semantic-analysis pass
(mypy rebuilds a class's bases at the start of each pass, so adding the base is repeated
and never duplicated). The class then carries ``TensorClassMeta`` as its metaclass, whose
``dataclass_transform`` gives it the full constructor, so the decorator's own transform
is skipped; ``@tensorclass(frozen=True)`` is passed on as the class keyword ``frozen``.

A subclass of a frozen tensor class is frozen at run time unless it says ``frozen=False``;
:func:`inherit_frozen` gives it the class keyword ``frozen=True`` so that mypy agrees (and
does not report a non-frozen class inheriting from a frozen one).
"""

from __future__ import annotations

from mypy.mro import MroError, calculate_mro
from mypy.nodes import GDEF, CallExpr, ClassDef, NameExpr, TypeInfo
from mypy.plugin import ClassDefContext
from mypy.plugins.dataclasses import dataclass_class_maker_callback
from mypy.semanal_shared import parse_bool
from mypy.types import Instance

from ._mypy_fields import TENSOR_CLASS

__all__ = ["DECORATOR", "add_tensor_class_base", "finish_decorated_class", "inherit_frozen"]

DECORATOR = "tensorclass.decorator.tensorclass"


def _pass_frozen_on(defn: ClassDef, decorator: object) -> None:
    if not isinstance(decorator, CallExpr):
        return
    for name, value in zip(decorator.arg_names, decorator.args):
        if name == "frozen":
            defn.keywords.setdefault("frozen", value)


def add_tensor_class_base(ctx: ClassDefContext) -> None:
    """Make ``TensorClass`` a base of the decorated class (idempotent)."""
    info = ctx.cls.info
    _pass_frozen_on(ctx.cls, ctx.reason)
    if info.has_base(TENSOR_CLASS):
        return
    sym = ctx.api.lookup_fully_qualified_or_none(TENSOR_CLASS)
    if sym is None or not isinstance(sym.node, TypeInfo):
        return  # tensorclass.typed is not analysed: leave the class as it is
    base = Instance(sym.node, [])
    old_bases, old_mro = info.bases, info.mro
    info.bases = [b for b in info.bases if b.type.fullname != "builtins.object"] + [base]
    info.mro = []
    try:
        calculate_mro(info)
    except MroError:
        info.bases, info.mro = old_bases, old_mro
        ctx.api.fail(
            f'@tensorclass: cannot add TensorClass to the bases of "{info.name}" '
            f"(no consistent method resolution order)",
            ctx.cls,
        )
        return
    info.metaclass_type = info.calculate_metaclass_type()


def finish_decorated_class(ctx: ClassDefContext) -> bool:
    """The second decorator hook: nothing to add when ``TensorClass`` is a base (its
    metaclass's ``dataclass_transform`` builds the constructor); else the plain transform."""
    if ctx.cls.info.has_base(TENSOR_CLASS):
        return True
    return dataclass_class_maker_callback(ctx)


def _is_frozen(info: TypeInfo) -> bool:
    """Whether a tensor class is frozen: from the dataclass metadata once mypy built it
    (imported or cached classes), else from the ``frozen`` class keyword."""
    meta = info.metadata.get("dataclass")
    if meta is not None:
        return bool(meta.get("frozen", False))
    expr = info.defn.keywords.get("frozen")
    return expr is not None and parse_bool(expr) is True


def inherit_frozen(ctx: ClassDefContext) -> None:
    """A class deriving from a frozen tensor class is frozen too (idempotent)."""
    defn = ctx.cls
    if "frozen" in defn.keywords or not defn.info.has_base(TENSOR_CLASS):
        return
    if not any(_is_frozen(base) for base in defn.info.mro[1:] if base.has_base(TENSOR_CLASS)):
        return
    sym = ctx.api.lookup_fully_qualified_or_none("builtins.True")
    true = NameExpr("True")
    true.kind, true.fullname = GDEF, "builtins.True"
    true.node = sym.node if sym is not None else None
    defn.keywords["frozen"] = true
