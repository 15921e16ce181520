"""Batch ops: indexing, shape ops, stack/cat and leaf-wise maths on a whole ``TensorDict``.

The plain equivalent applies the same tensor operation to every value of a ``dict`` (a
dict comprehension, the fastest way to write it), or goes through ``torch.utils._pytree``
for the nested chain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree as pytree

from ..harness import Case, Scale, Workload
from ._data import CHAIN_BATCH, FLAT_BATCH, chain_source, flat_source
from ._libs import Lib, with_plain

__all__ = ["WORKLOADS"]

GRID_BATCH = [8, 8]
INDEX = torch.randperm(64)[:16]
MASK = torch.arange(64) % 3 == 0
GATHER = torch.randint(0, 8, (8, 4))
GATHER_LEAF = GATHER[..., None].expand(8, 4, 8)


def _flat() -> dict[str, Any]:
    return flat_source(10)


def _grid() -> dict[str, Any]:
    return flat_source(10, (8, 8, 8))


# name -> (plain source, batch size)
DATA: dict[str, tuple[Callable[[], dict[str, Any]], list[int]]] = {
    "flat": (_flat, FLAT_BATCH),
    "grid": (_grid, GRID_BATCH),
    "chain": (chain_source, CHAIN_BATCH),
}


def rows(tree: dict[str, Any], parts: Callable[[torch.Tensor], Any]) -> list[dict[str, Any]]:
    """Split every value with ``parts`` and regroup the pieces into a list of dicts."""
    keys = list(tree)
    columns = [parts(v) for v in tree.values()]
    return [dict(zip(keys, row)) for row in zip(*columns)]


def unbind_tree(tree: dict[str, Any]) -> list[Any]:
    """``unbind(0)`` of a nested dict through pytree: flatten, unbind, unflatten per row."""
    leaves, spec = pytree.tree_flatten(tree)
    columns = [leaf.unbind(0) for leaf in leaves]
    return [pytree.tree_unflatten(list(row), spec) for row in zip(*columns)]


#: names the statements may use
HELPERS: dict[str, Any] = {
    "INDEX": INDEX,
    "MASK": MASK,
    "GATHER": GATHER,
    "GATHER_LEAF": GATHER_LEAF,
    "rows": rows,
    "unbind_tree": unbind_tree,
    "tree_map": pytree.tree_map,
}


def _op(
    name: str,
    group: str,
    data: str,
    lib_code: str,
    plain_code: str,
    plain: str = "dict comprehension",
) -> Workload:
    source, batch = DATA[data]

    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(lib_code, td=lib.TensorDict(source(), batch_size=batch), **HELPERS)

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, d=source(), **HELPERS)

    return Workload(name, group, "batch", plain, with_plain(lib_build, plain_build))


def _many(
    name: str,
    count: int,
    data: str,
    lib_code: str,
    plain_code: str,
    plain: str = "dict comprehension",
) -> Workload:
    """A workload over a list ``tds`` (``ds`` for plain) of ``count`` instances."""
    source, batch = DATA[data]

    def lib_build(lib: Lib, scale: Scale) -> Case:
        tds = [lib.TensorDict(source(), batch_size=batch) for _ in range(count)]
        return Case(lib_code, tds=tds, **HELPERS)

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, ds=[source() for _ in range(count)], **HELPERS)

    return Workload(name, "stack/cat", "batch", plain, with_plain(lib_build, plain_build))


def _setitem() -> Workload:
    """``td[3] = sub``: write one batch element of every leaf."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        td = lib.TensorDict(_flat(), batch_size=FLAT_BATCH)
        return Case("td[3] = sub", td=td, sub=td[3].clone())

    def plain_build(scale: Scale) -> Case:
        tree = _flat()
        sub = {k: v[3].clone() for k, v in tree.items()}
        return Case("for k, v in d.items():\n    v[3] = sub[k]", d=tree, sub=sub)

    return Workload(
        "td[int] = sub", "index", "batch", "loop over dict", with_plain(lib_build, plain_build)
    )


def _copy_() -> Workload:
    """``td.copy_(other)``: copy every leaf of an instance into this one's tensors."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        td = lib.TensorDict(_flat(), batch_size=FLAT_BATCH)
        return Case("td.copy_(other)", td=td, other=td.clone())

    def plain_build(scale: Scale) -> Case:
        tree = _flat()
        other = {k: v.clone() for k, v in tree.items()}
        return Case("for k, v in d.items():\n    v.copy_(o[k])", d=tree, o=other)

    return Workload(
        "copy_(other)", "index", "batch", "loop over dict", with_plain(lib_build, plain_build)
    )


def _pad_sequence() -> Workload:
    """``pad_sequence`` of 8 instances of lengths 8..64 (10 keys): pad and stack."""
    lengths = [8 * (i + 1) for i in range(8)]

    def sources() -> list[dict[str, Any]]:
        return [{k: v[:n] for k, v in _flat().items()} for n in lengths]

    def lib_build(lib: Lib, scale: Scale) -> Case:
        fn = lib.require(lib.module, "pad_sequence")
        tds = [lib.TensorDict(src, batch_size=[n]) for src, n in zip(sources(), lengths)]
        return Case("pad_sequence(tds)", pad_sequence=fn, tds=tds)

    def plain_build(scale: Scale) -> Case:
        return Case(
            "{k: pad_sequence([d[k] for d in ds], batch_first=True) for k in ds[0]}",
            pad_sequence=torch.nn.utils.rnn.pad_sequence,
            ds=sources(),
        )

    return Workload(
        "pad_sequence of 8",
        "stack/cat",
        "batch",
        "dict comprehension",
        with_plain(lib_build, plain_build),
    )


# fmt: off
WORKLOADS = [
    _op("td[int]", "index", "flat", "td[3]", "{k: v[3] for k, v in d.items()}"),
    _op("td[slice]", "index", "flat", "td[8:40]", "{k: v[8:40] for k, v in d.items()}"),
    _op("td[long tensor (16)]", "index", "flat", "td[INDEX]", "{k: v[INDEX] for k, v in d.items()}"),
    _op("td[bool mask]", "index", "flat", "td[MASK]", "{k: v[MASK] for k, v in d.items()}"),
    _setitem(),
    _op("reshape(64) of [8, 8]", "shape", "grid", "td.reshape(64)", "{k: v.reshape(64, 8) for k, v in d.items()}"),
    _op("unsqueeze(0)", "shape", "grid", "td.unsqueeze(0)", "{k: v.unsqueeze(0) for k, v in d.items()}"),
    _op("permute(1, 0)", "shape", "grid", "td.permute(1, 0)", "{k: v.permute(1, 0, 2) for k, v in d.items()}"),
    _op("expand(4, 8, 8)", "shape", "grid", "td.expand(4, 8, 8)", "{k: v.expand(4, 8, 8, 8) for k, v in d.items()}"),
    _op("unbind(0) of [8, 8]", "shape", "grid", "td.unbind(0)", "rows(d, lambda v: v.unbind(0))", "list of dicts"),
    _op("split(16) of [64]", "shape", "flat", "td.split(16)", "rows(d, lambda v: v.split(16))", "list of dicts"),
    _op("unbind(0) 19-level chain", "shape", "chain", "td.unbind(0)", "unbind_tree(d)", "pytree"),
    _many("torch.stack of 10", 10, "flat", "torch.stack(tds)", "{k: torch.stack([d[k] for d in ds]) for k in ds[0]}"),
    _many("torch.cat of 10", 10, "flat", "torch.cat(tds)", "{k: torch.cat([d[k] for d in ds]) for k in ds[0]}"),
    _many("torch.stack of 4 19-level chains", 4, "chain", "torch.stack(tds)", "tree_map(lambda *xs: torch.stack(xs), *ds)", "pytree"),
    _op("apply(x + 1)", "maths", "flat", "td.apply(lambda x: x + 1)", "{k: v + 1 for k, v in d.items()}"),
    _op("td + 1", "maths", "flat", "td + 1", "{k: v + 1 for k, v in d.items()}"),
    _op("clone()", "maths", "flat", "td.clone()", "{k: v.clone() for k, v in d.items()}"),
    _op("td.add_(1) in place", "maths", "flat", "td.add_(1)", "for v in d.values():\n    v.add_(1)", "loop over dict"),
    _op("td.zero_() in place", "maths", "flat", "td.zero_()", "for v in d.values():\n    v.zero_()", "loop over dict"),
    _op("to(float64)", "maths", "flat", "td.to(torch.float64)", "{k: v.to(torch.float64) for k, v in d.items()}"),
    _op("apply(x + 1) 19-level chain", "maths", "chain", "td.apply(lambda x: x + 1)", "tree_map(lambda x: x + 1, d)", "pytree"),
    _op("clone() 19-level chain", "maths", "chain", "td.clone()", "tree_map(torch.clone, d)", "pytree"),
    # indexing, reshaping and copying
    _op("gather(1) of [8, 8]", "index", "grid", "td.gather(1, GATHER)", "{k: torch.gather(v, 1, GATHER_LEAF) for k, v in d.items()}"),
    _copy_(),
    _pad_sequence(),
    _op("to('cpu')", "maths", "flat", "td.to('cpu')", "{k: v.to('cpu') for k, v in d.items()}"),
    # reductions and scans over the batch
    _op("sum(0)", "reduce", "flat", "td.sum(0)", "{k: v.sum(0) for k, v in d.items()}"),
    _op("mean()", "reduce", "flat", "td.mean()", "{k: v.mean() for k, v in d.items()}"),
    _op("softmax(0)", "reduce", "flat", "td.softmax(0)", "{k: torch.softmax(v, 0) for k, v in d.items()}"),
    _op("max(0) values and indices", "reduce", "flat", "td.max(0)", "{k: v.max(0) for k, v in d.items()}"),
    _op("sum(0) 19-level chain", "reduce", "chain", "td.sum(0)", "tree_map(lambda x: x.sum(0), d)", "pytree"),
]
# fmt: on
