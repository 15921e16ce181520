"""Modules reading and writing by key, and functional parameters.

- ``TensorDictModule`` / a 3-module ``TensorDictSequential`` against calling the modules
  directly and writing the outputs into a dict (weights frozen: no autograd graph, so the
  wrapper's own cost shows);
- ``from_module`` + ``to_module`` (a functional call) against ``torch.func.functional_call``;
- ``from_modules`` + ``torch.vmap`` over an ensemble of 4 MLPs against a Python loop;
- ``TensorDictParams``: a read by key, a forward reading two keys, an in-place ``mul_`` and
  ``parameters()`` against ``nn.ParameterDict`` / plain parameters.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from ..harness import Case, Scale, Workload
from ._libs import Lib, with_plain

__all__ = ["WORKLOADS"]


def _linear() -> nn.Linear:
    return nn.Linear(8, 8).requires_grad_(False)


def _peer_net() -> nn.Module:
    """The peer's functional-call benchmark network: six ``Linear(2, 2)``, nested."""
    return nn.Sequential(
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)),
    )


def _mlps(count: int = 4) -> list[nn.Module]:
    return [nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 8)) for _ in range(count)]


def _td_module() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        tdnn = lib.submodule("nn")
        module = tdnn.TensorDictModule(_linear(), in_keys=["x"], out_keys=["y"])
        td = lib.TensorDict({"x": torch.randn(64, 8)}, batch_size=[64])
        return Case("module(td)", module=module, td=td)

    def plain_build(scale: Scale) -> Case:
        return Case('d["y"] = linear(d["x"])', linear=_linear(), d={"x": torch.randn(64, 8)})

    return Workload(
        "TensorDictModule(Linear(8, 8)), batch 64",
        "nn",
        "module",
        "direct call",
        with_plain(lib_build, plain_build),
    )


def _sequential() -> Workload:
    keys = [("x", "h"), ("h", "a"), ("a", "y")]

    def layers() -> list[nn.Module]:
        return [_linear(), nn.ReLU(), _linear()]

    def lib_build(lib: Lib, scale: Scale) -> Case:
        tdnn = lib.submodule("nn")
        wrapped = [
            tdnn.TensorDictModule(layer, in_keys=[src], out_keys=[dst])
            for layer, (src, dst) in zip(layers(), keys)
        ]
        module = tdnn.TensorDictSequential(*wrapped)
        td = lib.TensorDict({"x": torch.randn(64, 8)}, batch_size=[64])
        return Case("module(td)", module=module, td=td)

    def plain_build(scale: Scale) -> Case:
        first, act, last = layers()
        code = 'd["h"] = first(d["x"])\nd["a"] = act(d["h"])\nd["y"] = last(d["a"])'
        return Case(code, first=first, act=act, last=last, d={"x": torch.randn(64, 8)})

    return Workload(
        "TensorDictSequential of 3, batch 64",
        "nn",
        "module",
        "direct calls",
        with_plain(lib_build, plain_build),
    )


def _from_module() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        from_module = lib.require(lib.TensorDict, "from_module")
        return Case("from_module(net)", from_module=from_module, net=_peer_net())

    def plain_build(scale: Scale) -> Case:
        return Case("dict(net.named_parameters())", net=_peer_net())

    return Workload(
        "from_module(6 x Linear(2, 2))",
        "nn",
        "other",
        "named_parameters",
        with_plain(lib_build, plain_build),
    )


def _functional_call() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        net = _peer_net()
        params = lib.require(lib.TensorDict, "from_module")(copy.deepcopy(net))
        lib.require(params, "to_module")
        return Case(
            "with params.to_module(net):\n    net(x)", params=params, net=net, x=torch.randn(2, 2)
        )

    def plain_build(scale: Scale) -> Case:
        net = _peer_net()
        params = dict(copy.deepcopy(net).named_parameters())
        call = torch.func.functional_call
        return Case(
            "call(net, params, (x,))", call=call, net=net, params=params, x=torch.randn(2, 2)
        )

    return Workload(
        "to_module functional call (6 Linear)",
        "nn",
        "other",
        "func.functional_call",
        with_plain(lib_build, plain_build),
    )


def _from_modules(lib: Lib) -> Any:
    found = getattr(lib.module, "from_modules", None)
    return found if found is not None else lib.require(lib.TensorDict, "from_modules")


def _stack_params() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("from_modules(*mlps)", from_modules=_from_modules(lib), mlps=_mlps())

    def plain_build(scale: Scale) -> Case:
        return Case(
            "stack_module_state(mlps)",
            stack_module_state=torch.func.stack_module_state,
            mlps=_mlps(),
        )

    return Workload(
        "from_modules(4 MLPs)",
        "nn",
        "other",
        "func.stack_module_state",
        with_plain(lib_build, plain_build),
    )


def _ensemble() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        mlps = _mlps()
        params = _from_modules(lib)(*mlps)
        base = copy.deepcopy(mlps[0]).to("meta")

        def one(p: Any, x: torch.Tensor) -> torch.Tensor:
            with p.to_module(base):
                return base(x)  # type: ignore[no-any-return]

        return Case(
            "ensemble(params, x)",
            ensemble=torch.vmap(one, (0, None)),
            params=params,
            x=torch.randn(64, 8),
        )

    def plain_build(scale: Scale) -> Case:
        return Case("torch.stack([m(x) for m in mlps])", mlps=_mlps(), x=torch.randn(64, 8))

    return Workload(
        "vmap ensemble of 4 MLPs, batch 64",
        "nn",
        "other",
        "loop + stack",
        with_plain(lib_build, plain_build),
    )


def _affine_leaves() -> dict[str, torch.Tensor]:
    return {"scale": torch.ones(8), "shift": torch.zeros(8)}


def _params(lib: Lib) -> Any:
    tdnn = lib.submodule("nn")
    leaves = {**_affine_leaves(), "inner": {"w": torch.ones(8), "b": torch.zeros(8)}}
    return lib.require(tdnn, "TensorDictParams")(lib.TensorDict(leaves))


def _plain_params() -> nn.ParameterDict:
    leaves = {**_affine_leaves(), "inner": {"w": torch.ones(8), "b": torch.zeros(8)}}
    return nn.ParameterDict(leaves)


def _params_read() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case('params["scale"]', params=_params(lib))

    def plain_build(scale: Scale) -> Case:
        return Case('params["scale"]', params=_plain_params())

    return Workload(
        "TensorDictParams read by key",
        "nn",
        "other",
        "ParameterDict",
        with_plain(lib_build, plain_build),
    )


class _Affine(nn.Module):
    def __init__(self, params: Any) -> None:
        super().__init__()
        self.params = params

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.params["scale"] + self.params["shift"]  # type: ignore[no-any-return]


def _params_forward() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("module(x)", module=_Affine(_params(lib)), x=torch.randn(64, 8))

    def plain_build(scale: Scale) -> Case:
        return Case("module(x)", module=_Affine(_plain_params()), x=torch.randn(64, 8))

    return Workload(
        "TensorDictParams forward (affine), batch 64",
        "nn",
        "other",
        "ParameterDict",
        with_plain(lib_build, plain_build),
    )


def _params_mul_() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case(
            "with no_grad():\n    params.mul_(1.0)", params=_params(lib), no_grad=torch.no_grad
        )

    def plain_build(scale: Scale) -> Case:
        leaves = list(_plain_params().parameters())
        return Case(
            "with no_grad():\n    mul_(leaves, 1.0)",
            leaves=leaves,
            mul_=torch._foreach_mul_,
            no_grad=torch.no_grad,
        )

    return Workload(
        "TensorDictParams mul_ (4 leaves)",
        "nn",
        "other",
        "_foreach_mul_",
        with_plain(lib_build, plain_build),
    )


def _params_parameters() -> Workload:
    def lib_build(lib: Lib, scale: Scale) -> Case:
        return Case("list(params.parameters())", params=_params(lib))

    def plain_build(scale: Scale) -> Case:
        return Case("list(params.parameters())", params=_plain_params())

    return Workload(
        "TensorDictParams parameters() (4 leaves, nested)",
        "nn",
        "other",
        "ParameterDict",
        with_plain(lib_build, plain_build),
    )


WORKLOADS = [
    _td_module(),
    _sequential(),
    _from_module(),
    _functional_call(),
    _stack_params(),
    _ensemble(),
    _params_read(),
    _params_forward(),
    _params_mul_(),
    _params_parameters(),
]
