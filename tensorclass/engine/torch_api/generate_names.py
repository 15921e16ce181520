"""Write the mypy plugin's list of torch functions from the run-time dispatch table.

The plugin imports neither torch nor the library (mypy start-up, an import-linter
contract), so its list of the ``torch`` and ``torch.nn.functional`` functions that accept
tensor classes is a static module, ``tensorclass/plugins/_mypy_torch_names.py``, written
by this one from ``HANDLED_FUNCTIONS`` (functions.py; the leaf-op table's entries are in
it). After a change to the table or to the torch functions handled, run::

    python -m tensorclass.engine.torch_api.generate_names

``tests/typing/test_torch_function_names.py`` fails while the file differs from
:func:`render`'s text (and prints that command), and compares the lists with the run-time
table both ways.

mypy names these functions after the stub module that declares them, not the one users
import from: ``torch.maximum`` is ``torch._C._VariableFunctions.maximum``, ``torch.norm`` is
``torch.functional.norm``, ``F.relu`` is ``torch.nn.functional.relu``, ``F.gelu`` is
``torch._C._nn.gelu`` and ``F.logsigmoid`` is ``torch._C._nn.log_sigmoid`` (torch 2.13).
The written ``TORCH_FUNCTIONS`` holds every such spelling, also the ones of older torch
stubs.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import torch
import torch.nn.functional as F

from .functions import HANDLED_FUNCTIONS

__all__ = ["COMMAND", "TARGET", "names", "render"]

#: the command that rewrites the plugin's list
COMMAND = "python -m tensorclass.engine.torch_api.generate_names"

#: the file it writes
TARGET = Path(__file__).resolve().parents[2] / "plugins" / "_mypy_torch_names.py"


def _handled(namespace: object, functions: Iterable[Callable[..., object]]) -> list[str]:
    """The public names in ``namespace`` of the given functions, sorted."""
    wanted = {id(function) for function in functions}
    return sorted(
        name
        for name in dir(namespace)
        if not name.startswith("_") and id(getattr(namespace, name, None)) in wanted
    )


def names(
    functions: Iterable[Callable[..., object]] = HANDLED_FUNCTIONS,
) -> tuple[list[str], list[str], dict[str, str]]:
    """The names ``torch.X`` and ``torch.nn.functional.X`` of the handled functions, and
    the ``torch.nn.functional`` ones that are ``torch._C._nn`` builtins (their name there)."""
    functions = list(functions)
    torch_names = _handled(torch, functions)
    functional_names = _handled(F, functions)
    c_nn: dict[str, str] = {}
    for name in functional_names:
        for stub in _handled(torch._C._nn, [getattr(F, name)]):
            c_nn[name] = stub
    return torch_names, functional_names, c_nn


def _words(names: list[str]) -> str:
    return textwrap.fill(" ".join(names), width=95, initial_indent="    ", subsequent_indent="    ")


_HEADER = '''"""The ``torch`` and ``torch.nn.functional`` functions that accept tensor classes: a static
copy of the run-time table for the mypy plugin, which imports neither torch nor the library.

GENERATED, do not edit: written by ``{command}``
(what and why: that module's docstring).
"""

from __future__ import annotations

__all__ = ["C_NN_NAMES", "FUNCTIONAL_NAMES", "TORCH_FUNCTIONS", "TORCH_NAMES"]

TORCH_NAMES = frozenset(
    """
{torch_names}
    """.split()
)
"""The supported functions named ``torch.<name>``."""

FUNCTIONAL_NAMES = frozenset(
    """
{functional_names}
    """.split()
)
"""The supported functions named ``torch.nn.functional.<name>``."""

C_NN_NAMES = {{
{c_nn_names}
}}
"""``torch.nn.functional`` functions that torch's stubs declare in ``torch._C._nn``, by
their public name (the value: their name there)."""

TORCH_FUNCTIONS: dict[str, str] = {{
    **{{
        f"{{module}}.{{name}}": name
        for module in ("torch", "torch._C._VariableFunctions", "torch.functional")
        for name in TORCH_NAMES
    }},
    **{{f"torch.nn.functional.{{name}}": name for name in FUNCTIONAL_NAMES}},
    **{{f"torch._C._nn.{{stub}}": name for name, stub in C_NN_NAMES.items()}},
}}
"""mypy's fullnames of the supported functions (every stub module spelling) -> the public
name (``torch.X`` or ``torch.nn.functional.X``)."""
'''


def render(functions: Iterable[Callable[..., object]] = HANDLED_FUNCTIONS) -> str:
    """The text of ``_mypy_torch_names.py`` for the given handled functions."""
    torch_names, functional_names, c_nn = names(functions)
    return _HEADER.format(
        command=COMMAND,
        torch_names=_words(torch_names),
        functional_names=_words(functional_names),
        c_nn_names="\n".join(f'    "{name}": "{stub}",' for name, stub in c_nn.items()),
    )


def main() -> int:
    """Rewrite the plugin's list; say whether it changed."""
    text = render()
    old = TARGET.read_text() if TARGET.exists() else None
    if text == old:
        print(f"{TARGET} is up to date")
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
