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


class _Rule:
    """A rule parsed: its parameters, and either the expression it returns (a rule
    called in an expression) or its statements (a rule called as ``if (v := rule(...))
    is not SENTINEL: return v``, whose last statement is ``return SENTINEL``)."""

    def __init__(self, rule: Callable[..., Any]) -> None:
        tree = ast.parse(textwrap.dedent(inspect.getsource(rule)))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            raise TypeError("a rule is a plain function")
        body = fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        last = body[-1] if body else None
        if not isinstance(last, ast.Return) or last.value is None:
            raise TypeError(f"{rule.__name__}: a rule ends with `return <expression>`")
        self.rule = rule
        self.params = [arg.arg for arg in fdef.args.args]
        #: the returned expression (one statement), or the sentinel returned at the end
        self.value: ast.expr = last.value
        #: the statements before the last ``return`` (a statement rule), else ``None``
        self.statements: list[ast.stmt] | None = body[:-1] if len(body) > 1 else None
        nodes = [node for stmt in body for node in ast.walk(stmt)]
        self.assigned = {
            node.id
            for node in nodes
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
        } - set(self.params)
        read = {node.id for node in nodes if isinstance(node, ast.Name)}
        self.globals = {
            name
            for name in read - set(self.params) - self.assigned
            if name in rule.__globals__ or not hasattr(builtins, name)
        }

    def expand(self, call: ast.Call, where: ast.AST) -> list[Any] | None:
        """The rule's expression (a one-item list) or statements at ``call``, its
        parameters replaced by the call's arguments; ``None`` to keep the call."""
        args = call.args
        if call.keywords or len(args) != len(self.params):
            return None
        if not all(isinstance(arg, (ast.Name, ast.Constant)) for arg in args):
            return None  # an argument evaluated more than once: keep the call
        expander = _Expand(dict(zip(self.params, args)), self.assigned, self.globals)
        parts = [self.value] if self.statements is None else self.statements
        out = [expander.visit(copy.deepcopy(part)) for part in parts]
        for part in out:
            for node in ast.walk(part):  # the caller's line, in tracebacks
                ast.copy_location(node, where)
        return out


class _Expand(ast.NodeTransformer):
    """The rule at one call: parameters become the call's arguments, the names it assigns
    and the globals it reads get names of their own."""

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
    """Replace the calls of the rules: ``rule(arg, ...)`` in an expression (a rule that is
    one ``return``), ``if (v := rule(arg, ...)) is not SENTINEL: return v`` (a rule of
    statements: its statements, whose ``return`` returns from the caller)."""

    def __init__(self, rules: dict[str, _Rule]):
        self.rules = rules
        self.count = 0

    def _rule_of(self, node: ast.AST) -> _Rule | None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.rules.get(node.func.id)
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        rule = self._rule_of(node)
        if rule is not None and rule.statements is None:
            out = rule.expand(node, node)
            if out is not None:
                self.count += 1
                expression: ast.expr = out[0]
                return expression
        return node

    def visit_If(self, node: ast.If) -> Any:
        test = node.test
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.NamedExpr)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot)
            and not node.orelse
            and len(node.body) == 1
            and isinstance(node.body[0], ast.Return)
            and isinstance(node.body[0].value, ast.Name)
            and node.body[0].value.id == test.left.target.id
        ):
            call = test.left.value
            rule = self._rule_of(call)
            if (
                rule is not None
                and rule.statements is not None
                and ast.dump(test.comparators[0]) == ast.dump(rule.value)
            ):
                assert isinstance(call, ast.Call)
                out = rule.expand(call, node)
                if out is not None:
                    self.count += 1
                    return out
        self.generic_visit(node)
        return node


class Inlined:
    """Rule functions, inlined into the functions it decorates (see the module)."""

    def __init__(self, *rules: Callable[..., Any]) -> None:
        #: the rules the callers run now, by the name the callers call them
        self.rules: dict[str, Callable[..., Any]] = {rule.__name__: rule for rule in rules}
        #: each caller, with its code as written (the calls) and its parsed source
        self._callers: list[tuple[FunctionType, CodeType, ast.Module]] = []

    def __call__(self, func: F) -> F:
        """Inline the rules into ``func`` (the decorator)."""
        if not isinstance(func, FunctionType):
            raise TypeError(f"Inlined decorates functions; got {type(func).__name__}")
        try:
            source = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):  # no source: the calls stay calls
            return func
        tree = ast.parse(source)
        ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
        self._callers.append((func, func.__code__, tree))
        self._inline(func, func.__code__, tree)
        return func

    def _inline(self, func: FunctionType, written: CodeType, tree: ast.Module) -> None:
        rules = {name: _Rule(rule) for name, rule in self.rules.items()}
        for rule in rules.values():  # the rules' globals, under names of their own
            for name in rule.globals:
                func.__globals__[f"_inlined_global_{name}"] = rule.rule.__globals__[name]
        changed = copy.deepcopy(tree)
        sites = _Sites(rules)
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
        """Recompile every caller with the current rules."""
        for func, written, tree in self._callers:
            self._inline(func, written, tree)

    @contextmanager
    def replaced(self, rule: Callable[..., Any], name: str | None = None) -> Iterator[None]:
        """Run every caller with ``rule`` instead of the rule ``name`` (by default the
        only one) inside the ``with`` block; it has the same parameters and form."""
        if name is None:
            (name,) = self.rules
        saved = self.rules[name]
        self.rules[name] = rule
        try:
            self.refresh()
            yield
        finally:
            self.rules[name] = saved
            self.refresh()
