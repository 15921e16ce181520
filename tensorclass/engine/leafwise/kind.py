"""What a leaf-wise method is: a *kind* (typed signature, builder, docstring) and its entries.

The table of leaf-wise methods (:class:`~.table.LeafOps`) is one line per method,
``name = kind(function)``. A :class:`Kind` holds a stub whose parameters are the method's
(the signature type checkers see), a builder that makes the method from the function, and
a default docstring; calling a :class:`PlainKind` makes a :class:`LeafOp`, the entry.
Type checkers see an entry as a descriptor whose ``__get__`` returns a callable of the kind's signature returning
the receiver's own class; at run time every entry (an :class:`Entry`) puts the plain
function it built in its place when its class is created (``__set_name__``), so a call
costs what a hand-written method costs, and records itself in :data:`TABLE`. The table is a
:class:`Table`, a namespace: on it an entry reads, for type checkers, as the entry itself,
which ``engine/ops.py`` attaches to ``TensorOps`` (``cos = LeafOps.cos``).

The reductions whose result depends on their arguments (a tensor for ``reduce=True``...)
are :class:`TypedKind` s: their stub is written once, with its ``@overload`` s typed
``self: T``, and their entries (:class:`TypedOp`) read on the table as that stub, a
function that binds to the receiver as any method does (``obj.sum`` and ``Cls.sum`` both
come from it). The kinds themselves are in ``elementwise_kinds.py`` and
``reduction_kinds.py``.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

import torch
from torch import Tensor
from typing_extensions import Self

__all__ = ["TABLE", "Entry", "Kind", "LeafOp", "PlainKind", "Table", "TypedKind", "TypedOp"]

P = ParamSpec("P")
F = TypeVar("F")
T = TypeVar("T")
S = TypeVar("S", bound=Callable[..., object])

#: every entry, by method name (tests/core/test_leaf_ops.py checks each one)
TABLE: dict[str, Entry] = {}


def _shown(fn: object) -> str:
    """How a docstring names ``fn``: ``torch.exp``, ``Tensor.exp_``, ``torch.float32``."""
    if isinstance(fn, torch.dtype):
        return str(fn)
    name = getattr(fn, "__name__", repr(fn))
    for prefix, namespace in (("torch", torch), ("Tensor", Tensor), ("operator", operator)):
        if getattr(namespace, name, None) is fn:
            return f"{prefix}.{name}"
    return str(name)


class Table:
    """A namespace of entries (the table, :class:`~.table.LeafOps`): for type checkers an
    entry read on it is the entry itself, so an assembly attaches it as it is
    (``cos = LeafOps.cos``) and types it on its own class."""

    __slots__ = ()


class Kind(Generic[S, F]):
    """A kind of leaf-wise method (:class:`PlainKind` or :class:`TypedKind`): its stub
    ``signature`` (of type ``S``), whose parameters after ``self`` are the method's; ``build``, which makes the method (a function with the same
    parameters) from the function an entry names; ``doc``, the default docstring (``{fn}``
    is replaced by the function's name); ``name``, the kind's name (by default its stub's,
    without the leading underscore: a plain kind and its in-place form may share a stub)."""

    __slots__ = ("build", "doc", "name", "signature")

    def __init__(
        self,
        signature: S,
        build: Callable[[F], Callable[..., object]],
        doc: str,
        name: str | None = None,
    ) -> None:
        self.signature = signature
        self.build = build
        self.doc = doc
        self.name = name or signature.__name__.lstrip("_")

    def docstring(self, fn: F, doc: str | None) -> str:
        """An entry's docstring: ``doc``, or the default naming ``fn``."""
        return doc or self.doc.format(fn=_shown(fn))

    def __repr__(self) -> str:
        return f"<leaf-op kind {self.name}>"


class PlainKind(Kind[Callable[Concatenate[object, P], None], F], Generic[P, F]):
    """A kind whose methods return the receiver's class whatever their arguments: its stub
    returns ``None`` and its parameters after ``self`` are the call signature ``P`` of its
    methods. Calling the kind makes a table entry: ``exp = unary(torch.exp)``.
    """

    __slots__ = ()

    def __init__(
        self,
        signature: Callable[Concatenate[object, P], None],
        build: Callable[[F], Callable[..., object]],
        doc: str,
        name: str | None = None,
    ) -> None:
        super().__init__(signature, build, doc, name)

    def __call__(self, fn: F, doc: str | None = None) -> LeafOp[P]:
        """A table entry running ``fn`` over the leaves; ``doc`` replaces the default."""
        return LeafOp(self, fn, self.build(fn), self.docstring(fn, doc))


class Entry:
    """One entry of the table, at run time: the function its kind built for it, which it puts
    in its place on its class when the class is created (``__set_name__``), and records in
    :data:`TABLE`. How type checkers read it is :class:`LeafOp`'s or :class:`TypedOp`'s."""

    __slots__ = ("doc", "fn", "function", "kind", "owner")

    def __init__(self, kind: Kind[Any, Any], fn: Any, function: Callable[..., object], doc: str):
        self.kind = kind
        self.fn = fn
        self.function = function
        self.doc = doc
        self.owner: type | None = None

    def __set_name__(self, owner: type, name: str) -> None:
        function = self.function
        qualname = f"{owner.__qualname__}.{name}"
        code = function.__code__.replace(co_name=name)  # tracebacks name the method
        if sys.version_info >= (3, 11):
            code = code.replace(co_qualname=qualname)
        function.__code__ = code
        function.__name__ = name
        function.__qualname__ = qualname
        function.__module__ = owner.__module__
        function.__doc__ = self.doc
        # what users see is the kind's signature (the builder's annotations are internal)
        annotations = dict(self.kind.signature.__annotations__)
        annotations.pop("self", None)
        function.__annotations__ = {**annotations, "return": Self}
        self.owner = owner
        TABLE[name] = self
        setattr(owner, name, function)  # a plain function: no descriptor left on each call

    def bind(self, obj: object, owner: type | None = None) -> object:
        """What ``__get__`` gives: only reached for an entry set on a class after its creation
        (no ``__set_name__``)."""
        if obj is None:
            return self if isinstance(owner, type) and issubclass(owner, Table) else self.function
        return self.function.__get__(obj, owner)

    def __repr__(self) -> str:
        return f"{self.kind.name}({_shown(self.fn)})"


class LeafOp(Entry, Generic[P]):
    """One entry of the table: a method of signature ``P`` returning the receiver's class.

    Type checkers read the entry through ``__get__``: ``obj.exp`` is a ``Callable[P, T]``
    for an ``obj`` of type ``T`` (subclasses and ``Self`` included) and ``Cls.exp`` a
    ``Callable[Concatenate[T, P], T]``. At run time the entry replaces itself on its class
    by the plain function it built (see :class:`Entry`).
    """

    __slots__ = ()

    @overload
    def __get__(self, obj: None, owner: type[Table]) -> Self: ...

    @overload
    def __get__(self, obj: None, owner: type[T]) -> Callable[Concatenate[T, P], T]: ...

    @overload
    def __get__(self, obj: T, owner: type | None = None) -> Callable[P, T]: ...

    def __get__(self, obj: object, owner: type | None = None) -> object:
        return self.bind(obj, owner)


# -- kinds whose result depends on the arguments (reduce=True, key_transform, max(dim)) ------


class TypedOp(Entry, Generic[S]):
    """An entry of a :class:`TypedKind`: read on the table, type checkers see the kind's stub
    itself, a function typed ``self: T`` that the assembly attaches (``sum = LeafOps.sum``)
    and that binds to the receiver as any method does, so one stub types ``obj.sum(...)``
    and ``Cls.sum(obj, ...)`` alike. (Read off the table through a descriptor, the stub is
    not specialised to the table's class as a function read off a class would be.)"""

    __slots__ = ()

    def __get__(self, obj: None, owner: type[Table]) -> S:
        return cast(S, self.bind(obj, owner))


class TypedKind(Kind[S, F]):
    """A kind whose signature is an overloaded stub (its result depends on its arguments:
    a tensor for ``reduce=True``...): its entries are :class:`TypedOp` s, typed as the stub.
    """

    __slots__ = ()

    def __call__(self, fn: F, doc: str | None = None) -> TypedOp[S]:
        """A table entry running ``fn`` over the leaves, typed as the kind's stub."""
        return TypedOp(self, fn, self.build(fn), self.docstring(fn, doc))
