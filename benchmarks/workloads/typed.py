"""Tensor classes against a plain ``@dataclass`` with the same fields.

Each library's ``@tensorclass`` decorates the same class bodies (built with ``type`` so
the annotations are real objects, not strings). The plain equivalent is a dataclass: it
checks nothing, and indexing or stacking it means rebuilding it field by field.
"""

from dataclasses import dataclass, make_dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

import torch
from torch import Tensor

from ..harness import Case, Scale, Workload
from ._libs import Lib, with_plain

__all__ = ["WORKLOADS"]

BATCH = [64]
MANY = [f"f{i}" for i in range(10)]


@dataclass
class PlainBatch:
    """The plain equivalent of ``Batch``."""

    obs: Tensor
    action: Tensor
    reward: Tensor


@dataclass
class PlainStep:
    """The plain equivalent of ``Step`` (a nested class)."""

    obs: Tensor
    next: PlainBatch


@dataclass
class PlainLabeled:
    """The plain equivalent of ``Labeled`` (a non-tensor field)."""

    obs: Tensor
    tag: str


PlainMany = make_dataclass("PlainMany", [(name, Tensor) for name in MANY])


def _class(lib: Lib, name: str, annotations: dict[str, Any]) -> Any:
    body = {"__annotations__": annotations, "__module__": __name__, "__qualname__": name}
    return lib.tensorclass(type(name, (), body))


@cache
def classes(name: str) -> SimpleNamespace:
    """The tensor classes of library ``name`` (built once)."""
    from ._libs import lib as get_lib

    lib = get_lib(name)
    batch = _class(lib, "Batch", {"obs": Tensor, "action": Tensor, "reward": Tensor})
    return SimpleNamespace(
        Batch=batch,
        Step=_class(lib, "Step", {"obs": Tensor, "next": batch}),
        Labeled=_class(lib, "Labeled", {"obs": Tensor, "tag": str}),
        Many=_class(lib, "Many", dict.fromkeys(MANY, Tensor)),
    )


def _fields() -> dict[str, Tensor]:
    return {"obs": torch.randn(64, 8), "action": torch.randn(64, 2), "reward": torch.randn(64, 1)}


def _instances(lib: Lib) -> dict[str, Any]:
    c = classes(lib.name)
    b = c.Batch(**_fields(), batch_size=BATCH)
    return {
        "b": b,
        "s": c.Step(obs=torch.randn(64, 8), next=b, batch_size=BATCH),
        "l": c.Labeled(obs=torch.randn(64, 8), tag="label", batch_size=BATCH),
        "bs": [c.Batch(**_fields(), batch_size=BATCH) for _ in range(10)],
        "Batch": c.Batch,
        "Many": c.Many,
        "value": torch.zeros(64, 8),
        **_fields(),
        "many": {name: torch.randn(64, 4) for name in MANY},
        "m": c.Many(**{name: torch.randn(64, 4) for name in MANY}, batch_size=BATCH),
    }


def _plain_instances() -> dict[str, Any]:
    b = PlainBatch(**_fields())
    return {
        "b": b,
        "s": PlainStep(torch.randn(64, 8), b),
        "l": PlainLabeled(torch.randn(64, 8), "label"),
        "bs": [PlainBatch(**_fields()) for _ in range(10)],
        "Batch": PlainBatch,
        "Many": PlainMany,
        "value": torch.zeros(64, 8),
        **_fields(),
        "many": {name: torch.randn(64, 4) for name in MANY},
        "m": PlainMany(*(torch.randn(64, 4) for _ in MANY)),
    }


def _typed(name: str, kind: str, lib_code: str, plain_code: str) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(lib_code, **_instances(lib))

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, **_plain_instances())

    return Workload(name, "typed", kind, "@dataclass", with_plain(lib_build, plain_build))


_STACK_PLAIN = "Batch(torch.stack([x.obs for x in bs]), torch.stack([x.action for x in bs]), torch.stack([x.reward for x in bs]))"

# fmt: off
WORKLOADS = [
    _typed("class construct (3 fields, batch [64])", "small", "Batch(obs=obs, action=action, reward=reward, batch_size=[64])", "Batch(obs=obs, action=action, reward=reward)"),
    _typed("class construct (10 fields)", "small", "Many(**many, batch_size=[64])", "Many(**many)"),
    _typed("class getattr tensor field", "small", "b.obs", "b.obs"),
    _typed("class getattr nested field", "small", "s.next.obs", "s.next.obs"),
    _typed("class getattr non-tensor field", "small", "l.tag", "l.tag"),
    _typed("class setattr tensor field", "small", "b.obs = value", "b.obs = value"),
    _typed("class items() (10 fields)", "small", "list(m.items())", "list(vars(m).items())"),
    _typed("class values() (10 fields)", "small", "list(m.values())", "list(vars(m).values())"),
    _typed("class items(nested, leaves) (10 fields)", "small", "list(m.items(include_nested=True, leaves_only=True))", "list(vars(m).items())"),
    _typed("class[int]", "batch", "b[3]", "Batch(b.obs[3], b.action[3], b.reward[3])"),
    _typed("class[slice]", "batch", "b[8:40]", "Batch(b.obs[8:40], b.action[8:40], b.reward[8:40])"),
    _typed("torch.stack of 10 class instances", "batch", "torch.stack(bs)", _STACK_PLAIN),
]
# fmt: on
