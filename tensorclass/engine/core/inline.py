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

A caller that runs the rule in a loop over values of one node (a constructor filling an
instance) decorates with :meth:`Inlined.hoisting` instead, naming the arguments the loop
does not change: the parts of the rule that read only them (``not node._locked``, the batch
size and its dims) are computed once before the loop, and the loop runs the rest::

    @FITS.hoisting("self")
    def fill(self, items):
        for key, value in items:
            if fits(self, key, value):  # per item: value.__class__ is Tensor and _hoisted_0
                ...
"""

from __future__ import annotations
import __future__

import ast
import builtins
import copy
import inspect
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, FunctionType
from typing import Any, TypeVar

__all__ = ["Inlined"]

F = TypeVar("F", bound=Callable[..., Any])
_Node = TypeVar("_Node", bound=ast.AST)


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

    def expand(self, call: ast.Call, where: ast.AST, suffix: str = "") -> list[Any] | None:
        """The rule's expression (a one-item list) or statements at ``call``, its
        parameters replaced by the call's arguments (the names it assigns end with
        ``suffix``); ``None`` to keep the call."""
        args = call.args
        if call.keywords or len(args) != len(self.params):
            return None
        if not all(isinstance(arg, (ast.Name, ast.Constant)) for arg in args):
            return None  # an argument evaluated more than once: keep the call
        expander = _Expand(dict(zip(self.params, args)), self.assigned, self.globals, suffix)
        parts = [self.value] if self.statements is None else self.statements
        out = [expander.visit(copy.deepcopy(part)) for part in parts]
        for part in out:
            for node in ast.walk(part):  # the caller's line, in tracebacks
                ast.copy_location(node, where)
        return out


class _Expand(ast.NodeTransformer):
    """The rule at one call: parameters become the call's arguments, the names it assigns
    and the globals it reads get names of their own."""

    def __init__(
        self,
        params: dict[str, ast.expr],
        assigned: set[str],
        rule_globals: set[str],
        suffix: str = "",
    ):
        self.params = params
        self.assigned = assigned
        self.rule_globals = rule_globals
        self.suffix = suffix

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.params:
            return copy.deepcopy(self.params[node.id])
        if node.id in self.assigned:
            return ast.Name(id=f"_inlined_{node.id}{self.suffix}", ctx=node.ctx)
        if node.id in self.rule_globals:
            return ast.Name(id=f"_inlined_global_{node.id}", ctx=node.ctx)
        return node


def _guarded(parts: list[tuple[list[ast.expr], ast.stmt]]) -> list[ast.stmt]:
    """The statements of ``parts``, in order, each under ``if`` its guard's conditions
    (one ``if`` for consecutive statements whose guards start alike): a name whose guard
    is false is left unbound, and is not read (the rule reads it only where it holds)."""
    out: list[ast.stmt] = []
    index = 0
    while index < len(parts):
        guard, statement = parts[index]
        index += 1
        if not guard:
            out.append(statement)
            continue
        head = ast.dump(guard[0])
        group = [(guard[1:], statement)]
        while index < len(parts) and parts[index][0] and ast.dump(parts[index][0][0]) == head:
            group.append((parts[index][0][1:], parts[index][1]))
            index += 1
        out.append(ast.If(test=copy.deepcopy(guard[0]), body=_guarded(group), orelse=[]))
    return out


def _cheap(node: ast.expr) -> bool:
    """Names and constants, compared or combined: not worth a name of their own."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Compare):
        return _cheap(node.left) and all(map(_cheap, node.comparators))
    if isinstance(node, ast.UnaryOp):
        return _cheap(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(map(_cheap, node.values))
    return False


def _negated(condition: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.Not(), operand=copy.deepcopy(condition))


class _Hoist:
    """One inlined call in a loop, split: the statements that compute its loop-invariant
    parts (``statements``, run once before the loop) and the expression left for each
    iteration (``fast``), which reads them.

    A part is loop-invariant when it reads only the invariant names (the caller's, and the
    names the rule binds once from invariant parts) and constants, through attributes,
    subscripts, ``len()``, operators, comparisons and conditionals. Each is computed under
    the invariant part of the conditions that guard it in the rule (``size[1]`` under
    ``n == 2``); anything else that guards it is left out, so it may be computed where the
    rule would not compute it: the caller runs the statements in a ``try`` and runs the
    rule as written when one raises.
    """

    def __init__(self, expression: ast.expr, invariant: set[str], prefix: str) -> None:
        self.invariant = set(invariant)
        stores = Counter(
            node.id
            for node in ast.walk(expression)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        )
        #: the names the rule binds once (a name bound twice is not invariant)
        self.once = {name for name, count in stores.items() if count == 1}
        self.prefix = prefix
        #: each invariant part: its guard (conditions, all true where the rule computes it)
        #: and the statement that names it
        self.parts: list[tuple[list[ast.expr], ast.stmt]] = []
        self.hoisted: set[str] = set()
        self.seen: dict[tuple[str, ...], str] = {}
        self.fast = self.visit(expression, [])
        #: the statements that compute the parts, each under its guard
        self.statements = _guarded(self.parts)

    def fixed(self, node: ast.AST) -> bool:
        """Whether ``node`` has the same value at each iteration and computing it does
        nothing else."""
        if isinstance(node, ast.Name):
            return isinstance(node.ctx, ast.Load) and node.id in self.invariant
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Attribute):
            return self.fixed(node.value)
        if isinstance(node, ast.Subscript):
            return self.fixed(node.value) and self.fixed(node.slice)
        if isinstance(node, ast.Slice):
            return all(
                part is None or self.fixed(part) for part in (node.lower, node.upper, node.step)
            )
        if isinstance(node, ast.Call):
            return (
                isinstance(node.func, ast.Name)
                and node.func.id == "len"
                and len(node.args) == 1
                and not node.keywords
                and self.fixed(node.args[0])
            )
        if isinstance(node, ast.UnaryOp):
            return self.fixed(node.operand)
        if isinstance(node, ast.BinOp):
            return self.fixed(node.left) and self.fixed(node.right)
        if isinstance(node, ast.Compare):
            return self.fixed(node.left) and all(map(self.fixed, node.comparators))
        if isinstance(node, ast.BoolOp):
            return all(map(self.fixed, node.values))
        if isinstance(node, ast.IfExp):
            return self.fixed(node.test) and self.fixed(node.body) and self.fixed(node.orelse)
        if isinstance(node, ast.NamedExpr):
            return node.target.id in self.once and self.fixed(node.value)
        if isinstance(node, ast.Tuple):
            return all(map(self.fixed, node.elts))
        return False

    def hoist(self, node: ast.expr, guard: list[ast.expr]) -> ast.expr:
        """A name for ``node``'s value, computed before the loop under ``guard``."""
        if _cheap(node):  # as cheap to compute in the loop as to read
            return node
        key = (ast.dump(node), *map(ast.dump, guard))
        name = self.seen.get(key)
        if name is None:
            name = self.seen[key] = f"{self.prefix}{len(self.parts)}"
            assign = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=node)
            self.parts.append((list(guard), assign))
            self.hoisted.add(name)
            self.invariant.add(name)
            for sub in ast.walk(node):  # what it binds is bound before the loop too
                if isinstance(sub, ast.NamedExpr):
                    self.invariant.add(sub.target.id)
        return ast.Name(id=name, ctx=ast.Load())

    def visit(self, node: ast.expr, guard: list[ast.expr]) -> ast.expr:
        """``node`` with its invariant parts replaced by their names; ``guard``: the
        invariant conditions under which the rule computes it."""
        if self.fixed(node):
            return self.hoist(node, guard)
        if isinstance(node, ast.BoolOp):  # runs of invariant operands: one name each
            values: list[ast.expr] = []
            inner = list(guard)
            run: list[ast.expr] = []
            for value in [*node.values, None]:
                if value is not None and self.fixed(value):
                    run.append(value)
                    continue
                if run:
                    part = self.hoist(
                        run[0] if len(run) == 1 else ast.BoolOp(op=node.op, values=run), inner
                    )
                    values.append(part)
                    inner.append(part if isinstance(node.op, ast.And) else _negated(part))
                    run = []
                if value is not None:
                    values.append(self.visit(value, inner))
            return values[0] if len(values) == 1 else ast.BoolOp(op=node.op, values=values)
        if isinstance(node, ast.IfExp):
            test = self.visit(node.test, guard)
            implied = self.implied(test)
            return ast.IfExp(
                test=test,
                body=self.visit(node.body, guard + ([] if implied is None else [implied])),
                orelse=self.visit(
                    node.orelse, guard + ([_negated(test)] if self.fixed(node.test) else [])
                ),
            )
        return self._generic(node, guard)

    def implied(self, test: ast.expr) -> ast.expr | None:
        """An invariant condition that holds where ``test`` (visited) holds, if any: the
        test, its invariant ``and`` operands, or the ``or`` of its operands' own."""
        if self.fixed(test):
            return test
        if not isinstance(test, ast.BoolOp):
            return None
        parts = [self.implied(value) for value in test.values]
        if isinstance(test.op, ast.And):
            known = [part for part in parts if part is not None]
        elif any(part is None for part in parts):
            return None
        else:
            known = [part for part in parts if part is not None]
        if not known:
            return None
        return known[0] if len(known) == 1 else ast.BoolOp(op=test.op, values=known)

    def _generic(self, node: _Node, guard: list[ast.expr]) -> _Node:
        """``node`` with its children visited."""
        new = copy.copy(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, ast.expr):
                setattr(new, field, self.visit(value, guard))
            elif isinstance(value, ast.AST):
                setattr(new, field, self._generic(value, guard))
            elif isinstance(value, list):
                setattr(
                    new,
                    field,
                    [
                        self.visit(item, guard)
                        if isinstance(item, ast.expr)
                        else self._generic(item, guard)
                        if isinstance(item, ast.AST)
                        else item
                        for item in value
                    ],
                )
        return new


class _Choose(ast.NodeTransformer):
    """Each hoisting site's choice (``fast if _hoisted_ok else as_written``), made: the
    copy of a loop that runs after the hoisted statements succeeded, or the other."""

    def __init__(self, flag: str, fast: bool) -> None:
        self.flag = flag
        self.fast = fast

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        self.generic_visit(node)
        if isinstance(node.test, ast.Name) and node.test.id == self.flag:
            return node.body if self.fast else node.orelse
        return node


class _Sites(ast.NodeTransformer):
    """Replace the calls of the rules: ``rule(arg, ...)`` in an expression (a rule that is
    one ``return``), ``if (v := rule(arg, ...)) is not SENTINEL: return v`` (a rule of
    statements: its statements, whose ``return`` returns from the caller)."""

    def __init__(
        self,
        rules: dict[str, _Rule],
        invariant: tuple[str, ...] = (),
        when: ast.expr | None = None,
    ):
        self.rules = rules
        #: the caller's condition for hoisting (:meth:`Inlined.hoisting`)
        self.when = when
        self.count = 0
        #: the caller's names that its loops do not change (:meth:`Inlined.hoisting`)
        self.invariant = set(invariant)
        #: the loops around the node visited (outermost first)
        self.loops: list[ast.stmt] = []
        #: per outermost loop with hoisted calls, the statements to run before it
        self.before: dict[int, list[ast.stmt]] = {}
        #: per such loop, the name of its flag (the statements were run without error)
        self.flags: dict[int, str] = {}

    def _rule_of(self, node: ast.AST) -> _Rule | None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.rules.get(node.func.id)
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        rule = self._rule_of(node)
        if rule is not None and rule.statements is None:
            if self.invariant and self.loops:
                return self._hoisted(rule, node)
            out = rule.expand(node, node)
            if out is not None:
                self.count += 1
                expression: ast.expr = out[0]
                return expression
        return node

    def _hoisted(self, rule: _Rule, node: ast.Call) -> ast.expr:
        """The call in a loop of a hoisting caller: its invariant parts go before the
        outermost loop; here, ``fast if <they were computed> else <the rule as written>``
        (:class:`_Choose` keeps one of the two in each copy of the loop)."""
        site = self.count
        out = rule.expand(node, node, suffix=f"_{site}")
        if out is None:
            return node
        self.count += 1
        written: ast.expr = out[0]
        invariant = {
            arg.id for arg in node.args if isinstance(arg, ast.Name) and arg.id in self.invariant
        }
        split = _Hoist(copy.deepcopy(written), invariant, f"_hoisted_{site}_")
        if not split.statements:
            return written
        outer = id(self.loops[0])
        for statement in split.statements:
            for sub in ast.walk(statement):
                ast.copy_location(sub, node)
        self.before.setdefault(outer, []).extend(split.statements)
        flag = self.flags.setdefault(outer, f"_hoisted_ok_{len(self.flags)}")
        choice = ast.IfExp(test=ast.Name(id=flag, ctx=ast.Load()), body=split.fast, orelse=written)
        return ast.copy_location(choice, node)

    def _loop(self, node: ast.stmt) -> Any:
        self.loops.append(node)
        self.generic_visit(node)
        self.loops.pop()
        before = self.before.pop(id(node), None)
        if self.loops or before is None:
            return node
        # The invariant parts, then the loop that reads them; the loop as written if
        # computing them raised (the rule raises, or not, where it would have).
        flag = self.flags[id(node)]
        fast = _Choose(flag, fast=True).visit(copy.deepcopy(node))
        written = _Choose(flag, fast=False).visit(node)

        def set_flag(value: bool) -> ast.stmt:
            return ast.Assign(
                targets=[ast.Name(id=flag, ctx=ast.Store())], value=ast.Constant(value)
            )

        computed = [*before, set_flag(True)]
        if self.when is not None:  # hoisted only where the caller's condition holds
            computed = [
                ast.If(test=copy.deepcopy(self.when), body=computed, orelse=[set_flag(False)])
            ]
        statements = [
            ast.Try(
                body=computed,
                handlers=[
                    ast.ExceptHandler(
                        type=ast.Name(id="Exception", ctx=ast.Load()),
                        name=None,
                        body=[set_flag(False)],
                    )
                ],
                orelse=[],
                finalbody=[],
            ),
            ast.If(test=ast.Name(id=flag, ctx=ast.Load()), body=[fast], orelse=[written]),
        ]
        for statement in statements:
            ast.copy_location(statement, node)
        return statements

    visit_For = visit_While = visit_AsyncFor = _loop

    def _scope(self, node: ast.AST) -> ast.AST:
        """A nested scope (function, lambda, comprehension): not hoisted into."""
        loops, self.loops = self.loops, []
        self.generic_visit(node)
        self.loops = loops
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scope
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope

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


def _check_invariant(tree: ast.Module, invariant: tuple[str, ...]) -> None:
    """``invariant`` names parameters of the function of ``tree`` that it never assigns."""
    (func,) = tree.body
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise TypeError("Inlined decorates functions")
    args = func.args
    params = {arg.arg for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    assigned = {
        node.id
        for node in ast.walk(func)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    }
    for name in invariant:
        if name not in params or name in assigned:
            raise TypeError(f"{func.name}: {name!r} is not a parameter it leaves as it is")


class Inlined:
    """Rule functions, inlined into the functions it decorates (see the module)."""

    def __init__(self, *rules: Callable[..., Any]) -> None:
        #: the rules the callers run now, by the name the callers call them
        self.rules: dict[str, Callable[..., Any]] = {rule.__name__: rule for rule in rules}
        #: each caller, with its code as written (the calls), its parsed source and the
        #: names its loops do not change (:meth:`hoisting`)
        self._callers: list[
            tuple[FunctionType, CodeType, ast.Module, tuple[str, ...], ast.expr | None]
        ] = []

    def __call__(self, func: F) -> F:
        """Inline the rules into ``func`` (the decorator)."""
        return self._decorate(func, (), None)

    def hoisting(self, *invariant: str, when: str | None = None) -> Callable[[F], F]:
        """Inline the rules into the decorated function, and compute the parts of each call
        in a loop that read only the arguments ``invariant`` (parameters of the function
        that its loops do not change, nor what the rule reads through them) once, before
        the outermost loop (see the module). ``when``: an expression of the function's
        parameters; where it is false (or raises), the loop runs the rule as written (a
        loop over a few items costs less without the parts computed ahead)."""

        condition = None if when is None else ast.parse(when, mode="eval").body

        def decorate(func: F) -> F:
            return self._decorate(func, invariant, condition)

        return decorate

    def _decorate(self, func: F, invariant: tuple[str, ...], when: ast.expr | None) -> F:
        if not isinstance(func, FunctionType):
            raise TypeError(f"Inlined decorates functions; got {type(func).__name__}")
        try:
            source = textwrap.dedent(inspect.getsource(func))
        except (OSError, TypeError):  # no source: the calls stay calls
            return func
        tree = ast.parse(source)
        ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
        if invariant:
            _check_invariant(tree, invariant)
        self._callers.append((func, func.__code__, tree, invariant, when))
        self._inline(func, func.__code__, tree, invariant, when)
        return func

    def _inline(
        self,
        func: FunctionType,
        written: CodeType,
        tree: ast.Module,
        invariant: tuple[str, ...],
        when: ast.expr | None,
    ) -> None:
        rules = {name: _Rule(rule) for name, rule in self.rules.items()}
        for rule in rules.values():  # the rules' globals, under names of their own
            for name in rule.globals:
                func.__globals__[f"_inlined_global_{name}"] = rule.rule.__globals__[name]
        changed = copy.deepcopy(tree)
        sites = _Sites(rules, invariant, when)
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
        for func, written, tree, invariant, when in self._callers:
            self._inline(func, written, tree, invariant, when)

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
