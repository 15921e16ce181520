"""Bad input refused with an error naming the key, the object left unchanged; and the
findings of differential fuzzing against tensordict (torch semantics decide)."""

from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import (
    BatchSizeError,
    FieldTypeError,
    OperandError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)


class Inner(TensorClass):
    y: torch.Tensor


class Outer(TensorClass):
    x: torch.Tensor
    inner: Inner
    name: str = "n"
    note: str | None = None


def make_td() -> Any:
    return TensorDict({"x": torch.arange(12.0).reshape(4, 3), "n": {"y": torch.ones(4, 2)}}, [4])


def make_typed() -> Any:
    inner = Inner(y=torch.ones(4, 2), batch_size=[4])
    return Outer(x=torch.arange(12.0).reshape(4, 3), inner=inner, batch_size=[4])


def make_lazy() -> Any:
    members = [
        TensorDict({"x": torch.arange(3.0) + i, "n": {"y": torch.ones(2)}}, []) for i in range(4)
    ]
    return lazy_stack(members)


MAKERS: list[Callable[[], Any]] = [make_td, make_typed, make_lazy]
KINDS = pytest.mark.parametrize("make", MAKERS, ids=["td", "typed", "lazy"])


def snapshot(obj: Any) -> dict[Any, torch.Tensor]:
    leaves = {key: obj.get(key) for key in obj.keys(True, True)}
    return {key: v.clone() for key, v in leaves.items() if isinstance(v, torch.Tensor)}


def assert_unchanged(obj: Any, before: dict[Any, torch.Tensor]) -> None:
    for key, value in before.items():
        torch.testing.assert_close(obj.get(key), value)


# -- apply: the batch dims are kept unless batch_size= says otherwise -----------------------


@pytest.mark.parametrize("make", [make_td, make_typed, lambda: make_lazy().unsqueeze(1)])
def test_apply_refuses_a_fn_that_drops_batch_dims(make: Callable[[], Any]) -> None:
    obj = make()
    before = snapshot(obj)
    with pytest.raises(BatchSizeError, match="batch_size=") as info:
        obj.apply(lambda t: t.sum(0))
    assert info.value.key is not None
    assert_unchanged(obj, before)


@pytest.mark.parametrize("make", [make_td, make_typed], ids=["td", "typed"])
def test_apply_with_batch_size_may_change_the_batch_dims(make: Callable[[], Any]) -> None:
    obj = make()
    out = obj.apply(lambda t: t[:2], batch_size=[2])
    assert out.batch_size == (2,)
    torch.testing.assert_close(out.get("x"), obj.get("x")[:2])


def test_apply_nested_leaf_that_breaks_its_batch_names_the_nested_key() -> None:
    td = TensorDict({"n": {"y": torch.ones(4, 2)}}, [4])
    with pytest.raises(BatchSizeError, match="'y'"):
        td.apply(lambda t: t.reshape(-1))  # (4, 2) -> (8,): no longer starts with 4


@KINDS
def test_apply_keeping_the_batch_still_works(make: Callable[[], Any]) -> None:
    obj = make()
    out = obj.apply(lambda t: t * 2)
    torch.testing.assert_close(out.get("x"), obj.get("x") * 2)


# -- apply_: every leaf or none -------------------------------------------------------------


def failing_on_call(n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    calls = [0]

    def fn(t: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        if calls[0] == n:
            raise RuntimeError("boom")
        return t + 1

    return fn


@KINDS
def test_a_raising_apply_writes_no_leaf(make: Callable[[], Any]) -> None:
    obj = make()
    before = snapshot(obj)
    leaves = len(before) * (4 if obj.__class__.__name__.startswith("Lazy") else 1)
    with pytest.raises(RuntimeError, match="boom"):
        obj.apply_(failing_on_call(leaves))  # fails on the last leaf it reaches
    assert_unchanged(obj, before)


@KINDS
def test_apply_inplace_writes_every_leaf(make: Callable[[], Any]) -> None:
    obj = make()
    before = snapshot(obj)
    obj.apply_(lambda t: t + 1)
    for key, value in before.items():
        torch.testing.assert_close(obj.get(key), value + 1)


def test_apply_inplace_result_that_does_not_fit_writes_nothing() -> None:
    td = make_td()
    before = snapshot(td)
    with pytest.raises(OperandError, match="nothing was written"):
        td.apply(lambda t: t[..., :1].expand(*t.shape[:-1], 1).repeat(1, 2), inplace=True)
    assert_unchanged(td, before)


# -- unflatten_keys: no key silently lost ---------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"a.b": torch.zeros(2), "a": torch.ones(2)},
        {"a": torch.ones(2), "a.b": torch.zeros(2)},
        {"a.b": torch.zeros(2), "a": {"b": torch.ones(2)}},
        {"a.b.c": torch.zeros(2), "a.b": torch.ones(2)},
    ],
)
def test_unflatten_keys_refuses_colliding_keys(data: dict[str, Any]) -> None:
    td = TensorDict(data, [2])
    before = snapshot(td)
    with pytest.raises(StructureMismatchError, match="unflatten_keys") as info:
        td.unflatten_keys(".")
    assert info.value.key in data
    with pytest.raises(StructureMismatchError):
        td.unflatten_keys(".", inplace=True)
    assert_unchanged(td, before)


def test_unflatten_keys_merges_a_nested_level_with_dotted_keys() -> None:
    td = TensorDict({"a": {"c": torch.ones(2)}, "a.b": torch.zeros(2)}, [2])
    out = td.unflatten_keys(".")
    assert set(out.keys(True, True)) == {("a", "c"), ("a", "b")}
    torch.testing.assert_close(out["a", "b"], torch.zeros(2))


# -- str fields -----------------------------------------------------------------------------


def test_an_int_is_refused_for_a_str_field() -> None:
    with pytest.raises(FieldTypeError, match="name"):
        Outer(
            x=torch.zeros(4, 3),
            inner=Inner(y=torch.ones(4), batch_size=[4]),
            name=3,
            batch_size=[4],
        )  # type: ignore[arg-type]
    obj = make_typed()
    with pytest.raises(FieldTypeError, match=r"Outer\.name is a str field; got int 3"):
        obj.name = 3
    with pytest.raises(FieldTypeError, match="note"):
        obj.set("note", 4)
    assert obj.name == "n" and obj.note is None
    obj.note = "fine"
    obj.note = None
    assert obj.note is None


# -- masked_fill / where ---------------------------------------------------------------------


@KINDS
@pytest.mark.parametrize("op", ["masked_fill", "masked_fill_", "where"])
def test_a_wrong_shape_mask_names_the_key(make: Callable[[], Any], op: str) -> None:
    obj = make()
    before = snapshot(obj)
    mask = torch.ones(5, dtype=torch.bool)
    with pytest.raises(BatchSizeError, match=r"mask of shape \[5\]") as info:
        getattr(obj, op)(mask, 0.0)
    assert info.value.key is not None
    assert_unchanged(obj, before)


@KINDS
@pytest.mark.parametrize("op", ["masked_fill", "masked_fill_", "where"])
def test_a_mask_on_another_device_names_the_key(make: Callable[[], Any], op: str) -> None:
    obj = make()
    before = snapshot(obj)
    mask = torch.ones(4, dtype=torch.bool, device="meta")
    with pytest.raises(OperandError, match="meta") as info:
        getattr(obj, op)(mask, 0.0)
    assert info.value.key is not None
    assert_unchanged(obj, before)


def leading_mask(mask: torch.Tensor, leaf: torch.Tensor) -> torch.Tensor:
    return mask.reshape(mask.shape + (1,) * (leaf.ndim - mask.ndim))


@pytest.mark.parametrize("mask_shape", [(4,), (4, 1)])
def test_a_mask_covers_leading_batch_dims_and_never_grows_leaves(
    mask_shape: tuple[int, ...],
) -> None:
    td = TensorDict({"a": torch.zeros(4, 1), "b": torch.zeros(4, 1, 3)}, [4, 1])
    mask = torch.tensor([True, False, True, False]).reshape(mask_shape)
    filled = td.masked_fill(mask, 1.0)
    chosen = td.where(mask, torch.tensor(2.0))
    for key in ("a", "b"):
        leaf = td[key]
        assert filled[key].shape == leaf.shape
        torch.testing.assert_close(filled[key], leaf.masked_fill(leading_mask(mask, leaf), 1.0))
        torch.testing.assert_close(
            chosen[key], torch.where(leading_mask(mask, leaf), leaf, torch.tensor(2.0))
        )


def test_a_mask_over_trailing_batch_dims_is_refused() -> None:
    td = TensorDict({"a": torch.zeros(4, 3)}, [4, 3])
    with pytest.raises(BatchSizeError, match=r"expected a shape like \[4\]"):
        td.masked_fill(torch.ones(3, dtype=torch.bool), 1.0)


def test_masked_fill_on_a_lazy_stack_matches_the_dense_result() -> None:
    stack = make_lazy()
    mask = torch.tensor([True, False, False, True])
    torch.testing.assert_close(
        stack.masked_fill(mask, -1.0)["x"], stack.contiguous().masked_fill(mask, -1.0)["x"]
    )


# -- differential fuzzing findings -----------------------------------------------------------


@KINDS
@pytest.mark.parametrize("value", [1, 2.5, True])
def test_a_python_scalar_at_an_advanced_index_is_written_as_torch_does(
    make: Callable[[], Any], value: Any
) -> None:
    obj = make()
    obj.set("ints", torch.zeros(4, dtype=torch.int64)) if not isinstance(obj, Outer) else None
    before = snapshot(obj)
    obj[[0, 2]] = value
    for key, leaf in before.items():
        expected = leaf.clone()
        expected[[0, 2]] = value
        torch.testing.assert_close(obj.get(key), expected)


def test_a_bool_mask_index_with_a_scalar_casts_per_leaf() -> None:
    td = TensorDict({"f": torch.zeros(3), "i": torch.zeros(3, dtype=torch.int64)}, [3])
    mask = torch.tensor([True, False, True])
    td[mask] = 2.5
    expected_i = torch.zeros(3, dtype=torch.int64)
    expected_i[mask] = 2.5
    torch.testing.assert_close(td["i"], expected_i)
    torch.testing.assert_close(td["f"], torch.tensor([2.5, 0.0, 2.5]))


def test_del_on_a_lazy_stack_of_a_repeated_member() -> None:
    member = TensorDict({"a": torch.zeros(3), "b": torch.ones(3)}, [3])
    stack = lazy_stack([member, member])
    del stack["a"]
    assert list(stack.keys()) == ["b"]
    assert list(member.keys()) == ["b"]


def test_a_size_one_stack_dim_refuses_a_length_two_mask() -> None:
    stack = lazy_stack([TensorDict({"a": torch.zeros(3)}, [3])])
    with pytest.raises(IndexError, match="length 2"):
        stack[torch.tensor([True, False])]
    dense = torch.zeros(1, 3)
    with pytest.raises(IndexError):
        dense[torch.tensor([True, False])]


def test_del_on_a_lazy_stack_indexed_with_repeated_indices() -> None:
    members = [TensorDict({"a": torch.zeros(3), "b": torch.ones(3)}, [3]) for _ in range(2)]
    stack = lazy_stack(members)
    repeated = stack[[0, 0, 1]]
    del repeated["a"]  # member 0 appears twice: deleted once, no error
    assert list(repeated.keys()) == ["b"]
    assert repeated.batch_size == (3, 3)
    torch.testing.assert_close(repeated["b"], torch.ones(3, 3))


def test_a_size_one_stack_dim_refuses_a_length_two_mask_with_more_indices() -> None:
    stack = lazy_stack([TensorDict({"a": torch.zeros(3)}, [3])])
    with pytest.raises(IndexError):
        stack[torch.tensor([True, False]), 0]
