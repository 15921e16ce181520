"""Ragged lazy stacks behave as tensordict 0.15.3's: members whose batch sizes differ
(episodes of different lengths) stack lazily with ``-1`` at each dim where they differ.

The expectations are literal (checked against tensordict 0.15.3); the side-by-side tests at
the end run only where tensordict is installed.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    BatchSizeError,
    LazyStackedTensorDict,
    StructureMismatchError,
    TensorDict,
    dense_stack_tds,
    lazy_stack,
    load_memmap,
)


def episodes() -> Any:
    """Two episodes of lengths 3 and 5 (observations of 2 features)."""
    first = TensorDict(obs=torch.zeros(3, 2), batch_size=[3])
    second = TensorDict(obs=torch.ones(5, 2), batch_size=[5])
    return lazy_stack([first, second])


# -- building --------------------------------------------------------------------------


def test_batch_size_is_minus_one_where_members_differ() -> None:
    stack = episodes()
    assert stack.batch_size == torch.Size([2, -1])
    assert stack.shape == torch.Size([2, -1])
    assert stack.batch_dims == 2 and stack.ndim == 2
    assert len(stack) == 2
    assert stack.numel() == 8  # the members' elements together


@pytest.mark.parametrize(
    ("dim", "expected"), [(0, [2, 3, -1]), (1, [3, 2, -1]), (2, [3, -1, 2]), (-1, [3, -1, 2])]
)
def test_two_dim_members_at_every_stack_dim(dim: int, expected: list[int]) -> None:
    a = TensorDict(obs=torch.zeros(3, 4, 2), batch_size=[3, 4])
    b = TensorDict(obs=torch.zeros(3, 6, 2), batch_size=[3, 6])
    assert lazy_stack([a, b], dim).batch_size == torch.Size(expected)


def test_members_differing_in_every_dim() -> None:
    a = TensorDict(obs=torch.zeros(3, 4), batch_size=[3, 4])
    b = TensorDict(obs=torch.zeros(4, 6), batch_size=[4, 6])
    assert lazy_stack([a, b]).batch_size == torch.Size([2, -1, -1])


def test_stack_dim_one_of_one_dim_members() -> None:
    a, b = episodes().unbind(0)
    assert lazy_stack([a, b], 1).batch_size == torch.Size([-1, 2])
    assert lazy_stack([a, b], -1).batch_size == torch.Size([-1, 2])


def test_constructor_gives_the_same_stack() -> None:
    a, b = episodes().unbind(0)
    assert LazyStackedTensorDict(a, b).batch_size == torch.Size([2, -1])


def test_different_numbers_of_batch_dims_are_refused() -> None:
    a = TensorDict(obs=torch.zeros(3), batch_size=[3])
    b = TensorDict(obs=torch.zeros(3, 4), batch_size=[3, 4])
    with pytest.raises(
        BatchSizeError, match=r"different numbers of batch dims \[\[3\], \[3, 4\]\]"
    ):
        lazy_stack([a, b])
    with pytest.raises(BatchSizeError, match="numbers of batch dims"):
        LazyStackedTensorDict(a, b)


def test_dense_torch_stack_still_needs_one_batch_size() -> None:
    a, b = episodes().unbind(0)
    with pytest.raises(
        StructureMismatchError, match=r"different batch sizes.*\[\[3\], \[5\]\].*lazy_stack"
    ):
        torch.stack([a, b])


# -- reading ---------------------------------------------------------------------------


def test_get_of_a_ragged_key_names_the_key_and_shapes() -> None:
    stack = episodes()
    expected = r"'obs'.*\[\[3, 2\], \[5, 2\]\].*as_padded_tensor=True"
    with pytest.raises(StructureMismatchError, match=expected):
        stack.get("obs")
    with pytest.raises(StructureMismatchError, match=expected):
        stack["obs"]


def test_get_as_padded_tensor() -> None:
    stack = episodes()
    padded = stack.get("obs", as_padded_tensor=True)
    assert padded.shape == torch.Size([2, 5, 2])
    assert padded[0, 3:].eq(0).all() and padded[1].eq(1).all()
    ints = lazy_stack([TensorDict(x=torch.arange(2)), TensorDict(x=torch.arange(3))])
    assert ints.get("x", as_padded_tensor=True, padding_value=-1).tolist() == [
        [0, 1, -1],
        [0, 1, 2],
    ]
    left = ints.get("x", as_padded_tensor=True, padding_value=-1, padding_side="left")
    assert left.tolist() == [[-1, 0, 1], [0, 1, 2]]


def test_get_as_nested_tensor_is_jagged_by_default() -> None:
    nested = episodes().get("obs", as_nested_tensor=True)
    assert nested.is_nested and nested.layout == torch.jagged
    assert [t.shape for t in nested.unbind()] == [torch.Size([3, 2]), torch.Size([5, 2])]
    strided = episodes().get("obs", as_nested_tensor=True, layout=torch.strided)
    assert strided.layout == torch.strided
    assert episodes().get_nestedtensor("obs").layout == torch.strided


def test_get_as_list() -> None:
    values = episodes().get("obs", as_list=True)
    assert [v.shape for v in values] == [torch.Size([3, 2]), torch.Size([5, 2])]


def test_nested_ragged_key_pads() -> None:
    a = TensorDict(n=TensorDict(obs=torch.zeros(3, 2), batch_size=[3]), batch_size=[3])
    b = TensorDict(n=TensorDict(obs=torch.zeros(4, 2), batch_size=[4]), batch_size=[4])
    stack = lazy_stack([a, b])
    assert stack["n"].batch_size == torch.Size([2, -1])
    assert stack.get(("n", "obs"), as_padded_tensor=True).shape == torch.Size([2, 4, 2])


def test_indexing() -> None:
    stack = episodes()
    first, second = stack.tensordicts
    assert stack[0] is first and stack[1] is second
    assert stack[1, :2].batch_size == torch.Size([2])
    assert stack[0, 1].batch_size == torch.Size([])
    assert stack[:, 0].batch_size == torch.Size([2])  # every member is long enough
    assert stack[..., 0].batch_size == torch.Size([2])
    assert stack[:, :2]["obs"].shape == torch.Size([2, 2, 2])  # no longer ragged
    assert stack[[0, 1]].batch_size == torch.Size([2, -1])
    assert stack[1:].batch_size == torch.Size([1, 5])
    assert stack[torch.tensor([True, False])].batch_size == torch.Size([1, 3])


def test_unbind_iteration_and_len() -> None:
    stack = episodes()
    assert [m.batch_size for m in stack.unbind(0)] == [torch.Size([3]), torch.Size([5])]
    assert [m.batch_size for m in stack] == [torch.Size([3]), torch.Size([5])]
    assert len(stack) == 2


# -- operations member by member ---------------------------------------------------------


def test_member_wise_operations_keep_the_ragged_batch() -> None:
    stack = episodes()
    for result in (
        stack.apply(lambda x: x + 1),
        stack + 1,
        stack + stack,
        stack.clone(),
        stack.to(torch.float64),
        stack == stack,
        torch.cat([stack, episodes()], 1),
        stack.unsqueeze(0)[0],
        torch.zeros_like(stack),
    ):
        assert result.batch_size == torch.Size([2, -1])
    assert stack.to(torch.float64)[1]["obs"].dtype == torch.float64
    assert (stack + 1)[1]["obs"].eq(2).all()
    assert torch.cat([stack, episodes()], 0).batch_size == torch.Size([4, -1])
    assert stack.unsqueeze(-1).batch_size == torch.Size([2, -1, 1])
    assert stack.transpose(0, 1).batch_size == torch.Size([-1, 2])


def test_in_place_operations_reach_the_members() -> None:
    stack = episodes()
    first, second = stack.tensordicts
    stack.apply_(lambda x: x + 1)
    stack.mul_(2)
    assert first["obs"].eq(2).all() and second["obs"].eq(4).all()
    stack.zero_()
    assert second["obs"].eq(0).all()


def test_write_a_member_at_its_index() -> None:
    stack = episodes()
    second = stack[1]
    stack[1] = TensorDict(obs=torch.full((5, 2), 7.0), batch_size=[5])
    assert second["obs"].eq(7).all()
    stack.update_at_(TensorDict(obs=torch.full((3, 2), 9.0), batch_size=[3]), 0)
    assert stack[0]["obs"].eq(9).all()
    stack[1, :2] = TensorDict(obs=torch.full((2, 2), 3.0), batch_size=[2])
    assert second["obs"][:, 0].tolist() == [3, 3, 7, 7, 7]


def test_write_of_the_wrong_length_is_refused_and_writes_nothing() -> None:
    stack = episodes()
    with pytest.raises(BatchSizeError, match=r"batch size \[4\].*\[5\]"):
        stack[1] = TensorDict(obs=torch.full((4, 2), 7.0), batch_size=[4])
    with pytest.raises(BatchSizeError, match="2 members"):
        stack[:] = lazy_stack([TensorDict(obs=torch.zeros(3, 2), batch_size=[3])])
    assert stack[1]["obs"].eq(1).all()


def test_append_and_insert_members_of_other_lengths() -> None:
    stack = episodes()
    stack.append(TensorDict(obs=torch.ones(7, 2), batch_size=[7]))
    stack.insert(0, TensorDict(obs=torch.ones(1, 2), batch_size=[1]))
    assert stack.batch_size == torch.Size([4, -1])
    assert [m.batch_size[0] for m in stack] == [1, 3, 5, 7]
    with pytest.raises(BatchSizeError, match=r"batch size \[3, 2\]"):
        stack.append(TensorDict(obs=torch.ones(3, 2), batch_size=[3, 2]))
    # a stack whose members share their size takes only that size (as tensordict)
    even = lazy_stack([TensorDict(obs=torch.zeros(3), batch_size=[3])] * 2)
    with pytest.raises(BatchSizeError, match=r"batch size \[7\]"):
        even.append(TensorDict(obs=torch.zeros(7), batch_size=[7]))
    assert even.batch_size == torch.Size([2, 3])


def test_contiguous_refuses_densify_nests() -> None:
    stack = episodes()
    with pytest.raises(StructureMismatchError, match="'obs'"):
        stack.contiguous()
    dense = stack.densify()
    assert type(dense) is TensorDict and dense.batch_size == torch.Size([2, -1])
    assert dense["obs"].is_nested and dense["obs"].layout == torch.strided
    assert stack.densify(layout=torch.jagged)["obs"].layout == torch.jagged


def test_dense_stack_tds_of_ragged_stacks() -> None:
    result = dense_stack_tds([episodes(), episodes()], 0)
    assert result.batch_size == torch.Size([2, 2, -1])
    assert [m.batch_size for m in result.tensordicts] == [torch.Size([2, 3]), torch.Size([2, 5])]
    assert dense_stack_tds(lazy_stack([episodes(), episodes()])).batch_size == (2, 2, -1)


def test_masks_over_the_stack_dim() -> None:
    stack = episodes()
    filled = stack.masked_fill(torch.tensor([True, False]), 5.0)
    assert filled.batch_size == torch.Size([2, -1])
    assert filled[0]["obs"].eq(5).all() and filled[1]["obs"].eq(1).all()
    stack.masked_fill_(torch.tensor([False, True]), 4.0)
    assert stack[1]["obs"].eq(4).all() and stack[0]["obs"].eq(0).all()
    assert stack[torch.tensor([False, True])].batch_size == torch.Size([1, 5])


def test_where_member_by_member() -> None:
    stack = episodes()
    picked = stack.where(torch.tensor([False, True]), 7.0)  # as tensordict
    assert picked.batch_size == torch.Size([2, -1])
    assert picked[0]["obs"].eq(7).all() and picked[1]["obs"].eq(1).all()
    assert torch.where(torch.tensor(True), stack, 0)[1]["obs"].eq(1).all()


def test_keyed_operations_member_by_member() -> None:
    stack = episodes()
    stack.update_(episodes() + 1)
    assert stack[1]["obs"].eq(2).all()
    stack.copy_(episodes())
    assert stack[1]["obs"].eq(1).all()
    assert stack.lerp(episodes() + 2, 0.5)[1]["obs"].eq(2).all()
    assert stack.named_apply(lambda key, x: x + 1).batch_size == torch.Size([2, -1])
    stack.rename_key_("obs", "observation")
    assert list(stack.keys()) == ["observation"]
    nested = lazy_stack([TensorDict(n={"x": torch.zeros(n)}, batch_size=[n]) for n in (2, 4)])
    flat = nested.flatten_keys()
    assert list(flat.keys()) == ["n.x"] and flat.batch_size == torch.Size([2, -1])
    assert list(flat.unflatten_keys().keys(True, True)) == [("n", "x")]


def test_reshape_to_one_dim_gives_the_elements() -> None:
    stack = episodes()
    rows = stack.reshape(-1)
    assert rows.batch_size == torch.Size([8]) and rows["obs"].shape == torch.Size([8, 2])
    assert stack.flatten(0, 1).batch_size == torch.Size([8])
    rows[4] = TensorDict(obs=torch.full((2,), 6.0))  # a view: reaches the member
    assert stack[1]["obs"][1].tolist() == [6.0, 6.0]
    with pytest.raises(BatchSizeError, match="ragged"):
        stack.reshape(2, 4)
    with pytest.raises(BatchSizeError, match="ragged"):
        stack.view(-1)


def test_splitting_a_ragged_dim_is_refused() -> None:
    with pytest.raises(BatchSizeError, match="cannot unbind dim 1"):
        episodes().unbind(1)
    with pytest.raises(BatchSizeError, match="cannot split dim 1"):
        episodes().split(2, 1)
    assert [p.batch_size for p in episodes().split(1, 0)] == [(1, 3), (1, 5)]


def test_cat_with_a_dense_instance_along_the_stack_dim() -> None:
    stack = episodes()
    dense = TensorDict(obs=torch.zeros(2, 4, 2), batch_size=[2, 4])
    joined = torch.cat([stack, dense], 0)
    assert joined.batch_size == torch.Size([4, -1])
    assert [m.batch_size[0] for m in joined] == [3, 5, 4, 4]


def test_member_wise_reductions_refuse() -> None:
    with pytest.raises(StructureMismatchError, match="'obs'"):
        episodes().sum()


def test_repr_shows_minus_one_and_exclusive_fields() -> None:
    # tensordict 0.15.3's compact form: each leaf's dims after the batch dims
    assert repr(episodes()) == (
        "LazyStackedTensorDict(batch_size=[2,-1], stack_dim=0, fields={obs: f32[2]})"
    )
    a = TensorDict(obs=torch.zeros(3), x=torch.zeros(3), batch_size=[3])
    b = TensorDict(obs=torch.zeros(4), y=torch.zeros(4, 1), batch_size=[4])
    assert repr(lazy_stack([a, b])) == (
        "LazyStackedTensorDict(batch_size=[2,-1], stack_dim=0, fields={\n"
        "    obs: f32[]}, exclusive_fields={0: {x: f32[]}, 1: {y: f32[1]}})"
    )


def test_from_modules_of_differently_structured_modules() -> None:
    small = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    wide = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Linear(5, 2))
    with pytest.raises(StructureMismatchError, match="lazy_stack=True"):
        TensorDict.from_modules(small, wide)
    params = TensorDict.from_modules(small, wide, lazy_stack=True)
    assert isinstance(params, LazyStackedTensorDict) and params.batch_size == torch.Size([2])
    weights = params.get(("0", "weight"), as_list=True)
    assert [w.shape for w in weights] == [torch.Size([4, 3]), torch.Size([5, 3])]
    assert isinstance(params[1]["0", "weight"], torch.nn.Parameter)
    x = torch.randn(3)
    with params[1].to_module(small):
        assert torch.allclose(small(x), wide(x))
    shorter = torch.nn.Sequential(torch.nn.Linear(3, 4))
    mixed = TensorDict.from_modules(small, shorter, lazy_stack=True)
    assert list(mixed.keys()) == ["0"]
    assert "exclusive_fields={\n    0: {1: {bias: f32[2], weight: f32[2,4]}}})" in repr(mixed)


def test_pytree_round_trip_keeps_each_members_batch_size() -> None:
    stack = episodes()
    mapped = torch.utils._pytree.tree_map(lambda x: x + 1, stack)
    assert mapped.batch_size == torch.Size([2, -1])
    assert [m.batch_size for m in mapped] == [torch.Size([3]), torch.Size([5])]
    assert mapped[1]["obs"].eq(2).all()
    with pytest.raises(StructureMismatchError, match="ragged"):
        torch.vmap(lambda t: t + 1)(stack)  # the stack dim has no one size to map


def test_nested_in_a_dense_instance() -> None:
    outer = TensorDict(episode=episodes(), batch_size=[2])
    assert outer["episode"].batch_size == torch.Size([2, -1])
    assert outer[1]["episode"].batch_size == torch.Size([5])
    with pytest.raises(BatchSizeError, match=r"\[2, -1\]"):
        TensorDict(episode=episodes(), batch_size=[2, 3])


# -- saving ---------------------------------------------------------------------------------


def test_memmap_round_trip(tmp_path: Path) -> None:
    stack = episodes()
    stack.memmap(tmp_path / "saved")
    assert (tmp_path / "saved" / "0").is_dir() and (tmp_path / "saved" / "1").is_dir()
    loaded = load_memmap(tmp_path / "saved")
    assert isinstance(loaded, LazyStackedTensorDict)
    assert loaded.batch_size == torch.Size([2, -1])
    assert [m["obs"].shape for m in loaded] == [torch.Size([3, 2]), torch.Size([5, 2])]
    assert loaded[1]["obs"].eq(1).all()


# -- side by side with tensordict ------------------------------------------------------------


def test_side_by_side_batch_sizes_and_reads() -> None:
    td = pytest.importorskip("tensordict")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = td.lazy_stack(
            [
                td.TensorDict(obs=torch.zeros(3, 2), batch_size=[3]),
                td.TensorDict(obs=torch.ones(5, 2), batch_size=[5]),
            ]
        )
    ours = episodes()
    assert ours.batch_size == theirs.batch_size
    for options in ({"as_padded_tensor": True}, {"as_padded_tensor": True, "padding_value": 3}):
        assert torch.equal(ours.get("obs", **options), theirs.get("obs", **options))
    assert (
        ours.get("obs", as_nested_tensor=True).layout
        == theirs.get("obs", as_nested_tensor=True).layout
    )
    assert ours[1, :2].batch_size == theirs[1, :2].batch_size
    assert ours[1:].batch_size == theirs[1:].batch_size
    assert (ours + 1).batch_size == (theirs + 1).batch_size


def _their_episodes(td: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return td.lazy_stack(
            [
                td.TensorDict(obs=torch.zeros(3, 2), batch_size=[3]),
                td.TensorDict(obs=torch.ones(5, 2), batch_size=[5]),
            ]
        )


def test_side_by_side_operations() -> None:
    td = pytest.importorskip("tensordict")
    theirs, ours = _their_episodes(td), episodes()
    mask = torch.tensor([True, False])
    for op in (
        lambda s: s.masked_fill(mask, 5.0),
        lambda s: s.apply(lambda x: x * 2),
        lambda s: torch.cat([s, s], 0),
        lambda s: torch.cat([s, s], 1),
        lambda s: s.reshape(-1),
        lambda s: s.unsqueeze(-1),
        lambda s: s[:, 0],
    ):
        assert op(ours).batch_size == op(theirs).batch_size
    assert torch.equal(
        ours.masked_fill(mask, 5.0)[0]["obs"], theirs.masked_fill(mask, 5.0)[0]["obs"]
    )
    grown_theirs, grown_ours = _their_episodes(td), episodes()
    grown_theirs.append(td.TensorDict(obs=torch.ones(7, 2), batch_size=[7]))
    grown_ours.append(TensorDict(obs=torch.ones(7, 2), batch_size=[7]))
    assert grown_ours.batch_size == grown_theirs.batch_size
    dense_theirs = td.dense_stack_tds([theirs, theirs.clone()], 0)
    dense_ours = dense_stack_tds([ours, ours.clone()], 0)
    assert dense_ours.batch_size == dense_theirs.batch_size
    assert dense_ours.stack_dim == dense_theirs.stack_dim


def test_side_by_side_a_ragged_save_of_tensordict_loads(tmp_path: Path) -> None:
    td = pytest.importorskip("tensordict")
    _their_episodes(td).memmap(tmp_path / "theirs")
    loaded = load_memmap(tmp_path / "theirs")
    assert loaded.batch_size == torch.Size([2, -1])
    assert [m["obs"].shape for m in loaded] == [torch.Size([3, 2]), torch.Size([5, 2])]
