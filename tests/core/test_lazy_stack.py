"""Lazy stacks: members kept, keys stacked on read, writes reaching the members."""

import pickle
from typing import Any

import pytest
import torch
import torch.utils._pytree as pytree
from torch import nn

import tensorclass
from tensorclass import (
    BatchSizeError,
    KeyNotFoundError,
    LazyStackedTensorDict,
    LockedError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)


class Inner(TensorClass):
    x: torch.Tensor


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor
    inner: Inner
    mask: torch.Tensor | None = None
    name: str = "b"


def batch(i: int) -> Batch:
    return Batch(
        torch.full((4, 2), float(i)),
        torch.arange(4) + 10 * i,
        Inner(torch.full((4, 3), float(i)), batch_size=[4]),
        batch_size=[4],
    )


def tds(count: int = 3) -> list[TensorDict]:
    return [
        TensorDict({"a": torch.arange(4.0) + 10 * i, "n": {"x": torch.full((4, 2), float(i))}}, [4])
        for i in range(count)
    ]


def test_seed_002_lazy_evaluation() -> None:
    tensordicts = [
        TensorDict({"a": torch.rand(10), "b": torch.rand(10, 100, 100)}, [10]) for _ in range(3)
    ]
    stacked = lazy_stack(tensordicts, 0)  # no stacking happens here
    stacked_a = stacked["a"]  # only "a" is stacked
    assert stacked_a.shape == (3, 10)
    stacked["a"] = torch.zeros_like(stacked["a"])
    assert (tensordicts[0]["a"] == 0).all()
    dense = stacked.contiguous()
    assert type(dense) is TensorDict and dense["b"].shape == (3, 10, 100, 100)


def test_reading_a_key_stacks_only_that_key(monkeypatch: pytest.MonkeyPatch) -> None:
    members = tds()
    members[1]["b"] = torch.zeros(4, 7)  # "b" cannot be stacked: it is read from members only
    members[0]["b"] = members[2]["b"] = torch.zeros(4, 5)
    stack = lazy_stack(members, 0)
    stacked: list[list[tuple[int, ...]]] = []
    real = torch.stack

    def spy(tensors: list[torch.Tensor], dim: int = 0) -> torch.Tensor:
        stacked.append([tuple(t.shape) for t in tensors])
        return real(tensors, dim)

    monkeypatch.setattr(torch, "stack", spy)
    assert stack["a"].shape == (3, 4)
    assert stacked == [[(4,)] * 3]  # one stack of the three "a" leaves, nothing else
    assert stack[1]["b"].shape == (4, 7)


def test_reading_stacks_one_key_and_shapes() -> None:
    members = tds()
    stack = lazy_stack(members, 1)
    assert stack.batch_size == (4, 3) and stack.stack_dim == 1
    assert torch.equal(stack["a"], torch.stack([m["a"] for m in members], 1))
    assert torch.equal(stack["n", "x"], torch.stack([m["n", "x"] for m in members], 1))
    assert isinstance(stack["n"], LazyStackedTensorDict)
    assert stack.members[0] is members[0] and stack.member_class is TensorDict
    assert isinstance(stack, TensorDict) and len(stack) == 4


def test_indexing_the_stack_dim_returns_the_member() -> None:
    members = tds()
    stack = lazy_stack(members, 0)
    assert stack[1] is members[1] and stack[-1] is members[2]
    part = stack[1:]
    assert isinstance(part, LazyStackedTensorDict) and part.members == tuple(members[1:])
    assert lazy_stack(members, 1)[:, 2] is members[2]
    picked = stack[torch.tensor([2, 0])]
    assert picked.members == (members[2], members[0])
    masked = stack[torch.tensor([True, False, True])]
    assert masked.members == (members[0], members[2])
    inner = stack[:, 1:3]  # indexing other dims indexes every member, lazily
    assert isinstance(inner, LazyStackedTensorDict) and inner.batch_size == (3, 2)
    inner.set_("a", torch.zeros(3, 2))  # the members' views: writes reach the originals
    assert members[1]["a"].tolist() == [10.0, 0.0, 0.0, 13.0]
    with pytest.raises(IndexError, match="out of range for the stack dim"):
        stack[5]


def test_indexing_matches_dense() -> None:
    stack = lazy_stack(tds(), 1)
    dense = stack.contiguous()
    for index in [
        0,
        (slice(None), 1),
        (1, slice(0, 2)),
        (None, 2),
        torch.tensor([3, 0]),
        (..., 0),
        (slice(None, None, 2), None, 1),
    ]:
        assert torch.equal(stack[index]["a"], dense[index]["a"]), index


def test_writes_reach_the_members() -> None:
    members = tds()
    stack = lazy_stack(members, 0)
    stack["new"] = torch.ones(3, 4, 5)
    assert members[2]["new"].shape == (4, 5)
    stack["n", "y"] = torch.zeros(3, 4)
    assert members[0]["n", "y"].shape == (4,)
    stack.set_("a", torch.full((3, 4), 2.0))
    assert members[1]["a"].tolist() == [2.0] * 4
    stack.set("a", 7.0, inplace=True)
    assert members[0]["a"].tolist() == [7.0] * 4
    stack.update({"a": torch.ones(3, 4), ("n", "x"): torch.zeros(3, 4, 2)})
    assert members[2]["a"].tolist() == [1.0] * 4 and members[2]["n", "x"].sum() == 0
    stack.update_(TensorDict({"a": torch.arange(12.0).reshape(3, 4)}, [3, 4]))
    assert members[2]["a"].tolist() == [8.0, 9.0, 10.0, 11.0]
    del stack["new"]
    assert "new" not in members[0]
    stack.rename_key_("a", "b")
    assert "b" in members[1] and "a" not in members[1]


def test_index_writes_reach_the_members() -> None:
    members = tds()
    stack = lazy_stack(members, 1)
    stack[0] = TensorDict({"a": torch.full((3,), -1.0), "n": {"x": torch.ones(3, 2)}}, [3])
    assert [m["a"][0].item() for m in members] == [-1.0] * 3
    stack[:, 2] = 5.0
    assert members[2]["a"].tolist() == [5.0] * 4 and members[1]["a"][1] == 11.0
    stack[torch.tensor([1, 3]), 0] = TensorDict(
        {"a": torch.tensor([8.0, 9.0]), "n": {"x": torch.zeros(2, 2)}}, [2]
    )
    assert members[0]["a"].tolist() == [-1.0, 8.0, 2.0, 9.0]
    dense = stack.contiguous()
    stack[2:] = torch.zeros(1)
    dense[2:] = torch.zeros(1)
    assert members[1]["a"][2:].tolist() == [0.0, 0.0]
    assert torch.equal(dense["a"], stack["a"]) and torch.equal(dense["n", "x"], stack["n", "x"])
    fresh = lazy_stack([TensorDict({}, [2]) for _ in range(2)], 0)
    fresh[1, 0] = TensorDict({"y": torch.ones(3)}, [])  # lazy pre-allocation in the member
    assert fresh.members[1]["y"].shape == (2, 3) and fresh.members[0]["y"].shape == (2, 3)


def test_different_keys_are_allowed_and_missing_reads_are_clear() -> None:
    members = tds()
    members[0]["only0"] = torch.zeros(4)
    stack = lazy_stack(members, 0)
    assert list(stack.keys()) == ["a", "n"]
    assert ("n", "x") in stack.keys(include_nested=True)
    with pytest.raises(KeyNotFoundError, match=r"only in members \[0\].*members \[1, 2\] lack it"):
        stack["only0"]
    with pytest.raises(KeyError, match="keys every member has: 'a', 'n'"):
        stack["nowhere"]
    with pytest.raises(KeyNotFoundError, match=r"key \('only0', 'x'\): 'only0' is only in"):
        stack["only0", "x"]
    assert "exclusive_fields={0: {only0: " in repr(stack)
    assert list(stack.contiguous().keys()) == ["a", "n"]
    assert stack.get("only0", None) is None
    with pytest.raises(StructureMismatchError, match="lazy_stack"):
        torch.stack(members)  # the dense stack points to lazy_stack


def test_member_checks() -> None:
    with pytest.raises(ValueError, match="at least one"):
        lazy_stack([])
    with pytest.raises(StructureMismatchError, match="share their class"):
        lazy_stack([TensorDict({}, [2]), batch(0)])
    # sizes may differ (a ragged stack), the number of batch dims may not
    assert lazy_stack([TensorDict({}, [2]), TensorDict({}, [3])]).batch_size == (2, -1)
    with pytest.raises(
        BatchSizeError, match=r"different numbers of batch dims \[\[2\], \[2, 3\]\]"
    ):
        lazy_stack([TensorDict({}, [2]), TensorDict({}, [2, 3])])
    stack = lazy_stack(
        [TensorDict({"a": torch.zeros(2)}, [2]), TensorDict({"a": torch.zeros(2, 5)}, [2])]
    )
    with pytest.raises(StructureMismatchError, match=r"cannot stack key 'a'.*\[\[2\], \[2, 5\]\]"):
        stack["a"]


def test_typed_members_stay_typed() -> None:
    members = [batch(0), batch(1)]
    stack = lazy_stack(members, 1)
    assert isinstance(stack, Batch) and isinstance(stack, LazyStackedTensorDict)
    assert stack.member_class is Batch and type(stack).__name__ == "LazyStackedTensorDict[Batch]"
    assert stack.images.shape == (4, 2, 2) and stack.name == [["b", "b"]] * 4
    assert stack.mask is None
    assert isinstance(stack.inner, Inner) and stack.inner.x.shape == (4, 2, 3)
    stack.labels = torch.zeros(4, 2, dtype=torch.long)
    assert members[1].labels.tolist() == [0] * 4
    stack.mask = torch.ones(4, 2, dtype=torch.bool)
    assert members[0].mask is not None and members[0].mask.shape == (4,)
    stack.inner.x = torch.ones(4, 2, 3)
    assert (members[0].inner.x == 1).all()
    dense = stack.contiguous()
    assert type(dense) is Batch and dense.inner.x.shape == (4, 2, 3)
    assert type(stack[:, 0]) is Batch and stack[:, 0] is members[0]
    assert type(stack.reshape(-1)) is Batch  # a dense result in the members' class
    with pytest.raises(AttributeError):
        stack.not_a_field


def test_frozen_and_locked_members() -> None:
    class Frozen(TensorClass, frozen=True):
        v: torch.Tensor

    stack = lazy_stack([Frozen(torch.zeros(2), batch_size=[2]) for _ in range(2)])
    assert stack.is_locked
    stack.set_("v", torch.ones(2, 2))  # in place is allowed
    assert stack.members[1].v.tolist() == [1.0, 1.0]
    members = tds(2)
    locked = lazy_stack(members).lock_()
    assert all(m.is_locked for m in members)
    with pytest.raises(LockedError):
        locked["z"] = torch.zeros(2, 4)
    locked.unlock_()
    locked["z"] = torch.zeros(2, 4)


def test_a_locked_member_refuses_the_write_before_any_member_changes() -> None:
    members = tds()
    members[2].lock_()  # the stack itself is not locked: only one member is
    stack = lazy_stack(members, 0)
    before = [list(m.keys(True, True)) for m in members]
    values = [m["a"].tolist() for m in members]
    for write in (
        lambda: stack.__setitem__("new", torch.ones(3, 4)),
        lambda: stack.__setitem__(("q", "new"), torch.ones(3, 4)),
        lambda: stack.update({"a": torch.ones(3, 4), "zz": torch.ones(3, 4)}),
    ):
        with pytest.raises(LockedError):
            write()
        assert [list(m.keys(True, True)) for m in members] == before
        assert [m["a"].tolist() for m in members] == values
    stack.update({"a": torch.ones(3, 4)}, inplace=True)  # in place is allowed
    assert members[2]["a"].tolist() == [1.0] * 4
    assert stack.update({}) is stack


def test_shape_ops_keep_the_members() -> None:
    members = tds()
    stack = lazy_stack(members, 1)  # batch [4, 3]
    dense = stack.contiguous()
    for name, args in [
        ("unsqueeze", (0,)),
        ("unsqueeze", (-1,)),
        ("unsqueeze", (1,)),
        ("permute", (1, 0)),
        ("transpose", (0, 1)),
        ("flip", (1,)),
        ("flip", (0,)),
        ("roll", (1, 1)),
        ("roll", (2, 0)),
        ("expand", (2, 4, 3)),
    ]:
        lazy = getattr(stack, name)(*args)
        assert isinstance(lazy, LazyStackedTensorDict), name
        expected = getattr(dense, name)(*args)
        assert lazy.batch_size == expected.batch_size, name
        assert torch.equal(lazy["a"], expected["a"]) and torch.equal(
            lazy["n", "x"], expected["n", "x"]
        ), name
    assert stack.unbind(1) == tuple(members)
    rows = stack.unbind(0)
    assert all(isinstance(r, LazyStackedTensorDict) for r in rows) and rows[2]["a"].tolist() == [
        2.0,
        12.0,
        22.0,
    ]
    assert [p.batch_size[1] for p in stack.split([1, 2], 1)] == [1, 2]
    assert stack.split([1, 2], 1)[1].members == tuple(members[1:])
    assert [torch.equal(p["a"], q["a"]) for p, q in zip(stack.chunk(2, 0), dense.chunk(2, 0))] == [
        True,
        True,
    ]
    single = lazy_stack(members[:1], 0)
    assert single.squeeze(0) is members[0] and single.squeeze().batch_size == (4,)
    assert stack.unsqueeze(2).squeeze(2).batch_size == (4, 3)
    with pytest.raises(BatchSizeError, match="stack dim"):
        stack.expand(4, 5)
    reshaped = stack.reshape(12)  # across the stack dim: a dense copy
    assert type(reshaped) is TensorDict and torch.equal(reshaped["a"], dense.reshape(12)["a"])


def test_functional_ops() -> None:
    members = tds()
    stack = lazy_stack(members, 0)
    plus = stack.apply(lambda t: t + 1)
    assert isinstance(plus, LazyStackedTensorDict) and plus["a"][1, 0] == 11.0
    assert members[1]["a"][0] == 10.0
    stack.apply_(lambda t: t * 2)
    assert members[1]["a"][0] == 20.0
    stack += 1
    assert members[1]["a"][0] == 21.0
    stack.mul_(torch.tensor(2.0))
    assert members[1]["a"][0] == 42.0
    ones = TensorDict({"a": torch.ones(3, 4), "n": {"x": torch.ones(3, 4, 2)}}, [3, 4])
    stack.sub_(ones)
    assert members[1]["a"][0] == 41.0
    stack.add_(torch.ones(1))  # a tensor that cannot be split: computed densely, written back
    assert members[1]["a"][0] == 42.0
    stack.masked_fill_(torch.tensor([[True, False, False, False]] * 3), 0.0)
    assert members[2]["a"][0] == 0.0 and members[2]["n", "x"][0].sum() == 0
    assert members[2]["a"][1] == ((21 * 2 + 1) * 2 - 1) + 1  # untouched by the mask
    stack.lerp_(ones * 0, 0.5)
    assert members[1]["a"][1] == (((11 * 2 + 1) * 2 - 1) + 1) / 2
    clone = stack.clone()
    assert isinstance(clone, LazyStackedTensorDict) and clone.members[0] is not members[0]
    assert torch.equal(clone["a"], stack["a"])
    stack.zero_()
    assert members[0]["a"].sum() == 0 and clone["a"].sum() != 0
    assert stack.to(torch.float64)["a"].dtype == torch.float64
    assert members[0]["a"].dtype == torch.float32
    assert stack.sum()["a"].item() == 0.0
    assert isinstance(stack.select("a"), LazyStackedTensorDict)
    assert list(stack.select("a").keys()) == ["a"] and list(stack.exclude("a").keys()) == ["n"]
    assert stack.where(torch.ones(3, 4, dtype=torch.bool), 1.0)["a"].sum() == 0
    assert list(stack.empty().keys()) == [] and stack.is_contiguous() is False
    stack.requires_grad_()
    assert members[0]["a"].requires_grad and stack.detach()["a"].requires_grad is False


def test_arithmetic_and_torch_functions_match_dense() -> None:
    stack = lazy_stack(tds(), 0)
    dense = stack.contiguous()
    assert torch.equal((stack * 2)["a"], (dense * 2)["a"])
    assert torch.equal(torch.stack([stack, stack])["a"], torch.stack([dense, dense])["a"])
    assert torch.equal(torch.cat([stack, stack])["a"], torch.cat([dense, dense])["a"])
    assert torch.equal(stack.mean(0)["a"], dense.mean(0)["a"])
    assert torch.allclose(stack, dense)


def test_pickle_and_iteration() -> None:
    stack = lazy_stack([batch(0), batch(1)], 0).lock_()
    again = pickle.loads(pickle.dumps(stack))
    assert isinstance(again, Batch) and isinstance(again, LazyStackedTensorDict) and again.is_locked
    assert torch.equal(again.images, stack.images)
    assert [type(m) for m in stack] == [Batch, Batch]
    assert LazyStackedTensorDict(*tds(2), stack_dim=1).batch_size == (4, 2)


def test_set_batch_size() -> None:
    members = [TensorDict({"a": torch.zeros(4, 5)}, [4]) for _ in range(2)]
    stack = lazy_stack(members, 0)
    stack.batch_size = [2, 4, 5]
    assert members[0].batch_size == (4, 5)
    with pytest.raises(BatchSizeError):
        stack.batch_size = [3, 4]


@pytest.fixture
def pytree_tensordict() -> object:
    """A pytree registration of TensorDict, when the engine has none (the nn layer adds one)."""
    if TensorDict in pytree.SUPPORTED_NODES:
        yield None
        return

    def flatten(td: TensorDict) -> tuple[list[object], object]:
        return list(td._data.values()), list(td._data)

    def unflatten(values: object, keys: object) -> TensorDict:
        return TensorDict._new(dict(zip(keys, values)), torch.Size([]))  # type: ignore[call-overload]

    pytree.register_pytree_node(TensorDict, flatten, unflatten)
    yield None
    pytree._deregister_pytree_node(TensorDict)


@pytest.mark.usefixtures("pytree_tensordict")
def test_vmap_over_a_lazy_stack_of_parameters() -> None:
    # seed 004: from_modules(..., lazy_stack=True) then vmap; gradients reach the modules
    modules = [nn.Linear(3, 4) for _ in range(2)]
    params = lazy_stack([TensorDict(dict(m.named_parameters()), []) for m in modules], 0)
    x = torch.randn(3)

    def call(p: TensorDict, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, p["weight"], p["bias"])

    y = torch.vmap(call, (0, None))(params, x)
    assert y.shape == (2, 4)
    expected = torch.stack([m(x) for m in modules])
    assert torch.allclose(y, expected)
    y.sum().backward()
    assert modules[0].weight.grad is not None and modules[1].bias.grad is not None


def test_seed_004_from_modules_lazy_stack() -> None:
    from tensorclass import from_modules

    empty_module = nn.Linear(3, 4, device="meta")
    modules = [nn.Linear(3, 4) for _ in range(2)]
    params = TensorDict.from_modules(*modules, lazy_stack=True)
    assert isinstance(params, LazyStackedTensorDict) and params.is_locked
    assert params["weight"].shape == (2, 4, 3)
    assert params.members[0]["weight"] is modules[0].weight  # the modules' own tensors

    def exec_module(params: TensorDict, x: torch.Tensor) -> torch.Tensor:
        with params.to_module(empty_module):
            return empty_module(x)

    x = torch.randn(3)
    y = torch.vmap(exec_module, (0, None))(params, x)
    assert y.shape == (2, 4)
    assert torch.allclose(y, torch.stack([m(x) for m in modules]))
    y.sum().backward()
    assert modules[0].weight.grad is not None and modules[1].bias.grad is not None
    unlocked = from_modules(*modules, lazy_stack=True, lock=False)
    assert not unlocked.is_locked


def test_unset_typed_field_in_a_lazy_stack() -> None:
    class Opt(TensorClass):
        x: torch.Tensor
        opt: torch.Tensor | None = None

    unset = Opt(torch.zeros(2), batch_size=[2])
    both_unset = lazy_stack([unset, unset.clone()])
    assert both_unset["opt"] is None and both_unset.get("opt") is None and both_unset.opt is None
    partial = lazy_stack([Opt(torch.zeros(2), torch.ones(2), batch_size=[2]), unset])
    for read in (lambda: partial["opt"], lambda: partial.opt):
        with pytest.raises(KeyNotFoundError, match=r"only in members \[0\].*members \[1\] lack"):
            read()
    assert partial.get("opt") is None  # get's default (as tensordict's for a partial key)


def test_tensordictbase_is_a_base_of_lazy_stacks_after_the_lazy_engine() -> None:
    """``LazyStackedTensorDict`` derives from ``TensorDictBase`` (for type checkers and at run
    time alike), after the lazy engine; each variant puts its members' class between them,
    so the lazy reads win over the members' class and the members' class over the base."""
    from tensorclass.engine.base import TensorDictBase
    from tensorclass.engine.core.state import TensorCore
    from tensorclass.engine.ops import TensorOps

    assert LazyStackedTensorDict.__bases__ == (TensorDictBase,)
    generic = LazyStackedTensorDict.__mro__
    assert generic[1:4] == (TensorDictBase, TensorOps, TensorCore)
    for member in (batch(0), TensorDict(a=torch.zeros(2))):
        stack = lazy_stack([member, member])
        variant = type(stack)
        assert variant.__bases__ == (LazyStackedTensorDict, type(member))
        assert isinstance(stack, TensorDictBase)
        mro = variant.__mro__
        assert (
            mro.index(LazyStackedTensorDict) < mro.index(type(member)) < mro.index(TensorDictBase)
        )
        assert (
            variant.get is LazyStackedTensorDict.get
        )  # the lazy reads win over the members' class


def test_cat_spellings_keep_ragged_lazy_stacks_lazy() -> None:
    """tensorclass.cat and the classmethod follow torch.cat: lazy stacks stay lazy (a dense
    cat would fail on the ragged key)."""
    short, long = TensorDict(obs=torch.zeros(3)), TensorDict(obs=torch.ones(5))
    stack = lazy_stack([short, long])
    for joined in (tensorclass.cat([stack, stack]), TensorDict.cat([stack, stack])):
        assert isinstance(joined, LazyStackedTensorDict)
        assert joined.batch_size == (4,)
        assert [m["obs"].shape[0] for m in joined.members] == [3, 5, 3, 5]
        assert joined.members[0] is short


@pytest.mark.parametrize("join", [tensorclass.cat, tensorclass.stack])
def test_joining_non_instances_is_a_clear_error(join: Any) -> None:
    with pytest.raises(TypeError, match="item 0 is a int, not a tensor class"):
        join([1, 2])


_BASIC_INDICES = [
    (0,),
    (1,),
    (slice(None), 0),
    (slice(None), 0, slice(None)),
    (slice(None), slice(None), 0),
    (0, 1),
    (0, None, 1),
    (None, slice(None), 0),
    (slice(1, 3), 1, None),
    (Ellipsis, 0),
    (Ellipsis, 1, slice(None)),
    (slice(None), None, 1, slice(0, 1)),
    (0, 0, 0, 0, 0),
]


@pytest.mark.parametrize("stack_dim", range(5))
@pytest.mark.parametrize("index", _BASIC_INDICES, ids=str)
def test_basic_indexing_matches_the_dense_stack(stack_dim: int, index: tuple[Any, ...]) -> None:
    """Ints and slices before the stack dim, and the dims an index leaves out, put the stack
    dim where torch puts it (an index shorter than the batch dims used to misplace it)."""
    members = [TensorDict(a=torch.randn(4, 3, 2, 4), batch_size=[4, 3, 2, 4]) for _ in range(3)]
    stack = lazy_stack(members, stack_dim)
    dense = torch.stack([m["a"] for m in members], stack_dim)
    result = stack[index]
    assert result.batch_size == dense[index].shape
    assert torch.equal(result["a"], dense[index])
