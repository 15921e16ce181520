"""A first look at tensorclass: declare a typed batch, index it, reshape it, stack it."""

import torch

from tensorclass import TensorClass, TensorDict, stack


class Batch(TensorClass):
    """A batch of images with their labels."""

    images: torch.Tensor
    labels: torch.Tensor


def main() -> None:
    batch = Batch(torch.rand(8, 3, 16, 16), torch.arange(8) % 3, batch_size=[8])
    print("batch:        ", batch)
    print("batch[:2]:    ", batch[:2])
    print("reshaped:     ", batch.reshape(2, 4))
    print("stacked:      ", stack([batch, batch]).batch_size)  # or torch.stack
    print("label 1 only: ", batch[batch.labels == 1].batch_size)

    td = TensorDict({"obs": torch.zeros(4, 3), ("info", "step"): torch.arange(4)}, [4])
    print("TensorDict:   ", td)
    print("nested read:  ", td["info", "step"])


if __name__ == "__main__":
    main()
