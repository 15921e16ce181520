"""The decorator spelling: ``@tensorclass class X`` gets ``TensorClass`` as a base.

At run time the decorator rebuilds the class with ``TensorClass`` among its bases; these
hooks make mypy see the same class. The first hook runs on every semantic-analysis pass
(mypy rebuilds a class's bases at the start of each pass, so adding the base is repeated
and never duplicated). The class then carries ``TensorClassMeta`` as its metaclass, whose
``dataclass_transform`` gives it the full constructor, so the decorator's own transform
is skipped; ``@tensorclass(frozen=True)`` is passed on as the class keyword ``frozen``.
"""

from __future__ import annotations

from mypy.mro import MroError, calculate_mro
from mypy.nodes import CallExpr, ClassDef, TypeInfo
from mypy.plugin import ClassDefContext
from mypy.plugins.dataclasses import dataclass_class_maker_callback
from mypy.types import Instance

from ._mypy_fields import TENSOR_CLASS

__all__ = ["DECORATOR", "add_tensor_class_base", "finish_decorated_class"]

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
