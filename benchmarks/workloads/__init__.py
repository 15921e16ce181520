"""Every workload, by concept: key access, batch ops, typed classes, nn, storage, the\noperations of a training or data loop, compile."""

from __future__ import annotations

from ..harness import Workload
from . import batch, compiled, consolidate, core, loop, nn, storage, typed

__all__ = ["all_workloads"]


def all_workloads() -> list[Workload]:
    """Every workload, in table order."""
    modules = (core, batch, typed, nn, storage, consolidate, loop, compiled)
    return [workload for module in modules for workload in module.WORKLOADS]
