"""Class options spelled as tensordict 0.15.3 spells them: ``TensorClass["frozen"]``,
``TensorClass["tensor_only"]``, ``TensorClass["shadow"]`` and their ``@tensorclass(...)``
keywords.

In tensordict, ``TensorClass[...]`` is a base class to derive from (one per set of options,
named ``TensorClass_<options>``); ``"frozen"`` instances refuse field assignment and are
locked; ``"tensor_only"`` refuses a field that is not a tensor, a tensor subtype, a nested
tensor class or ``None`` with a ``TypeError`` at definition, and converts numbers and lists;
``"shadow"`` lets a field take the name of a method (``get``, ``data``), which the field then
hides on that class (without it the name is refused at definition).
"""

from typing import Optional

import pytest
import torch

from tensorclass import TensorClass, TensorDict, tensorclass
from tensorclass.errors import FrozenInstanceError, SchemaError


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
    with pytest.raises(TypeError, match="'frozen', 'shadow', 'tensor_only'"):
        TensorClass["bogus"]
    with pytest.raises(TypeError, match="only TensorClass"):
        TensorDict["frozen"]


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    assert tensordict.TensorClass["frozen"].__name__ == TensorClass["frozen"].__name__
    with pytest.raises(TypeError):

        class Theirs(tensordict.TensorClass["tensor_only"]):
            label: str


class Shadowing(TensorClass["shadow"]):
    get: torch.Tensor
    keys: torch.Tensor
    data: torch.Tensor


def _shadowing() -> Shadowing:
    return Shadowing(
        get=torch.zeros(3, 2), keys=torch.arange(3), data=torch.ones(3), batch_size=[3]
    )


def test_shadow_fields_hide_methods() -> None:
    s = _shadowing()
    assert isinstance(s.get, torch.Tensor) and s.get.shape == (3, 2)
    assert s.keys.tolist() == [0, 1, 2] and s.data.tolist() == [1.0, 1.0, 1.0]
    s.get = torch.full((3, 2), 5.0)
    assert s.get[0, 0] == 5
    assert Shadowing.__name__ == "Shadowing" and TensorClass["shadow"].__name__ == (
        "TensorClass_shadow"
    )


def test_shadow_fields_keep_engine_operations_working() -> None:
    s = _shadowing()
    assert s[1].keys.item() == 1 and s[1].get.shape == (2,)
    stacked = torch.stack([s, s])
    assert stacked.batch_size == (2, 3) and stacked.get.shape == (2, 3, 2)
    assert torch.cat([s, s]).keys.tolist() == [0, 1, 2, 0, 1, 2]
    assert (s.clone().get == s.get).all() and s.clone().get is not s.get
    assert s.apply(lambda x: x + 1).keys.tolist() == [1, 2, 3]
    assert sorted(s.to_dict()) == ["data", "get", "keys"]
    copy = s.clone()
    copy[0] = s[2]
    assert copy.keys.tolist() == [2, 1, 2]
    assert "get" in repr(s)


def test_shadow_decorator_and_inheritance() -> None:
    @tensorclass(shadow=True)
    class Decorated:
        set: torch.Tensor

    assert Decorated(set=torch.ones(2), batch_size=[2]).set.tolist() == [1.0, 1.0]

    class Child(Shadowing):  # the option is inherited
        update: torch.Tensor

    child = Child(
        get=torch.zeros(1), keys=torch.zeros(1), data=torch.zeros(1), update=torch.ones(1)
    )
    assert child.update.item() == 1


def test_without_shadow_method_names_are_refused() -> None:
    with pytest.raises(SchemaError, match=r"'get' is reserved.*TensorClass\['shadow'\]"):

        class Plain(TensorClass):
            get: torch.Tensor


@pytest.mark.parametrize("name", ["batch_size", "device", "names", "shape", "ndim", "fields"])
def test_shadow_still_refuses_the_engine_names(name: str) -> None:
    with pytest.raises(SchemaError, match="even with shadow=True"):
        type(TensorClass)("Bad", (TensorClass["shadow"],), {"__annotations__": {name: int}})


def test_shadow_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")

    class Theirs(tensordict.TensorClass["shadow"]):
        get: torch.Tensor

    assert isinstance(Theirs(get=torch.zeros(2), batch_size=[2]).get, torch.Tensor)
    with pytest.raises(AttributeError, match="shadow"):

        class TheirsPlain(tensordict.TensorClass):
            get: torch.Tensor
