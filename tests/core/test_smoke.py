"""A first end-to-end check of the engine and the typed layer."""

import torch

from tensorclass import TensorClass, TensorDict


class Batch(TensorClass):
    images: torch.Tensor
    labels: torch.Tensor


def test_typed_batch_round_trip() -> None:
    batch = Batch(torch.rand(8, 3), torch.arange(8), batch_size=[8])
    assert isinstance(batch[:2], Batch)
    assert batch.reshape(2, 4).labels.shape == (2, 4)
    assert torch.stack([batch, batch]).batch_size == (2, 8)
    assert torch.equal(batch[batch.labels > 3].labels, torch.arange(4, 8))


def test_tensordict_nested_keys() -> None:
    td = TensorDict({"obs": torch.zeros(4, 3), ("info", "step"): torch.arange(4)}, [4])
    assert td["info", "step"].tolist() == [0, 1, 2, 3]
    assert ("info", "step") in td.keys(include_nested=True)
