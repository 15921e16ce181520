"""Every workload, by concept: key access, batch ops, typed classes, nn, storage, compile."""

from __future__ import annotations

from ..harness import Workload
from . import batch, compiled, consolidate, core, nn, storage, typed

__all__ = ["all_workloads"]


def all_workloads() -> list[Workload]:
    """Every workload, in table order."""
    modules = (core, batch, typed, nn, storage, consolidate, compiled)
    return [workload for module in modules for workload in module.WORKLOADS]
