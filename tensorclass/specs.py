"""Tensor specs: the dtype, shape and device a tensor field promises.

A spec rides in the field's annotation, so the field stays a plain ``Tensor`` for type
checkers::

    pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
    mask: Annotated[Tensor, "*B H W"]            # a bare string: shape only

Shape strings follow the jaxtyping conventions, one token per dim, separated by spaces:

- ``3``: exactly 3 (``rows=3`` names a fixed dim for readers);
- ``H``: a symbolic dim, bound to the same size across every field of one instance
  (nested instances included); ``#H`` also accepts 1 (broadcasting);
- ``*B``: the batch dims: they must equal the instance's batch size (first token only);
- ``*T``: any number of dims, bound like a symbolic dim; ``...`` (or ``*_``): any number,
  unchecked (one of these per spec, besides ``*B``);
- ``_`` (or ``_name``): one dim, unchecked.

A spec describes the whole tensor shape, batch dims included: write ``*B`` where they go.
jaxtyping annotations (``UInt8[Tensor, "*B 3 H W"]``) are read into the same :class:`Spec`.
"""

from __future__ import annotations

import enum
import re
import sys
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Union

import torch
from torch import Tensor

from .errors import SchemaError

__all__ = ["BATCH", "Dim", "DimKind", "Layout", "Spec", "parse_shape", "spec_from_annotation"]

BATCH = "B"
"""The name of the variadic dim that stands for the batch dims (``*B``)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
DtypeLike = torch.dtype | str | Iterable[torch.dtype | str]


class DimKind(enum.Enum):
    """What one token of a shape string checks."""

    FIXED = "fixed"  # exactly `size` (or 1 when broadcastable)
    NAMED = "named"  # a symbolic dim bound across fields
    ANY = "any"  # one dim, unchecked
    BATCH = "batch"  # *B: the instance's batch dims
    VARIADIC = "variadic"  # *name: any number of dims, bound across fields
    ANY_VARIADIC = "any_variadic"  # ... or *_: any number of dims, unchecked


@dataclass(frozen=True)
class Dim:
    """One parsed token of a shape string."""

    kind: DimKind
    name: str | None = None
    size: int | None = None
    broadcast: bool = False

    @property
    def variadic(self) -> bool:
        """Whether the token stands for any number of dims."""
        return self.kind in (DimKind.BATCH, DimKind.VARIADIC, DimKind.ANY_VARIADIC)


def _parse_token(token: str, lenient: bool, shape: str) -> Dim:
    if token == "...":
        return Dim(DimKind.ANY_VARIADIC)
    broadcast = token.startswith("#")
    if token.startswith("*"):
        name = token[1:]
        if name == BATCH:
            return Dim(DimKind.BATCH, name)
        if name.startswith("_") and _NAME.match(name):
            return Dim(DimKind.ANY_VARIADIC)
        if _NAME.match(name):
            return Dim(DimKind.VARIADIC, name)
    else:
        body = token.lstrip("#?")  # `?` is jaxtyping's per-tree-path marker: same check here
        label, _, value = body.partition("=")
        if value.isdigit() and _NAME.match(label):
            return Dim(DimKind.FIXED, label, int(value), broadcast)
        if body.isdigit():
            return Dim(DimKind.FIXED, None, int(body), broadcast)
        if body.startswith("_") and _NAME.match(body):
            return Dim(DimKind.ANY)
        if _NAME.match(body):
            return Dim(DimKind.NAMED, body, None, broadcast)
    if lenient:  # jaxtyping expressions (`H-1`, `2*W`) are left unchecked
        return Dim(DimKind.ANY_VARIADIC if token.startswith("*") else DimKind.ANY)
    raise SchemaError(
        f"cannot read {token!r} in the shape spec {shape!r}: use ints (3), names (H, #H), "
        f"_ for any dim, *B for the batch dims, *name or ... for several dims"
    )


def parse_shape(shape: str, *, lenient: bool = False) -> tuple[Dim, ...]:
    """Parse a shape string such as ``"*B 3 H W"`` (see the module docstring).

    ``lenient`` reads unknown tokens as unchecked dims instead of raising
    :class:`~tensorclass.SchemaError` (used for jaxtyping's symbolic expressions).
    """
    dims = tuple(_parse_token(token, lenient, shape) for token in shape.split())
    if sum(dim.variadic and dim.kind is not DimKind.BATCH for dim in dims) > 1:
        raise SchemaError(
            f"the shape spec {shape!r} has more than one variadic token (*X or ...) besides *B"
        )
    if any(dim.kind is DimKind.BATCH for dim in dims[1:]):
        raise SchemaError(
            f"the shape spec {shape!r}: *B (the batch dims) must come first, as batch dims "
            f"lead every tensor of a tensor class"
        )
    return dims


def _as_dtypes(dtype: DtypeLike | None) -> tuple[torch.dtype, ...] | None:
    if dtype is None:
        return None
    items = [dtype] if isinstance(dtype, (torch.dtype, str)) else list(dtype)
    dtypes = []
    for item in items:
        found = getattr(torch, item, None) if isinstance(item, str) else item
        if not isinstance(found, torch.dtype):
            raise SchemaError(f"{item!r} is not a torch dtype (write torch.float32 or 'float32')")
        dtypes.append(found)
    return tuple(dtypes)


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.float32`` as ``'float32'``."""
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class Layout:
    """A parsed shape arranged for matching: ``[*B] head... [variadic] tail...``."""

    batch_first: bool
    head: tuple[Dim, ...]
    variadic: Dim | None
    tail: tuple[Dim, ...]

    @classmethod
    def of(cls, dims: tuple[Dim, ...]) -> Layout:
        """Split parsed dims around their variadic token."""
        batch_first = bool(dims) and dims[0].kind is DimKind.BATCH
        rest = dims[1:] if batch_first else dims
        index = next((i for i, dim in enumerate(rest) if dim.variadic), None)
        if index is None:
            return cls(batch_first, rest, None, ())
        return cls(batch_first, rest[:index], rest[index], rest[index + 1 :])


class Spec:
    """The dtype, shape and device a tensor field promises (annotation metadata).

    >>> import torch
    >>> from typing import Annotated
    >>> from torch import Tensor
    >>> from tensorclass import Spec, TensorClass
    >>> class Frames(TensorClass):
    ...     pixels: Annotated[Tensor, Spec("*B 3 H W", torch.uint8)]
    >>> Frames.fields()[0].spec
    Spec('*B 3 H W', dtype=torch.uint8)

    Args:
        shape: a shape string (module docstring), or ``None`` for any shape.
        dtype: a dtype, a dtype name, or several (any of them is accepted).
        device: a device; ``"cuda"`` accepts every CUDA device, ``"cuda:1"`` only that one.
    """

    __slots__ = ("_layout", "device", "dims", "dtype", "dtype_label", "shape")

    shape: str | None
    dims: tuple[Dim, ...] | None
    dtype: tuple[torch.dtype, ...] | None
    device: torch.device | None
    #: a short name for the allowed dtypes in messages (jaxtyping's ``Float``), or None
    dtype_label: str | None
    _layout: Layout | None

    def __init__(
        self,
        shape: str | None = None,
        dtype: DtypeLike | None = None,
        *,
        device: torch.device | str | None = None,
    ) -> None:
        if shape is not None and not isinstance(shape, str):
            raise SchemaError(f"a shape spec is a string such as '*B 3 H W'; got {shape!r}")
        self.shape = " ".join(shape.split()) if shape is not None else None
        self.dims = parse_shape(shape) if shape is not None else None
        self.dtype = _as_dtypes(dtype)
        self.dtype_label = None
        self.device = torch.device(device) if device is not None else None

    def __repr__(self) -> str:
        parts = [repr(self.shape)] if self.shape is not None else []
        if self.dtype is not None:
            shown = [str(d) for d in self.dtype]
            parts.append(f"dtype={shown[0] if len(shown) == 1 else '(' + ', '.join(shown) + ')'}")
        if self.device is not None:
            parts.append(f"device={str(self.device)!r}")
        return f"Spec({', '.join(parts)})"

    @property
    def layout(self) -> Layout | None:
        """The parsed shape arranged for matching (computed once), or None for any shape."""
        try:
            return self._layout
        except AttributeError:
            self._layout = Layout.of(self.dims) if self.dims is not None else None
            return self._layout

    def _key(self) -> tuple[object, ...]:
        return (self.shape, self.dtype, self.device)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def merge(self, other: Spec) -> Spec:
        """One spec with the parts of both; a part given by both must agree."""
        merged = Spec.__new__(Spec)
        for attr in ("shape", "dtype", "device"):
            mine, theirs = getattr(self, attr), getattr(other, attr)
            if mine is not None and theirs is not None and mine != theirs:
                raise SchemaError(f"two specs disagree on the {attr}: {self!r} and {other!r}")
            setattr(merged, attr, mine if mine is not None else theirs)
        merged.dims = self.dims if self.shape is not None else other.dims
        merged.dtype_label = self.dtype_label if self.dtype is not None else other.dtype_label
        return merged

    def batch_of(self, shape: torch.Size) -> torch.Size | None:
        """The batch size a tensor of ``shape`` implies through ``*B`` (None if it cannot)."""
        dims = self.dims
        if dims is None:
            return None
        if not dims or dims[0].kind is not DimKind.BATCH or any(d.variadic for d in dims[1:]):
            return None  # no *B, or another variadic makes its length ambiguous
        if len(shape) < len(dims) - 1:
            return None
        return torch.Size(shape[: len(shape) - len(dims) + 1])

    def to_json(self) -> dict[str, Any]:
        """The spec as JSON (shape string, dtype name(s), device), for JSON Schema."""
        out: dict[str, object] = {}
        if self.shape is not None:
            out["shape"] = self.shape
        if self.dtype is not None:
            names = [dtype_name(d) for d in self.dtype]
            out["dtype"] = names[0] if len(names) == 1 else names
        if self.device is not None:
            out["device"] = str(self.device)
        return out


def _is_union(annotation: object) -> bool:
    origin = typing.get_origin(annotation)
    return origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType)


def _from_jaxtyping(annotation: object) -> Spec:
    names = getattr(annotation, "dtypes", None)
    dtypes = None
    if isinstance(names, (list, tuple)):
        found = [getattr(torch, n, None) for n in names]
        dtypes = tuple(d for d in found if isinstance(d, torch.dtype)) or None
    spec = Spec(None, dtypes)
    category = getattr(annotation, "dtype", None)
    if dtypes is not None and len(dtypes) > 1 and isinstance(category, type):
        spec.dtype_label = f"{category.__name__} (jaxtyping)"
    shape = getattr(annotation, "dim_str", None)
    if isinstance(shape, str):
        spec.shape = " ".join(shape.split())
        spec.dims = parse_shape(shape, lenient=True)
    return spec


def is_jaxtyping(annotation: object) -> bool:
    """Whether ``annotation`` is a jaxtyping array type over torch tensors."""
    array_type = getattr(annotation, "array_type", None)
    return (
        isinstance(array_type, type)
        and issubclass(array_type, Tensor)
        and hasattr(annotation, "dim_str")
    )


def _collect(annotation: object, found: list[Spec]) -> None:
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        _collect(base, found)
        for item in metadata:
            if isinstance(item, Spec):
                found.append(item)
            elif isinstance(item, str):
                try:
                    found.append(Spec(item))
                except SchemaError as err:
                    raise SchemaError(
                        f"{err} (a string in Annotated[Tensor, ...] is read as a shape spec)"
                    ) from None
    elif _is_union(annotation):
        for arg in typing.get_args(annotation):
            _collect(arg, found)
    elif is_jaxtyping(annotation):
        found.append(_from_jaxtyping(annotation))


def spec_from_annotation(annotation: object) -> Spec | None:
    """The spec a tensor field's annotation carries (merged when it has several), or None.

    Reads ``Annotated[Tensor, Spec(...)]``, ``Annotated[Tensor, "shape"]``, jaxtyping types
    and their ``Optional`` forms.
    """
    found: list[Spec] = []
    _collect(annotation, found)
    if not found:
        return None
    spec = found[0]
    for other in found[1:]:
        spec = spec.merge(other)
    return spec


def has_spec_metadata(annotation: object) -> bool:
    """Whether ``Spec`` objects appear in the ``Annotated`` metadata of ``annotation``."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        return any(isinstance(m, Spec) for m in metadata) or has_spec_metadata(base)
    if _is_union(annotation):
        return any(has_spec_metadata(arg) for arg in typing.get_args(annotation))
    return False
