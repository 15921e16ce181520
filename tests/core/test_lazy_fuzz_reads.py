"""A differential fuzz of lazy-stack reads: every case (lazy_fuzz_cases.make_case) runs one
read or out-of-place operation on ``lazy_stack(members, dim)`` and on the dense stack of the
same members, and the results must read the same key by key (values, shapes, dtypes, batch
size, names, key order); where the dense stack raises, the lazy one must raise too. The
regressions below are the mismatches the fuzz found, each reduced to its input."""

import pytest
import torch

from tensorclass import TensorDict, lazy_stack

from .lazy_fuzz_cases import FuzzInner, FuzzTyped, make_case, run_case

SEEDS = range(200)


@pytest.mark.parametrize("seed", SEEDS)
def test_lazy_reads_match_the_dense_stack(seed: int) -> None:
    case = make_case(seed)
    assert run_case(case) == [], f"case {seed}: {case.text} (stack dim {case.dim})"


def test_the_fuzz_compares_something() -> None:
    """The cases mostly succeed on both stacks (so values are compared), some raise on both."""
    raised = 0
    for seed in SEEDS:
        case = make_case(seed)
        try:
            case.op(torch.stack(case.dense_members, case.dim))
        except Exception:
            raised += 1
    assert 0 < raised < len(SEEDS) // 4


def test_reshape_and_view_to_no_batch_dims() -> None:
    """``reshape(())`` of one element: the members reshape to no batch dims (``leaf.reshape()``
    with no sizes used to be called, a TypeError, dense or lazy)."""
    members = [
        TensorDict(a=torch.full((1,), float(i)), n={"b": torch.ones(1, 2)}, batch_size=[1])
        for i in range(1)
    ]
    dense = TensorDict(a=torch.zeros(1), n={"b": torch.ones(1, 2)}, batch_size=[1])
    assert dense.reshape(()).batch_size == torch.Size([])
    assert dense.view(()).get(("n", "b")).shape == torch.Size([2])
    stack = lazy_stack([members[0], members[0].clone()], 1)
    reshaped = stack.reshape(2)
    assert reshaped.batch_size == torch.Size([2])
    assert torch.equal(reshaped["a"], torch.stack([m["a"] for m in stack.members], 1).reshape(2))


def test_expand_of_a_0d_batch() -> None:
    """``expand(())`` of an instance with no batch dims (reached by expanding a stack of lazy
    stacks) used to call ``leaf.expand()`` with no sizes."""
    td = TensorDict(a=torch.tensor(1.0), n={"b": torch.ones(2)}, batch_size=[])
    assert td.expand(()).get(("n", "b")).shape == torch.Size([2])
    inner = [TensorDict(a=torch.tensor(float(i)), batch_size=[]) for i in range(3)]
    stack = lazy_stack([lazy_stack(inner, 0)], 0)  # batch [1, 3]
    expanded = stack.expand(-1, 3)
    assert torch.equal(expanded["a"], torch.tensor([[0.0, 1.0, 2.0]]))


def test_expand_a_stack_dim_of_size_one() -> None:
    """As torch expands a dim of size 1, a stack of one member expands along its stack dim
    (the member at every position); it used to be refused."""
    member = TensorDict(a=torch.arange(3.0), batch_size=[3])
    stack = lazy_stack([member], 0)
    expanded = stack.expand(4, 3)
    assert torch.equal(expanded["a"], torch.stack([member["a"]], 0).expand(4, 3))
    assert all(m is expanded.members[0] for m in expanded.members)
    with pytest.raises(Exception, match="only a dim of size 1 expands"):
        lazy_stack([member, member.clone()], 0).expand(4, 3)


def test_stacks_of_lazy_and_dense_members_of_one_class() -> None:
    """A reshape of a stack of lazy stacks reshapes some members across their stack dim (a
    dense result) and others not: their nested keys then mix lazy stacks and dense instances
    of one class, which used to make reading them a StructureMismatchError."""
    inner = FuzzInner(x=torch.zeros(2, 1), k=torch.zeros(2, dtype=torch.long), batch_size=[2])
    typed = [
        FuzzTyped(
            a=torch.full((2,), float(i)),
            b=torch.zeros(2, dtype=torch.long),
            inner=inner.clone(),
            batch_size=[2],
        )
        for i in range(4)
    ]
    dense_member = torch.stack(typed[:2], 0)  # a dense FuzzTyped of batch [2, 2]
    lazy_member = lazy_stack(typed[2:], 1)  # a lazy FuzzTyped of batch [2, 2]
    mixed = lazy_stack([lazy_member, dense_member], 0)
    assert isinstance(mixed, FuzzTyped)
    expected = torch.stack([lazy_member.contiguous(), dense_member], 0)
    assert torch.equal(mixed.get(("inner", "x")), expected.get(("inner", "x")))
    assert torch.equal(mixed.a, expected.a)


def test_names_after_an_integer_or_mask_index() -> None:
    """An index with one tensor part keeps the names of the dims it does not index, dense or
    lazy (the dense engine used to drop every name, the lazy stack kept them)."""
    members = [
        TensorDict(a=torch.zeros(2, 2), batch_size=[2, 2], names=["x", "y"]) for _ in range(3)
    ]
    dense, lazy = torch.stack(members, 0), lazy_stack(members, 0)
    for index in (
        [0, 2],
        torch.tensor([2, 0, 0]),
        torch.tensor([True, False, True]),
        range(0, 3, 2),
    ):
        assert dense[index].names == lazy[index].names == [None, "x", "y"]
    assert dense[:, torch.tensor([1, 0, 1])].names == [None, None, "y"]
    assert dense[torch.tensor([[0, 1], [1, 2]])].names == [None, None, "x", "y"]
    assert dense[torch.ones(3, 2, dtype=torch.bool)].names == [None, "y"]


def test_operators_broadcast_batch_sizes_of_one() -> None:
    """``a + b`` with batch sizes [1, 3] and [2, 3] has batch size [2, 3], as its leaves (the
    dense engine kept the left operand's [1, 3], an instance whose leaves did not fit it;
    the lazy stack, on the right, gave [2, 3])."""
    members = [TensorDict(a=torch.full((3, 4), float(i)), batch_size=[3]) for i in range(2)]
    one = TensorDict(a=torch.ones(1, 3, 4), batch_size=[1, 3])
    for right in (torch.stack(members, 0), lazy_stack(members, 0)):
        for result in (one + right, right + one, one * right):
            assert result.batch_size == torch.Size([2, 3])
            assert result["a"].shape == torch.Size([2, 3, 4])
    nested = TensorDict(n=one.clone(), batch_size=[1, 3])
    wide = TensorDict(n=torch.stack(members, 0), batch_size=[2, 3])
    assert (nested - wide)["n"].batch_size == torch.Size([2, 3])
