"""A rule written once and inlined where it is called: one definition, no call's cost.

Some checks run on every write (the write fast path: is this a plain tensor that may go
straight into the storage dict?) and cost less than a Python call. Copying them by hand
into every write path let the copies drift; calling one function costs as much again as
the check. So the rule is a function (typed, tested, readable), and each hot function
that calls it is decorated: its source is recompiled once with the call replaced by the
rule's expression, its arguments substituted (as the generated ``__init__`` of
``init_codegen.py`` inlines its fast path)::

    def fits(node, key, value) -> bool:
        return value.__class__ is Tensor and not node._locked

    FITS = Inlined(fits)

    @FITS
    def set(self, key, value):
        if fits(self, key, value):  # compiled as: if value.__class__ is Tensor and ...
            ...

Without source (a frozen install) the call simply stays a call. :meth:`Inlined.replaced`
swaps the rule for a while and recompiles every caller, so a test can change the rule in
this one place and see every caller follow.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import copy
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FunctionType
from typing import Any, TypeVar

__all__ = ["Inlined"]

F = TypeVar("F", bound=Callable[..., Any])


def _rule_parts(rule: Callable[..., Any]) -> tuple[list[str], ast.expr]:
    """The parameter names of ``rule`` and the expression it returns (its body is one
    ``return``, after an optional docstring)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(rule)))
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef), "a rule is a plain function"
    body = fdef.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise TypeError(f"{rule.__name__}: an inlined rule is one `return <expression>`")
    return [arg.arg for arg in fdef.args.args], body[0].value


class _Expand(ast.NodeTransformer):
    """The rule's expression at one call: parameters become the call's arguments, the
    names it assigns (``:=``) and the globals it reads get names of their own."""

    def __init__(self, params: dict[str, ast.expr], assigned: set[str], rule_globals: set[str]):
        self.params = params
        self.assigned = assigned
        self.rule_globals = rule_globals

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.params:
            return copy.deepcopy(self.params[node.id])
        if node.id in self.assigned:
            return ast.Name(id=f"_inlined_{node.id}", ctx=node.ctx)
        if node.id in self.rule_globals:
            return ast.Name(id=f"_inlined_global_{node.id}", ctx=node.ctx)
        return node


class _Sites(ast.NodeTransformer):
    """Replace every call ``name(arg, ...)`` whose arguments are names or constants."""

    def __init__(self, name: str, expand: Callable[[ast.Call], ast.expr | None]):
        self.name = name
        self.expand = expand
        self.count = 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == self.name:
            inlined = self.expand(node)
            if inlined is not None:
                self.count += 1
                return inlined
        return node


class Inlined:
    """A rule function, inlined into the functions it decorates (see the module)."""

    def __init__(self, rule: Callable[..., Any]) -> None:
        #: the rule the callers run now
        self.rule: Callable[..., Any] = rule
        #: the name the callers call it by
        self.name = rule.__name__
        #: each caller, with its code as written (the call) and its parsed source
        self._callers: list[tuple[FunctionType, CodeType, ast.Module]] = []

    def __call__(self, func: F) -> F:
        """Inline the rule into ``func`` (the decorator)."""
        if not isinstance(func, FunctionType):
            raise TypeError(f"Inlined decorates functions; got {type(func).__name__}")
        try:
            source = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):  # no source: the call stays a call
            return func
        tree = ast.parse(source)
        ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
        self._callers.append((func, func.__code__, tree))
        self._inline(func, func.__code__, tree)
        return func

    def _inline(self, func: FunctionType, written: CodeType, tree: ast.Module) -> None:
        rule = self.rule
        params, expression = _rule_parts(rule)
        assigned = {
            node.target.id
            for node in ast.walk(expression)
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name)
        }
        read = {node.id for node in ast.walk(expression) if isinstance(node, ast.Name)}
        rule_globals = {
            name
            for name in read - set(params) - assigned
            if name in rule.__globals__ or not hasattr(builtins, name)
        }
        for name in rule_globals:  # the rule's globals, under names of their own
            func.__globals__[f"_inlined_global_{name}"] = rule.__globals__[name]

        def expand(call: ast.Call) -> ast.expr | None:
            args = call.args
            if call.keywords or len(args) != len(params):
                return None
            if not all(isinstance(arg, (ast.Name, ast.Constant)) for arg in args):
                return None  # an argument evaluated more than once: keep the call
            expander = _Expand(dict(zip(params, args)), assigned, rule_globals)
            out: ast.expr = expander.visit(copy.deepcopy(expression))
            for node in ast.walk(out):  # the caller's line, in tracebacks
                ast.copy_location(node, call)
            return out

        changed = copy.deepcopy(tree)
        sites = _Sites(self.name, expand)
        sites.visit(changed)
        if not sites.count:
            func.__code__ = written
            return
        ast.fix_missing_locations(changed)
        module = compile(
            changed,
            written.co_filename,
            "exec",
            flags=__future__.annotations.compiler_flag,
            dont_inherit=True,
        )
        code = next(
            const
            for const in module.co_consts
            if isinstance(const, CodeType) and const.co_name == written.co_name
        )
        if code.co_freevars != written.co_freevars:  # e.g. a zero-argument super()
            func.__code__ = written
            return
        if sys.version_info >= (3, 11):  # the qualified name, as written (tracebacks)
            code = code.replace(co_qualname=written.co_qualname)
        func.__code__ = code

    def refresh(self) -> None:
        """Recompile every caller with the current rule."""
        for func, written, tree in self._callers:
            self._inline(func, written, tree)

    @contextmanager
    def replaced(self, rule: Callable[..., Any]) -> Iterator[None]:
        """Run every caller with ``rule`` instead (one ``return <expression>`` of the same
        parameters) inside the ``with`` block."""
        saved = self.rule
        self.rule = rule
        try:
            self.refresh()
            yield
        finally:
            self.rule = saved
            self.refresh()
