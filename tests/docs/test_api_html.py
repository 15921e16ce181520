"""The built API reference page reads as intended: what users see, not what mkdocs accepts.

``mkdocs build --strict`` passes with doctest examples flattened into blockquotes, Sphinx
roles shown as raw text and dunders listed, so the site is built once (into a temporary
directory) and its API pages (``api/*/index.html``, joined) are checked. The build-time rewriting is
``docs_ext/sphinx_markup.py`` (a griffe extension enabled in ``mkdocs.yml``).
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
from types import ModuleType

import pytest

from .fences import ROOT

pytest.importorskip("mkdocstrings_handlers.python")
pytest.importorskip("material")

ROLE = re.compile(r":(?:py:)?(?:meth|class|func|attr|data|mod|obj|exc):")
PROMPT = re.compile(r"&gt;&gt;&gt;|>>>")
CODE = re.compile(r"<pre\b.*?</pre>|<code\b.*?</code>", re.S)
HEADING_ID = re.compile(r'<h\d id="(?P<id>[^"]+)" class="doc doc-heading"')
NAV_LINK = re.compile(r'<a href="#(?P<id>[^"]+)" class="md-nav__link"')
XREF = re.compile(
    r'<a class="autorefs autorefs-internal"[^>]*href="(?:\.\./\w+/)?#tensorclass\.[^"]*"'
)


@pytest.fixture(scope="module")
def api_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # From another directory: the build must not depend on the current directory.
    command = ["mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)]
    result = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=site.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    pages = sorted((site / "api").glob("**/index.html"))
    assert len(pages) > 1, pages  # the reference is split into pages by concept
    return "\n".join(page.read_text() for page in pages)


def _docstrings_html(page: str) -> str:
    """The parts of the pages that mkdocstrings rendered (from each page's first entry)."""
    return "\n".join(
        part[part.index('<div class="doc doc-object') :]
        for part in page.split("<!doctype html>")
        if '<div class="doc doc-object' in part
    )


def test_no_example_is_flattened_into_a_blockquote(api_html: str) -> None:
    quotes = re.findall(r"<blockquote>.*?</blockquote>", api_html, re.S)
    assert not quotes, f"{len(quotes)} blockquotes, first: {quotes[0][:300]}"


def test_every_prompt_is_inside_a_code_block(api_html: str) -> None:
    outside = CODE.sub("", _docstrings_html(api_html))
    stray = [outside[max(m.start() - 150, 0) : m.end() + 150] for m in PROMPT.finditer(outside)]
    assert not stray, f"{len(stray)} '>>>' outside code, first: {stray[0]}"


def test_examples_are_highlighted(api_html: str) -> None:
    prompts = api_html.count('<span class="gp">&gt;&gt;&gt; </span>')
    sources = sum(
        line.lstrip().startswith(">>>")
        for path in (ROOT / "tensorclass").rglob("*.py")
        for line in path.read_text().splitlines()
    )
    # Not every docstring is on the page, but most examples are: a fraction would mean
    # examples were dropped or rendered as text.
    assert prompts >= sources // 3, (prompts, sources)


def test_no_raw_sphinx_role(api_html: str) -> None:
    roles = [api_html[max(m.start() - 100, 0) : m.end() + 100] for m in ROLE.finditer(api_html)]
    assert not roles, f"{len(roles)} raw roles, first: {roles[0]}"


def test_no_dunder_or_private_member_is_listed(api_html: str) -> None:
    ids = {m["id"] for m in HEADING_ID.finditer(api_html)}
    ids |= {m["id"] for m in NAV_LINK.finditer(api_html)}
    assert ids, "no documented object found: the page layout changed"
    hidden = sorted(i for i in ids if any(p.startswith("_") for p in i.split(".")))
    assert not hidden, hidden


def test_cross_references_are_links(api_html: str) -> None:
    # links written in the prose of docstrings (roles), not only the signatures' ones
    prose = re.findall(r"<p>.*?</p>|<li>.*?</li>", _docstrings_html(api_html), re.S)
    links = sum(len(XREF.findall(p)) for p in prose)
    assert links >= 20, links


def test_roles_in_mixins_link_to_the_public_class(api_html: str) -> None:
    """``:meth:`keys``` in a private mixin's docstring links to the entry of the public class
    that lists the method (``TensorDictBase``), not to an anchor that does not exist."""
    prose = re.findall(r"<p>.*?</p>", _docstrings_html(api_html), re.S)
    members = {
        m
        for p in prose
        for m in re.findall(r'href="(?:\.\./engine/)?#tensorclass\.TensorDictBase\.(\w+)"', p)
    }
    assert len(members) >= 5, members


def test_operations_show_their_signature_and_docstring(api_html: str) -> None:
    """An operation of ``TensorDictBase`` is a method entry with its docstring, whether the
    class defines it or attaches a function (``permute = batch_dims.permute``: shown as a
    method by ``docs_ext/attached_ops.py``)."""
    page = _docstrings_html(api_html)
    start = page.index('id="tensorclass.TensorDictBase.permute"')
    entry = page[start : start + 5000]
    assert "Reorder the batch dims (feature dims stay where they are)." in entry
    assert "dims" in entry.split("Reorder", 1)[0]  # the signature, before the docstring


def _extension() -> ModuleType:
    path = ROOT / "docs_ext" / "sphinx_markup.py"
    spec = importlib.util.spec_from_file_location("sphinx_markup", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a paragraph, then examples separated by a blank line: one fence, blank line before
        (
            "Intro.\n>>> a = 1  # doctest: +SKIP\n>>> a\n1\n\n>>> a + 1\n2\nAfter.\n\nEnd.",
            "Intro.\n\n```pycon\n>>> a = 1\n>>> a\n1\n\n>>> a + 1\n2\nAfter.\n```\n\nEnd.",
        ),
        # a Google section: the fence keeps the indentation, no blank after the title
        ("Examples:\n    >>> x\n    <BLANKLINE>", "Examples:\n    ```pycon\n    >>> x\n\n    ```"),
        # a fence right after an example is not taken as its output
        ("A.\n>>> s\n```\ncode\n```", "A.\n\n```pycon\n>>> s\n```\n\n```\ncode\n```"),
        # already fenced: untouched
        ("```python\n>>> x\n```", "```python\n>>> x\n```"),
    ],
)
def test_fence_doctests(text: str, expected: str) -> None:
    assert _extension().fence_doctests(text) == expected


@pytest.mark.parametrize(
    "member",
    ["get", "densify", "data", "from_dict", "dtype", "memmap", "to_lazystack", "lazy_stack"],
)
def test_attached_operations_are_documented_members(api_html: str, member: str) -> None:
    """Operations attached from functions (plain, ``class_op``, ``op_property``, and one
    declared only for type checkers) are listed under ``TensorDictBase`` as its members."""
    assert f'id="tensorclass.TensorDictBase.{member}"' in api_html


SIGNATURE = re.compile(r'<div class="doc-signature highlight"><pre>(.*?)</pre>', re.S)


def _signatures(page: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]*>", "", m[1])) for m in SIGNATURE.finditer(page)]


def test_signatures_show_types(api_html: str) -> None:
    signatures = _signatures(api_html)
    assert len(signatures) > 100, len(signatures)
    permute = next(s for s in signatures if s.startswith("permute("))
    assert ") -> " in permute, permute


def test_no_default_is_a_private_name(api_html: str) -> None:
    """A private constant used as a default (``sample_shape=_EMPTY``) shows its value
    (``docs_ext/private_names.py``): the reader cannot look a private name up."""
    private = [s for s in _signatures(api_html) if re.search(r"= _\w", s)]
    assert not private, private[:3]
