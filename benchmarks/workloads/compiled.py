"""``torch.compile`` of functions taking a tensor class, against the same functions eager.

The class has six ``(15,)`` fields (the peer's compile benchmark). Each function runs
compiled (``fullgraph=True``: a graph break is an error, shown in the notes) and eager,
so the rows compare compiled against eager for each implementation. The plain equivalent
is a ``@dataclass`` with the same fields. The compiled rows do not run in ``--quick`` mode
(compiling takes seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch
from torch import Tensor

from ..harness import Case, Scale, Workload
from ._libs import Lib, with_plain

__all__ = ["WORKLOADS"]

FIELDS = ("a", "b", "c", "d", "e", "f")


@dataclass
class PlainSample:
    """The plain equivalent of ``Sample``."""

    a: Tensor
    b: Tensor
    c: Tensor
    d: Tensor
    e: Tensor
    f: Tensor


@cache
def sample_class(name: str) -> Any:
    """The library's ``Sample`` tensor class (six tensor fields)."""
    from ._libs import lib

    body = {
        "__annotations__": dict.fromkeys(FIELDS, Tensor),
        "__module__": __name__,
        "__qualname__": "Sample",
    }
    return lib(name).tensorclass(type("Sample", (), body))


def _values() -> dict[str, Tensor]:
    return {name: torch.ones(15) for name in FIELDS}


def add_one(s: Any) -> Any:
    """Add one to every field (the tensor class does it in one expression)."""
    return s + 1


def add_one_plain(s: PlainSample) -> PlainSample:
    """Add one to every field of the dataclass."""
    return PlainSample(s.a + 1, s.b + 1, s.c + 1, s.d + 1, s.e + 1, s.f + 1)


def field_sum(s: Any) -> Tensor:
    """Read every field and sum them (attribute access in a compiled region)."""
    return s.a + s.b + s.c + s.d + s.e + s.f  # type: ignore[no-any-return]


def _row(
    name: str, fn: Callable[[Any], Any], plain_fn: Callable[[Any], Any], compiled: bool
) -> Workload:
    def wrap(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return torch.compile(f, fullgraph=True) if compiled else f

    def lib_build(lib: Lib, scale: Scale) -> Case:
        sample = sample_class(lib.name)(**_values(), batch_size=[15])
        return Case("fn(s)", fn=wrap(fn), s=sample)

    def plain_build(scale: Scale) -> Case:
        return Case("fn(s)", fn=wrap(plain_fn), s=PlainSample(**_values()))

    label = f"{'compiled' if compiled else 'eager'}: {name}"
    return Workload(
        label,
        "compile",
        "other",
        "@dataclass",
        with_plain(lib_build, plain_build),
        quick=not compiled,
    )


WORKLOADS = [
    _row("s + 1 (6 fields)", add_one, add_one_plain, compiled=True),
    _row("s + 1 (6 fields)", add_one, add_one_plain, compiled=False),
    _row("sum of 6 fields", field_sum, field_sum, compiled=True),
    _row("sum of 6 fields", field_sum, field_sum, compiled=False),
]
