# checkers: mypy pyright
"""Without the plugin: ``lazy_stack(xs)`` is typed as the members' class and
``LazyStackedTensorDict.lazy_stack(xs)`` as a lazy stack; ``isinstance`` narrows to both."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from typing_extensions import assert_type

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack


class Episode(TensorClass):
    obs: Tensor
    name: str = "-"


short = Episode(torch.zeros(3), batch_size=[])
long = Episode(torch.ones(5), batch_size=[])


def takes_episode(episode: Episode) -> None: ...


def takes_stack(stack: LazyStackedTensorDict) -> None: ...


assert_type(lazy_stack([short, long]), Episode)
assert_type(Episode.lazy_stack([short, long]), Episode)
assert_type(LazyStackedTensorDict.lazy_stack([short, long]), LazyStackedTensorDict)
assert_type(LazyStackedTensorDict.lazy_stack([short], out=long), Episode)

# tensors in: a tensor out, or a list of them
tensors = [torch.zeros(2), torch.ones(3)]
assert_type(LazyStackedTensorDict.lazy_stack(tensors, as_padded_tensor=True), Tensor)
assert_type(LazyStackedTensorDict.lazy_stack(tensors, as_nested_tensor=True), Tensor)
assert_type(LazyStackedTensorDict.lazy_stack(tensors, as_list=True), list[Tensor])

# the lazy-stack API, on a lazy stack
generic = LazyStackedTensorDict.lazy_stack([short, long])
assert_type(generic.members, tuple[Any, ...])
assert_type(generic.get("obs", as_padded_tensor=True, padding_side="left"), Tensor)
assert_type(generic.get("obs", 0, as_nested_tensor=True), Tensor | int)
assert_type(generic.get("obs", as_list=True), list[Any])
assert_type(generic.get_nestedtensor("obs"), Tensor)
generic.append(short)
generic.memmap_  # TensorDictBase's methods (the storage methods too)
generic.to_tensordict  # the members' class's: not on the generic class  # E: attr-defined reportAttributeAccessIssue

# both: narrow with isinstance (no cost at run time; true for every lazy stack)
stack = lazy_stack([short, long])
assert isinstance(stack, LazyStackedTensorDict)
takes_episode(stack)
takes_stack(stack)
assert_type(stack.obs, Tensor)
assert_type(stack.get("obs", as_padded_tensor=True, padding_value=-1), Tensor)
assert_type(stack.get_nestedtensor("obs"), Tensor)
stack.append(long)
takes_episode(stack.clone())
takes_stack(stack.clone())
stack.to_tensordict  # the members' class's methods too

tds = lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.zeros(4))])
assert isinstance(tds, LazyStackedTensorDict)
assert_type(tds.get("a", as_padded_tensor=True), Tensor)


def plain_mistakes() -> None:
    lazy_stack([short, long]).members  # typed as an Episode here  # E: attr-defined reportAttributeAccessIssue
    generic.get("obs", as_padded_tensor=True, padding_side="top")  # E: call-overload reportCallIssue reportArgumentType
    takes_episode(generic)  # a lazy stack of any class  # E: arg-type reportArgumentType
