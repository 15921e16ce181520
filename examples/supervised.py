"""A supervised training loop on typed batches.

A schema declares what a batch holds; a pipeline of modules reads and writes it by key
(checked against the schema when the pipeline is built); the loop indexes random
minibatches straight out of the dataset.

Run: ``python examples/supervised.py --steps 200``
"""

from __future__ import annotations

import argparse

import torch
from torch import nn

from tensorclass import TensorClass
from tensorclass.nn import TensorDictModule, TensorDictSequential


class Batch(TensorClass):
    """Inputs, targets, and what the model writes (unset until it runs)."""

    features: torch.Tensor
    label: torch.Tensor
    hidden: torch.Tensor | None = None
    logits: torch.Tensor | None = None


class Scored(TensorClass):
    """A batch the model has run on: its outputs are always there (no ``None`` checks)."""

    features: torch.Tensor
    label: torch.Tensor
    hidden: torch.Tensor
    logits: torch.Tensor


def score(model: TensorDictSequential, batch: Batch) -> Scored:
    """Run the model; ``Scored.from_tensordict`` checks that it wrote every output."""
    return Scored.from_tensordict(model(batch))


def make_dataset(n: int, dim: int = 16, classes: int = 4, seed: int = 0) -> Batch:
    """Gaussian blobs: one centre per class, labels to learn."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, dim, generator=generator) * 3
    label = torch.randint(classes, (n,), generator=generator)
    features = centres[label] + torch.randn(n, dim, generator=generator)
    return Batch(features, label, batch_size=[n])


def make_model(dim: int = 16, classes: int = 4) -> TensorDictSequential:
    """Two modules chained by key; the schema checks every key when the model is built."""
    return TensorDictSequential(
        TensorDictModule(
            nn.Sequential(nn.Linear(dim, 64), nn.ReLU()), in_keys=["features"], out_keys=["hidden"]
        ),
        TensorDictModule(nn.Linear(64, classes), in_keys=["hidden"], out_keys=["logits"]),
        schema=Batch,
    )


def train(steps: int = 200, n: int = 2048, batch_size: int = 64, seed: int = 0) -> dict[str, float]:
    """Train on ``n`` rows; return the first and last loss and the accuracy on held-out rows."""
    torch.manual_seed(seed)
    data = make_dataset(n + n // 4, seed=seed)
    train_data, test_data = data[:n], data[n:]  # views along the batch: nothing is copied
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        batch = train_data[torch.randint(n, (batch_size,))]  # a random minibatch (a copy)
        scored = score(model, batch)  # writes "hidden" and "logits" into the minibatch
        loss = nn.functional.cross_entropy(scored.logits, scored.label)
        optimizer.zero_grad()
        torch.autograd.backward(loss)  # typed (torch leaves Tensor.backward unannotated)
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        scored = score(model, test_data.clone())  # a copy: the model writes into it
        accuracy = (scored.logits.argmax(-1) == scored.label).float().mean().item()
    return {"first_loss": losses[0], "last_loss": sum(losses[-10:]) / 10, "accuracy": accuracy}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--n", type=int, default=2048)
    args = parser.parse_args()
    result = train(args.steps, args.n)
    print(
        f"loss {result['first_loss']:.3f} -> {result['last_loss']:.3f}, "
        f"held-out accuracy {result['accuracy']:.1%}"
    )


if __name__ == "__main__":
    main()
