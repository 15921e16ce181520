"""``DataLoader`` over an instance reads a batch with one index (``__getitems__``).

In tensordict 0.15.3, ``DataLoader(td, batch_size=4, collate_fn=lambda x: x)`` yields
instances of batch size ``[4]``: the loader hands ``__getitems__`` the batch's list of
indices. Without a ``collate_fn`` the default collation returns that instance as it is.
"""

import pytest
import torch
from torch.utils.data import DataLoader, default_collate

from tensorclass import TensorClass, TensorDict, lazy_stack


class Data(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor


def dataset() -> TensorDict:
    return TensorDict(
        images=torch.arange(20.0).reshape(10, 2), labels=torch.arange(10), batch_size=[10]
    )


def test_identity_collate_yields_one_instance_per_batch() -> None:
    batches = list(DataLoader(dataset(), batch_size=4, collate_fn=lambda x: x))
    assert [type(b) for b in batches] == [TensorDict] * 3
    assert [b.batch_size for b in batches] == [torch.Size([4]), torch.Size([4]), torch.Size([2])]
    assert batches[0]["labels"].tolist() == [0, 1, 2, 3]
    assert batches[2]["images"].tolist() == [[16.0, 17.0], [18.0, 19.0]]


def test_default_collate_keeps_the_batch() -> None:
    batch = next(iter(DataLoader(dataset(), batch_size=4)))
    assert type(batch) is TensorDict and batch.batch_size == torch.Size([4])
    assert batch["labels"].tolist() == [0, 1, 2, 3]
    read = dataset().__getitems__([5, 1])
    assert default_collate(read) is read  # nothing unbound and stacked again


def test_shuffled_batches_follow_the_sampler() -> None:
    generator = torch.Generator().manual_seed(0)
    loader = DataLoader(
        dataset(), batch_size=4, shuffle=True, collate_fn=lambda x: x, generator=generator
    )
    labels = torch.cat([batch["labels"] for batch in loader])
    assert sorted(labels.tolist()) == list(range(10))
    order = torch.randperm(10, generator=generator).tolist()
    loader = DataLoader(dataset(), batch_size=4, sampler=order, collate_fn=lambda x: x)
    assert torch.cat([batch["labels"] for batch in loader]).tolist() == order


def test_getitems_reads_the_listed_elements() -> None:
    td = dataset()
    picked = td.__getitems__([3, 1, 2])
    assert picked.batch_size == torch.Size([3]) and picked["labels"].tolist() == [3, 1, 2]
    assert td.__getitems__(torch.tensor([0, 9]))["labels"].tolist() == [0, 9]
    assert td.__getitems__([]).batch_size == torch.Size([0])
    assert td.__getitems__([True, False] * 5)["labels"].tolist() == [0, 2, 4, 6, 8]
    with pytest.raises(IndexError):
        TensorDict(a=torch.zeros(())).__getitems__([0])  # no batch dim to index


def test_tensor_class_batches_keep_their_fields() -> None:
    data = Data(images=torch.zeros(10, 3), labels=torch.arange(10), batch_size=[10])
    batch = next(iter(DataLoader(data, batch_size=4, collate_fn=lambda x: x)))
    assert type(batch) is Data and batch.images.shape == torch.Size([4, 3])
    batch = next(iter(DataLoader(data, batch_size=4)))
    assert type(batch) is Data and batch.labels.tolist() == [0, 1, 2, 3]


def test_lazy_stack_batches_stay_lazy() -> None:
    members = [TensorDict(a=torch.full((3,), float(i))) for i in range(5)]
    stack = lazy_stack(members)
    batch = next(iter(DataLoader(stack, batch_size=2, collate_fn=lambda x: x)))
    assert type(batch) is type(stack) and batch.batch_size == torch.Size([2])
    assert batch["a"][:, 0].tolist() == [0.0, 1.0]
    batch = next(iter(DataLoader(stack, batch_size=2)))
    assert type(batch) is type(stack)


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    theirs = tensordict.TensorDict(
        images=torch.arange(20.0).reshape(10, 2), labels=torch.arange(10), batch_size=[10]
    )
    for collate_fn in (None, lambda x: x):
        ours_batches = list(DataLoader(dataset(), batch_size=4, collate_fn=collate_fn))
        their_batches = list(DataLoader(theirs, batch_size=4, collate_fn=collate_fn))
        assert [b.batch_size for b in ours_batches] == [b.batch_size for b in their_batches]
        for ours, their in zip(ours_batches, their_batches, strict=True):
            assert torch.equal(ours["images"], their["images"])
