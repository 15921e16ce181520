"""Consolidation: every tensor in one buffer, and what moving that one buffer saves.

On many small leaves (10 nested levels of 100 tensors of 64 floats, the case consolidation
is for; large leaves are bandwidth-bound either way):

- ``consolidate()`` itself, against packing the same tensors' bytes into one ``uint8``
  tensor by hand (the copy every consolidation makes);
- a pickle round trip (``pickle.loads(pickle.dumps(x))``) of the consolidated instance,
  against the per-leaf pickle of the same instance and of a plain dict of the tensors. Moving to
  another device is the same story on an accelerator (one copy instead of one per leaf);
  this CPU-only table measures the pickle.
"""

from __future__ import annotations

import pickle
from functools import cache
from typing import Any

import torch

from ..harness import Case, Scale, Workload
from ._libs import Lib, both

__all__ = ["WORKLOADS"]


@cache
def leaves(quick: bool) -> dict[str, torch.Tensor]:
    """Small tensors under ``"level.name"`` keys (10 levels of 100, 64 floats each)."""
    generator = torch.Generator().manual_seed(0)
    count = 10 if quick else 100
    return {
        f"l{level}.t{index}": torch.randn(64, generator=generator)
        for level in range(10)
        for index in range(count)
    }


def _params(lib: Lib, scale: Scale) -> Any:
    td = lib.TensorDict(leaves(scale.quick), batch_size=[]).unflatten_keys(".")
    lib.require(td, "consolidate")
    return td


def _consolidate_lib(lib: Lib, scale: Scale) -> Case:
    td = _params(lib, scale)
    return Case(td.consolidate)


def _pack_plain(scale: Scale) -> Case:
    tensors = list(leaves(scale.quick).values())

    def pack() -> torch.Tensor:
        return torch.cat([t.reshape(-1).view(torch.uint8) for t in tensors])

    return Case(pack)


def _round_trip(consolidated: bool) -> Any:
    def build(lib: Lib, scale: Scale) -> Case:
        td = _params(lib, scale)
        data = td.consolidate() if consolidated else td
        return Case("pickle.loads(pickle.dumps(data))", pickle=pickle, data=data)

    return build


def _round_trip_plain(scale: Scale) -> Case:
    return Case("pickle.loads(pickle.dumps(data))", pickle=pickle, data=leaves(scale.quick))


WORKLOADS = [
    Workload(
        "consolidate() 1,000 small leaves",
        "storage",
        "other",
        "torch.cat of the bytes",
        {**both(_consolidate_lib), "plain": _pack_plain},
    ),
    Workload(
        "pickle round trip 1,000 small leaves (consolidated)",
        "storage",
        "faster",
        "pickle of a dict",
        {**both(_round_trip(True)), "plain": _round_trip_plain},
    ),
    Workload(
        "pickle round trip 1,000 small leaves (per leaf)",
        "storage",
        "other",
        "pickle of a dict",
        {**both(_round_trip(False)), "plain": _round_trip_plain},
        peer_geomean=False,
    ),
]
