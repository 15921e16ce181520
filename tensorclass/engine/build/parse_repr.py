"""``parse_tensor_dict_string``: rebuild an instance's structure from its printed form.

A debugging aid: the compact repr (see :mod:`~tensorclass.engine.build.printing`) shows every
key, dtype, feature shape, batch size and device, so a ``TensorDict`` of zeros with that
structure can be rebuilt from a log line. Values are not printed: an entry that is not a
tensor or a nested instance (``str``, ``NonTensorStack``) cannot be rebuilt and is an error,
as in tensordict.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from ...registry import dynamic_class
from ..core.state import as_batch_size
from .printing import short_dtype

__all__ = ["parse_tensor_dict_string"]

_OPEN = {"(": ")", "[": "]", "{": "}"}
#: the start of a printed instance: its class name and its parenthesis
_HEADER = re.compile(r"\s*([A-Za-z_][\w.]*)\(")
#: a tensor entry: ``f32[3,4]``, ``bool[]``, ``f32[2]@cuda:0``
_TENSOR = re.compile(r"([a-z0-9_]+)\[([-0-9,]*)\](?:@([\w:,]+))?")
#: a nested entry's prefix: an optional class name, optional extra batch dims
_NESTED = re.compile(r"([A-Za-z_]\w*)?(?:\[([0-9,]*)\])?\{")
#: a tensor of the detailed form: ``Tensor(shape=torch.Size([3, 4]), device=cpu, ...)``
_DETAIL = re.compile(r"\w*Tensor\((?=shape=torch\.Size\()")
#: the dtypes by their short printed names (``f32`` -> ``torch.float32``)
_DTYPES = {
    short_dtype(value): value for value in vars(torch).values() if isinstance(value, torch.dtype)
}


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [part for part in parts if part]


def _dims(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _closing(text: str, start: int) -> int:
    """The index of the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"parse_tensor_dict_string: unbalanced brackets in {text[start:][:60]!r}")


def _size(text: str) -> list[int]:
    """``[3]`` or ``torch.Size([3])`` as a list of ints."""
    text = text.strip()
    if text.startswith("torch.Size(") and text.endswith(")"):
        text = text[len("torch.Size(") : -1]
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"parse_tensor_dict_string: {text!r} is not a size")
    return _dims(text[1:-1])


def _detailed_tensor(key: str, inner: str, device: torch.device | None) -> torch.Tensor:
    """The zeros of a detailed-form tensor entry (``shape=..., device=..., dtype=...``)."""
    fields = dict(part.partition("=")[::2] for part in _split_top(inner))
    shape = _size(fields["shape"])
    if -1 in shape:
        raise ValueError(
            f"parse_tensor_dict_string: entry {key!r} has a dim that differs between the "
            f"members of a lazy stack (-1); its shape cannot be rebuilt"
        )
    dtype = getattr(torch, fields.get("dtype", "torch.float32").removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"parse_tensor_dict_string: entry {key!r} has no dtype")
    where = fields.get("device") or (device if device is not None else "cpu")
    return torch.zeros(shape, dtype=dtype, device=where)


def _entries(body: str, batch: list[int], device: torch.device | None) -> Any:
    """A ``TensorDict`` of batch size ``batch`` from the entries ``key: value, ...``."""
    data: dict[str, Any] = {}
    for part in _split_top(body):
        key, sep, value = part.partition(": ")
        if not sep:
            raise ValueError(f"parse_tensor_dict_string: {part!r} is not a 'key: value' entry")
        value = value.strip()
        tensor = _TENSOR.fullmatch(value)
        nested = _NESTED.match(value)
        if tensor is not None and tensor.group(1) in _DTYPES:
            dims = _dims(tensor.group(2))
            if -1 in dims:
                raise ValueError(
                    f"parse_tensor_dict_string: entry {key!r} has a dim that differs between "
                    f"the members of a lazy stack (-1); its shape cannot be rebuilt"
                )
            where = tensor.group(3) or (device if device is not None else "cpu")
            data[key] = torch.zeros([*batch, *dims], dtype=_DTYPES[tensor.group(1)], device=where)
        elif nested is not None and value.endswith("}"):
            extra = _dims(nested.group(2) or "")
            data[key] = _entries(value[nested.end() : -1], [*batch, *extra], device)
        elif (detail := _DETAIL.match(value)) is not None and value.endswith(")"):
            data[key] = _detailed_tensor(key, value[detail.end() : -1], device)
        elif _HEADER.match(value) is not None and value.endswith(")"):
            data[key] = _instance(value)  # a nested instance in the detailed form
        elif value == "None":
            continue  # an absent field of a typed class
        else:
            raise ValueError(
                f"parse_tensor_dict_string: cannot rebuild entry {key!r} ({value}): only "
                f"tensor and nested entries of the compact repr print their structure"
            )
    result = dynamic_class()._new({}, as_batch_size(batch), device)
    result._data.update(data)
    return result


def parse_tensor_dict_string(s: str) -> Any:
    """A ``TensorDict`` with the structure printed in ``s`` (the repr of an instance, in the
    compact or the detailed form).

    Keys, dtypes, shapes, batch sizes and devices come from the text; tensors are zeros.
    Typed classes and lazy stacks come back as ``TensorDict``; entries that print no
    structure (non-tensor values, the exclusive keys of a lazy stack, dims that differ
    between its members) are a ``ValueError``, as is text that is not a repr.

    >>> import torch
    >>> from tensorclass import TensorDict, parse_tensor_dict_string
    >>> td = TensorDict({"obs": torch.ones(3, 4), "next": {"done": torch.ones(3, 1).bool()}}, [3])
    >>> repr(td)
    'TensorDict(batch_size=[3], fields={next: {done: bool[1]}, obs: f32[4]})'
    >>> rebuilt = parse_tensor_dict_string(repr(td))
    >>> rebuilt["next", "done"].dtype, rebuilt.batch_size, rebuilt["obs"].sum()
    (torch.bool, torch.Size([3]), tensor(0.))
    """
    return _instance(" ".join(line.strip() for line in s.strip().splitlines()))


def _instance(text: str) -> Any:
    """The ``TensorDict`` printed in ``text`` (one line), compact or detailed."""
    header = _HEADER.match(text)
    if header is None or not text.endswith(")"):
        raise ValueError(f"parse_tensor_dict_string: not a printed tensor class: {text[:60]!r}")
    opening = header.end() - 1
    if _closing(text, opening) != len(text) - 1:
        raise ValueError(f"parse_tensor_dict_string: not a printed tensor class: {text[:60]!r}")
    inner = text[opening + 1 : -1]
    batch: list[int] = []
    device = None
    body = None
    for part in _split_top(inner):
        name, _, value = part.partition("=")
        if name == "batch_size":
            batch = _size(value)
        elif name == "device":
            device = None if value == "None" else torch.device(value)
        elif name == "fields" and value.startswith("{") and value.endswith("}"):
            body = value[1:-1]
        elif name == "exclusive_fields" and value.strip("{} "):
            raise ValueError(
                "parse_tensor_dict_string: the exclusive fields of a lazy stack cannot be "
                "rebuilt in a TensorDict"
            )
    if body is None:
        raise ValueError(
            f"parse_tensor_dict_string: not a printed tensor class (no 'fields={{...}}'): "
            f"{text[:60]!r}"
        )
    return _entries(body, batch, device)
