"""DataLoader collation: a batch of tensor classes is one stacked tensor class."""

import torch
from torch.utils.data import DataLoader, Dataset, default_collate

from tensorclass import TensorClass, TensorDict


class Item(TensorClass):
    image: torch.Tensor
    label: torch.Tensor
    source: str = "disk"


class Items(Dataset[Item]):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, index: int) -> Item:
        return Item(torch.full((3, 2), float(index)), torch.tensor(index))


def test_typed_items_collate_into_a_stacked_instance() -> None:
    batches = list(DataLoader(Items(), batch_size=4))
    assert [type(b) for b in batches] == [Item, Item, Item]
    first = batches[0]
    assert first.batch_size == (4,) and first.image.shape == (4, 3, 2)
    assert first.label.tolist() == [0, 1, 2, 3] and first.source == ["disk"] * 4
    assert batches[-1].batch_size == (2,)


def test_tensordicts_and_mixed_structures_collate() -> None:
    items = [
        {"td": TensorDict({"x": torch.ones(2) * i, "n": {"y": torch.tensor(i)}}), "i": i}
        for i in range(6)
    ]
    batch = next(iter(DataLoader(items, batch_size=3, shuffle=False)))
    assert isinstance(batch["td"], TensorDict) and batch["td"].batch_size == (3,)
    assert batch["td"]["n", "y"].tolist() == [0, 1, 2] and batch["i"].tolist() == [0, 1, 2]
    direct = default_collate([TensorDict({"x": torch.zeros(2)}, [2])] * 5)
    assert direct.batch_size == (5, 2)


def test_worker_processes_send_tensor_classes_back() -> None:
    loader = DataLoader(Items(), batch_size=5, num_workers=2)
    labels = [batch.label.tolist() for batch in loader]
    assert labels == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
