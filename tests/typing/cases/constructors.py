# checkers: plugin mypy pyright
"""The constructors of every class return that class (``Self``)."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

import numpy as np
import torch
from torch import nn
from typing_extensions import assert_type

import tensorclass
from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, TypedTensorDict


class Batch(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


class State(TypedTensorDict):
    eta: torch.Tensor


@dataclasses.dataclass
class Data:
    x: torch.Tensor


Pair = collections.namedtuple("Pair", ["x", "y"])
entries = {"x": torch.zeros(3), "y": torch.zeros(3)}
b = Batch(torch.zeros(3), torch.zeros(3), batch_size=[3])
td = TensorDict(entries, batch_size=[3])
records = np.zeros(3, dtype=[("x", "f4"), ("y", "f4")])

assert_type(Batch.from_dict(entries, batch_size=[3]), Batch)
assert_type(TensorDict.from_dict(entries, auto_batch_size=True), TensorDict)
assert_type(State.from_dict({"eta": torch.zeros(2)}), State)
assert_type(b.from_dict_instance(entries), Batch)
assert_type(Batch.from_list([entries, entries]), Batch)
assert_type(Batch.from_tuple((torch.zeros(3), torch.ones(3))), Batch)
assert_type(Batch.from_namedtuple(Pair(torch.zeros(3), torch.ones(3))), Batch)
assert_type(TensorDict.from_dataclass(Data(torch.zeros(3))), TensorDict)
assert_type(TensorDict.from_dataclass(Data(torch.zeros(3)), as_tensorclass=True), Any)
assert_type(Batch.from_pytree(entries), Batch)
assert_type(Batch.from_struct_array(records), Batch)
assert_type(Batch.from_any(entries), Batch)
assert_type(Batch.from_any(torch.zeros(3)), torch.Tensor)
assert_type(Batch.fromkeys(["x", "y"], torch.zeros(3)), Batch)
assert_type(Batch.from_schema({"x": ([], torch.float32)}, batch_size=[3]), Batch)
assert_type(Batch.from_tensordict(td), Batch)
assert_type(State.from_tensordict(td, check=False), State)
assert_type(TensorDict.from_module(nn.Linear(2, 2)), TensorDict)
assert_type(Batch.stack([b, b]), Batch)
assert_type(TensorDict.cat([td, td]), TensorDict)
assert_type(TensorDict.stack([b, b]), Batch)
lazy_b: Batch = TensorDict.lazy_stack([b, b])  # a lazy stack too: see lazy_stacks.py
assert_type(TensorDict.maybe_dense_stack([td, td]), TensorDict)
assert_type(LazyStackedTensorDict.from_tuple((torch.zeros(3),)), LazyStackedTensorDict)

# instance methods
assert_type(b.empty(recurse=True, batch_size=[]), Batch)
assert_type(b.new_zeros(2, 3), Batch)
assert_type(b.new_ones([2]), Batch)
assert_type(b.new_full([2], 1.0), Batch)
assert_type(b.new_empty(2), Batch)
assert_type(b.new_tensor([1.0, 2.0]), Batch)
assert_type(b.auto_batch_size_(), Batch)
assert_type(b.stack_tensors("x", "y", out_key="y"), Batch)
assert_type(b.stack_from_tensordict(), torch.Tensor)
assert_type(b.to_struct_array(), np.ndarray)

# the functions build TensorDicts
assert_type(tensorclass.from_dict(entries), TensorDict)
assert_type(tensorclass.from_tuple((torch.zeros(3),)), TensorDict)
assert_type(tensorclass.fromkeys(["a"]), TensorDict)
assert_type(tensorclass.make_tensordict(a=torch.zeros(3)), TensorDict)
assert_type(tensorclass.maybe_dense_stack([b, b]), Batch)

# a TypedTensorDict takes keys besides its fields
state = State(eta=torch.zeros(2), batch_size=[2])
assert_type(state.eta, torch.Tensor)
state["step"] = torch.arange(2)
assert_type(state["step"], Any)
