"""Small ops on ``TensorDict``: construction, get and set by key, listing keys.

The plain equivalent is a (nested) ``dict`` of the same tensors: building the container
around existing tensors, and reading or writing one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..harness import Case, Scale, Workload
from ._data import (
    CHAIN_BATCH,
    CHAIN_LEAF,
    FLAT_BATCH,
    NESTED_KEY,
    chain_source,
    copy_tree,
    deep_get,
    flat_source,
    leaf_items,
    leaf_keys,
    nested_source,
)
from ._libs import Lib, with_plain

__all__ = ["WORKLOADS"]

Source = Callable[[], dict[str, Any]]

#: a nested key read or written by plain code: a chain of subscripts, a loop when long
_PLAIN_GET = {1: "d[key]", 3: "d[a][b][c]"}
_PLAIN_SET = {1: "d[key] = value", 3: "d[a][b][c] = value"}
_WALK = "node = d\nfor part in head:\n    node = node[part]\n"


def _plain_env(tree: dict[str, Any], key: Any) -> dict[str, Any]:
    if type(key) is str:
        return {"d": tree, "key": key}
    if len(key) == 3:
        return dict(zip("abc", key), d=tree)
    return {"d": tree, "head": key[:-1], "last": key[-1]}


def _construct(name: str, source: Source, batch: list[int]) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("cls(src, batch_size=batch)", cls=lib.TensorDict, src=source(), batch=batch)

    def plain_build(scale: Scale) -> Case:
        src = source()
        if any(type(v) is dict for v in src.values()):
            return Case("copy_tree(src)", copy_tree=copy_tree, src=src)
        return Case("dict(src)", src=src)

    return Workload(name, "construct", "small", "dict", with_plain(lib_build, plain_build))


def _flat_td(lib: Lib) -> Any:
    return lib.TensorDict(flat_source(10), batch_size=FLAT_BATCH)


def _nested_td(lib: Lib) -> Any:
    return lib.TensorDict(nested_source(), batch_size=FLAT_BATCH)


def _chain_td(lib: Lib) -> Any:
    return lib.TensorDict(chain_source(), batch_size=CHAIN_BATCH)


def _get(name: str, make: Callable[[Lib], Any], source: Source, key: Any, item: bool) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("td[key]" if item else "td.get(key)", td=make(lib), key=key)

    def plain_build(scale: Scale) -> Case:
        size = 1 if type(key) is str else len(key)
        code = _PLAIN_GET.get(size, _WALK + "node[last]")
        return Case(code, **_plain_env(source(), key))

    return Workload(name, "get/set", "small", "dict", with_plain(lib_build, plain_build))


def _set(name: str, make: Callable[[Lib], Any], source: Source, key: Any, item: bool) -> Workload:
    path = (key,) if type(key) is str else key

    def lib_build(lib: Lib, scale: Scale) -> Case:
        value = torch.zeros_like(deep_get(source(), path))
        code = "td[key] = value" if item else "td.set(key, value)"
        return Case(code, td=make(lib), key=key, value=value)

    def plain_build(scale: Scale) -> Case:
        tree = source()
        value = torch.zeros_like(deep_get(tree, path))
        code = _PLAIN_SET.get(len(path), _WALK + "node[last] = value")
        return Case(code, value=value, **_plain_env(tree, key))

    return Workload(name, "get/set", "small", "dict", with_plain(lib_build, plain_build))


def _chain_listing(name: str, code: str, plain_code: str) -> Workload:
    """A listing of the leaves of the 19-level chain (keys or items)."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(code, td=_chain_td(lib))

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, leaf_keys=leaf_keys, leaf_items=leaf_items, d=chain_source())

    return Workload(
        name, "keys", "small", "recursive generator", with_plain(lib_build, plain_build)
    )


def _listing(name: str, code: str, plain_code: str, plain: str) -> Workload:
    """A listing of the keys, items or values of a TensorDict of 100 flat leaves."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(code, td=lib.TensorDict(flat_source(100), batch_size=FLAT_BATCH))

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, leaf_keys=leaf_keys, leaf_items=leaf_items, d=flat_source(100))

    return Workload(name, "keys", "small", plain, with_plain(lib_build, plain_build))


def _flat10() -> dict[str, Any]:
    return flat_source(10)


WORKLOADS = [
    _construct("construct 10 keys (64, 8)", _flat10, FLAT_BATCH),
    _construct("construct 100 keys (64, 8)", lambda: flat_source(100), FLAT_BATCH),
    _construct("construct nested depth 3", nested_source, FLAT_BATCH),
    _construct("construct 19-level chain", chain_source, CHAIN_BATCH),
    _get("get flat key", _flat_td, _flat10, "k5", item=False),
    _get("td['key'] flat", _flat_td, _flat10, "k5", item=True),
    _get("get nested key (3 deep)", _nested_td, nested_source, NESTED_KEY, item=False),
    _get("td[nested key] (3 deep)", _nested_td, nested_source, NESTED_KEY, item=True),
    _get("get deepest key (20 deep)", _chain_td, chain_source, CHAIN_LEAF, item=False),
    _set("set flat key", _flat_td, _flat10, "k5", item=False),
    _set("td['key'] = v flat", _flat_td, _flat10, "k5", item=True),
    _set("set nested key (3 deep)", _nested_td, nested_source, NESTED_KEY, item=False),
    _set("set deepest key (20 deep)", _chain_td, chain_source, CHAIN_LEAF, item=False),
    _chain_listing(
        "keys(nested, leaves) 19-level chain",
        "list(td.keys(include_nested=True, leaves_only=True))",
        "list(leaf_keys(d))",
    ),
    _chain_listing(
        "items(nested, leaves) 19-level chain",
        "list(td.items(include_nested=True, leaves_only=True))",
        "list(leaf_items(d))",
    ),
    _listing(
        "keys(nested, leaves) 100 flat keys",
        "list(td.keys(include_nested=True, leaves_only=True))",
        "list(leaf_keys(d))",
        "recursive generator",
    ),
    _listing(
        "items(nested, leaves) 100 flat keys",
        "list(td.items(include_nested=True, leaves_only=True))",
        "list(leaf_items(d))",
        "recursive generator",
    ),
    _listing("keys() 100 flat keys", "list(td.keys())", "list(d)", "dict"),
    _listing("items() 100 flat keys", "list(td.items())", "list(d.items())", "dict"),
    _listing("values() 100 flat keys", "list(td.values())", "list(d.values())", "dict"),
    _listing(
        "items(sort=True) 100 flat keys", "list(td.items(sort=True))", "sorted(d.items())", "dict"
    ),
    _listing("'key' in td, 100 flat keys", "'k50' in td", "'k50' in d", "dict"),
    _listing("len(td.keys()) 100 flat keys", "len(td.keys())", "len(d)", "dict"),
]
