"""Loading memory-mapped saves: ``load_memmap``, and which classes come back.

Loading reads JSON and maps raw files; it never unpickles anything and never runs code from
the save. The only code it may reach is a tensor class, and only by the rules below.

Which class each level comes back as
------------------------------------
- ``cls`` given: the top level is ``cls`` (for a saved lazy stack: each member). A typed
  ``cls`` must declare every saved key; its declared nested fields give the classes of the
  nested levels. The recorded class name does not have to match (classes may move).
- Otherwise a level comes back as the class recorded in its ``meta.json``, looked up by
  ``classes=``:

  - ``"imported"`` (the default): the class must already exist in this process: found by
    name in its module if that module is imported (``sys.modules``), or among the tensor
    classes defined so far (classes defined in a function, a notebook or ``exec``). Nothing
    is imported. Otherwise :class:`~tensorclass.RecordedClassError` says what to do.
  - ``"import"``: the recorded module may be imported (only that module), and the name
    must be a tensor class. Use it for saves you trust: importing a module runs its code.
  - ``"tensordict"``: no class is looked up; such levels come back as ``TensorDict``.

Checks on loading
-----------------
Every level that comes back as a tensor class with declared fields (given by ``cls`` or
recorded) is checked against its class, as ``X.validate`` would: specs, non-tensor values
(converted by pydantic, as on validation). Problems raise one ``pydantic.ValidationError``
listing them all; a save whose keys do not fit a typed ``cls`` (extra keys, a tensor where
the class declares a nested level...) is reported the same way, with the problems of the
keys that do fit. ``validate=False`` skips the checks (e.g. to load data saved before a
spec changed, and fix it). Plain ``TensorDict`` levels have nothing to check and cost nothing.

``TensorDict`` itself is always available. ``TensorDict.load_memmap(path)`` uses
``cls=TensorDict, classes="tensordict"`` (plain data, whatever was saved);
``MyClass.load_memmap(path)`` uses ``cls=MyClass``; ``tensorclass.load_memmap(path)`` gives
back the recorded classes.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Literal

import torch

from ...errors import MemmapFormatError, RecordedClassError
from .._core import TensorCore
from ..json_values import non_tensor_from_json, rebuilder_in
from ..storage_methods import defined_classes
from .metadata import DTYPES, TENSORDICT_PATH, EntryInfo, MemmapInfo, read_metadata
from .tensor import MemoryMappedTensor, PathLike

__all__ = ["ClassPolicy", "load_memmap", "resolve_class"]

ClassPolicy = Literal["imported", "import", "tensordict"]
_POLICIES = ("imported", "import", "tensordict")


def resolve_class(recorded: str, classes: ClassPolicy, where: object = None) -> type[TensorCore]:
    """The tensor class recorded as ``"module:qualname"``, by the ``classes`` rule above."""
    from ..tensordict import TensorDict

    if recorded == TENSORDICT_PATH or classes == "tensordict":
        return TensorDict
    module_name, _, qualname = recorded.partition(":")
    prefix = f"{where}: " if where is not None else ""
    module = sys.modules.get(module_name)
    if module is None:
        for defined in defined_classes():  # defined in this process, outside a module
            if defined.__module__ == module_name and defined.__qualname__ == qualname:
                return defined
        if classes != "import":
            raise RecordedClassError(
                f"{prefix}the data was saved from the class {qualname!r} of module "
                f"{module_name!r}, which is not imported. Import it first, pass cls=..., "
                f"pass classes='import' to let tensorclass import {module_name!r} (runs its "
                f"code: only for trusted saves), or classes='tensordict' to load plain data"
            )
        try:
            module = importlib.import_module(module_name)
        except Exception as err:
            raise RecordedClassError(
                f"{prefix}cannot import module {module_name!r} recorded for class "
                f"{qualname!r}: {type(err).__name__}: {err}"
            ) from err
    found: Any = module
    for part in qualname.split("."):
        namespace = getattr(found, "__dict__", None)
        found = namespace.get(part) if namespace is not None else None
        if found is None:
            break
    if found is None:
        for defined in defined_classes():  # e.g. a class defined inside a function
            if defined.__module__ == module_name and defined.__qualname__ == qualname:
                return defined
        raise RecordedClassError(
            f"{prefix}module {module_name!r} has no class {qualname!r}, and no tensor class of "
            f"that name is defined in this process (pass cls=...)"
        )
    if not (isinstance(found, type) and issubclass(found, TensorCore)):
        raise RecordedClassError(
            f"{prefix}{module_name}:{qualname} is a {type(found).__name__}, not a tensor class"
        )
    return found


def load_memmap(
    path: PathLike,
    cls: type[TensorCore] | None = None,
    *,
    classes: ClassPolicy = "imported",
    device: torch.device | str | None = None,
    num_threads: int = 0,
    validate: bool = True,
) -> Any:
    """Load a save made by ``memmap``/``memmap_like`` (or one of its sub-directories).

    Tensors come back as :class:`MemoryMappedTensor` views of the files (nothing is read
    until used; writes go to the files) and the result is locked. Missing or truncated
    files, and metadata that disagrees with the files, raise
    :class:`~tensorclass.MemmapFormatError` listing every problem. ``device`` moves (copies)
    the result there. See the module documentation for ``cls`` and ``classes``.
    ``num_threads`` is accepted for compatibility: mapping files reads nothing, so loading
    needs no threads. Typed levels are checked against their class unless ``validate`` is
    false (see the module documentation); problems raise ``pydantic.ValidationError``.
    """
    del num_threads  # nothing to parallelise: files are mapped, not read
    if classes not in _POLICIES:
        raise ValueError(f"classes must be one of {_POLICIES}; got {classes!r}")
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, TensorCore)):
        raise TypeError(f"cls must be a tensor class; got {cls!r}")
    info = read_metadata(path)
    problems = info.problems()
    if problems:
        raise MemmapFormatError(
            f"cannot load {info.path}: "
            + "; ".join(problems[:20])
            + (f"; and {len(problems) - 20} more" if len(problems) > 20 else "")
        )
    try:
        result = _build(info, cls, classes)
    except MemmapFormatError:
        if validate and cls is not None and info.kind != "lazy_stack" and _typed(cls):
            _report_mismatch(info, cls)  # the save does not fit cls: list every problem
        raise
    if device is not None and torch.device(device).type != "cpu":
        result = result.to(device)  # type: ignore[attr-defined]
    plain = classes == "tensordict" and (cls is None or not _typed(cls))  # TensorDicts only
    if validate and not plain and _holds_typed(result):
        from ...validation.run import check_tree

        check_tree(result)
    return result


def _typed(cls: type[TensorCore]) -> bool:
    return not getattr(cls, "_dynamic_keys", True)


def _holds_typed(root: TensorCore) -> bool:
    """Whether a loaded tree has a level of a tensor class with declared fields."""
    from ..lazy_stack import LazyStackedTensorDict

    def typed(node: TensorCore) -> bool:
        if isinstance(node, LazyStackedTensorDict):
            return any(typed(member) for member in node.members)
        if not type(node)._dynamic_keys:
            return True
        for leaf in node._data.values():
            if isinstance(leaf, TensorCore) and typed(leaf):
                return True
        return False

    return typed(root)


def _report_mismatch(info: MemmapInfo, cls: type[TensorCore]) -> None:
    """Validate the save, loaded as plain data, against ``cls``: raises a
    ``ValidationError`` listing every problem (returns if it finds none)."""
    from pydantic import ValidationError

    from ...validation.run import validate

    try:
        validate(_build(info, None, "tensordict"), cls)
    except ValidationError as err:
        raise err from None


def _build(info: MemmapInfo, cls: type[TensorCore] | None, classes: ClassPolicy) -> TensorCore:
    from ..lazy_stack import LazyStackedTensorDict, lazy_stack

    if cls is not None and issubclass(cls, LazyStackedTensorDict):
        if info.kind != "lazy_stack":
            raise MemmapFormatError(f"{info.path} holds an instance, not a lazy stack")
        cls = cls.member_class_of()
    if info.kind == "lazy_stack":
        assert info.stack_dim is not None
        members = [_build(member, cls, classes) for member in info.members]
        return lazy_stack(members, info.stack_dim).lock_()
    if cls is None:
        cls = resolve_class(info.class_path, classes, info.path)
    fields = _fields(cls)
    data: dict[str, Any] = {}
    for entry in info.entries:
        data[entry.key] = _leaf(info, entry, cls, fields, classes)
    device = None if info.device is None else torch.device("cpu")
    return cls._new(data, torch.Size(info.batch_size), device, info.names).lock_()


def _fields(cls: type[TensorCore]) -> dict[str, Any] | None:
    from ...schema import resolved_schema

    schema = resolved_schema(cls)
    return None if schema is None else dict(schema.by_name)


def _leaf(
    info: MemmapInfo,
    entry: EntryInfo,
    cls: type[TensorCore],
    fields: dict[str, Any] | None,
    classes: ClassPolicy,
) -> Any:
    from ...schema import FieldKind

    child_cls: type[TensorCore] | None = None
    rebuild = None
    if fields is not None:
        found = fields.get(entry.key)
        if found is None:
            raise MemmapFormatError(
                f"{info.path}: the saved key {entry.key!r} is not a field of {cls.__name__} "
                f"(fields: {', '.join(fields) or 'none'})"
            )
        allowed = {
            FieldKind.TENSOR: ("tensor",),
            FieldKind.NESTED: ("nested",),
            FieldKind.NON_TENSOR: ("non_tensor", "non_tensor_stack"),
        }.get(found.kind)
        if allowed is not None and entry.type not in allowed:
            raise MemmapFormatError(
                f"{info.path}: the saved key {entry.key!r} holds a {entry.type.replace('_', '-')}"
                f" value, but {cls.__name__}.{entry.key} is a {found.kind.value} field"
            )
        if found.kind is FieldKind.NESTED:
            child_cls = found.nested_class
        elif found.kind is FieldKind.NON_TENSOR:
            rebuild = rebuilder_in(found.annotation)
    if entry.type == "tensor":
        assert entry.file is not None and entry.dtype is not None and entry.shape is not None
        return MemoryMappedTensor._open(os.fspath(entry.file), DTYPES[entry.dtype], entry.shape)
    if entry.type == "nested":
        assert entry.child is not None
        return _build(entry.child, child_cls, classes)
    assert entry.shape is not None or entry.type == "non_tensor"
    return non_tensor_from_json(entry.type, entry.value, entry.shape or (), rebuild)
