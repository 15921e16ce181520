"""Shared test set-up: deterministic torch, single-threaded for stable timings."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
