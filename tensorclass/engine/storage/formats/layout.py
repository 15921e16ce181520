"""The structure of a saved tree as one JSON value, shared by the single-file formats.

safetensors, HDF5 and Zarr store tensors by name; what makes them a tensor class again (batch
sizes, dim names, classes, lazy stacks, non-tensor values) is this *layout*, stored as JSON
next to the tensors (safetensors: the ``"tensordict"`` key of the header metadata; HDF5 and
Zarr: the ``"tensordict"`` attribute of the root group). It is the layout tensordict 0.15.3
writes to safetensors, extended for what tensordict cannot save there::

    {"version": 1, "root": LEVEL}
    LEVEL = {"batch_size": [3], "names": null,
             "class": "<class 'module.Qualname'>",       typed classes only
             "keys": {"x": {"tensor": "x"},              the stored tensor's name
                      "sub": {"td": LEVEL},
                      "name": {"non_tensor": "run-1"},   a JSON value ("meta": true: MetaData)
                      "tags": {"non_tensor_stack": [...]},    one value per element
                      "table": {"tensor": "table", "unbatched": true}}}
    a lazy stack: {"batch_size", "names", "class"?, "stack_dim": 0, "members": [LEVEL, ...]}

A tensor entry may also record ``"dtype"`` (the torch dtype, when the format stores another
one) and ``"shape"``. A level with ``"stack_dim"`` and ``"keys"`` (tensordict's dense save of
a lazy stack) loads as a lazy stack of the unbound level.

Loading reads JSON and never runs code: a recorded class is looked up among the tensor
classes already imported or defined (:func:`~tensorclass.engine.storage.memmap.load.resolve_class`),
never imported. Every problem raises :class:`~tensorclass.FileFormatError` naming the file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

import torch
from torch import Tensor

from ....errors import FileFormatError, RecordedClassError
from ....json_values import has_shape, non_tensor_from_json, non_tensor_to_json, rebuilder_in
from ....non_tensor import NonTensorData, NonTensorStack
from ....registry import dynamic_class
from ....schema import Field, FieldKind, resolved_schema
from ....unbatched import UnbatchedTensor
from ...core.lazy_stacks import is_lazy_stack, is_lazy_stack_class, stack_lazily
from ...core.self_types import as_op
from ...core.state import TensorCore, fits_batch
from ...core.untrusted import (
    MAX_DEPTH,
    batch_problem,
    fields_problem,
    key_problem,
    names_problem,
    shown,
    typed_problem,
)
from ..memmap.load import ClassPolicy, defined_classes, resolve_class

__all__ = [
    "LAYOUT_KEY",
    "VERSION",
    "Layout",
    "TensorReader",
    "build",
    "check_tensor",
    "class_text",
    "describe",
]

LAYOUT_KEY = "tensordict"
VERSION = 1

#: a saved tensor: its name in the file, its layout entry -> the tensor
TensorReader = Callable[[str, dict[str, object]], Tensor]


class Layout:
    """What :func:`describe` collects: the JSON layout and the tensors by stored name."""

    def __init__(self, separator: str) -> None:
        self.separator = separator
        self.tensors: dict[str, Tensor] = {}
        self.origin: dict[str, tuple[str, ...]] = {}

    def name(self, path: tuple[str, ...], tensor: Tensor) -> str:
        """Store ``tensor`` under the name of ``path``; two paths with one name are refused."""
        for part in path:
            if not part or (self.separator == "/" and "/" in part):
                raise ValueError(
                    f"cannot save the key {path!r}: a key may not be empty or hold '/'"
                )
        name = self.separator.join(path)
        if name in self.tensors:
            raise ValueError(
                f"the keys {self.origin[name]!r} and {path!r} have the same stored name {name!r}"
            )
        self.tensors[name] = tensor
        self.origin[name] = path
        return name


def class_text(cls: type) -> str | None:
    """How a class is recorded (tensordict's spelling); ``None`` for ``TensorDict``."""
    if cls is dynamic_class():
        return None
    return f"<class '{cls.__module__}.{cls.__qualname__}'>"


def describe(node: TensorCore, layout: Layout, path: tuple[str, ...] = ()) -> dict[str, object]:
    """The layout level of ``node``; its tensors go into ``layout`` (checked: nothing is
    written before the whole tree is described)."""
    level: dict[str, object] = {
        "batch_size": list(node._batch_size),
        "names": None if node._names is None else list(node._names),
    }
    if is_lazy_stack(node):
        recorded = class_text(node.member_class)
        if recorded is not None:
            level["class"] = recorded
        level["stack_dim"] = node.stack_dim
        level["members"] = [
            describe(member, layout, (*path, str(index)))
            for index, member in enumerate(node.members)
        ]
        return level
    recorded = class_text(type(node))
    if recorded is not None:
        level["class"] = recorded
    keys: dict[str, dict[str, object]] = {}
    for key, leaf in node._data.items():
        where = (*path, key)
        if isinstance(leaf, Tensor):
            keys[key] = {"tensor": layout.name(where, leaf)}
        elif isinstance(leaf, TensorCore):
            keys[key] = {"td": describe(leaf, layout, where)}
        elif type(leaf) is NonTensorData and isinstance(leaf.data, UnbatchedTensor):
            keys[key] = {"tensor": layout.name(where, leaf.data), "unbatched": True}
        elif type(leaf) in (NonTensorData, NonTensorStack):
            kind, value = non_tensor_to_json(leaf, where if len(where) > 1 else key)
            keys[key] = {kind: value}
            if type(leaf) is NonTensorData and leaf.meta:
                keys[key]["meta"] = True
        else:
            raise TypeError(f"cannot save {where!r}: unknown leaf {type(leaf).__name__}")
    level["keys"] = keys
    return level


def _fail(file: object, where: tuple[str, ...], message: str) -> FileFormatError:
    at = f" at {where!r}" if where else ""
    return FileFormatError(f"{file}: {message}{at}", key=where or None)


def _class_named(text: str, file: object, classes: ClassPolicy) -> type[TensorCore]:
    """The class recorded as ``<class 'module.Qualname'>``: imported or defined, never imported
    here (``classes="import"`` acts as ``"imported"``: a file is data)."""
    if classes == "tensordict":
        return dynamic_class()
    if not (text.startswith("<class '") and text.endswith("'>")):
        raise _fail(file, (), f"invalid class {text!r} (expected \"<class 'module.Name'>\")")
    dotted = text[len("<class '") : -2]
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest imported module first
        module, qualname = ".".join(parts[:cut]), ".".join(parts[cut:])
        known = module in sys.modules or any(
            c.__module__ == module and c.__qualname__ == qualname for c in defined_classes()
        )
        if known:
            return resolve_class(f"{module}:{qualname}", "imported", file)
    raise RecordedClassError(
        f"{file}: the data was saved from the class {dotted!r}, which is not imported or "
        f"defined in this process; import it first, pass cls=..., or classes='tensordict' "
        f"to load plain data (a file never makes tensorclass import code)"
    )


def build(
    level: object,
    read: TensorReader,
    file: object,
    cls: type[TensorCore] | None = None,
    classes: ClassPolicy = "imported",
    parent: tuple[int, ...] = (),
    where: tuple[str, ...] = (),
) -> TensorCore:
    """The saved tree of a layout ``level``, its tensors from ``read`` (locked: no)."""
    if type(level) is not dict:
        raise _fail(file, where, f"a level of the layout must be an object, not {shown(level)}")
    if len(where) > MAX_DEPTH:
        raise _fail(file, where, f"the layout nests more than {MAX_DEPTH} levels")
    batch_size = level.get("batch_size")
    names = level.get("names")
    wrong = batch_problem(batch_size)
    if wrong is not None:
        raise _fail(file, where, wrong)
    assert type(batch_size) is list  # checked
    if tuple(batch_size[: len(parent)]) != parent:
        raise _fail(file, where, f"batch_size {batch_size} does not start with {list(parent)}")
    wrong = names_problem(names, len(batch_size))
    if wrong is not None:
        raise _fail(file, where, wrong)
    if cls is not None and is_lazy_stack_class(cls):
        cls = cls.member_class_of()
    if cls is None and "class" in level:
        if type(level["class"]) is not str:
            raise _fail(file, where, f"invalid class {shown(level['class'])}")
        cls = _class_named(level["class"], file, classes)
    if "members" in level:
        return _lazy(level, read, file, cls, classes, batch_size, where)
    cls = cls or dynamic_class()
    assert cls is not None
    keys = level.get("keys")
    if type(keys) is not dict:
        raise _fail(file, where, "the level has no 'keys' object")
    stack_dim = level.get("stack_dim")
    if stack_dim is not None and (
        type(stack_dim) is not int or not 0 <= stack_dim < len(batch_size)
    ):
        raise _fail(file, where, f"invalid stack_dim {stack_dim!r}")
    schema = resolved_schema(cls)
    fields = None if schema is None else schema.by_name
    for key in keys:
        wrong = key_problem(key) or fields_problem(cls, (key,))
        if wrong is not None:
            raise _fail(file, where, wrong)
    data: dict[str, object] = {}
    for key, entry in keys.items():
        if type(entry) is not dict:
            raise _fail(file, (*where, key), f"invalid entry {shown(entry)}")
        data[key] = _leaf(key, entry, read, file, cls, fields, classes, tuple(batch_size), where)
    built = cls._new(data, torch.Size(batch_size), None, None if names is None else tuple(names))
    wrong = typed_problem(built)
    if wrong is not None:
        raise _fail(file, where, f"the values do not fit {cls.__name__}: {wrong}")
    if stack_dim is not None:  # tensordict's dense save of a lazy stack
        members: list[TensorCore] = list(as_op(built).unbind(stack_dim))
        return stack_lazily(members, stack_dim)
    return built


def _lazy(
    level: dict[str, object],
    read: TensorReader,
    file: object,
    cls: type[TensorCore] | None,
    classes: ClassPolicy,
    batch_size: list[int],
    where: tuple[str, ...],
) -> TensorCore:
    stack_dim, members = level.get("stack_dim"), level["members"]
    if type(stack_dim) is not int or not 0 <= stack_dim < len(batch_size):
        raise _fail(file, where, f"invalid stack_dim {stack_dim!r}")
    if type(members) is not list or len(members) != batch_size[stack_dim]:
        raise _fail(file, where, f"the lazy stack needs {batch_size[stack_dim]} members")
    member_batch = tuple(batch_size[:stack_dim] + batch_size[stack_dim + 1 :])
    built = []
    for index, member in enumerate(members):
        one = build(member, read, file, cls, classes, (), (*where, str(index)))
        if tuple(one._batch_size) != member_batch:
            raise _fail(file, (*where, str(index)), f"a member's batch size is not {member_batch}")
        built.append(one)
    return stack_lazily(built, stack_dim)


def _leaf(
    key: str,
    entry: dict[str, object],
    read: TensorReader,
    file: object,
    cls: type[TensorCore],
    fields: Mapping[str, Field] | None,
    classes: ClassPolicy,
    batch_size: tuple[int, ...],
    where: tuple[str, ...],
) -> object:
    path = (*where, key)
    kinds = [kind for kind in ("tensor", "td", "non_tensor", "non_tensor_stack") if kind in entry]
    if len(kinds) != 1:
        raise _fail(file, path, f"an entry must have one of tensor/td/non_tensor: {shown(entry)}")
    kind = kinds[0]
    child_cls: type[TensorCore] | None = None
    rebuild = None
    if fields is not None:
        found = fields.get(key)
        if found is None:
            raise _fail(file, path, f"{key!r} is not a field of {cls.__name__}")
        allowed = {
            FieldKind.TENSOR: ("tensor",),
            FieldKind.NESTED: ("td",),
            FieldKind.NON_TENSOR: ("non_tensor", "non_tensor_stack", "tensor"),
        }.get(found.kind)
        if allowed is not None and kind not in allowed:
            raise _fail(file, path, f"a {kind} entry for the {found.kind.value} field")
        if found.kind is FieldKind.NESTED:
            child_cls = found.nested_class
        elif found.kind is FieldKind.NON_TENSOR:
            rebuild = rebuilder_in(found.annotation)
    if kind == "td":
        return build(entry["td"], read, file, child_cls, classes, batch_size, path)
    if kind == "tensor":
        name = entry["tensor"]
        if type(name) is not str:
            raise _fail(file, path, f"invalid tensor name {shown(name)}")
        tensor = read(name, entry)
        if entry.get("unbatched") is True:
            return NonTensorData(UnbatchedTensor(tensor))
        if not fits_batch(tuple(tensor.shape), batch_size):
            raise _fail(
                file,
                path,
                f"the tensor of shape {list(tensor.shape)} does not fit {list(batch_size)}",
            )
        return tensor
    value = entry[kind]
    if kind == "non_tensor_stack" and not has_shape(value, batch_size):
        raise _fail(file, path, f"the values are not nested lists of shape {list(batch_size)}")
    leaf = non_tensor_from_json(kind, value, batch_size, rebuild)
    if entry.get("meta") is True and type(leaf) is NonTensorData:
        leaf.meta = True
    return leaf


def check_tensor(
    tensor: Tensor,
    entry: dict[str, object],
    file: object,
    name: str,
    dtypes: dict[str, torch.dtype],
) -> Tensor:
    """``tensor`` viewed as the entry's recorded ``dtype`` and checked against its ``shape``."""
    dtype = entry.get("dtype")
    if dtype is not None:
        if type(dtype) is not str or dtype not in dtypes:
            raise FileFormatError(
                f"{file}: the tensor {shown(name)} has an unknown dtype {shown(dtype, 40)}"
            )
        target = dtypes[dtype]
        if target.itemsize != tensor.element_size():
            raise FileFormatError(
                f"{file}: the tensor {name!r} is stored as {tensor.dtype}, which cannot hold {dtype}"
            )
        tensor = tensor.view(target)
    shape = entry.get("shape")
    if shape is not None and list(tensor.shape) != shape:
        raise FileFormatError(
            f"{file}: the tensor {shown(name)} has shape {list(tensor.shape)}; the layout says "
            f"{shown(shape, 60)}"
        )
    return tensor
