# checkers: plugin
"""With the plugin, a lazy stack of X is both X and ``LazyStackedTensorDict`` (as at run time)."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from typing_extensions import assert_type

from tensorclass import (
    LazyStackedTensorDict,
    TensorClass,
    TensorDict,
    lazy_stack,
    maybe_dense_stack,
)


class Episode(TensorClass):
    obs: Tensor
    name: str = "-"


short = Episode(torch.zeros(3), batch_size=[])
long = Episode(torch.ones(5), batch_size=[])


def takes_episode(episode: Episode) -> None: ...


def takes_stack(stack: LazyStackedTensorDict) -> None: ...


stack = lazy_stack([short, long])
takes_episode(stack)  # the members' class
takes_stack(stack)  # and a lazy stack
assert_type(stack.obs, Tensor)  # typed fields, stacked
assert_type(stack["obs"], Tensor)
assert_type(stack.name, str)
assert_type(stack.members, tuple[Any, ...])
assert_type(stack.stack_dim, int)
assert_type(stack.get("obs", as_padded_tensor=True, padding_value=-1), Tensor)
assert_type(stack.get("obs", None, as_padded_tensor=True), Tensor | None)
assert_type(stack.get("obs", as_nested_tensor=True), Tensor)
assert_type(stack.get("name", as_list=True), list[Any])
assert_type(stack.get_nestedtensor("obs"), Tensor)
assert_type(stack.get("obs"), Tensor)  # the field's type, as for one Episode
stack.append(short)
stack.insert(0, long)
stack.extend([short, long])
takes_episode(stack.clone())  # operations keep both
takes_stack(stack.clone())
stack.memmap_  # the storage methods of every tensor class
stack.to_tensordict  # and of the members' class

# every spelling of lazy stacking
takes_stack(Episode.lazy_stack([short, long]))
takes_episode(Episode.lazy_stack([short, long]))
takes_stack(TensorDict.lazy_stack([short, long]))
takes_episode(LazyStackedTensorDict.lazy_stack([short, long]))
takes_stack(lazy_stack([stack, stack]))  # a lazy stack of lazy stacks
assert_type(lazy_stack([short], out=short), Episode)  # out= receives the result
tds = lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.zeros(4))])
assert_type(tds.get("a", as_padded_tensor=True), Tensor)
takes_episode(maybe_dense_stack([short, long]))  # maybe dense: only the members' class


def lazy_mistakes() -> None:
    stack["obs_"]  # E: tensorclass-key
    stack.get("nme", as_list=True)  # E: tensorclass-key
    stack.get("obs", as_padded_tensor=True, padding_side="top")  # E: call-overload
    stack.nope  # E: attr-defined
    stack.append(short, long)  # E: call-arg
    maybe_dense_stack([short, long]).members  # may be dense  # E: attr-defined
    takes_stack(short)  # E: arg-type
