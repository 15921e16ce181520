"""Indexing, reshaping and copying operations, compared leaf by leaf with torch.

Each case runs on three kinds of instance of batch size [3, 4]: a TensorDict, a typed
class with a nested typed field, and a lazy stack (of TensorDicts along dim 0). The
expected value of every leaf is the torch function applied to that leaf, whose feature dims
follow the batch dims.
"""

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tensorclass import (
    BatchSizeError,
    KeyNotFoundError,
    LazyStackedTensorDict,
    TensorClass,
    TensorDict,
    lazy_stack,
    set_get_defaults_to_none,
)

B = (3, 4)
KEYS = ["a", "b", ("n", "c")]


class Inner(TensorClass):
    c: torch.Tensor


class Outer(TensorClass):
    a: torch.Tensor
    b: torch.Tensor
    n: Inner


def _leaves() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "a": torch.randn(*B, generator=g),
        "b": torch.randn(*B, 5, generator=g),
        "c": torch.randint(0, 9, (*B, 2), generator=g),
    }


def make(kind: str) -> Any:
    x = _leaves()
    if kind == "typed":
        return Outer(x["a"], x["b"], Inner(x["c"], batch_size=B), batch_size=B)
    td = TensorDict({"a": x["a"], "b": x["b"], "n": {"c": x["c"]}}, B)
    if kind == "lazy":
        return lazy_stack([td[i].clone() for i in range(B[0])], 0)
    return td


KINDS = ["tensordict", "typed", "lazy"]


def check(result: Any, source: Any, op: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Every leaf of ``result`` equals ``op`` applied to the same leaf of ``source``."""
    lazy = isinstance(source, LazyStackedTensorDict)
    assert isinstance(result, source.member_class if lazy else type(source))
    for key in KEYS:
        expected = op(source.get(key))
        got = result.get(key)
        assert got.shape == expected.shape, key
        assert torch.equal(got, expected), key
    assert result.batch_size == op(source.get("a")).shape


def _gather_index() -> torch.Tensor:
    return torch.tensor([[0, 3], [2, 2], [1, 0]])


def _expanded(index: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    extra = x.ndim - index.ndim
    return index.reshape(*index.shape, *(1,) * extra).expand(*index.shape, *x.shape[2:])


def _mask() -> torch.Tensor:
    return torch.tensor([[1, 0, 1, 1], [0, 0, 0, 1], [1, 1, 0, 0]], dtype=torch.bool)


CASES: dict[str, tuple[Callable[[Any], Any], Callable[[torch.Tensor], torch.Tensor]]] = {
    "gather 1": (
        lambda td: td.gather(1, _gather_index()),
        lambda x: torch.gather(x, 1, _expanded(_gather_index(), x)),
    ),
    "gather 0": (
        lambda td: td.gather(0, torch.tensor([[2, 1, 0, 0]])),
        lambda x: torch.gather(x, 0, _expanded(torch.tensor([[2, 1, 0, 0]]), x)),
    ),
    "torch.gather": (
        lambda td: torch.gather(td, -1, _gather_index()),
        lambda x: torch.gather(x, 1, _expanded(_gather_index(), x)),
    ),
    "masked_select": (lambda td: td.masked_select(_mask()), lambda x: x[_mask()]),
    "masked_select rows": (
        lambda td: td.masked_select(torch.tensor([True, False, True])),
        lambda x: x[torch.tensor([True, False, True])],
    ),
    "torch.masked_select": (lambda td: torch.masked_select(td, _mask()), lambda x: x[_mask()]),
    "narrow": (lambda td: td.narrow(1, 1, 2), lambda x: x.narrow(1, 1, 2)),
    "narrow negative": (lambda td: td.narrow(0, -2, 2), lambda x: x.narrow(0, -2, 2)),
    "torch.narrow": (lambda td: torch.narrow(td, -1, 0, 3), lambda x: x.narrow(1, 0, 3)),
    "tile": (lambda td: td.tile((2,)), lambda x: x.repeat(1, 2, *(1,) * (x.ndim - 2))),
    "tile new dim": (
        lambda td: td.tile((2, 1, 3)),
        lambda x: x.repeat(2, 1, 3, *(1,) * (x.ndim - 2)),
    ),
    "torch.tile": (lambda td: torch.tile(td, (2, 1)), lambda x: x.repeat(2, *(1,) * (x.ndim - 1))),
    "repeat_interleave": (
        lambda td: td.repeat_interleave(2, 1),
        lambda x: x.repeat_interleave(2, 1),
    ),
    "repeat_interleave tensor": (
        lambda td: td.repeat_interleave(torch.tensor([1, 0, 2]), dim=0),
        lambda x: x.repeat_interleave(torch.tensor([1, 0, 2]), 0),
    ),
    "repeat_interleave flat": (
        lambda td: td.repeat_interleave(2),
        lambda x: x.reshape(12, *x.shape[2:]).repeat_interleave(2, 0),
    ),
    "movedim": (lambda td: td.movedim(0, 1), lambda x: x.movedim(0, 1)),
    "movedim tuples": (lambda td: td.movedim((0, 1), (1, 0)), lambda x: x.movedim((0, 1), (1, 0))),
    "moveaxis": (lambda td: td.moveaxis(-1, 0), lambda x: x.movedim(1, 0)),
    "torch.movedim": (lambda td: torch.movedim(td, 1, 0), lambda x: x.movedim(1, 0)),
    "swapaxes": (lambda td: td.swapaxes(0, 1), lambda x: x.transpose(0, 1)),
    "swapdims": (lambda td: td.swapdims(1, 0), lambda x: x.transpose(0, 1)),
    "torch.swapaxes": (lambda td: torch.swapaxes(td, 0, -1), lambda x: x.transpose(0, 1)),
    "rot90": (lambda td: td.rot90(), lambda x: x.rot90(1, (0, 1))),
    "rot90 k=2": (lambda td: td.rot90(2), lambda x: x.rot90(2, (0, 1))),
    "rot90 k=3": (lambda td: td.rot90(3), lambda x: x.rot90(3, (0, 1))),
    "rot90 k=-1 dims": (lambda td: td.rot90(-1, (1, 0)), lambda x: x.rot90(-1, (1, 0))),
    "torch.rot90": (lambda td: torch.rot90(td, 1, (0, 1)), lambda x: x.rot90(1, (0, 1))),
    "fliplr": (lambda td: td.fliplr(), lambda x: x.flip(1)),
    "flipud": (lambda td: td.flipud(), lambda x: x.flip(0)),
    "torch.fliplr": (lambda td: torch.fliplr(td), lambda x: x.flip(1)),
    "atleast_1d": (lambda td: td.atleast_1d(), lambda x: x),
    "atleast_2d": (lambda td: td.atleast_2d(), lambda x: x),
    "atleast_3d": (lambda td: td.atleast_3d(), lambda x: x.unsqueeze(2)),
    "torch.atleast_3d": (lambda td: torch.atleast_3d(td), lambda x: x.unsqueeze(2)),
    "atleast_2d of 1-d": (lambda td: td[0].atleast_2d(), lambda x: x[0].unsqueeze(0)),
    "atleast_3d of 1-d": (lambda td: td[0].atleast_3d(), lambda x: x[0].unsqueeze(0).unsqueeze(2)),
    "atleast_3d of 0-d": (lambda td: td[0, 0].atleast_3d(), lambda x: x[0, 0][None, None, None]),
    "broadcast_to": (
        lambda td: td.broadcast_to((2, 3, 4)),
        lambda x: x.expand(2, 3, 4, *x.shape[2:]),
    ),
    "torch.broadcast_to": (
        lambda td: torch.broadcast_to(td, (2, -1, 4)),
        lambda x: x.expand(2, 3, 4, *x.shape[2:]),
    ),
    "expand_as tensor": (
        lambda td: td.expand_as(torch.zeros(2, 3, 4)),
        lambda x: x.expand(2, 3, 4, *x.shape[2:]),
    ),
    "expand_as instance": (
        lambda td: td.expand_as(TensorDict({}, [2, 3, 4])),
        lambda x: x.expand(2, 3, 4, *x.shape[2:]),
    ),
    "pad": (
        lambda td: td.pad([1, 0, 0, 2], value=-1),
        lambda x: F.pad(x, [0, 0] * (x.ndim - 2) + [0, 2, 1, 0], value=-1),
    ),
    "pad crop": (
        lambda td: td.pad([0, -1]),
        lambda x: F.pad(x, [0, 0] * (x.ndim - 1) + [0, -1]),
    ),
    "view size=": (lambda td: td.view(size=(12,)), lambda x: x.reshape(12, *x.shape[2:])),
    "roll dims=None": (
        lambda td: td.roll(5),
        lambda x: x.reshape(12, *x.shape[2:]).roll(5, 0).reshape(x.shape),
    ),
    "roll dims": (lambda td: td.roll((1, -1), (0, 1)), lambda x: x.roll((1, -1), (0, 1))),
    "contiguous canonical": (lambda td: td.contiguous(canonical=True), lambda x: x),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(CASES))
def test_against_torch(case: str, kind: str) -> None:
    method, tensor_op = CASES[case]
    source = make(kind)
    check(method(source), source, tensor_op)


SPLITS: dict[str, tuple[Callable[[Any], Any], Callable[[torch.Tensor], Any]]] = {
    "tensor_split sections": (lambda td: td.tensor_split(3, 1), lambda x: x.tensor_split(3, 1)),
    "tensor_split indices": (
        lambda td: td.tensor_split([1, -1], dim=1),
        lambda x: x.tensor_split([1, 3], 1),
    ),
    "tensor_split decreasing": (
        lambda td: td.tensor_split([3, 1], dim=1),
        lambda x: x.tensor_split([3, 1], 1),
    ),
    "tensor_split tensor": (
        lambda td: td.tensor_split(torch.tensor([2])),
        lambda x: x.tensor_split(torch.tensor([2])),
    ),
    "torch.tensor_split": (
        lambda td: torch.tensor_split(td, 2, dim=0),
        lambda x: x.tensor_split(2, 0),
    ),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(SPLITS))
def test_splits_against_torch(case: str, kind: str) -> None:
    method, tensor_op = SPLITS[case]
    source = make(kind)
    parts = method(source)
    assert len(parts) == len(tensor_op(source.get("a")))
    for index, part in enumerate(parts):
        check(part, source, lambda x, i=index: tensor_op(x)[i])


@pytest.mark.parametrize("kind", KINDS)
def test_views_share_storage_and_lazy_stacks_stay_lazy(kind: str) -> None:
    source = make(kind)
    for result in (source.narrow(1, 1, 2), source.movedim(0, 1), source.rot90(), source.fliplr()):
        if kind == "lazy":
            assert isinstance(result, LazyStackedTensorDict)
    source.narrow(1, 1, 2)["a"]  # a read, not a write
    if kind != "lazy":
        view = source.narrow(1, 1, 2)
        view["b"].zero_()
        assert (source["b"][:, 1:3] == 0).all()


def test_non_tensor_values_follow_the_elements() -> None:
    td = TensorDict({"x": torch.arange(4)}, [4])
    td[0] = {"x": torch.tensor(0), "tag": "a"}
    td.set_at_("tag", "b", 1)
    tags = td["tag"]
    out = td.gather(0, torch.tensor([1, 1, 0]))
    assert out["tag"] == [tags[1], tags[1], tags[0]]
    assert td.repeat_interleave(2)["tag"] == [t for t in tags for _ in range(2)]
    assert td.pad([1, 0])["tag"] == [None, *tags]
    shared = TensorDict({"x": torch.arange(4), "name": "run"}, [4])
    assert shared.tile((2,))["name"] == "run"


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda td: td.gather(1, torch.zeros(3, dtype=torch.long)), BatchSizeError),
        (lambda td: td.masked_select(torch.ones(4, dtype=torch.bool)), BatchSizeError),
        (lambda td: td.masked_select(torch.ones(3)), TypeError),
        (lambda td: td.narrow(1, 3, 2), IndexError),
        (lambda td: td.narrow(2, 0, 1), IndexError),
        (lambda td: td.rot90(1, (0, 0)), ValueError),
        (lambda td: td[0].rot90(), ValueError),
        (lambda td: td[0].fliplr(), ValueError),
        (lambda td: td[0, 0].flipud(), ValueError),
        (lambda td: td.movedim((0, 1), 0), ValueError),
        (lambda td: td.tensor_split(0), ValueError),
        (lambda td: td.pad([1]), ValueError),
        (lambda td: td.pad([0, 0, 0, 0, 1, 1]), ValueError),
        (lambda td: td.repeat_interleave(torch.tensor([1, 2]), 0), ValueError),
        (
            lambda td: td.view(torch.int32, size=(12,)) if False else td.view(12, size=(12,)),
            TypeError,
        ),
    ],
)
def test_bad_arguments_raise(call: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        call(make("tensordict"))


# -- keyword arguments of the shape methods ---------------------------------------------------


@pytest.mark.parametrize("kind", ["tensordict", "typed"])
@pytest.mark.parametrize(
    ("name", "call", "tensor_op"),
    [
        ("flatten", lambda td: td.flatten(inplace=True), lambda x: x.flatten(0, 1)),
        (
            "unflatten",
            lambda td: td.unflatten(1, unflattened_size=(2, 2), inplace=True),
            lambda x: x.unflatten(1, (2, 2)),
        ),
        (
            "repeat",
            lambda td: td.repeat(2, 1, inplace=True),
            lambda x: x.repeat(2, 1, *(1,) * (x.ndim - 2)),
        ),
        ("roll", lambda td: td.roll(1, 0, inplace=True), lambda x: x.roll(1, 0)),
        (
            "pad",
            lambda td: td.pad([0, 1], inplace=True),
            lambda x: F.pad(x, [0, 0] * (x.ndim - 1) + [0, 1]),
        ),
        ("contiguous", lambda td: td.contiguous(inplace=True), lambda x: x),
        (
            "gather",
            lambda td: td.gather(1, _gather_index(), inplace=True),
            lambda x: torch.gather(x, 1, _expanded(_gather_index(), x)),
        ),
        (
            "masked_select",
            lambda td: td.masked_select(torch.tensor([True, False, True]), inplace=True),
            lambda x: x[torch.tensor([True, False, True])],
        ),
        (
            "repeat_interleave",
            lambda td: td.repeat_interleave(2, 1, inplace=True),
            lambda x: x.repeat_interleave(2, 1),
        ),
    ],
)
def test_inplace_shape_keywords(name: str, call: Any, tensor_op: Any, kind: str) -> None:
    source = make(kind)
    before = {key: source.get(key).clone() for key in KEYS}
    nested = source.get("n")
    assert call(source) is source
    for key in KEYS:
        assert torch.equal(source.get(key), tensor_op(before[key])), key
    assert source.batch_size == tensor_op(before["a"]).shape
    assert source.get("n") is nested  # nested instances are changed in place, not replaced
    assert nested.batch_size == source.batch_size


def test_inplace_reshapes_of_a_lazy_stack_are_refused_but_roll_writes_the_members() -> None:
    stack = make("lazy")
    with pytest.raises(NotImplementedError, match="lazy stack"):
        stack.flatten(inplace=True)
    expected = stack.get("b").roll(1, 0)
    members = stack.members
    assert stack.roll(1, 0, inplace=True) is stack
    assert stack.members == members
    assert torch.equal(stack.get("b"), expected)
    assert torch.equal(members[0]["b"], expected[0])


def test_locked_instances_refuse_inplace_reshapes() -> None:
    td = make("tensordict").lock_()
    with pytest.raises(RuntimeError, match="locked"):
        td.flatten(inplace=True)
    assert td.batch_size == B


def test_view_as_a_dtype() -> None:
    td = TensorDict({"x": torch.ones(3, 4)}, [3])
    viewed = td.view(torch.int32)
    assert torch.equal(viewed["x"], td["x"].view(torch.int32))
    assert viewed.batch_size == (3,)
    as_bytes = td.view(torch.uint8, batch_size=[3, 16])
    assert as_bytes.batch_size == (3, 16)
    assert torch.equal(as_bytes["x"], td["x"].view(torch.uint8))


def test_contiguous_canonical_copies_odd_strides_only() -> None:
    odd = torch.zeros(3, 1).as_strided((3, 1), (1, 7))
    assert odd.is_contiguous()
    td = TensorDict({"odd": odd, "plain": torch.zeros(3, 2)}, [3])
    canonical = td.contiguous(canonical=True)
    assert canonical["odd"].stride() == (1, 1)
    assert canonical["plain"] is td["plain"]
    assert td.contiguous()["odd"] is odd


@pytest.mark.parametrize("kind", KINDS)
def test_where_with_pad_and_out(kind: str) -> None:
    source = make(kind)
    cond = _mask()
    other = TensorDict({"a": torch.zeros(B), "extra": torch.ones(B)}, B)
    result = TensorDict(dict(source.to_dict()), B).where(cond, other, pad=-1)
    assert torch.equal(result["a"], torch.where(cond, source.get("a"), 0.0))
    assert torch.equal(result["b"], torch.where(cond[..., None], source.get("b"), -1.0))
    assert torch.equal(result["extra"], torch.where(cond, -1.0, 1.0))
    out = source.clone()
    assert source.where(cond, 0.0, out=out) is out
    assert torch.equal(out.get("b"), torch.where(cond[..., None], source.get("b"), 0.0))
    assert torch.equal(
        torch.where(cond, 1.0, source).get("a"), torch.where(cond, 1.0, source.get("a"))
    )


# -- key by key at an index --------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_get_at_and_set_at_(kind: str) -> None:
    source = make(kind)
    assert torch.equal(source.get_at("b", (1, slice(0, 2))), source.get("b")[1, :2])
    assert torch.equal(source.get_at(("n", "c"), 2), source.get(("n", "c"))[2])
    assert source.get_at("missing", 0, default="d") == "d"
    assert source.get_at("missing", 0) is None  # get's default, as tensordict's
    with pytest.warns(DeprecationWarning), set_get_defaults_to_none(False):
        with pytest.raises(KeyNotFoundError):
            source.get_at("missing", 0)
    expected = source.get("b").clone()
    expected[:, 1] = 7.0
    assert source.set_at_("b", 7.0, (slice(None), 1)) is source
    assert torch.equal(source.get("b"), expected)
    c = source.get(("n", "c")).clone()
    c[0] = torch.arange(8).reshape(4, 2)
    source.set_at_(("n", "c"), torch.arange(8).reshape(4, 2), 0)
    assert torch.equal(source.get(("n", "c")), c)
    with pytest.raises(KeyNotFoundError):
        source.set_at_("missing", 0.0, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_update_at_copy_at_and_copy_(kind: str) -> None:
    source = make(kind)
    b = source.get("b").clone()
    b[1:] = 0.5
    source.update_at_({"b": torch.full((2, 4, 5), 0.5)}, slice(1, None))
    assert torch.equal(source.get("b"), b)
    part = source[0].clone().apply(torch.zeros_like)
    a = source.get("a").clone()
    a[0] = 0
    assert source.copy_at_(part, 0) is source
    assert torch.equal(source.get("a"), a)
    assert torch.equal(source.get(("n", "c"))[0], torch.zeros(4, 2, dtype=torch.long))
    before = source.get("a").clone()
    with pytest.raises(KeyNotFoundError):
        source.update_at_({"a": torch.ones(4), "missing": torch.ones(4)}, 2)
    assert torch.equal(source.get("a"), before)  # nothing written
    ones = source.clone().apply(torch.ones_like)
    assert source.copy_(ones) is source
    assert all((source.get(key) == 1).all() for key in KEYS)


def test_update_at_clone_and_keys_to_update() -> None:
    td = make("tensordict")
    value = torch.full((4, 5), 3.0)
    td.update_at_({"b": value, "a": torch.zeros(4)}, 0, clone=True, keys_to_update=["b"])
    assert torch.equal(td["b"][0], value)
    assert not (td["a"][0] == 0).all()


def test_writes_at_an_index_reach_the_members_of_a_lazy_stack() -> None:
    stack = make("lazy")
    stack.set_at_("a", 0.0, (slice(None), 0))
    assert all(member["a"][0] == 0 for member in stack.members)


@pytest.mark.parametrize("kind", KINDS)
def test_copy_is_shallow(kind: str) -> None:
    source = make(kind)
    copy = source.copy()
    assert copy is not source and type(copy) is type(source)
    if kind != "lazy":
        assert copy.get("b") is source.get("b")  # the tensors are shared
        assert copy.get("n") is not source.get("n")  # nested instances are new
    copy.set("a", torch.zeros(B))
    copy.set(("n", "c"), torch.zeros(*B, 2, dtype=torch.long))
    assert not (source.get("a") == 0).all()
    assert not (source.get(("n", "c")) == 0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_get_item_shape(kind: str) -> None:
    source = make(kind)
    assert source.get_item_shape("b") == (*B, 5)
    assert source.get_item_shape(("n", "c")) == (*B, 2)
    assert source.get_item_shape("n") == B
    with pytest.raises(KeyNotFoundError):
        source.get_item_shape("missing")


# -- autograd, memory, devices --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tensordict", "typed"])
def test_data_grad_zero_grad_and_backward(kind: str) -> None:
    source = make(kind)
    source.get("b").requires_grad_()
    assert source.grad is None
    loss = TensorDict({"loss": (source.get("b") * 3).sum(), "count": torch.tensor(2)}, [])
    loss.backward()
    grad = source.grad
    assert type(grad) is type(source) and torch.equal(grad.get("b"), torch.full((*B, 5), 3.0))
    assert "a" not in grad.keys()  # no gradient: left out
    data = source.data
    assert not data.get("b").requires_grad
    assert data.get("b").data_ptr() == source.get("b").data_ptr()
    source.zero_grad(set_to_none=False)
    assert (source.get("b").grad == 0).all()
    source.zero_grad()
    assert source.get("b").grad is None


def test_backward_with_a_gradient_instance() -> None:
    w = torch.ones(3, requires_grad=True)
    out = TensorDict({"y": w * 2}, [3])
    with pytest.raises(RuntimeError, match="one element"):
        out.backward()
    out.backward(TensorDict({"y": torch.tensor([1.0, 2.0, 3.0])}, [3]))
    assert w.grad is not None and w.grad.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        TensorDict({"y": torch.ones(2)}, [2]).backward()


@pytest.mark.parametrize("kind", KINDS)
def test_data_ptr_and_questions(kind: str) -> None:
    source = make(kind)
    ptrs = source.data_ptr()
    assert isinstance(ptrs, TensorDict) and ptrs.batch_size == ()
    if kind != "lazy":
        assert ptrs["b"].item() == source.get("b").data_ptr()
        storage = source.data_ptr(storage=True)
        assert storage["n", "c"].item() == source.get(("n", "c")).untyped_storage().data_ptr()
    assert not source.is_floating_point()  # ("n", "c") holds integers
    assert source.exclude("n").is_floating_point()
    assert not source.is_cpu and not source.is_cuda and not source.is_meta  # no device
    on_cpu = source.to("cpu")
    assert on_cpu.is_cpu and not on_cpu.is_cuda


@pytest.mark.parametrize("kind", KINDS)
def test_pin_memory_without_an_accelerator_is_a_no_op(kind: str) -> None:
    if torch.cuda.is_available():
        pytest.skip("pins for real on this machine")
    source = make(kind)
    assert source.pin_memory() is source
    assert source.pin_memory(num_threads=2, inplace=True) is source
    assert source.pin_memory_() is source


def test_pin_memory_pins_every_tensor_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorclass.engine.leafwise import tensor_state

    pinned: list[int] = []

    def fake_pin(t: torch.Tensor) -> torch.Tensor:
        pinned.append(t.data_ptr())
        return t.clone()

    monkeypatch.setattr(tensor_state, "pinning_available", lambda: True)
    monkeypatch.setattr(torch.Tensor, "pin_memory", fake_pin)
    td = make("tensordict")
    out = td.pin_memory(num_threads=2)
    assert sorted(pinned) == sorted(td.get(key).data_ptr() for key in KEYS)
    assert out.get("b") is not td.get("b") and torch.equal(out.get("b"), td.get("b"))
    nested = td.get("n")
    assert td.pin_memory(inplace=True) is td and td.get("n") is nested


def test_dataloader_pins_a_tensor_class_batch() -> None:
    from torch.utils.data import DataLoader
    from torch.utils.data._utils.pin_memory import pin_memory

    batch = make("typed")
    assert pin_memory(batch) is batch or isinstance(pin_memory(batch), Outer)
    data = TensorDict({"x": torch.arange(8.0)}, [8])
    with pytest.warns(UserWarning) if not torch.cuda.is_available() else _no_warning():
        loader = DataLoader(data, batch_size=4, pin_memory=True, collate_fn=torch.stack)
        batches = list(loader)
    assert [type(b) for b in batches] == [TensorDict, TensorDict]
    assert torch.equal(batches[1]["x"], torch.arange(4.0, 8.0))


class _no_warning:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def test_record_stream_marks_every_tensor(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, object]] = []
    monkeypatch.setattr(
        torch.Tensor, "record_stream", lambda t, stream: seen.append((t.data_ptr(), stream))
    )
    td = make("typed")
    stream = object()
    assert td.record_stream(stream) is td
    assert sorted(seen, key=lambda s: s[0]) == sorted(
        ((td.get(key).data_ptr(), stream) for key in KEYS), key=lambda s: s[0]
    )


def test_a_field_may_be_named_data() -> None:
    class Sample(TensorClass):
        data: torch.Tensor

    sample = Sample(torch.zeros(2), batch_size=[2])
    assert torch.equal(sample.data, torch.zeros(2))
    assert torch.equal(sample[0].data, torch.tensor(0.0))


def test_to_padded_tensor_pads_nested_tensor_leaves() -> None:
    parts = [torch.ones(2, 3), torch.full((4, 3), 2.0)]
    nested = torch.nested.nested_tensor(parts, layout=torch.jagged)
    td = TensorDict({"x": nested, "y": torch.zeros(2)}, [2])
    padded = td.to_padded_tensor(padding=-1.0, mask_key="mask")
    assert torch.equal(padded["x"], torch.nested.to_padded_tensor(nested, -1.0))
    assert padded["y"] is td["y"]
    assert padded["mask"].tolist() == [[True, True, False, False], [True] * 4]
    with pytest.raises(ValueError, match="nested"):
        TensorDict({"y": torch.zeros(2)}, [2]).to_padded_tensor(mask_key="mask")
