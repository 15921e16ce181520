"""The structure the engine promises: one engine under every class, the schema as its policy,
flags derived from the schema, imports that run downward only."""

from __future__ import annotations

import ast
import linecache
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
import torch

import tensorclass
from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, TensorDictBase, lazy_stack
from tensorclass.engine.core.state import TensorCore, fits_batch
from tensorclass.errors import BatchSizeError
from tensorclass.param_swap import ParamSwap
from tensorclass.schema import DYNAMIC, Schema

PACKAGE = Path(tensorclass.__file__).parent


class Pair(TensorClass):
    x: torch.Tensor
    label: str = "a"


class Frozen(TensorClass, frozen=True):
    x: torch.Tensor


def test_tensordict_is_a_tensor_class() -> None:
    td = TensorDict({"a": torch.zeros(2)}, [2])
    assert issubclass(TensorDict, TensorClass) and isinstance(td, TensorClass)
    assert isinstance(td, TensorDictBase) and isinstance(Pair(torch.zeros(2)), TensorDictBase)
    assert type(TensorDict) is type(Pair)  # one metaclass builds both


def test_the_schema_is_the_policy_and_flags_are_derived_from_it() -> None:
    assert TensorDict.__tensorclass_schema__ is DYNAMIC
    assert ParamSwap.__tensorclass_schema__ is DYNAMIC  # a subclass keeps the dynamic schema
    assert isinstance(Pair.__tensorclass_schema__, Schema)
    assert TensorDict._fast_set and not Pair._fast_set
    assert Pair._tensor_fields == frozenset({"x"})  # the fields that hold tensors
    assert Frozen._frozen and not Pair._frozen
    assert Pair._dict_storage and not TensorDict._dict_storage
    for cls in (TensorDict, Pair, Frozen, ParamSwap):
        # derived by the engine from the schema, never written in a class body
        for flag in ("_fast_set", "_tensor_fields", "_frozen", "_dict_storage", "_blank"):
            assert flag in vars(cls), (cls, flag)


def test_one_fast_constructor() -> None:
    # Every class builds results with TensorCore._new; a lazy stack forwards its dense
    # results to its members' class.
    owners = {
        klass
        for cls in (TensorDict, Pair, Frozen, ParamSwap, type(lazy_stack([Pair(torch.zeros(1))])))
        for klass in cls.__mro__
        if "_new" in vars(klass)
    }
    assert owners == {TensorCore, LazyStackedTensorDict}
    # typed results are filled as a blank of the same layout (plain attribute stores)
    assert Pair._blank is not None and Frozen._blank is not None
    assert TensorDict._blank is TensorDict  # dynamic classes store their slots directly
    built = Pair._new({"x": torch.zeros(3)}, torch.Size([3]))
    assert type(built) is Pair and built.x.shape == (3,) and built.label is None
    assert Frozen._new({"x": torch.zeros(1)}, torch.Size([1])).is_locked


def test_dynamic_classes_take_no_attributes() -> None:
    td = TensorDict({}, [])
    with pytest.raises(AttributeError):
        td.anything = 1  # type: ignore[attr-defined]
    assert not hasattr(td, "__dict__")  # no instance dict: keys never shadow methods


def test_one_batch_prefix_check() -> None:
    size = torch.Size
    assert fits_batch(size([4, 3]), size([4])) and fits_batch(size([4, 3, 2]), size([4, 3]))
    assert fits_batch(size([4]), size([])) and fits_batch(size([2, 3, 4, 5]), size([2, 3, 4]))
    assert not fits_batch(size([]), size([4])) and not fits_batch(size([3]), size([4]))
    assert not fits_batch(size([4]), size([4, 3])) and not fits_batch(
        size([2, 3, 5]), size([2, 3, 4])
    )
    assert fits_batch([4, 3], [4])  # the memmap format check passes lists


def test_generated_init_shows_its_source_in_tracebacks() -> None:
    with pytest.raises(BatchSizeError) as caught:
        Pair(torch.zeros(3), batch_size=[4])
    frames = [f for f in traceback.extract_tb(caught.value.__traceback__) if f.name == "__init__"]
    assert frames and frames[0].filename.startswith("<tensorclass generated __init__ of ")
    assert "Pair" in frames[0].filename
    assert frames[0].line  # linecache knows the generated source
    assert "_convert_0" in linecache.getline(frames[0].filename, frames[0].lineno)


def test_registry_fills_itself_from_any_entry_point() -> None:
    code = (
        "import sys\n"
        "from torch import nn\n"
        "from tensorclass.engine.params.extract import from_module\n"
        "params = from_module(nn.Linear(2, 2), as_module=True)\n"
        "assert type(params).__name__ == 'TensorDictParams', type(params)\n"
        "with from_module(nn.Linear(2, 2)).to_module(nn.Linear(2, 2)) as swap:\n"
        "    assert type(swap).__name__ == 'ParamSwap'\n"
    )
    _runs_in_a_fresh_process(code)


def test_importing_the_mypy_plugin_imports_no_torch() -> None:
    code = (
        "import sys, tensorclass.plugins.mypy\n"
        "heavy = sorted(m for m in ('torch', 'numpy', 'pydantic', 'tensorclass.typed') "
        "if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    _runs_in_a_fresh_process(code)


def _runs_in_a_fresh_process(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# Imports inside function bodies that are there for start-up cost, not to dodge a cycle:
# validation (pydantic) is imported by the classes and loads that use it.
_LAZY_ON_PURPOSE = ("validation", "pydantic")


def _function_level_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and (
                inner.level or (inner.module or "").startswith("tensorclass")
            ):
                module = "." * inner.level + (inner.module or "")
                if not any(part in module for part in _LAZY_ON_PURPOSE):
                    found.append(f"{path.relative_to(PACKAGE)}:{inner.lineno} {module}")
    return found


def test_no_import_inside_a_function_dodges_a_cycle() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _function_level_imports(path)]
    assert not found, "\n".join(found)


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter not installed")
def test_import_layers_hold() -> None:
    root = PACKAGE.parent
    done = subprocess.run(["lint-imports"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_classes_are_assembled_from_functions_not_a_stack_of_mixins() -> None:
    # TensorDict, TensorClass, TensorDictBase, TensorOps, TensorCore, TensorCollection, object
    assert len(TensorDict.__mro__) <= 8, [c.__name__ for c in TensorDict.__mro__]
    assert len(LazyStackedTensorDict.__mro__) <= 10, [
        c.__name__ for c in LazyStackedTensorDict.__mro__
    ]
    engine = [c for c in TensorDict.__mro__ if c.__module__.startswith("tensorclass.engine.")]
    assert [c.__name__ for c in engine] == ["TensorDictBase", "TensorOps", "TensorCore"]


def test_an_attached_operation_is_the_function_of_its_folder() -> None:
    from tensorclass.engine.keys import access
    from tensorclass.engine.shape import batch_dims

    assert TensorDict.get is access.get
    assert TensorDict.reshape is batch_dims.reshape
    assert Pair.reshape is batch_dims.reshape  # one function under every class
