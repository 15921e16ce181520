"""``pack`` and ``PackLayout``: every leaf in one tensor of features, and back."""

from __future__ import annotations

import pytest
import torch

from tensorclass import (
    OperandError,
    PackLayout,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)


class Inner(TensorClass):
    stress: torch.Tensor


class State(TensorClass):
    p: torch.Tensor
    v: torch.Tensor
    inner: Inner


def make_td() -> TensorDict:
    return TensorDict(
        {"v": torch.randn(5, 3), "p": torch.randn(5), "nested": {"s": torch.randn(5, 2, 2)}},
        [5],
    )


def test_columns_follow_sorted_keys_and_leaves_flatten_after_the_batch() -> None:
    td = make_td()
    flat, layout = td.pack()
    assert layout.keys == (("nested", "s"), "p", "v")
    assert layout.offsets == (0, 4, 5) and layout.numel == 8
    expected = torch.cat([td["nested", "s"].reshape(5, -1), td["p"][:, None], td["v"]], -1)
    assert torch.equal(flat, expected) and flat.is_contiguous()


def test_unpack_gives_views_of_the_packed_tensor() -> None:
    td = make_td()
    flat, layout = td.pack()
    out = layout.unpack(flat)
    assert (out == td).all() and type(out) is TensorDict
    out["p"].add_(1)
    assert torch.equal(flat[:, 4], td["p"] + 1)


def test_unpack_takes_other_batch_shapes() -> None:
    td = make_td()
    flat, layout = td.pack()
    rows = flat.index_select(0, torch.tensor([0, 2]))
    out = layout.unpack(rows)
    assert out.batch_size == torch.Size([2])
    assert torch.equal(out["nested", "s"], td["nested", "s"][[0, 2]])
    out2 = layout.unpack(torch.stack([flat, flat]))
    assert out2.batch_size == torch.Size([2, 5])


@pytest.mark.parametrize("dim", [0, 1, -2])
def test_pack_along_another_dim(dim: int) -> None:
    td = make_td()
    flat, layout = td.pack(dim)
    reference, _ = td.pack()
    assert torch.equal(flat, reference.movedim(-1, dim)) and flat.is_contiguous()
    assert layout.dim == (dim - 2 if dim >= 0 else dim)
    assert (layout.unpack(flat) == td).all()


def test_typed_classes_come_back_with_their_class() -> None:
    x = State(
        p=torch.randn(4),
        v=torch.randn(4, 3),
        inner=Inner(stress=torch.randn(4, 3, 3), batch_size=[4]),
        batch_size=[4],
    )
    flat, layout = x.pack()
    assert flat.shape == (4, 13) and layout.cls is State
    out = layout.unpack(flat)
    assert type(out) is State and type(out.inner) is Inner
    assert torch.equal(out.inner.stress, x.inner.stress) and torch.equal(out.v, x.v)


def test_lazy_stack_packs_like_its_dense_form() -> None:
    parts = [make_td()[0], make_td()[1]]
    lazy = lazy_stack(parts)
    flat, layout = lazy.pack()
    dense, _ = torch.stack(parts).pack()
    assert torch.equal(flat, dense)
    assert layout.cls is None


def test_a_layout_fixes_the_columns() -> None:
    td = make_td()
    _, layout = td.pack()
    other = TensorDict(
        {"p": torch.ones(2), "v": torch.ones(2, 3), "nested": {"s": torch.ones(2, 2, 2)}}, [2]
    )
    flat, same = other.pack(layout=layout)
    assert same is layout and flat.shape == (2, 8)
    with pytest.raises(StructureMismatchError, match=r"missing \['p'\]"):
        other.exclude("p").pack(layout=layout)
    with pytest.raises(StructureMismatchError, match="'v' has feature shape \\(4,\\)"):
        other.set("v", torch.ones(2, 4)).pack(layout=layout)


def test_layouts_compare_by_value_and_hash() -> None:
    _, a = make_td().pack()
    _, b = make_td().pack(1)
    assert a == b and hash(a) == hash(b)
    assert PackLayout(keys=("x",), shapes=([2],)).numel == 2


def test_non_tensor_values_and_mixed_dtypes_are_refused() -> None:
    td = make_td()
    td["name"] = "x"
    with pytest.raises(OperandError, match="'name' holds a non-tensor value"):
        td.pack()
    mixed = TensorDict({"a": torch.zeros(2), "b": torch.zeros(2, dtype=torch.int64)}, [2])
    with pytest.raises(OperandError, match="one dtype and device"):
        mixed.pack()


def test_unpack_checks_the_width() -> None:
    _, layout = make_td().pack()
    with pytest.raises(StructureMismatchError, match="8 entries along dim -1"):
        layout.unpack(torch.zeros(5, 7))
