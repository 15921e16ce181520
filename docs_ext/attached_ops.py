"""Griffe extension: show operations attached to a class as methods and properties.

The engine writes its operations as module-level functions and attaches them in the body of
the class that assembles them, one line each::

    permute = batch_dims.permute                    # a method
    from_dict = class_op(instances.from_dict)       # a class method
    dtype = op_property(elementwise.dtype)          # a property (setter: a second argument)
    check = staticmethod(predicates.check)          # a static method

Griffe reads such a line as an attribute (no signature, no docstring). This extension, run
on the loaded package before ``sphinx_markup.py``, replaces each of them by what the line
builds at run time: a method (``classmethod(...)`` and ``class_op(...)``: a class method,
``staticmethod(...)``: a static method) with the function's parameters, return annotation
and docstring, its first parameter (``self``/``cls``) dropped except for a static method; or,
for ``op_property(...)``/``property(...)``, a property typed by the getter's return
annotation, as griffe shows a ``@property``. A line whose function is not found in the loaded
packages (or is not a function) stays an attribute. Annotations keep the scope of the
function's module, so their cross-references resolve as they do on the function.

An operation typed for type checkers by its signature kind is declared in an
``if TYPE_CHECKING:`` block (``memmap: ClassVar[Memmap[Self]]``) and attached in its
``else:`` (``memmap = memmap_methods.memmap``); griffe keeps the declaration, so such an
attribute without a docstring of its own is read from the ``else:`` line.

Enabled in ``mkdocs.yml`` under the python handler's ``extensions:``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from griffe import (
    Alias,
    AliasResolutionError,
    Attribute,
    Class,
    CyclicAliasError,
    Docstring,
    Expr,
    ExprAttribute,
    ExprCall,
    ExprName,
    Extension,
    Function,
    GriffeLoader,
    Module,
    NameResolutionError,
    Object,
    Parameter,
    Parameters,
    safe_get_expression,
)

#: the wrapper's last name -> what the attached function becomes
_WRAPPERS = {
    "class_op": "classmethod",
    "classmethod": "classmethod",
    "staticmethod": "staticmethod",
    "op_property": "property",
    "property": "property",
}
_LOOKUP_ERRORS = (
    AliasResolutionError,
    CyclicAliasError,
    NameResolutionError,
    KeyError,
    ValueError,
    AttributeError,
)


class AttachedOps(Extension):
    """Turn class attributes assigned from functions into methods and properties."""

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        for cls in _classes(pkg):
            for name, member in list(cls.members.items()):
                if isinstance(member, Attribute) and not member.is_alias:
                    operation = as_operation(member, cls, loader)
                    if operation is not None:
                        cls.set_member(name, operation)


def as_operation(attr: Attribute, cls: Class, loader: GriffeLoader) -> Object | None:
    """The method or property ``attr`` (an attribute of ``cls``) is at run time, or None."""
    value = attr.value
    if value is None and attr.docstring is None:
        value = _attached_if_not_type_checking(attr, cls)
    kind = "method"
    arguments: list[Any] = [value]
    if isinstance(value, ExprCall):
        kind = _WRAPPERS.get(_last_name(value.function), "")
        arguments = list(value.arguments)
        if not kind or not arguments:
            return None
    functions = [_function(argument, cls, attr.lineno, loader) for argument in arguments[:2]]
    getter = functions[0]
    if getter is None:
        return None
    docstring = (
        Docstring(
            getter.docstring.value,
            lineno=getter.docstring.lineno,
            endlineno=getter.docstring.endlineno,
            parser=getter.docstring.parser,
            parser_options=getter.docstring.parser_options,
        )
        if getter.docstring is not None
        else None
    )
    common = {"lineno": attr.lineno, "endlineno": attr.endlineno, "docstring": docstring}
    if kind == "property":
        prop = Attribute(attr.name, annotation=getter.returns, **common)
        prop.labels |= {"property", *(["writable"] if len(functions) > 1 else [])}
        return prop
    parameters = list(getter.parameters)
    if kind != "staticmethod":
        parameters = parameters[1:]  # self / cls: bound by the class
    method = Function(
        attr.name,
        parameters=Parameters(*(_copy(parameter) for parameter in parameters)),
        returns=getter.returns,
        **common,
    )
    if kind != "method":
        method.labels.add(kind)
    return method


def _attached_if_not_type_checking(attr: Attribute, cls: Class) -> Any:
    """The value the ``else:`` of an ``if TYPE_CHECKING:`` in ``cls``' body assigns to
    ``attr`` (declared in that block), or None."""
    path = cls.filepath
    if isinstance(path, list) or cls.lineno is None:
        return None
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == cls.name):
            continue
        for block in node.body:
            if not (isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"):
                continue
            for line in block.orelse:
                if isinstance(line, ast.Assign) and any(
                    isinstance(target, ast.Name) and target.id == attr.name
                    for target in line.targets
                ):
                    return safe_get_expression(line.value, parent=cls)
    return None


def _function(expr: Any, cls: Class, line: int | None, loader: GriffeLoader) -> Function | None:
    """The function ``expr`` (a name or dotted name in ``cls``' body) refers to, if loaded."""
    if isinstance(expr, ExprName):
        # a class body reads its own names assigned above the line (``dumps = save``), then
        # the module's (``check = staticmethod(check)``)
        earlier = cls.members.get(expr.name)
        if earlier is not None and (earlier.lineno or 0) < (line or 0):
            return _final_function(earlier)
        scope = cls.parent if cls.parent is not None else cls
        try:
            path = scope.resolve(expr.name)
        except _LOOKUP_ERRORS:
            return None
    elif isinstance(expr, ExprAttribute):
        path = expr.canonical_path
    else:
        return None
    try:
        found = loader.modules_collection[path]
    except _LOOKUP_ERRORS:
        return None
    return _final_function(found)


def _final_function(obj: Object | Alias) -> Function | None:
    try:
        target = obj.final_target if obj.is_alias else obj
    except _LOOKUP_ERRORS:
        return None
    return target if isinstance(target, Function) else None


def _copy(parameter: Parameter) -> Parameter:
    """A parameter for the new function (Function() re-parents the ones it is given)."""
    return Parameter(
        parameter.name,
        annotation=parameter.annotation,
        kind=parameter.kind,
        default=parameter.default,
        docstring=parameter.docstring,
    )


def _last_name(expr: str | Expr) -> str:
    return str(expr).rsplit(".", 1)[-1]


def _classes(obj: Object) -> Iterator[Class]:
    """The classes defined in ``obj``, nested ones included (aliases are skipped)."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if isinstance(member, Class):
            yield member
        if isinstance(member, (Module, Class)):
            yield from _classes(member)
