"""Small tensordict spellings: as_tensor, clear_refs_for_compile_, TensorCollection."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from tensorclass import (
    BatchSizeError,
    LazyStackedTensorDict,
    MemoryMappedTensor,
    TensorAttrs,
    TensorClass,
    TensorCollection,
    TensorDict,
    collate,
    lazy_stack,
    tensorclass,
)


class Inner(TensorClass):
    w: torch.Tensor


class Outer(TensorClass):
    inner: Inner
    x: torch.Tensor


def test_as_tensor_gives_plain_tensors_over_the_same_storage() -> None:
    mapped = MemoryMappedTensor.from_tensor(torch.arange(4.0))
    td = TensorDict({"a": mapped, "n": {"b": MemoryMappedTensor.from_tensor(torch.ones(4))}}, [4])
    td.lock_()
    plain = td.as_tensor()
    assert type(plain["a"]) is torch.Tensor and type(plain["n", "b"]) is torch.Tensor
    assert plain["a"].data_ptr() == mapped.data_ptr()
    assert plain.is_locked and torch.equal(plain["a"], mapped)


def test_as_tensor_keeps_the_class() -> None:
    obj = Outer(
        inner=Inner(w=MemoryMappedTensor.from_tensor(torch.ones(2, 3)), batch_size=[2]),
        x=torch.zeros(2),
        batch_size=[2],
    )
    plain = obj.as_tensor()
    assert type(plain) is Outer and type(plain.inner.w) is torch.Tensor
    stack = lazy_stack([obj[0], obj[1]])
    assert type(stack.as_tensor()) is type(stack)


def test_clear_refs_for_compile_forgets_pending_with_records() -> None:
    td = TensorDict({"a": torch.zeros(2, 3), "n": {"b": torch.zeros(2, 3)}}, [2, 3])
    permuted = td.permute(1, 0)
    assert permuted._last_op is not None
    assert permuted.clear_refs_for_compile_() is permuted
    assert permuted._last_op is None
    with permuted:  # nothing to undo any more
        permuted["c"] = torch.ones(3, 2)
    assert "c" not in td


def test_tensor_collection_is_the_base_of_every_tensor_class() -> None:
    @tensorclass
    class Decorated:
        x: torch.Tensor

    assert issubclass(TensorDict, TensorCollection) and issubclass(Outer, TensorCollection)
    assert issubclass(LazyStackedTensorDict, TensorCollection)
    assert isinstance(Decorated(x=torch.zeros(1), batch_size=[1]), TensorCollection)
    assert not isinstance(torch.zeros(1), TensorCollection)


def test_decorator_kw_only_and_is_tensor_collection_keyword() -> None:
    from tensorclass import is_tensor_collection

    @tensorclass(kw_only=True)
    class Pair:
        a: torch.Tensor
        b: torch.Tensor

    assert Pair(a=torch.zeros(2), b=torch.ones(2), batch_size=[2]).batch_size == (2,)
    with pytest.raises(TypeError, match="positional"):
        Pair(torch.zeros(2), torch.ones(2), batch_size=[2])  # type: ignore[misc]
    assert is_tensor_collection(datatype=Pair) and not is_tensor_collection(datatype=int)


def test_lazy_stack_constructor_keywords() -> None:
    tds = [TensorDict({"a": torch.zeros(3)}, [3]) for _ in range(2)]
    stack = LazyStackedTensorDict(
        *tds, stack_dim=1, names=["x", "y"], device="cpu", batch_size=[3, 2]
    )
    assert (
        stack.batch_size == (3, 2)
        and stack.names == ["x", "y"]
        and stack.device == torch.device("cpu")
    )
    assert LazyStackedTensorDict(*tds, stack_dim_name="t").names == ["t", None]
    with pytest.raises(BatchSizeError, match=r"batch_size=\[5\] given"):
        LazyStackedTensorDict(*tds, batch_size=[5])


class Sample(TensorClass):
    ids: torch.Tensor
    score: torch.Tensor


def test_collate_stacks_samples_and_containers() -> None:
    samples = [(TensorDict(x=torch.full((3,), float(i))), i) for i in range(4)]
    batch, labels = collate(samples)
    assert batch.batch_size == (4,) and labels.tolist() == [0, 1, 2, 3]
    clouds = [TensorDict(points=torch.randn(n, 3)) for n in (5, 2)]
    assert isinstance(collate(clouds), LazyStackedTensorDict)
    assert collate({"a": 1}) == {"a": 1}  # not a list: as it is
    named = collate([{"s": Sample(ids=torch.ones(2), score=torch.tensor(1.0))}] * 3)
    assert type(named["s"]) is Sample and named["s"].batch_size == (3,)
    loader = DataLoader(samples, batch_size=2, collate_fn=collate)
    assert next(iter(loader))[0].batch_size == (2,)


def test_collate_pads_and_masks() -> None:
    samples = [Sample(ids=torch.arange(1, n + 1), score=torch.tensor(float(n))) for n in (2, 4, 1)]
    batch = collate([s.to_tensordict() for s in samples], pad_keys={"ids": -1}, mask_key="mask")
    assert batch["ids"].tolist() == [[1, 2, -1, -1], [1, 2, 3, 4], [1, -1, -1, -1]]
    assert batch["mask", "ids"].tolist() == [
        [True, True, False, False],
        [True] * 4,
        [True, False, False, False],
    ]
    typed = collate(samples, pad_keys={"ids": 0})
    assert type(typed) is Sample and typed.ids.shape == (3, 4)
    assert [s["ids"].shape[0] for s in samples] == [2, 4, 1]  # samples untouched


def test_collate_nested_keys() -> None:
    samples = [TensorDict(points=torch.randn(n, 3), score=torch.tensor(1.0)) for n in (2, 5)]
    batch = collate(samples, nested_keys=["points"])
    assert batch["points"].is_nested and [t.shape[0] for t in batch["points"].unbind()] == [2, 5]
    assert batch["score"].shape == (2,)


def test_collate_refuses_bad_options() -> None:
    samples = [TensorDict(ids=torch.ones(2)) for _ in range(2)]
    with pytest.raises(ValueError, match="mask_key needs pad_keys"):
        collate(samples, mask_key="m")
    with pytest.raises(ValueError, match="in both"):
        collate(samples, pad_keys={"ids": 0}, nested_keys=["ids"])
    with pytest.raises(KeyError, match="'missing'"):
        collate(samples, pad_keys={"missing": 0})
    with pytest.raises(ValueError, match="without batch dims"):
        collate([TensorDict(ids=torch.ones(2, 3), batch_size=[2])] * 2, pad_keys={"ids": 0})


class Mixed(TensorClass):
    a: torch.Tensor
    inner: Inner


def test_attrs_describes_every_leaf_and_to_applies_it() -> None:
    source = TensorDict(
        {
            "a": torch.zeros(3),
            "b": torch.zeros(3, 2, dtype=torch.int32),
            "n": {"c": torch.zeros(3, dtype=torch.float64)},
        },
        [3],
    )
    attrs = source.attrs()
    assert attrs.batch_size == () and attrs.device is None
    assert isinstance(attrs["b"], TensorAttrs)
    assert (attrs["b"].tgt_device, attrs["b"].tgt_dtype, attrs["b"].tgt_shape) == (
        torch.device("cpu"),
        torch.int32,
        torch.Size([3, 2]),
    )
    assert attrs.attrs(fields=("dtype",)) is not None
    only = source.attrs(fields=("dtype",))
    assert only["a"].tgt_device is None and only["a"].tgt_shape is None
    target = TensorDict(
        {"a": torch.ones(3), "b": torch.ones(3, 2), "n": {"c": torch.ones(3)}, "x": torch.ones(3)},
        [3],
    )
    cast = target.to(attrs)
    assert cast["b"].dtype == torch.int32 and cast["n", "c"].dtype == torch.float64
    assert cast["x"].dtype == torch.float32 and torch.equal(
        cast["b"], torch.ones(3, 2, dtype=torch.int32)
    )
    with pytest.raises(ValueError, match="fields must be among"):
        source.attrs(fields=("colour",))


def test_attrs_on_typed_classes_and_lazy_stacks() -> None:
    obj = Mixed(
        a=torch.zeros(2, dtype=torch.int64),
        inner=Inner(w=torch.zeros(2, 3), batch_size=[2]),
        batch_size=[2],
    )
    attrs = obj.attrs()
    assert attrs["inner", "w"].tgt_shape == (2, 3)
    like = Mixed(
        a=torch.ones(2),
        inner=Inner(w=torch.ones(2, 3, dtype=torch.float64), batch_size=[2]),
        batch_size=[2],
    )
    cast = like.to(attrs)
    assert (
        type(cast) is Mixed and cast.a.dtype == torch.int64 and cast.inner.w.dtype == torch.float32
    )
    stack = lazy_stack([obj[0], obj[1]])
    assert stack.attrs()["a"].tgt_shape == (2,)


def test_where_update_batch_size_resizes_out() -> None:
    td = TensorDict({"a": torch.arange(4.0)}, [4])
    out = TensorDict({"a": torch.zeros(2)}, [2])
    with pytest.raises(BatchSizeError, match="does not start with the batch size"):
        td.where(td["a"] > 1, 0.0, out=out)  # an out of another batch size is refused
    result = td.where(td["a"] > 1, 0.0, out=out, update_batch_size=True)
    assert result is out and out.batch_size == (4,) and out["a"].tolist() == [0, 0, 2, 3]
    stack = lazy_stack([td[0:2], td[2:4]])
    target = TensorDict({"a": torch.zeros(1)}, [1])
    stack.where(stack["a"] > 1, 0.0, out=target, update_batch_size=True)
    assert target.batch_size == (2, 2)
