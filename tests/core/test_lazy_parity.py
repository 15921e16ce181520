"""Lazy stacks with tensordict's semantics: members kept through maths, masks, cat, views;
ragged reads; the list-like API; class methods; differential-fuzz regressions."""

import tempfile

import pytest
import torch

from tensorclass import (
    BatchSizeError,
    KeyNotFoundError,
    LazyStackedTensorDict,
    LockedError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
    set_get_defaults_to_none,
)
from tensorclass.engine.leafwise.elementwise_kinds import unary
from tensorclass.engine.leafwise.kind import TABLE


class Inner(TensorClass):
    x: torch.Tensor


class Obs(TensorClass):
    obs: torch.Tensor
    inner: Inner
    name: str = "o"


def ragged_tds() -> list[TensorDict]:
    """Members whose "obs" has a different feature size (3 and 5): no dense stack exists."""
    return [
        TensorDict({"obs": torch.arange(float(n)) + i, "n": {"x": torch.full((2,), float(i))}}, [])
        for i, n in enumerate((3, 5))
    ]


def ragged_typed() -> list[Obs]:
    return [
        Obs(
            torch.arange(float(n)).expand(2, n) + i,
            Inner(torch.ones(2, 1) * i, batch_size=[2]),
            batch_size=[2],
        )
        for i, n in enumerate((3, 5))
    ]


def square_tds(dim_size: int = 3) -> list[TensorDict]:
    return [
        TensorDict(
            {"a": torch.arange(8.0).reshape(4, 2) + 10 * i, "n": {"x": torch.rand(4, 3)}}, [4]
        )
        for i in range(dim_size)
    ]


def leaves(node: object) -> list[torch.Tensor]:
    return [
        v
        for _, v in node.items(include_nested=True, leaves_only=True)  # type: ignore[attr-defined]
        if isinstance(v, torch.Tensor)
    ]


def check_members(result: object, expected: list[object]) -> None:
    """``result`` is a lazy stack whose members equal ``expected`` leaf by leaf."""
    assert isinstance(result, LazyStackedTensorDict)
    assert len(result.members) == len(expected)
    for got, want in zip(result.members, expected):
        for g, w in zip(leaves(got), leaves(want), strict=True):
            torch.testing.assert_close(g, w, equal_nan=True)


# -- maths on ragged members -------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        lambda x: x + 1,
        lambda x: 1 - x,
        lambda x: x * 2.5,
        lambda x: x / torch.tensor(2.0),
        lambda x: x**2,
        lambda x: -x,
        lambda x: abs(x),
        lambda x: x.exp(),
        lambda x: x.clamp(1, 3),
        lambda x: x == 2,
        lambda x: x > 1,
        lambda x: x.add(1, alpha=2),
    ],
)
@pytest.mark.parametrize("make", [ragged_tds, ragged_typed])
def test_elementwise_maths_keep_ragged_members(op: object, make: object) -> None:
    members = make()  # type: ignore[operator]
    stack = lazy_stack(members)
    with pytest.raises(StructureMismatchError):
        stack["obs"]  # no dense stack of "obs" exists
    check_members(op(stack), [op(m) for m in members])  # type: ignore[operator]
    check_members(stack, make())  # type: ignore[operator]  # the members are unchanged


def test_binary_with_another_stack_or_a_dense_instance() -> None:
    left, right = ragged_tds(), ragged_tds()
    a, b = lazy_stack(left), lazy_stack(right)
    check_members(a * b, [x * y for x, y in zip(left, right)])
    check_members(a - b, [x - y for x, y in zip(left, right)])
    check_members(2**a, [2**x for x in left])
    # a dense instance with the stack's batch size is split along the stack dim
    square = square_tds()
    stack = lazy_stack(square, 1)  # [4, 3]
    dense = stack.contiguous() * 3
    result = stack + dense
    assert isinstance(result, LazyStackedTensorDict) and result.stack_dim == 1
    assert torch.equal(result["a"], stack.contiguous()["a"] + dense["a"])
    # a tensor broadcast to every leaf cannot be split: the dense stack answers
    assert type(stack * torch.ones(1)) is TensorDict


@pytest.mark.parametrize("name", sorted(n for n, e in TABLE.items() if e.kind is unary))
def test_every_unary_entry_runs_member_by_member(name: str) -> None:
    stack = lazy_stack(square_tds(), 1)
    dense = stack.contiguous()
    try:
        expected = getattr(dense, name)()
    except (RuntimeError, TypeError) as err:  # an entry that refuses float leaves
        with pytest.raises(type(err)):
            getattr(stack, name)()
        return
    result = getattr(stack, name)()
    assert isinstance(result, LazyStackedTensorDict) and result.stack_dim == 1, name
    torch.testing.assert_close(result["a"], expected["a"], equal_nan=True)
    torch.testing.assert_close(result["n", "x"], expected["n", "x"], equal_nan=True)


def test_masked_fill_where_all_any_and_like_functions() -> None:
    members = ragged_typed()
    stack = lazy_stack(members, 1)  # [2, 2]
    mask = torch.tensor([[True, False], [False, False]])
    filled = stack.masked_fill(mask, -1.0)
    assert isinstance(filled, LazyStackedTensorDict)
    assert filled.members[0].obs[0].tolist() == [-1.0] * 3 and filled.members[1].obs.min() >= 0
    assert members[0].obs.min() == 0  # not in place
    chosen = stack.where(mask, 0.0)
    assert isinstance(chosen, LazyStackedTensorDict)
    assert chosen.members[1].obs.sum() == 0 and chosen.members[0].obs[0].tolist() == [0, 1, 2]
    assert stack.any() and not stack.all()  # member 0's inner.x is zero
    assert (stack + 1).all()
    zeros = torch.zeros_like(stack)
    assert isinstance(zeros, LazyStackedTensorDict) and zeros.members[1].obs.shape == (2, 5)
    assert torch.full_like(stack, 7.0).members[1].obs.unique().tolist() == [7.0]
    # square members: the member-by-member results equal the dense ones
    square = lazy_stack(square_tds(), 1)
    cond = torch.rand(4, 3) > 0.5
    dense = square.contiguous()
    assert torch.equal(square.masked_fill(cond, 0.0)["a"], dense.masked_fill(cond, 0.0)["a"])
    assert torch.equal(square.where(cond, dense * 2)["a"], dense.where(cond, dense * 2)["a"])


# -- reading ragged keys -------------------------------------------------------------------


def test_get_with_a_default_and_ragged_reads() -> None:
    members = ragged_tds()
    members[0]["only0"] = torch.zeros(())
    stack = lazy_stack(members)
    assert stack.get("missing", None) is None
    assert stack.get("missing", "d", as_list=True) == "d"
    assert stack.get("only0", None) is None  # as tensordict: a default covers a partial key
    assert stack.get("only0", None, as_list=True) is None
    assert stack.get("only0", as_list=True) is None  # get's default, as tensordict's
    with pytest.warns(DeprecationWarning), set_get_defaults_to_none(False):
        with pytest.raises(KeyNotFoundError, match=r"only in members \[0\]"):
            stack.get("only0", as_list=True)
    with pytest.raises(StructureMismatchError, match="obs"):
        stack.get("obs", None)
    assert [t.tolist() for t in stack.get("obs", as_list=True)] == [
        [0.0, 1.0, 2.0],
        [1.0, 2.0, 3.0, 4.0, 5.0],
    ]
    padded = stack.get("obs", as_padded_tensor=True, padding_value=-1.0)
    assert padded.tolist() == [[0.0, 1.0, 2.0, -1.0, -1.0], [1.0, 2.0, 3.0, 4.0, 5.0]]
    left = stack.get("obs", as_padded_tensor=True, padding_side="left")
    assert left[0].tolist() == [0.0, 0.0, 0.0, 1.0, 2.0]
    nested = stack.get("obs", as_nested_tensor=True)
    assert nested.is_nested and nested.layout == torch.jagged
    assert [t.tolist() for t in nested.unbind()] == [m["obs"].tolist() for m in members]
    assert isinstance(stack.get("n"), LazyStackedTensorDict)
    with pytest.raises(ValueError, match="only one"):
        stack.get("obs", as_list=True, as_padded_tensor=True)
    with pytest.raises(TypeError, match="as_list"):
        stack.get("n", as_padded_tensor=True)


def test_padded_reads_stack_along_the_stack_dim() -> None:
    members = ragged_typed()  # obs: [2, 3] and [2, 5]
    stack = lazy_stack(members, 1)
    padded = stack.get("obs", as_padded_tensor=True)
    assert padded.shape == (2, 2, 5)
    expected = torch.stack(
        [torch.nn.functional.pad(m.obs, (0, 5 - m.obs.shape[1])) for m in members], 1
    )
    assert torch.equal(padded, expected)
    with pytest.raises(ValueError, match="stack dim is 1"):
        stack.get("obs", as_nested_tensor=True)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_get_nestedtensor_and_densify() -> None:
    members = ragged_tds()
    stack = lazy_stack(members)
    strided = stack.get_nestedtensor("obs")
    assert strided.is_nested and strided.layout == torch.strided
    assert [t.shape[0] for t in strided.unbind()] == [3, 5]
    jagged = stack.get_nestedtensor("obs", layout=torch.jagged)
    assert jagged.layout == torch.jagged
    assert stack.get_nestedtensor("nope", None) is None
    for layout in (torch.strided, torch.jagged):
        dense = stack.densify(layout=layout)
        assert type(dense) is TensorDict and dense.batch_size == (2,)
        assert dense["obs"].is_nested and dense["obs"].layout == layout
        assert not dense["n", "x"].is_nested  # equal shapes are stacked
        assert torch.equal(dense["n", "x"], torch.stack([m["n", "x"] for m in members]))
    with pytest.raises(ValueError, match="along dim 1"):
        lazy_stack(square_tds(), 1).densify()


# -- masks, split, indexing --------------------------------------------------------------------


def test_masks_and_split_keep_ragged_members() -> None:
    members = ragged_tds() + ragged_tds()[:1]
    stack = lazy_stack(members)
    picked = stack[torch.tensor([False, True, True])]
    assert isinstance(picked, LazyStackedTensorDict) and picked.members == tuple(members[1:])
    first, rest = stack.split([1, 2])
    assert first.members == (members[0],) and rest.members == tuple(members[1:])
    assert [p.members for p in stack.split(2)] == [tuple(members[:2]), (members[2],)]
    assert [p.members for p in stack.chunk(3)] == [(m,) for m in members]


def test_size_one_stack_refuses_a_longer_mask() -> None:
    """Differential-fuzz regression: torch refuses a mask longer than the dim it indexes."""
    stack = lazy_stack([TensorDict({"a": torch.zeros(3)}, [3])])
    dense = stack.contiguous()
    for mask in (torch.tensor([True, False]), torch.tensor([False, True])):
        with pytest.raises(IndexError):
            dense["a"][mask]
        with pytest.raises(IndexError, match="mask of length 2"):
            stack[mask]
    with pytest.raises(IndexError, match="out of range"):
        lazy_stack(square_tds())[torch.tensor([0, 3])]
    assert stack[torch.tensor([True])].members == stack.members


def test_del_with_repeated_members_deletes_once() -> None:
    """Differential-fuzz regression: a stack holding a member twice (``stack[[0, 0]]``)."""
    members = square_tds(2)
    repeated = lazy_stack(members)[[0, 0]]
    assert repeated.members == (members[0], members[0])
    del repeated["a"]
    assert "a" not in members[0] and "a" in members[1]
    assert list(repeated.keys()) == ["n"]
    with pytest.raises(KeyNotFoundError):
        del repeated["a"]
    # ragged keys are deleted without being read; nested keys reach the members
    ragged = ragged_tds()
    stack = lazy_stack(ragged)
    del stack["obs"]
    stack.del_(("n", "x"))
    assert all(list(m.keys(include_nested=True)) == ["n"] for m in ragged)
    stack.lock_()
    with pytest.raises(LockedError):
        del stack["n"]
    assert all("n" in m for m in ragged)


# -- torch.cat, empty lists, views, names ---------------------------------------------------------


def test_cat_with_dense_instances_stays_lazy() -> None:
    members = square_tds(2)
    stack = lazy_stack(members, 0)  # [2, 4]
    extra = TensorDict({"a": torch.ones(1, 4, 2), "n": {"x": torch.ones(1, 4, 3)}}, [1, 4])
    for items in ([stack, extra], [extra, stack], [stack, stack]):
        joined = torch.cat(items, 0)
        expected = torch.cat(
            [i.contiguous() if isinstance(i, LazyStackedTensorDict) else i for i in items], 0
        )
        assert (
            isinstance(joined, LazyStackedTensorDict) and joined.batch_size == expected.batch_size
        )
        assert torch.equal(joined["a"], expected["a"])
    assert torch.cat([stack, extra]).members[:2] == tuple(members)  # no copy along the stack dim
    wide = TensorDict({"a": torch.ones(2, 3, 2), "n": {"x": torch.ones(2, 3, 3)}}, [2, 3])
    joined = torch.cat([stack, wide], 1)
    assert isinstance(joined, LazyStackedTensorDict) and joined.batch_size == (2, 7)
    assert torch.equal(joined["a"], torch.cat([stack.contiguous(), wide], 1)["a"])
    ragged = lazy_stack(ragged_tds())
    assert torch.cat([ragged, ragged]).members == ragged.members * 2
    # along the stack dim the members join as they are: other sizes give a ragged stack
    assert torch.cat([stack, wide], 0).batch_size == (4, -1)  # as tensordict
    with pytest.raises(StructureMismatchError):
        torch.cat([lazy_stack(ragged_typed()), TensorDict({}, [1, 2])], 0)


def test_empty_list_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="at least one instance"):
        lazy_stack([])
    with pytest.raises(ValueError, match="at least one instance"):
        LazyStackedTensorDict.lazy_stack([])
    with pytest.raises(ValueError, match="at least one instance"):
        LazyStackedTensorDict()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("__getitem__", ((slice(None), slice(None), 1),)),
        ("__getitem__", ((1, slice(None), slice(1, 3)),)),
        ("unsqueeze", (0,)),
        ("unsqueeze", (-1,)),
        ("permute", (2, 0, 1)),
        ("transpose", (1, 2)),
        ("view", (2, 3, 2, 2)),
        ("view", (1, 2, 3, 4)),
        ("reshape", (2, 3, 4)),
        ("reshape", (2, 3, 4, 1)),
        ("flatten", (1, 1)),
        ("unflatten", (2, (2, 2))),
    ],
)
def test_views_stay_lazy(name: str, args: tuple[object, ...]) -> None:
    members = [
        TensorDict({"a": torch.arange(8.0).reshape(2, 4) + 100 * i}, [2, 4]) for i in range(3)
    ]
    stack = lazy_stack(members, 1)  # [2, 3, 4]
    dense = stack.contiguous()
    view = getattr(stack, name)(*args)
    assert isinstance(view, LazyStackedTensorDict), name
    expected = getattr(dense, name)(*args)
    assert view.batch_size == expected.batch_size and torch.equal(view["a"], expected["a"])
    if name in ("view", "unsqueeze", "permute", "transpose", "__getitem__"):
        view.members[0]["a"].fill_(-1)  # shares the members' storage
        assert members[0]["a"].min() == -1


def test_reshapes_across_the_stack_dim_are_dense() -> None:
    stack = lazy_stack(square_tds(), 1)  # [4, 3]
    dense = stack.contiguous()
    for shape in [(12,), (6, 2), (2, 6)]:
        result = stack.reshape(*shape)
        assert type(result) is TensorDict and torch.equal(result["a"], dense.reshape(*shape)["a"])
    assert type(stack.flatten()) is TensorDict
    assert type(stack.view(-1)) is TensorDict


def test_different_dim_names_give_none() -> None:
    a = TensorDict({"x": torch.zeros(4)}, [4], names=["a"])
    b = TensorDict({"x": torch.zeros(4)}, [4], names=["b"])
    assert lazy_stack([a, b]).names == [None, None]
    assert torch.stack([a, b]).names == [None, None]
    assert lazy_stack([a, a.clone()]).names == [None, "a"]
    assert torch.stack([a, a.clone()], 1).names == ["a", None]


# -- the list-like API -------------------------------------------------------------------------


def test_append_insert_extend_and_tensordicts() -> None:
    members = square_tds(2)
    stack = lazy_stack(members, 1)  # [4, 2]
    new = TensorDict({"a": torch.full((4, 2), -1.0), "n": {"x": torch.zeros(4, 3)}}, [4])
    assert stack.append(new) is None
    assert stack.batch_size == (4, 3) and stack.members[-1] is new
    assert torch.equal(stack["a"][:, 2], new["a"])
    stack.insert(0, new.clone())
    stack.extend([new.clone(), new.clone()])
    assert stack.batch_size == (4, 6) and stack.members[1:3] == tuple(members)
    assert stack.tensordicts == list(stack.members)
    stack.tensordicts.append(new)  # a copy: the stack does not change
    assert stack.batch_size == (4, 6)
    before = stack.members
    with pytest.raises(BatchSizeError, match="batch size"):
        stack.append(TensorDict({"a": torch.zeros(3, 2)}, [3]))
    with pytest.raises(StructureMismatchError, match="share their class"):
        stack.extend([new.clone(), Inner(torch.zeros(4, 1), batch_size=[4])])
    assert stack.members == before  # nothing was added
    stack.lock_()
    with pytest.raises(LockedError):
        stack.append(new.clone())
    typed = lazy_stack(ragged_typed())
    typed.append(ragged_typed()[0])
    assert typed.batch_size == (3, 2) and isinstance(typed, Obs)


def test_valid_keys() -> None:
    members = square_tds(2)
    members[0]["only0"] = torch.zeros(4)
    stack = lazy_stack(members)
    assert list(stack.valid_keys()) == ["a", "n"]
    assert stack.valid_keys(True, True, sort=True) == ["a", ("n", "x")]


# -- class methods ---------------------------------------------------------------------------------


def test_lazy_stack_class_method() -> None:
    members = square_tds(2)
    stack = LazyStackedTensorDict.lazy_stack(members, 1, stack_dim_name="t")
    assert isinstance(stack, LazyStackedTensorDict) and stack.names == [None, "t"]
    assert stack.members == tuple(members)
    moved = LazyStackedTensorDict.lazy_stack(members, device="cpu")
    assert moved.device == torch.device("cpu")
    ragged = LazyStackedTensorDict.lazy_stack(ragged_tds(), strict_shape=True)
    assert ragged.batch_size == (2,)  # one batch size is always required: nothing to refuse
    tensors = [torch.zeros(3), torch.ones(5)]
    assert LazyStackedTensorDict.lazy_stack(tensors, as_list=True) == tensors
    padded = LazyStackedTensorDict.lazy_stack(tensors, as_padded_tensor=True, padding_value=9)
    assert padded.tolist() == [[0, 0, 0, 9, 9], [1] * 5]
    nested = LazyStackedTensorDict.lazy_stack(tensors, as_nested_tensor=True)
    assert nested.is_nested and [t.shape[0] for t in nested.unbind()] == [3, 5]
    assert torch.equal(
        LazyStackedTensorDict.lazy_stack([torch.zeros(2), torch.ones(2)], 1),
        torch.stack([torch.zeros(2), torch.ones(2)], 1),
    )
    out = lazy_stack(square_tds(2), 0)
    assert LazyStackedTensorDict.lazy_stack(members, out=out) is out
    assert torch.equal(out["a"], torch.stack([m["a"] for m in members]))


def test_maybe_dense_stack() -> None:
    same = square_tds(2)
    assert type(LazyStackedTensorDict.maybe_dense_stack(same, 1)) is TensorDict
    ragged = LazyStackedTensorDict.maybe_dense_stack(ragged_tds())
    assert isinstance(ragged, LazyStackedTensorDict)
    out = TensorDict({"other": torch.zeros(2, 2)}, [2, 2])
    with pytest.raises(StructureMismatchError):  # strict: out must have the items' keys
        LazyStackedTensorDict.maybe_dense_stack(same, 1, out=out, strict=True)


def test_from_dict_builds_a_lazy_stack() -> None:
    stack = LazyStackedTensorDict.from_dict([{"a": torch.zeros(3)}, {"a": torch.ones(5), "b": 1}])
    assert isinstance(stack, LazyStackedTensorDict) and stack.batch_size == (2,)
    assert stack.members[1]["a"].shape == (5,) and list(stack.keys()) == ["a"]
    auto = LazyStackedTensorDict.from_dict(
        {"0": {"a": torch.zeros(4, 2)}, "1": {"a": torch.zeros(4, 3)}},
        auto_batch_size=True,
        batch_dims=1,
    )
    assert auto.batch_size == (2, 4)
    named = LazyStackedTensorDict.from_dict(
        [{"a": torch.zeros(4)}] * 2, batch_size=[4], names=["s", "t"]
    )
    assert named.names == ["s", "t"]
    with pytest.raises(TypeError, match="keys '0', '1'"):
        LazyStackedTensorDict.from_dict({"x": {"a": torch.zeros(1)}})


# -- the engine's other names work on lazy stacks ------------------------------------------------


def test_every_public_name_of_tensordict_exists_on_lazy_stacks() -> None:
    public = {n for n in dir(TensorDict) if not n.startswith("_")}
    missing = sorted(n for n in public if not hasattr(LazyStackedTensorDict, n))
    assert missing == [], f"add these to lazy_stack.MEMBER_CLASS_NAMES: {missing}"


def test_storage_methods_on_lazy_stacks() -> None:
    members = square_tds(2)
    stack = lazy_stack(members, 1)
    assert stack.is_shared() is False and stack.is_memmap() is False
    dense = stack.to_tensordict()
    assert type(dense) is TensorDict and torch.equal(dense["a"], stack["a"])
    with tempfile.TemporaryDirectory() as path:
        saved = stack.memmap(path)
        assert isinstance(saved, LazyStackedTensorDict) and saved.is_memmap()
        loaded = LazyStackedTensorDict.load_memmap(path)
        assert isinstance(loaded, LazyStackedTensorDict) and loaded.stack_dim == 1
        assert torch.equal(loaded["a"], stack["a"])
        like = stack.memmap_like(path + "/like")
        assert like.batch_size == stack.batch_size and like["a"].sum() == 0
    assert stack.share_memory_() is stack and all(m.is_shared() for m in members)
    built = LazyStackedTensorDict.from_module(torch.nn.Linear(2, 3))
    assert type(built) is TensorDict and built["weight"].shape == (3, 2)
    results = stack.map(lambda td: td + 1, dim=1, num_workers=1)
    assert torch.equal(results["a"], stack["a"] + 1)
    auto = lazy_stack([TensorDict({"a": torch.zeros(4, 2)}, []) for _ in range(2)])
    with pytest.raises(BatchSizeError, match="keeps its members' batch size"):
        auto.auto_batch_size_()  # as tensordict: a lazy stack's batch size is its members'
    assert auto.contiguous().auto_batch_size_().batch_size == (2, 4, 2)


def test_a_dense_left_operand_gives_a_lazy_stack_too() -> None:
    stack = lazy_stack(square_tds(), 1)  # [4, 3]
    dense = stack.contiguous() * 2 + 1
    for op in (
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a / b,
        lambda a, b: a**b,
        lambda a, b: a < b,
        lambda a, b: a >= b,
        lambda a, b: a == b,
    ):
        result = op(dense, stack)
        expected = op(dense, stack.contiguous())
        assert isinstance(result, LazyStackedTensorDict) and result.stack_dim == 1
        assert torch.equal(result["a"], expected["a"])
        assert torch.equal(result["n", "x"], expected["n", "x"])


def test_maybe_dense_stack_into_out() -> None:
    same = square_tds(2)
    out = TensorDict({"a": torch.zeros(4, 2, 2), "n": {"x": torch.zeros(4, 2, 3)}}, [4, 2])
    assert LazyStackedTensorDict.maybe_dense_stack(same, 1, out=out, strict=True) is out
    assert torch.equal(out["a"], torch.stack([m["a"] for m in same], 1))
