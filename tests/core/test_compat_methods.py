"""Small tensordict spellings: as_tensor, clear_refs_for_compile_, TensorCollection."""

from __future__ import annotations

import torch

from tensorclass import (
    LazyStackedTensorDict,
    MemoryMappedTensor,
    TensorClass,
    TensorCollection,
    TensorDict,
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
