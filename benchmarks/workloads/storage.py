"""Memory-mapped storage: saving and loading model weights, reading rows of a dataset.

Files go to a tmpfs (``/dev/shm``) so the disk is not what is measured. Every save writes
into a fresh directory (the previous one is removed, untimed), so each call pays for
allocating its files, as a real save does.

- save ``nn.Transformer()`` weights: ``td.memmap(prefix)`` against ``torch.save`` of the
  state dict, and against writing the same bytes with plain file writes, one file per
  tensor (the physical limit);
- load them: ``TensorDict.load_memmap(prefix)`` against ``torch.load`` (and, as a
  stricter baseline, ``torch.load(mmap=True)``);
- read 3 random rows of a 1M-row memory-mapped dataset against raw ``numpy.memmap`` reads.
"""

from __future__ import annotations

import itertools
import os
import shutil
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ..harness import Builder, Case, Scale, Workload
from ._libs import Lib, both, scratch_dir

__all__ = ["WORKLOADS"]


@cache
def weights(quick: bool) -> dict[str, torch.Tensor]:
    """The state dict of ``nn.Transformer()`` (a tiny one in quick mode)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():  # nested-tensor advice, irrelevant here
        warnings.simplefilter("ignore", UserWarning)
        model = nn.Transformer(16, 2, 1, 1, 16) if quick else nn.Transformer()
    return dict(model.state_dict())


def _params(lib: Lib, scale: Scale) -> Any:
    """The weights as a nested TensorDict (the layout ``from_module`` gives)."""
    td = lib.TensorDict(weights(scale.quick), batch_size=[]).unflatten_keys(".")
    lib.require(td, "memmap")
    return td


def _fresh(path: Path) -> Callable[[], None]:
    def remove() -> None:
        shutil.rmtree(path, ignore_errors=True)

    return remove


def write_raw(tensors: dict[str, torch.Tensor], directory: Path) -> None:
    """Write each tensor's bytes to its own file (no metadata): the physical limit."""
    os.mkdir(directory)
    for name, tensor in tensors.items():
        with open(directory / name, "wb") as file:
            file.write(tensor.numpy())


def _save_lib(lib: Lib, scale: Scale) -> Case:
    td = _params(lib, scale)
    path = scratch_dir(f"save-{lib.name}") / "weights"
    return Case(lambda: td.memmap(path), prepare=_fresh(path))


def _save_pickle(scale: Scale) -> Case:
    sd = weights(scale.quick)
    path = scratch_dir("save-torch") / "weights.pt"
    return Case(lambda: torch.save(sd, path), prepare=lambda: path.unlink(missing_ok=True))


def _save_raw(scale: Scale) -> Case:
    sd = weights(scale.quick)
    path = scratch_dir("save-raw") / "weights"
    return Case(lambda: write_raw(sd, path), prepare=_fresh(path))


def _load_lib(lib: Lib, scale: Scale) -> Case:
    path = scratch_dir(f"load-{lib.name}") / "weights"
    _params(lib, scale).memmap(path)
    load = lib.require(lib.TensorDict, "load_memmap")
    return Case("load(path)", load=load, path=path)


def _load_pickle(mmap: bool) -> Builder:
    def build(scale: Scale) -> Case:
        path = scratch_dir(f"load-torch-{mmap}") / "weights.pt"
        torch.save(weights(scale.quick), path)
        return Case("torch.load(path, mmap=mmap)", path=path, mmap=mmap)

    return build


# -- the dataset -----------------------------------------------------------------------


@cache
def dataset(rows: int) -> dict[str, torch.Tensor]:
    """A replay-buffer-like dataset: observations, actions, rewards, done flags."""
    generator = torch.Generator().manual_seed(0)
    return {
        "obs": torch.randn(rows, 16, generator=generator),
        "action": torch.randn(rows, 4, generator=generator),
        "reward": torch.randn(rows, 1, generator=generator),
        "done": torch.rand(rows, 1, generator=generator) < 0.01,
    }


def _row_pool(rows: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return [torch.randint(rows, (3,), generator=generator) for _ in range(1024)]


def _rows_lib(lib: Lib, scale: Scale) -> Case:
    rows = scale.pick(1_000_000, 1_000)
    path = scratch_dir(f"dataset-{lib.name}") / "data"
    td = lib.TensorDict(dataset(rows), batch_size=[rows])
    lib.require(td, "memmap")
    td.memmap(path)
    data = lib.require(lib.TensorDict, "load_memmap")(path)
    return Case("data[next(pool)]", data=data, pool=itertools.cycle(_row_pool(rows)))


def _rows_plain(scale: Scale) -> Case:
    rows = scale.pick(1_000_000, 1_000)
    directory = scratch_dir("dataset-plain")
    maps = {}
    for name, tensor in dataset(rows).items():
        array = tensor.numpy()
        array.tofile(directory / name)
        maps[name] = np.memmap(directory / name, array.dtype, "r", shape=array.shape)
    pool = itertools.cycle([index.numpy() for index in _row_pool(rows)])
    code = "i = next(pool)\n{k: torch.from_numpy(m[i]) for k, m in maps.items()}"
    return Case(code, maps=maps, pool=pool)


WORKLOADS = [
    Workload(
        "memmap save nn.Transformer()",
        "storage",
        "faster",
        "torch.save",
        {**both(_save_lib), "plain": _save_pickle},
    ),
    Workload(
        "memmap save nn.Transformer() (limit)",
        "storage",
        "limit",
        "raw file writes",
        {**both(_save_lib), "plain": _save_raw},
        peer_geomean=False,
    ),
    Workload(
        "load_memmap nn.Transformer()",
        "storage",
        "faster",
        "torch.load",
        {**both(_load_lib), "plain": _load_pickle(False)},
    ),
    Workload(
        "load_memmap nn.Transformer() (mmap)",
        "storage",
        "other",
        "torch.load(mmap=True)",
        {**both(_load_lib), "plain": _load_pickle(True)},
        peer_geomean=False,
    ),
    Workload(
        "3 random rows of 1M-row memmap",
        "storage",
        "batch",
        "numpy.memmap",
        {**both(_rows_lib), "plain": _rows_plain},
    ),
]
