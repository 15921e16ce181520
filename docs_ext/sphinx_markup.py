"""Griffe extension: render tensorclass' Sphinx-flavoured docstrings as Markdown.

The docstrings are written for ``help()`` and doctest (they are executed by
``tests/docs/test_docstrings.py``) and use Sphinx conventions; mkdocstrings renders Markdown.
Two things would otherwise come out wrong on the API reference page, so this extension
rewrites every docstring of the loaded package, at build time only (the source is untouched):

* doctest examples (``>>>`` lines, with their ``...`` continuations and expected output)
  become ```` ```pycon ```` fences: Markdown would read ``>>>`` as nested blockquotes and
  flatten the example into a paragraph.
* Sphinx roles (``:meth:`X```, ``:class:`~a.b.X```, ``:func:``, ``:attr:``, ``:data:``,
  ``:mod:``...) become optional cross-references. The target is resolved the way Sphinx
  would (the docstring's own class and module scopes, inherited members included, then the
  public ``tensorclass`` and ``tensorclass.nn`` namespaces) and linked by its canonical path,
  which mkdocstrings registers for the entry that shows it; a private mixin's method falls
  back to the public class that lists it (``TensorDictBase.keys``; autorefs tries the
  ``slug`` when the identifier is not on the page). A target that is not on the page
  (private helpers, torch, the standard library) stays inline code, with no warning
  (``optional`` autorefs), so ``mkdocs build --strict`` stays meaningful.

Enabled in ``mkdocs.yml`` under the python handler's ``extensions:``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

from griffe import AliasResolutionError, CyclicAliasError, Extension, GriffeLoader, Module, Object

_ROLE = re.compile(
    r":(?:py:)?(?P<role>meth|func|class|attr|data|mod|obj|exc|const|property):"
    r"`(?P<body>[^`]+)`"
)
_EXPLICIT_TITLE = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
_PROMPT = re.compile(r"^(?P<indent>[ \t]*)>>>(?: |$)")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_DOCTEST_FLAGS = re.compile(r"\s*#\s*doctest:\s*[+-]\w+(?:\s*,\s*[+-]\w+)*\s*$")
_CALLABLE_ROLES = {"meth", "func"}
_LOOKUP_ERRORS = (AliasResolutionError, CyclicAliasError, KeyError, ValueError)


class SphinxMarkup(Extension):
    """Fence doctest examples and turn Sphinx roles into cross-references, package-wide."""

    def __init__(self, roots: tuple[str, ...] = ("tensorclass", "tensorclass.nn")) -> None:
        super().__init__()
        self.roots = roots
        self._heirs_of: dict[str, list[str]] = {}

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = self.rewrite(obj.docstring.value, obj, loader)

    def rewrite(self, text: str, owner: Object, loader: GriffeLoader) -> str:
        """``text`` (``owner``'s docstring) as Markdown."""
        out: list[str] = []
        in_fence: str | None = None
        for line in fence_doctests(text).split("\n"):
            fence = _FENCE.match(line)
            if fence and (in_fence is None or fence[1].startswith(in_fence)):
                in_fence = None if in_fence else fence[1]
            elif in_fence is None:  # code is shown as written
                line = _ROLE.sub(lambda m: self._role(m, owner, loader), line)
            out.append(line)
        return "\n".join(out)

    def _role(self, match: re.Match[str], owner: Object, loader: GriffeLoader) -> str:
        role, body = match["role"], match["body"].strip()
        explicit = _EXPLICIT_TITLE.match(body)
        target = (explicit["target"] if explicit else body).lstrip("!")
        short = target.startswith("~")
        target = target.lstrip("~")
        if explicit:
            title = explicit["title"]
        else:
            title = target.rsplit(".", 1)[-1] if short else target.lstrip(".")
            if role in _CALLABLE_ROLES and not title.endswith(")"):
                title += "()"
        code = f"<code>{html.escape(title)}</code>"
        found = self._resolve(target, owner, loader)
        if not found:
            return code
        # autorefs tries ``slug`` when ``identifier`` is not on the page
        slug = f' slug="{html.escape(found[1], quote=True)}"' if len(found) > 1 else ""
        identifier = html.escape(found[0], quote=True)
        return f'<autoref identifier="{identifier}"{slug} optional>{code}</autoref>'

    def _resolve(self, target: str, owner: Object, loader: GriffeLoader) -> list[str]:
        """Identifiers ``target`` may name from ``owner``'s docstring, best first: the
        canonical path of the Sphinx resolution, then the path of the member a public
        subclass lists in its place (a mixin's method is shown on the class inheriting it)."""
        if target.startswith("."):
            module = owner.module
            name = target.lstrip(".")
            bases = [module.path, *([module.parent.path] if module.parent else [])]
            candidates = [f"{base}.{name}" for base in bases]
        else:
            head, _, rest = target.partition(".")
            candidates = [path + (f".{rest}" if rest else "") for path in _scoped(head, owner)]
            candidates += [target, *(f"{root}.{target}" for root in self.roots)]
        found: list[str] = []
        for path in candidates:
            canonical = _lookup(path, loader)
            if canonical is not None and canonical not in found:
                found.append(canonical)
                break
        cls = owner if owner.is_class else owner.parent
        if "." not in target and cls is not None and cls.is_class:
            for public in self._heirs(cls, loader):
                canonical = _lookup(f"{public}.{target}", loader)
                if canonical is not None and canonical not in found:
                    found.append(f"{public}.{target}")
                    break
        return found

    def _heirs(self, cls: Object, loader: GriffeLoader) -> list[str]:
        """Public classes (``tensorclass.X``) that inherit ``cls``, most general first."""
        if cls.path not in self._heirs_of:
            self._heirs_of[cls.path] = self._find_heirs(cls, loader)
        return self._heirs_of[cls.path]

    def _find_heirs(self, cls: Object, loader: GriffeLoader) -> list[str]:
        heirs: list[tuple[int, str]] = []
        for root in self.roots:
            try:
                members = loader.modules_collection[root].members
            except _LOOKUP_ERRORS:
                continue
            for name, member in members.items():
                try:
                    if not member.is_class or name.startswith("_"):
                        continue
                    mro = [member.final_target if member.is_alias else member, *member.mro()]
                except (*_LOOKUP_ERRORS, AttributeError):
                    continue
                if any(base.path == cls.path for base in mro):
                    heirs.append((len(mro), f"{root}.{name}"))
        return [path for _, path in sorted(heirs)]


def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest examples inside a ```` ```pycon ```` fence."""
    lines = text.split("\n")
    out: list[str] = []
    in_fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and (in_fence is None or fence[1].startswith(in_fence)):
            in_fence = None if in_fence else fence[1]
        prompt = None if in_fence else _PROMPT.match(line)
        if prompt is None:
            out.append(line)
            i += 1
            continue
        indent = prompt["indent"]
        end = _doctest_end(lines, i, indent)
        if out and out[-1].strip() and _indent(out[-1]) >= len(indent):
            out.append("")  # a paragraph of the same block: Markdown needs a blank line
        out.append(f"{indent}```pycon")
        for example in lines[i:end]:
            example = _DOCTEST_FLAGS.sub("", example)
            out.append("" if example.strip() == "<BLANKLINE>" else example)
        out.append(f"{indent}```")
        if end < len(lines) and lines[end].strip():
            out.append("")
        i = end
    return "\n".join(out)


def _doctest_end(lines: list[str], start: int, indent: str) -> int:
    """Index after the doctest run starting at ``start``: examples separated by blank
    lines stay in one fence, the run ends at the first other paragraph or dedent."""
    end = start
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            nxt = next((j for j in range(i, len(lines)) if lines[j].strip()), None)
            if nxt is None or not lines[nxt].startswith(f"{indent}>>>"):
                break
            i = nxt
            continue
        if not line.startswith(indent) or _FENCE.match(line):
            break
        i += 1
        end = i
    return end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _walk(obj: Object) -> Iterator[Object]:
    """``obj`` and every object defined in it (aliases are skipped: their target is walked
    where it is defined)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)  # type: ignore[arg-type]


def _scoped(head: str, owner: Object) -> Iterator[str]:
    """Paths ``head`` may name from ``owner``'s scopes, innermost first."""
    scope: Object | None = owner
    while scope is not None:
        if scope.name == head and not scope.is_module:
            yield scope.path
        try:
            members = scope.all_members if scope.is_class else scope.members
            if head in members:
                yield members[head].path
        except _LOOKUP_ERRORS:
            pass
        scope = scope.parent


def _lookup(path: str, loader: GriffeLoader) -> str | None:
    """The canonical path of the object at ``path``, inherited members included."""
    first, *parts = path.split(".")
    try:
        obj: Any = loader.modules_collection[first]
        for part in parts:
            members = obj.all_members if obj.is_class else obj.members
            obj = members[part]
        return str(obj.canonical_path)
    except _LOOKUP_ERRORS:
        return None
