"""Annotation resolution: the field annotations of a tensor class, forward references included.

Part of the schema layer: it knows classes only by their compiled schema
(``__tensorclass_schema__``), never the engine or the class-building code.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
import weakref
from typing import ClassVar

__all__ = [
    "await_names",
    "defining_namespace",
    "defining_scope",
    "evaluate",
    "is_classvar",
    "module_namespace",
    "offer_name",
    "own_annotations",
    "resolve_annotations",
    "skip_frames_of",
]

#: files whose frames are skipped when looking for the scope that defines a class
_OWN_FILES: set[str] = set()


def skip_frames_of(path: str) -> None:
    """Skip the frames of ``path`` (a class-building module) in :func:`defining_namespace`."""
    _OWN_FILES.add(path)


def is_classvar(annotation: object) -> bool:
    """Whether an annotation (or its string) declares a ``ClassVar`` (not a field)."""
    if isinstance(annotation, str):
        stripped = annotation.replace(" ", "")
        return stripped.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return annotation is ClassVar or typing.get_origin(annotation) is ClassVar


def evaluate(annotation: object, globalns: dict[str, object], localns: dict[str, object]) -> object:
    """Evaluate an annotation (a string or a type with forward references) in a scope.

    A quoted annotation under ``from __future__ import annotations`` is a string of a
    string (``child: "Node"`` is stored as ``'"Node"'``): it is evaluated until it is not
    a string any more, so it never passes for a ``str`` annotation.
    """
    while isinstance(annotation, str):
        annotation = eval(annotation, globalns, localns)
    try:
        return typing._eval_type(annotation, globalns, localns)  # type: ignore[attr-defined]
    except TypeError:
        return annotation


def own_annotations(klass: type) -> dict[str, object]:
    """The annotations a class declares itself (not inherited)."""
    return dict(inspect.get_annotations(klass))


def resolve_annotations(cls: type, strict: bool) -> dict[str, object]:
    """The resolved field annotations of ``cls`` and its tensor-class bases.

    Unresolvable forward references raise ``NameError`` when ``strict``, else they are
    left as the string.
    """
    hints: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if "__tensorclass_schema__" not in vars(klass):  # not a class with its own schema
            continue
        globalns = module_namespace(klass)
        localns = {
            **vars(klass).get("__tensorclass_namespace__", {}),
            klass.__name__: klass,
            cls.__name__: cls,
        }
        for name, annotation in own_annotations(klass).items():
            if is_classvar(annotation):
                continue
            try:
                hints[name] = evaluate(annotation, globalns, localns)
            except NameError as err:
                if strict:
                    raise NameError(
                        f"cannot resolve the annotation {annotation!r} of "
                        f"{klass.__qualname__}.{name}: {err} where {klass.__name__} is "
                        f"defined; define it at module level, or before {klass.__name__} in "
                        f"the same function (a tensor class may also come after it there)"
                    ) from None
                hints[name] = annotation
    return hints


def module_namespace(cls: type) -> dict[str, object]:
    """The globals of the module that defines ``cls``."""
    module = sys.modules.get(cls.__module__)
    return dict(vars(module)) if module is not None else {}


def defining_namespace() -> dict[str, object]:
    """The names visible where the class statement runs (outside this package's frames).

    String annotations (``from __future__ import annotations``) of classes defined inside
    functions name things that only that scope knows, as pydantic also finds.
    """
    return defining_scope()[0]


def defining_scope() -> tuple[dict[str, object], int]:
    """The names visible where the class statement runs, and a token of that scope (the
    id of its frame: the classes a function defines share it)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _OWN_FILES:
        frame = frame.f_back
    if frame is None:
        return {}, 0
    return {**frame.f_globals, **frame.f_locals}, id(frame)


#: classes whose annotations name something not defined yet, with their scope's token
_awaiting: list[tuple[weakref.ref[type], int]] = []


def await_names(cls: type, scope: int) -> None:
    """Record that ``cls`` (defined in ``scope``) names something not defined yet: a tensor
    class defined later in the same scope is added to its namespace (see :func:`offer_name`).

    The class's namespace is a snapshot of the scope when it was defined; a class defined
    after it in the same function is not in that snapshot (and the function's frame may be
    gone by the first instance).
    """
    if scope:
        _awaiting.append((weakref.ref(cls), scope))


def offer_name(cls: type, scope: int) -> None:
    """Add a class just defined in ``scope`` to the namespaces of the classes of that scope
    that wait for names (a name they already know is kept)."""
    if not _awaiting:
        return
    keep = []
    for ref, waiting_scope in _awaiting:
        waiting = ref()
        if waiting is None:
            continue
        schema = vars(waiting).get("__tensorclass_schema__")
        if schema is not None and schema.resolved:
            continue  # resolved since: nothing to wait for
        if waiting_scope == scope and waiting is not cls:
            namespace = vars(waiting).get("__tensorclass_namespace__")
            if namespace is not None:
                namespace.setdefault(cls.__name__, cls)
        keep.append((ref, waiting_scope))
    _awaiting[:] = keep
