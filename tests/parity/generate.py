"""Generate tests/parity/tensordict_0_15_3.json: public names and keyword parameters.

Run once with tensordict 0.15.3 installed: ``python tests/parity/generate.py`` from the
repository root. Only names and parameter names are recorded.
"""

import inspect, json
import tensordict, tensordict.nn as tdnn
from tensordict import TensorDict, LazyStackedTensorDict, MemoryMappedTensor


def params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out.append(p.name)
    return out


def members(cls):
    d = {}
    for n in sorted(dir(cls)):
        if n.startswith("_"):
            continue
        a = inspect.getattr_static(cls, n)
        if isinstance(a, property) or not callable(getattr(cls, n, None)):
            d[n] = None
        else:
            d[n] = params(getattr(cls, n))
    return d


def module(mod):
    d = {}
    for n in sorted(mod.__all__):
        o = getattr(mod, n)
        if inspect.isclass(o):
            d[n] = params(o.__init__)
        elif callable(o):
            d[n] = params(o)
        else:
            d[n] = None
    return d


nn_classes = {
    n: members(getattr(tdnn, n))
    for n in sorted(tdnn.__all__)
    if inspect.isclass(getattr(tdnn, n))
    and issubclass(getattr(tdnn, n), __import__("torch").nn.Module)
}
data = {
    "version": tensordict.__version__,
    "TensorDict": members(TensorDict),
    "LazyStackedTensorDict": members(LazyStackedTensorDict),
    "MemoryMappedTensor": {
        k: v
        for k, v in members(MemoryMappedTensor).items()
        if k not in dir(__import__("torch").Tensor)
    },
    "tensordict": module(tensordict),
    "tensordict.nn": module(tdnn),
}
# nn classes: only the methods they add over nn.Module
import torch

base = set(dir(torch.nn.Module))
for n, m in nn_classes.items():
    data[f"tensordict.nn.{n}"] = {k: v for k, v in m.items() if k not in base}
json.dump(data, open("tests/parity/tensordict_0_15_3.json", "w"), indent=1, sort_keys=True)

print({k: len(v) if isinstance(v, dict) else v for k, v in data.items()})
