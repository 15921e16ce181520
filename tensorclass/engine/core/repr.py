"""A compact ``repr``: the class, each field as ``dtype[shape]``, the batch size, the device.

Short instances print on one line; longer ones print one field per line::

    MyData(image=float32[11, 3, 64, 64], label=int64[11], batch_size=[11])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from ...non_tensor import NonTensorData, NonTensorStack
from ...switches import get_printoptions
from .state import TensorCore

__all__ = ["describe_leaf", "describe_tensor", "format_instance"]

_WIDTH = 100
_VALUE_WIDTH = 40


def describe_tensor(
    dtype: torch.dtype,
    shape: Sequence[int],
    device: torch.device,
    options: dict[str, Any] | None = None,
) -> str:
    """A tensor as a repr shows it: ``float32[3, 4]`` (``@device`` off the CPU), as the
    print options say (:class:`tensorclass.set_printoptions`)."""
    if options is None:
        options = get_printoptions()
    text = str(dtype).removeprefix("torch.") if options["show_dtype"] else ""
    if options["show_shape"]:
        text += f"[{', '.join(map(str, shape))}]"
    if device.type != "cpu" and options["show_field_device"]:
        text += f"@{device}"
    return text or "Tensor"


def describe_leaf(leaf: Any, indent: str = "", options: dict[str, Any] | None = None) -> str:
    """One leaf as it appears in a repr: ``float32[3, 4]``, ``'text'``, a nested repr.

    ``options`` are the print options (:func:`tensorclass.get_printoptions` by default).
    """
    if isinstance(leaf, Tensor):
        text = describe_tensor(leaf.dtype, leaf.shape, leaf.device, options)
        if type(leaf) is not Tensor:
            text = f"{type(leaf).__name__}({text})"
        return text
    if isinstance(leaf, TensorCore):
        return format_instance(leaf, indent, options)
    if type(leaf) is NonTensorData:
        if isinstance(leaf.data, Tensor):  # an UnbatchedTensor
            return describe_leaf(leaf.data, indent, options)
        text = repr(leaf.data)
        return text if len(text) <= _VALUE_WIDTH else text[: _VALUE_WIDTH - 3] + "..."
    if type(leaf) is NonTensorStack:
        return f"NonTensorStack[{', '.join(map(str, leaf.shape))}]"
    return repr(leaf)


def format_instance(
    obj: TensorCore, indent: str = "", options: dict[str, Any] | None = None
) -> str:
    """The repr of an instance: ``Class(field=..., batch_size=[...])``.

    Typed classes list every field (absent ones as ``None``); a TensorDict lists its keys
    as ``key: value``. ``options`` are the print options (see
    :class:`tensorclass.set_printoptions`).
    """
    if options is None:
        options = get_printoptions()
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
    footer = [f"batch_size={list(obj._batch_size)}"] if options["show_batch_size"] else []
    if obj._device is not None and options["show_device"]:
        footer.append(f"device={obj._device}")
    if obj._names is not None:
        footer.append(f"names={list(obj._names)}")
    name = type(obj).__name__
    inner = indent + "    "

    def render(prefix: str) -> list[str]:
        fields = [
            label + ("None" if leaf is None else describe_leaf(leaf, prefix, options))
            for label, leaf in entries
        ]
        order = options["sort_keys"]
        if order == "alphabetical":
            fields.sort()
        elif callable(order):
            fields.sort(key=order)
        return fields + footer

    text = f"{name}({', '.join(render(indent))})"
    if options["compact"] and len(text) + len(indent) <= _WIDTH and "\n" not in text:
        return text
    lines = "".join(f"{inner}{line},\n" for line in render(inner))
    return f"{name}(\n{lines}{indent})"
