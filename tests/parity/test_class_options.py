"""Class options spelled as tensordict 0.15.3 spells them: ``TensorClass["frozen"]``,
``TensorClass["tensor_only"]``, ``TensorClass["shadow"]``, ``TensorClass["nocast"]``,
``TensorClass["autocast"]``, their ``@tensorclass(...)`` keywords and ``from_dataclass``'s, and
``TypedTensorDict["frozen"]``/``["shadow"]``.

In tensordict, ``TensorClass[...]`` is a base class to derive from (one per set of options,
named ``TensorClass_<options>``); ``"frozen"`` instances refuse field assignment and are
locked; ``"tensor_only"`` refuses a field that is not a tensor, a tensor subtype, a nested
tensor class or ``None`` with a ``TypeError`` at definition, and converts numbers and lists;
``"shadow"`` lets a field take the name of a method (``get``, ``data``), which the field then
hides on that class (without it the name is refused at definition). ``"nocast"`` keeps a
number written to a ``torch.Tensor`` field as it is (``x.x == 1``, an ``int``); ``"autocast"``
converts a value to its field's annotation (``int(2.7) == 2`` for an ``int`` field,
``str(3)`` for a ``str`` one); the two exclude each other and ``"tensor_only"``.
"""

import dataclasses
from typing import Optional

import pytest
import torch

from tensorclass import TensorClass, TensorDict, TypedTensorDict, from_dataclass, tensorclass
from tensorclass.errors import FieldTypeError, FrozenInstanceError, SchemaError


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


def test_unknown_and_exclusive_options_are_refused() -> None:
    with pytest.raises(TypeError, match="exclude each other"):
        TensorClass["autocast", "nocast"]
    with pytest.raises(TypeError, match="exclude each other"):
        TensorClass["nocast", "tensor_only"]
    with pytest.raises(TypeError, match="exclude each other"):
        tensorclass(autocast=True, tensor_only=True)
    with pytest.raises(TypeError, match="'autocast', 'frozen', 'nocast', 'shadow', 'tensor_only'"):
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


class NoCast(TensorClass["nocast"]):
    x: torch.Tensor
    n: int


def test_nocast_keeps_numbers_in_tensor_fields() -> None:
    kept = NoCast(x=1, n=2.5)
    assert type(kept.x) is int and kept.x == 1 and kept.n == 2.5
    kept.x = 3.5
    assert type(kept.x) is float
    batch = NoCast(x=torch.zeros(2, 3), n=1, batch_size=[2])
    assert isinstance(batch.x, torch.Tensor) and batch[0].x.shape == (3,)
    assert torch.stack([batch, batch]).x.shape == (2, 2, 3)
    batch.x = 7  # a number stays one value, shared along the batch
    assert batch[1].x == 7 and type(batch[1].x) is int
    assert NoCast(x=[1, 2], n=0, batch_size=[2]).x.tolist() == [1, 2]  # lists still stack


def test_without_nocast_the_annotation_converts() -> None:
    class Cast(TensorClass):
        x: torch.Tensor

    assert isinstance(Cast(x=1).x, torch.Tensor)


def test_nocast_decorator() -> None:
    @tensorclass(nocast=True)
    class Decorated:
        x: torch.Tensor

    assert type(Decorated(x=2).x) is int


class AutoCast(TensorClass["autocast"]):
    x: torch.Tensor
    n: int
    text: str
    ratio: float
    maybe: Optional[int] = None  # noqa: UP045  # tensordict's spelling
    counts: list[int] | None = None


def test_autocast_converts_to_the_annotation() -> None:
    made = AutoCast(x=1, n=2.7, text=3, ratio=2, maybe=4.9, counts=(1, 2))
    assert isinstance(made.x, torch.Tensor) and made.x.item() == 1
    assert type(made.n) is int and made.n == 2
    assert made.text == "3" and type(made.ratio) is float and made.ratio == 2.0
    assert made.maybe == 4 and made.counts == [1, 2]
    made.n = 3.9
    assert made.n == 3
    made.n = torch.tensor(5.2)
    assert type(made.n) is int and made.n == 5
    assert AutoCast(x=1, n=1, text="a", ratio=1.0).maybe is None


def test_autocast_refuses_what_does_not_convert() -> None:
    with pytest.raises(FieldTypeError, match="AutoCast.n is an autocast int field"):
        AutoCast(x=1, n="x", text="a", ratio=1.0)
    made = AutoCast(x=1, n=1, text="a", ratio=1.0)
    with pytest.raises(FieldTypeError):
        made.ratio = "fast"
    assert made.ratio == 1.0  # nothing half-written


def test_without_autocast_a_text_field_refuses_a_number() -> None:
    class Plain(TensorClass):
        text: str

    with pytest.raises(FieldTypeError, match="str field"):
        Plain(text=3)


@dataclasses.dataclass
class Record:
    x: torch.Tensor
    n: int


def test_from_dataclass_takes_the_casting_options() -> None:
    kept = from_dataclass(Record(x=1, n=2), nocast=True)
    assert type(kept.x) is int
    cast_class = from_dataclass(Record, autocast=True)
    assert cast_class is from_dataclass(Record, autocast=True)
    assert cast_class is not from_dataclass(Record)
    assert cast_class(x=1, n=2.9).n == 2
    with pytest.raises(TypeError, match="exclude each other"):
        from_dataclass(Record, autocast=True, nocast=True)


def test_casting_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")

    class TheirNoCast(tensordict.TensorClass["nocast"]):
        x: torch.Tensor

    class TheirAutoCast(tensordict.TensorClass["autocast"]):
        n: int
        text: str

    assert type(TheirNoCast(x=1).x) is int and type(NoCast(x=1, n=0).x) is int
    theirs = TheirAutoCast(n=2.7, text=3)
    ours = AutoCast(x=0, n=2.7, text=3, ratio=0.0)
    assert (theirs.n, theirs.text) == (ours.n, ours.text) == (2, "3")


def test_typed_tensordict_options() -> None:
    assert TypedTensorDict["frozen"].__name__ == "TypedTensorDict_frozen"
    assert TypedTensorDict["shadow", "frozen"] is TypedTensorDict["frozen", "shadow"]

    class State(TypedTensorDict["shadow"]):
        get: torch.Tensor

    state = State(get=torch.zeros(2), batch_size=[2])
    state["extra"] = torch.ones(2)  # keys besides the fields, as any TypedTensorDict
    assert isinstance(state.get, torch.Tensor) and sorted(state.keys()) == ["extra", "get"]
    assert torch.stack([state, state]).get.shape == (2, 2)

    class Locked(TypedTensorDict["frozen"]):
        a: torch.Tensor

    locked = Locked(a=torch.zeros(2), batch_size=[2])
    assert locked.is_locked
    with pytest.raises(FrozenInstanceError):
        locked.a = torch.ones(2)
    with pytest.raises(TypeError, match="'frozen', 'shadow'"):
        TypedTensorDict["nocast"]
    with pytest.raises(TypeError, match="only TypedTensorDict"):
        State["frozen"]


def test_typed_tensordict_options_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    assert tensordict.TypedTensorDict["frozen"].__name__ == TypedTensorDict["frozen"].__name__

    class Theirs(tensordict.TypedTensorDict["frozen"]):
        a: torch.Tensor

    assert Theirs(a=torch.zeros(2), batch_size=[2]).is_locked
