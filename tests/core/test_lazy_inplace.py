"""In-place operations that reach lazy stacks: the members' tensors are written (also when
the stack is nested, at any depth), and a member held at several positions is written once,
or the write is refused when those positions would receive different values."""

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from tensorclass import OperandError, TensorDict, lazy_stack
from tensorclass.engine.storage.parallel.map import _writes_reach_caller


def member(x: float = 0.5, y: float = 0.25) -> TensorDict:
    return TensorDict({"x": torch.full((2,), x), "y": torch.full((2, 3), y)}, [2])


def values(node: Any) -> dict[tuple[str, ...], list[Any]]:
    """Every leaf, read through the structure (a lazy stack's members stacked)."""
    return {k: v.tolist() for k, v in node.items(include_nested=True, leaves_only=True)}


# -- the trees: a lazy stack nested at depth 1 and 2 ----------------------------------------


def depth1() -> tuple[TensorDict, list[TensorDict]]:
    a, b = member(0.5), member(0.75)
    return TensorDict({"s": lazy_stack([a, b]), "z": torch.full((2,), 0.5)}, [2]), [a, b]


def depth2() -> tuple[TensorDict, list[TensorDict]]:
    a, b = member(0.5), member(0.75)
    inner = TensorDict({"s": lazy_stack([a, b])}, [2])
    return TensorDict({"n": inner, "z": torch.full((2,), 0.5)}, [2]), [a, b]


def lazy_in_lazy() -> tuple[Any, list[TensorDict]]:
    a, b, c, d = member(0.5), member(0.75), member(0.125), member(0.25)
    outer = [TensorDict({"s": lazy_stack([p, q])}, [2]) for p, q in ((a, b), (c, d))]
    return lazy_stack(outer), [a, b, c, d]


TREES = {"depth1": depth1, "depth2": depth2, "lazy_in_lazy": lazy_in_lazy}


def dense_copy(node: Any) -> TensorDict:
    """The same values in plain (dense) instances only."""
    return TensorDict(
        {k: v.clone() for k, v in node.items(include_nested=True, leaves_only=True)},
        node.batch_size,
    ).unflatten_keys(".")


def mask_for(node: Any) -> torch.Tensor:
    return torch.tensor([True, False]).expand(node.batch_size)


# every in-place family; each takes the root (and must give the same values on a dense copy)
OPS: dict[str, Callable[[Any], Any]] = {
    "exp_": lambda t: t.exp_(),
    "torch.exp_": lambda t: torch.exp_(t),
    "neg_": lambda t: t.neg_(),
    "add_": lambda t: t.add_(1),
    "iadd": lambda t: t.__iadd__(2),
    "sub_": lambda t: t.sub_(0.25),
    "mul_": lambda t: t.mul_(3),
    "div_": lambda t: t.div_(2),
    "pow_": lambda t: t.pow_(2),
    "mul_ self": lambda t: t.mul_(t.clone()),
    "clamp_": lambda t: t.clamp_(min=0.6),
    "clamp_max_": lambda t: t.clamp_max_(0.6),
    "lerp_": lambda t: t.lerp_(t.clone() * 0 + 1, 0.5),
    "zero_": lambda t: t.zero_(),
    "masked_fill_": lambda t: t.masked_fill_(mask_for(t), 7.0),
    "copy_": lambda t: t.copy_(t.clone() + 1),
    "update_": lambda t: t.update_(t.clone() * 2),
    "apply_": lambda t: t.apply_(lambda x: x + 10),
    "relu inplace": lambda t: F.relu(t.sub_(0.6), inplace=True),
}


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize("op", OPS)
def test_nested_lazy_stack_written_in_place(tree: str, op: str) -> None:
    root, members = TREES[tree]()
    expected = dense_copy(root)
    OPS[op](expected)
    result = OPS[op](root)
    assert result is root
    assert values(root) == values(expected)  # read through the stacks: the members'


@pytest.mark.parametrize("tree", TREES)
def test_nested_lazy_stack_members_written(tree: str) -> None:
    root, members = TREES[tree]()
    before = [m["x"].clone() for m in members]
    root.add_(1)
    for m, old in zip(members, before, strict=True):
        assert torch.equal(m["x"], old + 1)


@pytest.mark.parametrize("tree", ["depth1", "depth2"])
def test_nested_fill_and_set_in_place(tree: str) -> None:
    root, (a, b) = TREES[tree]()
    path = ("s", "x") if tree == "depth1" else ("n", "s", "x")
    root.fill_(path, 3.0)
    assert a["x"].tolist() == b["x"].tolist() == [3.0, 3.0]
    root.set_(path, torch.full((2, 2), 4.0))
    assert a["x"].tolist() == [4.0, 4.0]


@pytest.mark.parametrize("tree", TREES)
def test_nested_refusal_changes_nothing(tree: str) -> None:
    root, members = TREES[tree]()
    before = values(root)
    with pytest.raises(OperandError, match="cannot take"):
        root.add_(torch.ones(2, dtype=torch.complex64))  # a complex result in float leaves
    assert values(root) == before
    assert all(
        m["x"].tolist() in ([0.5, 0.5], [0.75, 0.75], [0.125] * 2, [0.25] * 2) for m in members
    )


# -- the users of _own_tensors ---------------------------------------------------------------


@pytest.mark.parametrize("tree", TREES)
def test_share_memory_reaches_nested_members(tree: str) -> None:
    root, members = TREES[tree]()
    assert not root.is_shared()
    root.share_memory_()
    assert all(m["x"].is_shared() and m["y"].is_shared() for m in members)
    assert root.is_shared()
    assert _writes_reach_caller(root)


@pytest.mark.parametrize("tree", TREES)
def test_own_tensors_are_the_members(tree: str) -> None:
    root, members = TREES[tree]()
    own = {id(t) for t in root._own_tensors()}
    assert {id(m["x"]) for m in members} <= own
    assert {id(m["y"]) for m in members} <= own


@pytest.mark.parametrize("tree", TREES)
def test_is_memmap_reads_nested_members(tree: str, tmp_path: Any) -> None:
    root, _ = TREES[tree]()
    assert not root.is_memmap()
    assert root.memmap(tmp_path).is_memmap()


def test_exp_and_activation_write_each_member_once_at_depth() -> None:
    root, (a, b, c, d) = lazy_in_lazy()
    torch.exp_(root)
    assert torch.allclose(a["x"], torch.full((2,), 0.5).exp())
    F.relu(root.sub_(2.0), inplace=True)
    assert a["x"].tolist() == [0.0, 0.0]


# -- repeated members ------------------------------------------------------------------------


def repeated(depth: int) -> tuple[Any, TensorDict]:
    """A stack holding the same member twice, at the top (0), nested (1) or twice nested (2)."""
    a = member(0.5)
    stack = lazy_stack([a, a])
    if depth == 0:
        return stack, a
    root = TensorDict({"s": stack, "z": torch.full((2,), 0.5)}, [2])
    if depth == 2:
        root = TensorDict({"n": root}, [2])
    return root, a


#: in-place ops whose every position receives the same value: the member written once
SAME: dict[str, Callable[[Any], Any]] = {
    "exp_": lambda t: t.exp_(),
    "add_": lambda t: t.add_(1),
    "iadd": lambda t: t.__iadd__(1),
    "mul_": lambda t: t.mul_(2),
    "pow_": lambda t: t.pow_(2),
    "div_": lambda t: t.div_(2),
    "clamp_": lambda t: t.clamp_(min=0.6),
    "add_ row": lambda t: t.add_(torch.ones(2)),  # batch-aligned, the same at both positions
    "add_ self": lambda t: t.add_(t.clone()),
    "lerp_": lambda t: t.lerp_(t.clone() * 0 + 1, 0.5),
    "zero_": lambda t: t.zero_(),
    "masked_fill_": lambda t: t.masked_fill_(torch.ones(t.batch_size, dtype=torch.bool), 3.0),
    "copy_": lambda t: t.copy_(t.clone() + 1),
    "update_": lambda t: t.update_(t.clone() + 1),
    "apply_": lambda t: t.apply_(lambda x: x + 1),
    "relu inplace": lambda t: F.relu(t.sub_(1), inplace=True),
}


@pytest.mark.parametrize("depth", [0, 1, 2])
@pytest.mark.parametrize("op", SAME)
def test_repeated_member_written_once(depth: int, op: str) -> None:
    root, a = repeated(depth)
    expected = member(0.5)
    single = lazy_stack([expected])  # the same op on a stack holding it once
    SAME[op](single)
    SAME[op](root)
    assert values(a) == values(expected)


def test_repeated_member_from_repeated_indices() -> None:
    a, b = member(0.5), member(0.75)
    stack = lazy_stack([a, b])[torch.tensor([1, 1, 0])]
    assert stack.members[0] is stack.members[1] is b
    stack.add_(1)
    assert b["x"].tolist() == [1.75, 1.75]
    assert a["x"].tolist() == [1.5, 1.5]


def test_repeated_member_fill_and_set() -> None:
    root, a = repeated(0)
    root.fill_("x", 2.0)
    root["x"] = torch.full((2, 2), 3.0)
    assert a["x"].tolist() == [3.0, 3.0]
    root.set_("x", torch.full((2, 2), 4.0))
    assert a["x"].tolist() == [4.0, 4.0]
    root[0] = member(5.0)  # one position: the member (so both positions) gets it
    assert a["x"].tolist() == [5.0, 5.0]
    root[:] = lazy_stack([member(6.0), member(6.0)])
    assert a["x"].tolist() == [6.0, 6.0]


def per_member(value_a: float, value_b: float) -> Any:
    return lazy_stack([member(value_a, value_a), member(value_b, value_b)])


#: writes that would put different values into the repeated member: refused
DIFFERENT: dict[str, Callable[[Any], Any]] = {
    "add_ column": lambda t: t.add_(torch.tensor([1.0, 2.0])[:, None]),
    "mul_ instance": lambda t: t.mul_(per_member(1.0, 2.0)),
    "sub_ instance": lambda t: t.sub_(per_member(1.0, 2.0)),
    "clamp_ instance": lambda t: t.clamp_(min=per_member(1.0, 2.0)),
    "lerp_": lambda t: t.lerp_(per_member(1.0, 2.0), 0.5),
    "masked_fill_": lambda t: t.masked_fill_(torch.tensor([[True, True], [False, False]]), 3.0),
    "copy_": lambda t: t.copy_(per_member(1.0, 2.0)),
    "update_": lambda t: t.update_(per_member(1.0, 2.0)),
    "update": lambda t: t.update(per_member(1.0, 2.0)),
    "apply_ others": lambda t: t.apply_(lambda x, o: x + o, per_member(1.0, 2.0)),
    "set_": lambda t: t.set_("x", torch.tensor([[1.0, 1.0], [2.0, 2.0]])),
    "setitem key": lambda t: t.__setitem__("x", torch.tensor([[1.0, 1.0], [2.0, 2.0]])),
    "setitem slice": lambda t: t.__setitem__(slice(None), per_member(1.0, 2.0)),
    "setitem column": lambda t: t.__setitem__(
        (slice(None), 0), TensorDict({"x": torch.tensor([1.0, 2.0]), "y": torch.ones(2, 3)}, [2])
    ),
}


@pytest.mark.parametrize("op", DIFFERENT)
def test_repeated_member_different_values_refused(op: str) -> None:
    root, a = repeated(0)
    before = values(a)
    with pytest.raises(OperandError, match="same member|several positions") as info:
        DIFFERENT[op](root)
    assert "'x'" in str(info.value) or "'y'" in str(info.value)
    assert "nothing was written" in str(info.value)
    assert values(a) == before


@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("op", ["add_ column", "masked_fill_", "mul_", "copy_", "update_"])
def test_nested_repeated_member_refusal_changes_nothing(depth: int, op: str) -> None:
    root, a = repeated(depth)
    varying = dense_copy(root)
    varying.apply_(lambda x: x + torch.arange(2.0).reshape(2, *[1] * (x.ndim - 1)))
    ops: dict[str, Callable[[Any], Any]] = {
        "add_ column": lambda t: t.add_(torch.tensor([1.0, 2.0])),  # along the stack dim
        "masked_fill_": lambda t: t.masked_fill_(torch.tensor([True, False]), 3.0),
        "mul_": lambda t: t.mul_(varying),
        "copy_": lambda t: t.copy_(varying),
        "update_": lambda t: t.update_(varying),
    }
    before = values(root)
    with pytest.raises(OperandError, match="same member|several positions"):
        ops[op](root)
    assert values(root) == before  # the dense leaf "z" included: nothing was written


def test_repeated_member_same_operand_values_allowed() -> None:
    root, a = repeated(0)
    root.add_(torch.tensor([3.0, 3.0])[:, None])
    assert a["x"].tolist() == [3.5, 3.5]
    root.mul_(per_member(2.0, 2.0))
    assert a["x"].tolist() == [7.0, 7.0]
    root.update_(per_member(1.0, 1.0))
    assert a["x"].tolist() == [1.0, 1.0]


def test_repeated_member_nan_is_the_same_value() -> None:
    root, a = repeated(0)
    root.copy_(per_member(float("nan"), float("nan")))
    assert a["x"].isnan().all()


def test_distinct_elements_of_a_repeated_member_may_differ() -> None:
    root, a = repeated(0)
    root[torch.tensor([0, 1]), torch.tensor([0, 1])] = TensorDict(
        {"x": torch.tensor([1.0, 2.0]), "y": torch.ones(2, 3)}, [2]
    )
    assert a["x"].tolist() == [1.0, 2.0]


def test_stack_operand_refusal_names_the_key_and_changes_nothing() -> None:
    a, b = member(0.5), member(0.75)
    b["y"] = b["y"].clone().requires_grad_()
    stack = lazy_stack([a, b])
    before = values(stack.detach())
    with pytest.raises(OperandError, match="'y'.*requires grad"):
        stack.mul_(per_member(2.0, 3.0))
    assert values(stack.detach()) == before
    with torch.no_grad():
        stack.mul_(per_member(2.0, 4.0))
    assert a["x"].tolist() == [1.0, 1.0] and b["x"].tolist() == [3.0, 3.0]


def test_stack_operand_of_other_keys_refused() -> None:
    stack = lazy_stack([member(), member()])
    other = lazy_stack([TensorDict({"x": torch.ones(2)}, [2])] * 2)
    with pytest.raises(Exception, match="different keys"):
        stack.add_(other)
    assert stack.members[0]["x"].tolist() == [0.5, 0.5]


def test_repeated_member_inside_nested_stacks() -> None:
    a = member(0.5)
    inner = TensorDict({"s": lazy_stack([a, a])}, [2])
    other = TensorDict({"s": lazy_stack([member(), member()])}, [2])
    root = lazy_stack([other, inner])  # the repeated member in the second one
    root.add_(1)
    assert a["x"].tolist() == [1.5, 1.5]
    before = values(root)
    with pytest.raises(OperandError, match="same member"):
        root.add_(torch.tensor([[0.0, 0.0], [0.0, 1.0]]))  # varies in the second stack
    assert values(root) == before
