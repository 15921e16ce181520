"""``from_dataclass`` with every class option, as tensordict 0.15.3 takes them:
``from_dataclass(obj, *, dest_cls, auto_batch_size, batch_dims, batch_size, frozen, autocast,
nocast, inplace, shadow, tensor_only, device)``.

What tensordict does, stated here as literal expectations (and checked side by side when it
is installed):

- ``shadow=True`` lets a dataclass field take a method's name (``get``); the field hides the
  method. Without it, such a field is refused when the class is made.
- ``tensor_only=True`` refuses a dataclass with a field that is not a tensor (a ``TypeError``,
  for a type and for an instance); with tensor fields only, instances read as usual.
- ``frozen=True``: assigning a field raises ``FrozenInstanceError``.
- ``dest_cls=`` builds that class; the class options do not change it.
- ``inplace`` is not used for an instance.

Deliberate differences (docs/migrating.md): ``autocast``/``nocast``/``tensor_only`` given
together raise the ``TypeError`` that ``@tensorclass`` raises (tensordict 0.15.3 warns that it
will from 0.17 and goes on); ``inplace=True`` for a dataclass type is refused (a tensor class
has its own metaclass and storage, so the dataclass cannot become one in place); the class
made for a dataclass is made once per set of options.
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest
import torch

from tensorclass import TensorClass, from_dataclass, is_tensorclass
from tensorclass.errors import FrozenInstanceError, SchemaError


@dataclasses.dataclass
class WithGet:
    obs: torch.Tensor
    get: torch.Tensor


@dataclasses.dataclass
class Mixed:
    obs: torch.Tensor
    n: int = 0


@dataclasses.dataclass
class Tensors:
    obs: torch.Tensor
    t: torch.Tensor


@dataclasses.dataclass
class Outer:
    inner: WithGet
    x: torch.Tensor


def test_shadow_lets_a_field_take_a_method_name() -> None:
    with pytest.raises(SchemaError, match="shadow"):
        from_dataclass(WithGet)
    made = from_dataclass(WithGet, shadow=True)
    assert made.__name__ == "WithGet_tc" and is_tensorclass(made)
    x = from_dataclass(WithGet(torch.zeros(2), torch.ones(2)), shadow=True, batch_size=[2])
    assert type(x) is made
    assert x.get.tolist() == [1.0, 1.0]  # the field, not the method
    assert x.clone().get.tolist() == [1.0, 1.0]


def test_shadow_reaches_nested_dataclasses() -> None:
    made = from_dataclass(Outer, shadow=True)
    outer = Outer(WithGet(torch.zeros(2), torch.ones(2)), torch.zeros(2))
    x = from_dataclass(outer, shadow=True, batch_size=[2])
    assert type(x) is made
    assert isinstance(x.inner, TensorClass) and x.inner.get.tolist() == [1.0, 1.0]


def test_tensor_only_refuses_a_field_that_is_not_a_tensor() -> None:
    with pytest.raises(TypeError, match="'n' is not"):
        from_dataclass(Mixed, tensor_only=True)
    with pytest.raises(TypeError, match="'n' is not"):
        from_dataclass(Mixed(torch.zeros(2), 3), tensor_only=True, batch_size=[2])


def test_tensor_only_with_tensor_fields() -> None:
    made = from_dataclass(Tensors, tensor_only=True)
    assert made is not from_dataclass(Tensors)
    x = from_dataclass(Tensors(torch.zeros(2), torch.ones(2)), tensor_only=True, batch_size=[2])
    assert type(x) is made and x.t.tolist() == [1.0, 1.0]
    assert isinstance(made(obs=[1.0, 2.0], t=[3.0, 4.0], batch_size=[2]).obs, torch.Tensor)


def test_frozen_and_dest_cls() -> None:
    x = from_dataclass(Mixed(torch.zeros(2), 3), frozen=True, batch_size=[2])
    with pytest.raises(FrozenInstanceError):
        x.obs = torch.ones(2)
    target = from_dataclass(Tensors)
    built = from_dataclass(Tensors(torch.zeros(2), torch.ones(2)), dest_cls=target, shadow=True)
    assert type(built) is target


def test_inplace_is_not_used_for_an_instance() -> None:
    x = from_dataclass(Mixed(torch.zeros(2), 3), inplace=True, batch_size=[2])
    assert type(x).__name__ == "Mixed_tc" and x.n == 3


def test_deliberate_differences() -> None:
    with pytest.raises(TypeError, match="exclude each other"):
        from_dataclass(Tensors, tensor_only=True, autocast=True)
    with pytest.raises(TypeError, match="exclude each other"):
        from_dataclass(Tensors(torch.zeros(2), torch.ones(2)), autocast=True, nocast=True)
    with pytest.raises(TypeError, match="in place"):
        from_dataclass(Tensors, inplace=True)
    assert not is_tensorclass(Tensors)  # nothing changed
    assert from_dataclass(Tensors, shadow=True) is from_dataclass(Tensors, shadow=True)


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    theirs = tensordict.from_dataclass
    with pytest.raises(AttributeError, match="shadow=True"):
        theirs(WithGet)
    mine = from_dataclass(WithGet(torch.zeros(2), torch.ones(2)), shadow=True, batch_size=[2])
    other = theirs(WithGet(torch.zeros(2), torch.ones(2)), shadow=True, batch_size=[2])
    assert type(other).__name__ == type(mine).__name__ == "WithGet_tc"
    assert other.get.tolist() == mine.get.tolist()
    with pytest.raises(TypeError):
        theirs(Mixed, tensor_only=True)
    with pytest.raises(TypeError):  # an instance: tensor_only with nocast is refused there too
        theirs(Tensors(torch.zeros(2), torch.ones(2)), tensor_only=True, nocast=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning, match="0.17"):  # a type: warned, not refused
            theirs(Tensors, tensor_only=True, autocast=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # its note on int fields from 0.17
        frozen = theirs(Mixed(torch.zeros(2), 3), frozen=True, batch_size=[2])
        with pytest.raises(dataclasses.FrozenInstanceError):
            frozen.obs = torch.ones(2)
        assert type(theirs(Mixed(torch.zeros(2), 3), inplace=True)).__name__ == "Mixed_tc"
