"""Class options spelled as tensordict 0.15.3 spells them: ``TensorClass["frozen"]``,
``TensorClass["tensor_only"]`` and ``@tensorclass(tensor_only=True)``.

In tensordict, ``TensorClass[...]`` is a base class to derive from (one per set of options,
named ``TensorClass_<options>``); ``"frozen"`` instances refuse field assignment and are
locked; ``"tensor_only"`` refuses a field that is not a tensor, a tensor subtype, a nested
tensor class or ``None`` with a ``TypeError`` at definition, and converts numbers and lists.
"""

from typing import Optional

import pytest
import torch

from tensorclass import TensorClass, TensorDict, tensorclass
from tensorclass.errors import FrozenInstanceError


class Inner(TensorClass):
    x: torch.Tensor


def test_frozen_base() -> None:
    base = TensorClass["frozen"]
    assert base is TensorClass["frozen"] and base.__name__ == "TensorClass_frozen"

    class Frozen(TensorClass["frozen"]):
        a: torch.Tensor

    class Child(Frozen):
        b: torch.Tensor

    frozen = Frozen(a=torch.zeros(2), batch_size=[2])
    assert frozen.is_locked and issubclass(Frozen, TensorClass)
    with pytest.raises(FrozenInstanceError):
        frozen.a = torch.ones(2)
    assert Child(a=torch.zeros(2), b=torch.ones(2), batch_size=[2]).is_locked
    assert torch.stack([frozen, frozen]).batch_size == (2, 2)


def test_tensor_only_base() -> None:
    class Only(TensorClass["tensor_only"]):
        a: torch.Tensor
        maybe: Optional[torch.Tensor] = None  # noqa: UP045  # tensordict's spelling
        inner: Inner | None = None

    assert Only(a=[1, 2], batch_size=[2]).a.tolist() == [1, 2]
    assert isinstance(Only(a=3).a, torch.Tensor)
    with pytest.raises(TypeError, match="'label' is not"):

        class Bad(TensorClass["tensor_only"]):
            a: torch.Tensor
            label: str

    with pytest.raises(TypeError, match="'n' is not"):

        class BadChild(Only):  # the option is inherited
            n: int = 0


def test_tensor_only_decorator() -> None:
    @tensorclass(tensor_only=True)
    class Decorated:
        x: torch.Tensor

    assert isinstance(Decorated(x=1.5).x, torch.Tensor)
    with pytest.raises(TypeError, match="tensor_only"):

        @tensorclass(tensor_only=True)
        class Refused:
            x: int


def test_options_combine_in_any_order() -> None:
    both = TensorClass["frozen", "tensor_only"]
    assert both is TensorClass["tensor_only", "frozen"]
    assert both.__name__ == "TensorClass_frozen_tensor_only"


def test_casting_options_are_refused_with_the_reason() -> None:
    for option in ("autocast", "nocast"):
        with pytest.raises(TypeError, match="annotation decides"):
            TensorClass[option]
    with pytest.raises(TypeError, match="may not hide"):
        TensorClass["shadow"]
    with pytest.raises(TypeError, match="'frozen', 'tensor_only'"):
        TensorClass["bogus"]
    with pytest.raises(TypeError, match="only TensorClass"):
        TensorDict["frozen"]


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    assert tensordict.TensorClass["frozen"].__name__ == TensorClass["frozen"].__name__
    with pytest.raises(TypeError):

        class Theirs(tensordict.TensorClass["tensor_only"]):
            label: str
