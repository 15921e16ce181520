"""``parse_tensor_dict_string``: rebuild an instance's structure from its printed form.

A debugging aid: the repr (see :mod:`~tensorclass.engine.core.repr`) shows every key,
dtype, shape, batch size and device, so a ``TensorDict`` of zeros with that structure can
be rebuilt from a log line. Values of tensors are not printed; non-tensor values are read
back when their repr is a Python literal.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import torch

from ...errors import StructureMismatchError
from ...non_tensor import NonTensorData
from ...registry import dynamic_class
from ..core.state import as_batch_size

__all__ = ["parse_tensor_dict_string"]

_CLOSE = {"(": ")", "[": "]", "{": "}"}
#: a class name as a repr starts: ``TensorDict(``, ``LazyStackedTensorDict[Batch](``
_CLASS = re.compile(r"[A-Za-z_][\w.]*(\[[\w.]+\])?\(")


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for i, char in enumerate(text):
        if quote:
            if char == quote and text[i - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _CLOSE:
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last:
        parts.append(last)
    return [part for part in parts if part]


def _ints(text: str) -> list[int]:
    inner = text.strip()[1:-1].strip()
    return [int(part) for part in inner.split(",") if part.strip()] if inner else []


def _tensor(text: str) -> torch.Tensor | None:
    """``float32[3, 4]`` or ``float32[3]@cuda:0`` (optionally inside ``Subclass(...)``)."""
    if "(" in text and text.endswith(")"):
        text = text[text.index("(") + 1 : -1]
    body, _, device = text.partition("@")
    if "[" not in body or not body.endswith("]"):
        return None
    name = body[: body.index("[")]
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        return None
    return torch.zeros(_ints(body[body.index("[") :]), dtype=dtype, device=device or "cpu")


def _value(text: str) -> object:
    if text == "None":
        return None
    if text.endswith(")") and _CLASS.match(text) and _tensor(text) is None:
        return _instance(text)
    tensor = _tensor(text)
    if tensor is not None:
        return tensor
    if text.startswith("NonTensorStack["):
        raise StructureMismatchError(
            f"parse_tensor_dict_string: {text} does not print its values; cannot rebuild it"
        )
    try:
        return NonTensorData(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return NonTensorData(text)  # a shortened or non-literal repr: kept as text


def _instance(text: str) -> object:
    text = text.strip()
    if not (text.endswith(")") and "(" in text):
        raise ValueError(f"parse_tensor_dict_string: not a printed tensor class: {text[:60]!r}")
    body = text[text.index("(") + 1 : -1]
    entries: dict[str, object] = {}
    batch_size: list[int] = []
    device = None
    names = None
    for part in _split_top(body):
        colon, equals = part.find(": "), part.find("=")
        key_first = colon != -1 and (equals == -1 or colon < equals)
        if key_first:
            key, raw = part[:colon].strip(), part[colon + 2 :].strip()
            if key[:1] in "'\"":
                key = ast.literal_eval(key)
        else:
            key, raw = part[:equals].strip(), part[equals + 1 :].strip()
            if key == "batch_size":
                batch_size = _ints(raw)
                continue
            if key == "device":
                device = raw
                continue
            if key == "names":
                names = ast.literal_eval(raw)
                continue
            if key == "stack_dim":
                continue
        value = _value(raw)
        if value is not None:
            entries[key] = value
    size = as_batch_size(batch_size)
    result = dynamic_class()._new({}, size, None if device is None else torch.device(device))
    result._data.update(entries)
    if names is not None:
        result.names = names
    return result


def parse_tensor_dict_string(s: str) -> Any:
    """A ``TensorDict`` with the structure printed in ``s`` (the repr of a tensor class).

    Keys, dtypes, shapes, batch sizes, devices and names come from the text; tensors are
    zeros; non-tensor values are read back when their repr is a literal. Typed classes
    come back as ``TensorDict``.

    >>> import torch
    >>> from tensorclass import TensorDict, parse_tensor_dict_string
    >>> td = TensorDict({"obs": torch.ones(3, 4), "next": {"done": torch.ones(3, 1).bool()}}, [3])
    >>> rebuilt = parse_tensor_dict_string(repr(td))
    >>> rebuilt["next", "done"].dtype, rebuilt.batch_size, rebuilt["obs"].sum()
    (torch.bool, torch.Size([3]), tensor(0.))
    """
    return _instance(" ".join(line.strip() for line in s.strip().splitlines()))
