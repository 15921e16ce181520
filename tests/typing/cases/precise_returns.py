# checkers: plugin mypy pyright
"""Parameters of modules and memory-mapped loads come back typed, not ``Any``."""

from __future__ import annotations

import torch
from torch import nn
from typing_extensions import assert_type

import tensorclass
from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, load_memmap
from tensorclass.nn import TensorDictParams


class LinearParams(TensorClass):
    weight: torch.Tensor
    bias: torch.Tensor


linear = nn.Linear(3, 2)
flag = bool(torch.rand(()) > 0.5)

# from_module: the class, or TensorDictParams with as_module=True
assert_type(TensorDict.from_module(linear), TensorDict)
assert_type(LinearParams.from_module(linear), LinearParams)
assert_type(LinearParams.from_module(linear, as_module=True), TensorDictParams)
assert_type(LinearParams.from_module(linear, flag), LinearParams | TensorDictParams)
assert_type(tensorclass.from_module(linear), TensorDict)
assert_type(tensorclass.from_module(linear, as_module=True), TensorDictParams)
assert_type(tensorclass.from_module(linear, flag), TensorDict | TensorDictParams)

# from_modules: stacked along a new batch dim
assert_type(TensorDict.from_modules(linear, linear), TensorDict)
assert_type(LinearParams.from_modules(linear, linear), LinearParams)
assert_type(LinearParams.from_modules(linear, linear, lazy_stack=True), LinearParams)
assert_type(LinearParams.from_modules(linear, linear, as_module=True), TensorDictParams)
assert_type(LinearParams.from_modules(linear, as_module=flag), LinearParams | TensorDictParams)
assert_type(tensorclass.from_modules(linear, linear), TensorDict)
assert_type(tensorclass.from_modules(linear, lazy_stack=True), LazyStackedTensorDict)
assert_type(tensorclass.from_modules(linear, as_module=True), TensorDictParams)
ensemble = tensorclass.from_modules(linear, linear)
assert_type(ensemble.batch_size, torch.Size)

# load_memmap: the class given, the instance filled with out=, else the recorded class
assert_type(load_memmap("/tmp/p", LinearParams), LinearParams)
assert_type(load_memmap("/tmp/p", TensorDict, mode="r"), TensorDict)
assert_type(load_memmap("/tmp/p"), TensorClass | LazyStackedTensorDict)
assert_type(load_memmap("/tmp/p", "cpu"), TensorClass | LazyStackedTensorDict)
target = LinearParams(torch.zeros(2, 3), torch.zeros(2), batch_size=[])
assert_type(load_memmap("/tmp/p", out=target), LinearParams)
assert_type(LinearParams.load_memmap("/tmp/p"), LinearParams)
loaded = load_memmap("/tmp/p")
if isinstance(loaded, LinearParams):
    assert_type(loaded.weight, torch.Tensor)


def mistakes() -> int:
    load_memmap("/tmp/p", int)  # not a tensor class  # E: type-var reportArgumentType
    wrong: int = LinearParams.from_modules(linear)  # E: assignment reportAssignmentType
    return wrong
