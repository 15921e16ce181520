"""Every ``>>>`` example in the package's docstrings runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import tensorclass

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(tensorclass.__path__, "tensorclass.")
    if ".plugins" not in name  # plugins import their host (mypy), tested in tests/typing
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
