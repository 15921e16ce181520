"""What a training or data loop calls, on a batch of 1024: reductions with ``dim``,
element-wise ops and casts, structure ops, ragged data, checkpoints, consolidated
transfers, modules, and typed classes.

The data is a nested instance of 12 leaves of ``(1024, 4)`` (six at the top, six under
``"next"``), as an RL transition holds; the plain equivalent is a nested ``dict`` of the
same tensors, walked by a recursive comprehension (``tmap``), the fastest plain way to
write a leaf-wise op on a tree. Consolidated rows use 50 flat leaves; their plain column is
the physical floor, the one buffer alone.
"""

from __future__ import annotations

import importlib.util
import io
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pad_sequence

from ..harness import Case, Scale, Unavailable, Workload
from ._libs import Lib, scratch_dir, with_plain
from ._libs import lib as get_lib

__all__ = ["WORKLOADS"]

BATCH = 1024
KEYS = [f"k{i}" for i in range(6)]
SELECTED = ["k0", "k2", "k4", ("next", "k1"), ("next", "k3"), ("next", "k5")]


def tree(seed: int = 0) -> dict[str, Any]:
    """Six ``(1024, 4)`` leaves at the top and six under ``"next"``."""
    g = torch.Generator().manual_seed(seed)
    top = {k: torch.randn(BATCH, 4, generator=g) for k in KEYS}
    top["next"] = {k: torch.randn(BATCH, 4, generator=g) for k in KEYS}
    return top


def tmap(fn: Callable[[Tensor], Any], d: dict[str, Any]) -> dict[str, Any]:
    """``fn`` on every leaf of a nested dict (a recursive dict comprehension)."""
    return {k: tmap(fn, v) if type(v) is dict else fn(v) for k, v in d.items()}


def tmap2(fn: Callable[[Tensor, Tensor], Any], a: dict[str, Any], b: dict[str, Any]) -> Any:
    """``fn`` on the leaves of two nested dicts of the same keys."""
    return {k: tmap2(fn, v, b[k]) if type(v) is dict else fn(v, b[k]) for k, v in a.items()}


def named(fn: Callable[[str, Tensor], Any], d: dict[str, Any]) -> dict[str, Any]:
    """``fn(key, leaf)`` on every leaf of a nested dict."""
    return {k: named(fn, v) if type(v) is dict else fn(k, v) for k, v in d.items()}


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"next.k0": ...}`` from a nested dict."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if type(v) is dict:
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    """The nested dict of ``"a.b"`` keys."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *head, last = key.split(".")
        node = out
        for part in head:
            node = node.setdefault(part, {})
        node[last] = value
    return out


HELPERS: dict[str, Any] = {
    "tmap": tmap,
    "tmap2": tmap2,
    "named": named,
    "flatten": flatten,
    "unflatten": unflatten,
    "torch": torch,
    "pickle": pickle,
    "io": io,
}


def _td(lib: Lib, seed: int = 0) -> Any:
    return lib.TensorDict(tree(seed), batch_size=[BATCH])


def _row(
    name: str,
    group: str,
    lib_code: str,
    plain_code: str,
    plain: str = "nested dict",
    kind: str = "batch",
    **env: Any,
) -> Workload:
    """A row timing ``lib_code`` on ``td`` (``other`` a second instance) against
    ``plain_code`` on ``d`` (``o``)."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(lib_code, td=_td(lib), other=_td(lib, 1), lib=lib.module, **HELPERS, **env)

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, d=tree(), o=tree(1), **HELPERS, **env)

    return Workload(name, group, kind, plain, with_plain(lib_build, plain_build))


# -- structure -----------------------------------------------------------------------


def _flat_row(name: str, lib_code: str, plain_code: str) -> Workload:
    """A row on the flattened instance (``"next.k0"`` keys)."""

    def lib_build(lib: Lib, scale: Scale) -> Case:
        td = lib.TensorDict(flatten(tree()), batch_size=[BATCH])
        return Case(lib_code, td=td, **HELPERS)

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, d=flatten(tree()), **HELPERS)

    return Workload(name, "structure", "other", "dict", with_plain(lib_build, plain_build))


def _update_row() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        source = {k: torch.randn(BATCH, 4) for k in KEYS}
        return Case("td.update(new)", td=_td(lib), new=lib.TensorDict(source, batch_size=[BATCH]))

    def plain_build(scale: Scale) -> Case:
        return Case("d.update(new)", d=tree(), new={k: torch.randn(BATCH, 4) for k in KEYS})

    return Workload(
        "update() of 6 keys",
        "structure",
        "small",
        "dict.update",
        with_plain(lib_build, plain_build),
    )


def _from_dict_row() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        cls = lib.TensorDict
        return Case("cls.from_dict(src, batch_size=[1024])", cls=cls, src=tree())

    def plain_build(scale: Scale) -> Case:
        return Case("tmap(lambda v: v, src)", src=tree(), **HELPERS)

    return Workload(
        "from_dict (12 leaves, nested)",
        "structure",
        "other",
        "nested dict copy",
        with_plain(lib_build, plain_build),
    )


# -- ragged data -----------------------------------------------------------------------

LENGTHS = [8 + (i * 7) % 57 for i in range(32)]


def _members(lib: Lib | None) -> list[Any]:
    g = torch.Generator().manual_seed(2)
    rows = [
        {"obs": torch.randn(n, 4, generator=g), "r": torch.randn(n, generator=g)} for n in LENGTHS
    ]
    if lib is None:
        return rows
    return [lib.TensorDict(row, batch_size=[n]) for row, n in zip(rows, LENGTHS)]


def _ragged(name: str, lib_code: str, plain_code: str) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        stack = lib.require(lib.module, "lazy_stack")(_members(lib))
        return Case(lib_code, stack=stack, torch=torch)

    def plain_build(scale: Scale) -> Case:
        return Case(plain_code, rows=_members(None), pad_sequence=pad_sequence)

    return Workload(name, "ragged", "batch", "pad_sequence", with_plain(lib_build, plain_build))


def _pad_row() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("pad(td, [0, 8])", pad=lib.require(lib.module, "pad"), td=_td(lib))

    def plain_build(scale: Scale) -> Case:
        code = "tmap(lambda v: torch.nn.functional.pad(v, [0, 0, 0, 8]), d)"
        return Case(code, d=tree(), **HELPERS)

    return Workload(
        "pad(td, [0, 8]) of [1024]",
        "ragged",
        "batch",
        "F.pad per leaf",
        with_plain(lib_build, plain_build),
    )


# -- checkpoints -----------------------------------------------------------------------


def _saved(obj: Any) -> bytes:
    file = io.BytesIO()
    torch.save(obj, file)
    return file.getvalue()


def _checkpoint(name: str, lib_code: str, plain_code: str, plain: str) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        td = _td(lib)
        env = {"td": td, "sd": td.state_dict(), "data": _saved(td), **HELPERS}
        return Case(lib_code, **env)

    def plain_build(scale: Scale) -> Case:
        d = tree()
        return Case(plain_code, d=d, sd=flatten(d), data=_saved(d), **HELPERS)

    return Workload(name, "checkpoint", "other", plain, with_plain(lib_build, plain_build))


def _file_rows() -> list[Workload]:
    def save_lib(lib: Lib, scale: Scale) -> Case:
        td, path = _td(lib), scratch_dir(f"loop-save-{lib.name}") / "td"
        return Case(lambda: td.save(path), prepare=_remove(path))

    def save_plain(scale: Scale) -> Case:
        d, path = tree(), scratch_dir("loop-save-plain") / "d.pt"
        return Case(lambda: torch.save(d, path), prepare=_remove(path))

    def load_lib(lib: Lib, scale: Scale) -> Case:
        path = scratch_dir(f"loop-load-{lib.name}") / "td"
        _td(lib).save(path)
        return Case("load(path)", load=lib.require(lib.TensorDict, "load"), path=path)

    def load_plain(scale: Scale) -> Case:
        path = scratch_dir("loop-load-plain") / "d.pt"
        torch.save(tree(), path)
        return Case("torch.load(path)", path=path, torch=torch)

    def st_save_lib(lib: Lib, scale: Scale) -> Case:
        if importlib.util.find_spec("safetensors") is None:
            raise Unavailable("safetensors is not installed")
        td, path = _td(lib), scratch_dir(f"loop-st-{lib.name}") / "td.safetensors"
        save = lib.require(lib.module, "to_safetensors")
        return Case(lambda: save(td, path), prepare=_remove(path))

    def st_save_plain(scale: Scale) -> Case:
        try:
            from safetensors.torch import save_file
        except ImportError:
            raise Unavailable("safetensors is not installed") from None
        flat, path = flatten(tree()), scratch_dir("loop-st-plain") / "d.safetensors"
        return Case(lambda: save_file(flat, path), prepare=_remove(path))

    return [
        Workload(
            "save(path) (memmap, 12 leaves)",
            "checkpoint",
            "other",
            "torch.save",
            with_plain(save_lib, save_plain),
        ),
        Workload(
            "load(path) (memmap, 12 leaves)",
            "checkpoint",
            "other",
            "torch.load",
            with_plain(load_lib, load_plain),
        ),
        Workload(
            "to_safetensors (12 leaves)",
            "checkpoint",
            "other",
            "safetensors save_file",
            with_plain(st_save_lib, st_save_plain),
        ),
    ]


def _remove(path: Path) -> Callable[[], None]:
    def remove() -> None:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()

    return remove


# -- consolidated transfers ---------------------------------------------------------------


def _fifty(lib: Lib) -> Any:
    g = torch.Generator().manual_seed(3)
    leaves = {f"k{i}": torch.randn(BATCH, 4, generator=g) for i in range(50)}
    td = lib.TensorDict(leaves, batch_size=[BATCH])
    return lib.require(td, "consolidate")()


def _buffer() -> Tensor:
    return torch.empty(50 * BATCH * 4 * 4, dtype=torch.uint8)


def _consolidated(name: str, lib_code: str, plain_code: str, plain: str) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        c = _fifty(lib)
        return Case(lib_code, c=c, data=pickle.dumps(c), **HELPERS)

    def plain_build(scale: Scale) -> Case:
        b = _buffer()
        return Case(plain_code, b=b, data=pickle.dumps(b), **HELPERS)

    return Workload(name, "consolidated", "other", plain, with_plain(lib_build, plain_build))


# -- modules -----------------------------------------------------------------------------


def _probabilistic() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        tdnn = lib.submodule("nn")
        module = tdnn.ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"],
            out_keys=["action"],
            distribution_class=torch.distributions.Normal,
            default_interaction_type=tdnn.InteractionType.RANDOM,
        )
        td = lib.TensorDict(
            {"loc": torch.zeros(BATCH, 4), "scale": torch.ones(BATCH, 4)}, batch_size=[BATCH]
        )
        return Case("module(td)", module=module, td=td)

    def plain_build(scale: Scale) -> Case:
        code = 'd["action"] = Normal(d["loc"], d["scale"]).sample()'
        d = {"loc": torch.zeros(BATCH, 4), "scale": torch.ones(BATCH, 4)}
        return Case(code, d=d, Normal=torch.distributions.Normal)

    return Workload(
        "ProbabilisticTensorDictModule sample (Normal)",
        "nn",
        "module",
        "Normal(...).sample()",
        with_plain(lib_build, plain_build),
    )


def _ensemble() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        tdnn = lib.submodule("nn")
        inner = tdnn.TensorDictModule(nn.Linear(4, 4), in_keys=["x"], out_keys=["y"])
        module = tdnn.EnsembleModule(inner, num_copies=4).requires_grad_(False)
        td = lib.TensorDict({"x": torch.randn(BATCH, 4)}, batch_size=[BATCH])
        return Case("module(td)", module=module, td=td)

    def plain_build(scale: Scale) -> Case:
        linears = [nn.Linear(4, 4).requires_grad_(False) for _ in range(4)]
        code = 'd["y"] = torch.stack([m(d["x"]) for m in linears])'
        return Case(code, linears=linears, d={"x": torch.randn(BATCH, 4)}, torch=torch)

    return Workload(
        "EnsembleModule of 4 Linear, batch 1024",
        "nn",
        "module",
        "loop + stack",
        with_plain(lib_build, plain_build),
    )


# -- typed classes -----------------------------------------------------------------------


@dataclass
class PlainObs:
    """The plain equivalent of ``Obs``."""

    pixels: Tensor
    state: Tensor


@dataclass
class PlainTransition:
    """The plain equivalent of ``Transition`` (a nested class)."""

    obs: PlainObs
    action: Tensor
    reward: Tensor


@cache
def _classes(name: str) -> SimpleNamespace:
    lib = get_lib(name)

    def make(cls_name: str, annotations: dict[str, Any]) -> Any:
        body = {"__annotations__": annotations, "__module__": __name__, "__qualname__": cls_name}
        return lib.tensorclass(type(cls_name, (), body))

    obs = make("Obs", {"pixels": Tensor, "state": Tensor})
    return SimpleNamespace(
        Obs=obs, Transition=make("Transition", {"obs": obs, "action": Tensor, "reward": Tensor})
    )


def _transition(lib: Lib | None, n: int, seed: int) -> Any:
    g = torch.Generator().manual_seed(seed)
    pixels, state = torch.randn(n, 16, generator=g), torch.randn(n, 4, generator=g)
    action, reward = torch.randn(n, 2, generator=g), torch.randn(n, 1, generator=g)
    if lib is None:
        return PlainTransition(PlainObs(pixels, state), action, reward)
    c = _classes(lib.name)
    obs = c.Obs(pixels=pixels, state=state, batch_size=[n])
    return c.Transition(obs=obs, action=action, reward=reward, batch_size=[n])


MASK = torch.arange(BATCH) % 3 == 0

_PLAIN_MASK = "T(O(t.obs.pixels[MASK], t.obs.state[MASK]), t.action[MASK], t.reward[MASK])"
_PLAIN_STACK = (
    "T(O(torch.stack([x.obs.pixels for x in xs]), torch.stack([x.obs.state for x in xs])), "
    "torch.stack([x.action for x in xs]), torch.stack([x.reward for x in xs]))"
)


def _typed(name: str, lib_code: str, plain_code: str) -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        xs = [_transition(lib, 8, i) for i in range(64)]
        return Case(lib_code, t=_transition(lib, BATCH, 0), xs=xs, MASK=MASK, torch=torch)

    def plain_build(scale: Scale) -> Case:
        xs = [_transition(None, 8, i) for i in range(64)]
        env = {"T": PlainTransition, "O": PlainObs, "MASK": MASK, "torch": torch}
        return Case(plain_code, t=_transition(None, BATCH, 0), xs=xs, **env)

    return Workload(name, "typed", "batch", "@dataclass", with_plain(lib_build, plain_build))


# fmt: off
WORKLOADS = [
    # reductions over a batch dim, element-wise ops and casts (12 leaves, nested)
    _row("std(0) (12 leaves, nested)", "reduce", "td.std(0)", "tmap(lambda v: v.std(0), d)"),
    _row("mean(0) (12 leaves, nested)", "reduce", "td.mean(0)", "tmap(lambda v: v.mean(0), d)"),
    _row("softmax(0) (12 leaves, nested)", "reduce", "td.softmax(0)", "tmap(lambda v: torch.softmax(v, 0), d)"),
    _row("named_apply (12 leaves, nested)", "maths", "td.named_apply(lambda k, v: v + 1)", "named(lambda k, v: v + 1, d)"),
    _row("td * other (12 leaves, nested)", "maths", "td * other", "tmap2(lambda a, b: a * b, d, o)"),
    _row("abs() (12 leaves, nested)", "maths", "td.abs()", "tmap(torch.abs, d)"),
    _row("to(float16) (12 leaves, nested)", "maths", "td.to(torch.float16)", "tmap(lambda v: v.to(torch.float16), d)"),
    _row("clamp(-1, 1) (12 leaves, nested)", "maths", "td.clamp(-1, 1)", "tmap(lambda v: v.clamp(-1, 1), d)"),
    # structure
    _row("flatten_keys() (12 leaves)", "structure", "td.flatten_keys()", "flatten(d)", kind="other"),
    _flat_row("unflatten_keys() (12 leaves)", "td.unflatten_keys()", "unflatten(d)"),
    _row("select 6 keys (3 nested)", "structure", "td.select(*SELECTED)", "{'k0': d['k0'], 'k2': d['k2'], 'k4': d['k4'], 'next': {'k1': d['next']['k1'], 'k3': d['next']['k3'], 'k5': d['next']['k5']}}", SELECTED=SELECTED, kind="other"),
    _row("exclude 6 keys (3 nested)", "structure", "td.exclude(*SELECTED)", "{'k1': d['k1'], 'k3': d['k3'], 'k5': d['k5'], 'next': {'k0': d['next']['k0'], 'k2': d['next']['k2'], 'k4': d['next']['k4']}}", SELECTED=SELECTED, kind="other"),
    _update_row(),
    _row("rename_key_ there and back", "structure", "td.rename_key_('k0', 'z')\ntd.rename_key_('z', 'k0')", "d['z'] = d.pop('k0')\nd['k0'] = d.pop('z')", kind="other"),
    _row("to_dict() (12 leaves, nested)", "structure", "td.to_dict()", "tmap(lambda v: v, d)", kind="other"),
    _from_dict_row(),
    # ragged data
    _pad_row(),
    _ragged("densify() lazy stack of 32 ragged", "stack.densify()", "{k: pad_sequence([r[k] for r in rows], batch_first=True) for k in rows[0]}"),
    _ragged("get(as_padded_tensor) of 32 ragged", "stack.get('obs', as_padded_tensor=True)", "pad_sequence([r['obs'] for r in rows], batch_first=True)"),
    # checkpoints
    _checkpoint("state_dict() (12 leaves)", "td.state_dict()", "flatten(d)", "flatten the dict"),
    _checkpoint("load_state_dict() (12 leaves)", "td.load_state_dict(sd)", "d.update(unflatten(sd))", "unflatten + update"),
    _checkpoint("torch.save to memory (12 leaves)", "torch.save(td, io.BytesIO())", "torch.save(d, io.BytesIO())", "torch.save of the dict"),
    _checkpoint("torch.load from memory (12 leaves)", "torch.load(io.BytesIO(data))", "torch.load(io.BytesIO(data))", "torch.load of the dict"),
    *_file_rows(),
    # consolidated transfers (50 leaves): the plain column is the one buffer alone
    _consolidated("pickle.dumps consolidated (50 leaves)", "pickle.dumps(c)", "pickle.dumps(b)", "pickle of the buffer"),
    _consolidated("pickle.loads consolidated (50 leaves)", "pickle.loads(data)", "pickle.loads(data)", "unpickle the buffer"),
    _consolidated("to(float16) consolidated (50 leaves)", "c.to(torch.float16)", "b.view(torch.float32).to(torch.float16)", "cast of the buffer"),
    _consolidated("clone() consolidated (50 leaves)", "c.clone()", "b.clone()", "clone of the buffer"),
    # modules
    _probabilistic(),
    _ensemble(),
    # typed classes
    _typed("mask index of a nested class, batch 1024", "t[MASK]", _PLAIN_MASK),
    _typed("torch.stack of 64 nested class instances", "torch.stack(xs)", _PLAIN_STACK),
]
# fmt: on
