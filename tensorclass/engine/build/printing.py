"""The printed form of an instance, laid out as tensordict 0.15.3 prints it.

By default (``set_printoptions(compact=True)``) an instance prints its header, then its
entries sorted by name, each tensor as its short dtype and its dims after the batch dims::

    TensorDict(batch_size=[3], fields={image: f32[3,8,8], label: i64[]})

A nested instance shows its class (none for a plain ``TensorDict``) and its extra batch
dims before its own entries (``sub: [2]{c: bool[]}``); a non-tensor value shows its type
(``str``), a per-element stack ``NonTensorStack``, an absent field of a typed class ``None``.
Past 80 columns an entry goes on its own line. A lazy stack adds ``stack_dim=`` and, when
its members hold keys the others lack, ``exclusive_fields=``; a dim that differs between
its members is ``-1``. The form is read from shapes and dtypes only: no value is read and
no lazy stack is stacked.

``compact=False`` (or any option that only the detailed form uses, see
:class:`tensorclass.set_printoptions`) gives the detailed form: one
``Tensor(shape=..., device=..., dtype=..., is_shared=...)`` line per entry.
"""

from __future__ import annotations

import contextlib
import html
import textwrap
from collections.abc import Iterable, Sequence
from functools import reduce
from typing import Any, TypeAlias

import torch
from torch import Tensor

from ...non_tensor import NonTensorData, NonTensorStack
from ...switches import get_printoptions
from ...unbatched import UnbatchedTensor
from ..core.lazy_stacks import stacked_leaves
from ..core.state import TensorCore

__all__ = [
    "class_label",
    "describe_non_tensor",
    "format_instance",
    "html_instance",
    "short_dtype",
]

#: the columns a compact repr fills before it puts its entries on their own lines
_WIDTH = 80
_CPU = torch.device("cpu")
_INDENT = "    "

#: an entry's value: a token (``f32[3]``) or a nested container (prefix, entries)
Node: TypeAlias = "str | tuple[str, list[tuple[str, Node]]]"
_Stats: TypeAlias = tuple[tuple[int, ...], torch.dtype, set[torch.device]]


def short_dtype(dtype: torch.dtype) -> str:
    """The short name of a dtype in a compact repr: ``f32``, ``i64``, ``u8``, ``bf16``,
    ``c64``, ``bool``."""
    name = str(dtype).removeprefix("torch.")
    for long, short in (("float", "f"), ("uint", "u"), ("int", "i"), ("complex", "c")):
        name = name.replace(long, short)
    return name


def class_label(obj: TensorCore) -> str:
    """The class name a repr shows: a lazy stack of tensor-class instances shows their
    class; one of ``TensorDict`` or ``TypedTensorDict`` members (keys beyond the fields)
    shows ``LazyStackedTensorDict``, as in tensordict."""
    leaves = stacked_leaves(obj)
    if leaves is None:
        return type(obj).__name__
    schema = type(obj).__tensorclass_schema__
    if schema.dynamic or schema.extra_keys:
        return "LazyStackedTensorDict"
    for cls in type(obj).__mro__:
        if not cls.__name__.startswith("LazyStackedTensorDict"):
            return cls.__name__
    return type(obj).__name__  # pragma: no cover - a typed class is always in the MRO


# -- the compact form -----------------------------------------------------------------------


def _feature_shape(node: TensorCore, tensor: Tensor) -> tuple[int, ...]:
    """The dims of ``tensor`` after the batch dims of ``node`` (all of an unbatched one)."""
    if isinstance(tensor, UnbatchedTensor):
        return tuple(tensor.shape)
    return tuple(tensor.shape[len(node._batch_size) :])


def _tensor_of(item: object) -> Tensor | None:
    """``item`` if it is a tensor, the tensor of an ``UnbatchedTensor`` entry, else ``None``."""
    if isinstance(item, Tensor):
        return item
    if isinstance(item, NonTensorData) and isinstance(item.data, UnbatchedTensor):
        return item.data
    return None


def _leaf_stats(node: TensorCore, key: str) -> _Stats | str:
    """The feature shape, dtype and devices of the tensor entry ``key``: in a lazy stack, a
    dim its members disagree on is ``-1`` and the dtype is the promoted one. A member that
    holds a non-tensor value there gives that value's token instead."""
    leaves = stacked_leaves(node)
    if leaves is None:
        leaf = _tensor_of(node._data[key])
        if leaf is not None:
            return _feature_shape(node, leaf), leaf.dtype, {leaf.device}
        node_entry = _entry(node, key)
        return node_entry if isinstance(node_entry, str) else "Tensor"
    shapes: set[tuple[int, ...]] = set()
    dtypes: set[torch.dtype] = set()
    devices: set[torch.device] = set()
    pending = list(leaves.members)
    while pending:  # nested lazy stacks walked in one loop: a stack may have many members
        member = pending.pop()
        inner = stacked_leaves(member)
        if inner is not None:
            pending.extend(inner.members)
            continue
        leaf = _tensor_of(member._data.get(key))
        if leaf is None:
            member_entry = _entry(member, key)
            return member_entry if isinstance(member_entry, str) else "Tensor"
        shapes.add(_feature_shape(member, leaf))
        dtypes.add(leaf.dtype)
        devices.add(leaf.device)
    ordered = iter(shapes)
    shape = list(next(ordered))
    for other in ordered:
        if len(other) != len(shape):
            shape = [-1]
            break
        shape = [a if a == b else -1 for a, b in zip(shape, other, strict=True)]
    return tuple(shape), reduce(torch.promote_types, dtypes), devices


def _token(owner: TensorCore, stats: _Stats, options: dict[str, Any]) -> str:
    """``f32[3,4]``, with ``@device`` when the leaves are off the CPU and the owner has no
    device."""
    shape, dtype, devices = stats
    token = f"[{','.join(map(str, shape))}]"
    if options["show_dtype"]:
        token = short_dtype(dtype) + token
    if devices != {_CPU} and owner._device is None:
        token += "@" + ",".join(sorted(map(str, devices)))
    return token


def _leaves_of(node: TensorCore) -> list[TensorCore]:
    """The dense members of a lazy stack (nested stacks walked through)."""
    leaves = stacked_leaves(node)
    if leaves is None:
        return [node]
    return [dense for member in leaves.members for dense in _leaves_of(member)]


def _ranks(node: TensorCore, key: str) -> set[int]:
    """The numbers of feature dims the members of a lazy stack hold under ``key``."""
    ranks = set()
    for member in _leaves_of(node):
        tensor = _tensor_of(member._data.get(key))
        if tensor is not None:
            ranks.add(len(_feature_shape(member, tensor)))
    return ranks


def _first_member(node: TensorCore) -> TensorCore:
    """``node``, or the first member (at the deepest level) of a lazy stack."""
    while (leaves := stacked_leaves(node)) is not None and leaves.members:
        node = leaves.members[0]
    return node


def _entry(node: TensorCore, key: str, options: dict[str, Any] | None = None) -> Node:
    """The value of entry ``key`` of ``node``: decided by the first member of a lazy stack."""
    if options is None:
        options = get_printoptions()
    first = _first_member(node)
    item = first._data.get(key)
    if _tensor_of(item) is not None:
        stats = _leaf_stats(node, key)
        return stats if isinstance(stats, str) else _token(node, stats, options)
    if isinstance(item, NonTensorData):
        if item.meta:
            return "MetaData"
        held = getattr(item.data, "_td", None)  # a TensorDictParams: the class it holds
        if isinstance(held, TensorCore):
            return type(item.data).__name__, _body(held, options)
        return type(item.data).__name__
    if isinstance(item, NonTensorStack):
        return "NonTensorStack"
    if isinstance(item, TensorCore):
        sub = item if first is node else node._data[key]
        label = class_label(item)
        prefix = "" if label == "TensorDict" else label
        extra = sub._batch_size[len(node._batch_size) :]
        if extra:
            prefix += f"[{','.join(map(str, extra))}]"
        return prefix, _body(sub, options)
    return "None" if item is None else type(item).__name__


def _flat(node: Node) -> str:
    """``node`` on one line."""
    if isinstance(node, str):
        return node
    prefix, entries = node
    return prefix + "{" + ", ".join(f"{key}: {_flat(value)}" for key, value in entries) + "}"


def _entries(
    node: TensorCore, keys: Iterable[str], options: dict[str, Any]
) -> list[tuple[str, Node]]:
    """The entries of ``keys``, in the order of the ``sort_keys`` option."""
    entries = [(key, _entry(node, key, options)) for key in keys]
    order = options["sort_keys"]
    if order == "alphabetical":
        entries.sort(key=lambda entry: f"{entry[0]}: {_flat(entry[1])}")
    elif callable(order):
        entries.sort(key=lambda entry: order(f"{entry[0]}: {_flat(entry[1])}"))
    return entries


def _keys(node: TensorCore) -> list[str]:
    """The keys of ``node`` (those every member has, for a lazy stack)."""
    leaves = stacked_leaves(node)
    return list(leaves) if leaves is not None else list(node._data)


def _body(node: TensorCore, options: dict[str, Any]) -> list[tuple[str, Node]]:
    """The entries of ``node``; a typed class adds its absent fields as ``None``, last."""
    schema = type(node).__tensorclass_schema__
    keys = _keys(node)
    if schema.dynamic:
        return _entries(node, keys, options)
    first = _first_member(node)
    hidden = _hidden(node)
    present = [key for key in keys if first._data.get(key) is not None and key not in hidden]
    absent = [name for name in schema.names if name not in present and name not in hidden]
    return _entries(node, present, options) + [(name, "None") for name in absent]


def _hidden(node: TensorCore) -> set[str]:
    """The fields of a typed class that its repr leaves out (``field(repr=False)``)."""
    schema = type(node).__tensorclass_schema__
    return {name for name, spec in schema.by_name.items() if not spec.shown}


def _render(node: Node, indent: str, used: int, tail: int) -> str:
    """``node`` on one line if it fits in :data:`_WIDTH` columns with ``used`` columns before
    it and ``tail`` after; otherwise one entry a line, each laid out by the same rule."""
    flat = _flat(node)
    if isinstance(node, str) or not node[1] or used + len(flat) + tail <= _WIDTH:
        return flat
    prefix, entries = node
    inner = indent + _INDENT
    lines = []
    for i, (key, value) in enumerate(entries):
        after = tail + 1 if i == len(entries) - 1 else 1
        lines.append(f"{inner}{key}: {_render(value, inner, len(inner) + len(key) + 2, after)}")
    return prefix + "{\n" + ",\n".join(lines) + "}"


def _parts(
    obj: TensorCore, options: dict[str, Any]
) -> tuple[list[str], list[tuple[str, Node]], list[tuple[str, Node]]]:
    """The header items, the entries and the exclusive fields (of a lazy stack) of ``obj``."""
    header = []
    if options["show_batch_size"]:
        header.append(f"batch_size=[{','.join(map(str, obj._batch_size))}]")
    if options["show_device"] and obj._device is not None:
        header.append(f"device={obj._device}")
    exclusive: list[tuple[str, Node]] = []
    leaves = stacked_leaves(obj)
    if leaves is not None and class_label(obj) == "LazyStackedTensorDict":
        header.append(f"stack_dim={leaves.dim}")
        common = set(leaves)
        for i, member in enumerate(leaves.members):
            own = [key for key in _keys(member) if key not in common]
            if own:
                exclusive.append((str(i), ("", _entries(member, own, options))))
    return header, _body(obj, options), exclusive


def _compact(obj: TensorCore, options: dict[str, Any]) -> str:
    header, body, exclusive = _parts(obj, options)
    head = f"{class_label(obj)}(" + "".join(f"{part}, " for part in header) + "fields="
    tail = 1 + len(", exclusive_fields={") if exclusive else 1
    text = head + _render(("", body), "", len(head), tail)
    if exclusive:
        used = len(text.rsplit("\n", 1)[-1]) + len(", exclusive_fields=")
        text += ", exclusive_fields=" + _render(("", exclusive), "", used, 1)
    return text + ")"


# -- the notebook display -------------------------------------------------------------------

#: the entries an HTML display shows at most
_HTML_ENTRIES = 200
_HTML_LIST = "list-style:none;margin:0;padding-left:1.5em"
_HTML_DIM = "opacity:0.7"


def _html_list(entries: list[tuple[str, Node]], budget: list[int]) -> str:
    """``entries`` as a ``<ul>``, nested containers as open ``<details>`` blocks; ``budget``
    (one number, shared by the whole display) counts the entries left to show."""
    items = []
    for done, (key, value) in enumerate(entries):
        if budget[0] <= 0:
            items.append(f"<li>... and {len(entries) - done} more</li>")
            break
        budget[0] -= 1
        name = html.escape(key)
        if isinstance(value, str):
            items.append(f'<li>{name}: <span style="{_HTML_DIM}">{html.escape(value)}</span></li>')
            continue
        prefix, inner = value
        count = f"{len(inner)} {'entry' if len(inner) == 1 else 'entries'}"
        label = html.escape(f"{prefix} " if prefix else "") + count
        items.append(
            f'<li><details open><summary>{name}: <span style="{_HTML_DIM}">{label}</span>'
            f"</summary>{_html_list(inner, budget)}</details></li>"
        )
    return f'<ul style="{_HTML_LIST}">' + "".join(items) + "</ul>"


def html_instance(obj: TensorCore, options: dict[str, Any] | None = None) -> str | None:
    """What a notebook shows for an instance (``_repr_html_``), as in tensordict: the compact
    entries as a tree of open ``<details>`` blocks (at most 200 entries); the detailed text
    in a ``<pre>`` block under ``compact=False``; nothing (``None``) under ``html=False``."""
    if options is None:
        options = get_printoptions()
    if not options["html"]:
        return None
    if not options["compact"]:
        return f"<pre>{html.escape(format_instance(obj, options))}</pre>"
    header, body, exclusive = _parts(obj, options)
    names = obj._names if options["show_batch_size"] else None
    if names is not None and any(name is not None for name in names):
        at = 1 if header and header[0].startswith("batch_size=") else 0
        header.insert(at, f"names=[{','.join(map(str, names))}]")
    budget = [_HTML_ENTRIES]
    text = (
        '<div style="font-family:monospace;line-height:1.4"><details open><summary>'
        f"<b>{html.escape(class_label(obj))}</b> "
        f'<span style="{_HTML_DIM}">{html.escape(", ".join(header))}</span></summary>'
        f"{_html_list(body, budget)}"
    )
    if exclusive:
        text += (
            '<details open style="padding-left:1.5em"><summary>'
            f'<i style="{_HTML_DIM}">exclusive_fields</i></summary>'
            f"{_html_list(exclusive, budget)}</details>"
        )
    return text + "</details></div>"


# -- the detailed form ----------------------------------------------------------------------


def _tensor_detail(cls_name: str, shape: Any, tensor: Tensor, options: dict[str, Any]) -> str:
    parts = []
    if options["show_shape"]:
        parts.append(f"shape={torch.Size(shape)}")
    if options["show_field_device"]:
        parts.append(f"device={tensor.device}")
    if options["show_dtype"]:
        parts.append(f"dtype={tensor.dtype}")
    if options["show_field_is_shared"] or options["show_is_shared"]:
        parts.append(f"is_shared={tensor.untyped_storage().is_shared()}")
    if options["show_grad"]:
        parts.append(f"requires_grad={tensor.requires_grad}")
    if options["show_is_contiguous"]:
        parts.append(f"is_contiguous={tensor.is_contiguous()}")
    if options["show_is_view"]:
        parts.append(f"is_view={tensor._is_view()}")
    if options["show_storage_size"]:
        parts.append(f"storage_size={tensor.untyped_storage().nbytes()}")
    if options["plain"]:
        parts.append(_summary(tensor))
    return f"{cls_name}({', '.join(parts)})"


def _summary(tensor: Tensor) -> str:
    """What ``plain=True`` adds: the mean and std of a floating tensor, else its range (the
    one option that reads values, as in tensordict)."""
    if tensor.numel() == 0:
        return "[]"
    if tensor.is_nested:
        tensor = torch.cat([part.reshape(-1) for part in tensor.unbind()])
    if not (tensor.is_floating_point() or tensor.is_complex()):
        return f"min={tensor.min().item()}, max={tensor.max().item()}"
    wide = tensor.to(torch.complex128 if tensor.is_complex() else torch.float64)
    spread = wide.std().item() if wide.numel() > 1 else float("nan")
    return f"mean={wide.mean().item():.4g}, std={spread:.4g}"


def _detailed_entry(node: TensorCore, key: str, options: dict[str, Any]) -> str:
    first = _first_member(node)
    item = first._data.get(key)
    item = tensor if (tensor := _tensor_of(item)) is not None else item
    if isinstance(item, Tensor):
        shape: list[int] = list(item.shape)
        if first is not node:  # a lazy stack: the stacked shape, read from the members
            stats = _leaf_stats(node, key)
            if not isinstance(stats, str):
                ranks = _ranks(node, key)
                shape = [*node._batch_size, *stats[0]] if len(ranks) == 1 else [-1]
        name = "Tensor" if first is not node else type(item).__name__
        return _tensor_detail(name, shape, item, options)
    if isinstance(item, TensorCore):
        return _detailed(item if first is node else node._data[key], options)
    if isinstance(item, NonTensorData):
        return describe_non_tensor(
            "MetaData" if item.meta else "NonTensorData",
            item.data,
            node._batch_size,
            node._device,
        )
    return repr(item)


def describe_non_tensor(
    name: str, data: Any, batch_size: Sequence[int], device: torch.device | None
) -> str:
    """A non-tensor value as the detailed repr shows it:
    ``NonTensorData(data=hello, batch_size=torch.Size([]), device=None)`` (a text past 200
    characters keeps its first and last 20)."""
    text = str(data)
    if len(text) > 200:
        text = f"{text[:20]}  ...  {text[-20:]}"
    return f"{name}(data={text}, batch_size={torch.Size(batch_size)}, device={device})"


def _lines(obj: TensorCore, keys: Iterable[str], sep: str, options: dict[str, Any]) -> str:
    """The entries of ``keys``, one a line, each line starting with a line break."""
    lines = [f"{key}{sep}{_detailed_entry(obj, key, options)}" for key in keys]
    order = options["sort_keys"]
    if order == "alphabetical":
        lines.sort()
    elif callable(order):
        lines.sort(key=order)
    return textwrap.indent("\n" + ",\n".join(lines), _INDENT)


def _detailed(obj: TensorCore, options: dict[str, Any]) -> str:
    schema = type(obj).__tensorclass_schema__
    keys = _keys(obj)
    footer = []
    if options["show_batch_size"]:
        footer.append(f"batch_size={obj._batch_size}")
    if options["show_device"]:
        footer.append(f"device={obj._device}")
    if options["show_is_shared"]:
        footer.append(f"is_shared={_is_shared(obj)}")
    footer = [textwrap.indent(part, _INDENT) for part in footer]
    if not (schema.dynamic or schema.extra_keys):  # a tensor class: name=value, absent fields
        first = _first_member(obj)
        hidden = _hidden(obj)
        present = [k for k in keys if first._data.get(k) is not None and k not in hidden]
        parts = [_lines(obj, present, "=", options)] if present else []
        absent = [
            f"{name}=None" for name in schema.names if name not in present and name not in hidden
        ]
        if absent:
            parts.append(textwrap.indent(",\n".join(absent), _INDENT))
        return class_label(obj) + "(" + ",\n".join(parts + footer) + ")"
    parts = [textwrap.indent(f"fields={{{_lines(obj, keys, ': ', options)}}}", _INDENT)]
    leaves = stacked_leaves(obj)
    if leaves is not None:
        common = set(leaves)
        exclusive = []
        for i, member in enumerate(leaves.members):
            own = [key for key in _keys(member) if key not in common]
            if own:
                exclusive.append(
                    textwrap.indent(f"{i} ->{_lines(member, own, ': ', options)}", _INDENT)
                )
        text = "\n" + ",\n".join(exclusive)
        parts.append(textwrap.indent(f"exclusive_fields={{{text}}}", _INDENT))
    parts += footer
    if leaves is not None:
        parts.append(f"{_INDENT}stack_dim={leaves.dim}")
    return class_label(obj) + "(\n" + ",\n".join(parts) + ")"


def _is_shared(obj: TensorCore) -> bool:
    """Whether the first tensor of ``obj`` lives in shared memory (``False`` without one)."""
    first = _first_member(obj)
    for leaf in first._data.values():
        if isinstance(leaf, Tensor):
            return bool(leaf.untyped_storage().is_shared())
        if isinstance(leaf, TensorCore):
            return _is_shared(leaf)
    return False


def format_instance(obj: TensorCore, options: dict[str, Any] | None = None) -> str:
    """The repr of an instance, as the print options say (compact unless ``compact=False``;
    see :class:`tensorclass.set_printoptions`)."""
    if options is None:
        options = get_printoptions()
    if options["compact"]:
        # a repr must not raise: should the compact form fail, the detailed one instead
        with contextlib.suppress(Exception):
            return _compact(obj, options)
    return _detailed(obj, options)
