"""A compact ``repr``: the class, each field as ``dtype[shape]``, the batch size, the device.

Short instances print on one line; longer ones print one field per line::

    MyData(image=float32[11, 3, 64, 64], label=int64[11], batch_size=[11])
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from ._core import TensorCore
from .non_tensor import NonTensorData, NonTensorStack

__all__ = ["describe_leaf", "format_instance"]

_WIDTH = 100
_VALUE_WIDTH = 40


def describe_leaf(leaf: Any, indent: str = "") -> str:
    """One leaf as it appears in a repr: ``float32[3, 4]``, ``'text'``, a nested repr."""
    if isinstance(leaf, Tensor):
        dtype = str(leaf.dtype).removeprefix("torch.")
        text = f"{dtype}[{', '.join(map(str, leaf.shape))}]"
        if leaf.device.type != "cpu":
            text += f"@{leaf.device}"
        if type(leaf) is not Tensor:
            text = f"{type(leaf).__name__}({text})"
        return text
    if isinstance(leaf, TensorCore):
        return format_instance(leaf, indent)
    if type(leaf) is NonTensorData:
        text = repr(leaf.data)
        return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 3] + "..."
    if type(leaf) is NonTensorStack:
        return f"NonTensorStack[{', '.join(map(str, leaf.shape))}]"
    return repr(leaf)


def format_instance(obj: TensorCore, indent: str = "") -> str:
    """The repr of an instance: ``Class(field=..., batch_size=[...])``.

    Typed classes list every field (absent ones as ``None``); a TensorDict lists its keys
    as ``key: value``.
    """
    if obj.__tensorclass_schema__.dynamic:
        entries = [
            (f"{key if key.isidentifier() else repr(key)}: ", leaf)
            for key, leaf in obj._data.items()
        ]
    else:
        names = obj.__tensorclass_schema__.names
        entries = [(f"{name}=", obj._data.get(name)) for name in names]
        if obj.__tensorclass_schema__.extra_keys:  # the keys stored besides the fields
            entries += [
                (f"{key if key.isidentifier() else repr(key)}: ", leaf)
                for key, leaf in obj._data.items()
                if key not in names
            ]
    footer = [f"batch_size={list(obj._batch_size)}"]
    if obj._device is not None:
        footer.append(f"device={obj._device}")
    if obj._names is not None:
        footer.append(f"names={list(obj._names)}")
    name = type(obj).__name__
    inner = indent + "    "

    def render(prefix: str) -> list[str]:
        fields = [
            label + ("None" if leaf is None else describe_leaf(leaf, prefix))
            for label, leaf in entries
        ]
        return fields + footer

    text = f"{name}({', '.join(render(indent))})"
    if len(text) + len(indent) <= _WIDTH and "\n" not in text:
        return text
    lines = "".join(f"{inner}{line},\n" for line in render(inner))
    return f"{name}(\n{lines}{indent})"
