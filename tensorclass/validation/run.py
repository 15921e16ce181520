"""``validate``: turn loaded or user data into a checked instance of a tensor class.

The input is an instance of any tensor class, a ``TensorDict`` or a nested mapping of
tensors and values. :func:`validate` rebuilds it level by level as the schema class: it
converts each value (lists and arrays become tensors), fills defaults, and checks every
leaf as soon as it is placed, collecting every problem before raising. Tensors are shared,
never copied, and neither ``__init__`` nor ``__post_init__`` runs: the data is taken as a
saved state, as when unpickling.

Python numbers and lists carry no dtype: converted for a tensor field whose spec names
dtypes, they take the spec's dtype when the cast loses nothing (``[0, 255]`` becomes
``uint8`` for a ``uint8`` field; ``[0.5]`` stays a float tensor and is reported), so data
read from JSON validates.

:func:`check_construction` reports a failed constructor of a ``validate=True`` class as
one ``ValidationError``; :func:`check_tree` checks what ``load_memmap`` loaded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np
import torch
from pydantic import ValidationError
from torch import Tensor

from ..engine.core.state import BatchSizeLike, DeviceLike, TensorCore, as_batch_size
from ..engine.lazy.stack import LazyStackedTensorDict
from ..errors import TensorClassError
from ..non_tensor import NonTensorData, NonTensorStack
from ..schema import FieldKind
from ..specs import Spec
from .compiled import (
    ClassValidator,
    FieldCheck,
    check_leaf,
    check_level,
    compiled,
    is_schema_class,
)
from .problems import Loc, Problems, describe

__all__ = ["check_construction", "check_instance", "check_tree", "validate"]

T = TypeVar("T")
_TENSORABLE = (bool, int, float, complex, np.ndarray, np.generic, list, tuple)


def validate(data: object, cls: type[T], *, batch_size: BatchSizeLike = None) -> T:
    """Check ``data`` against tensor class ``cls`` and return it as a ``cls`` instance.

    Args:
        data: an instance of any tensor class, a ``TensorDict``, or a (nested) mapping of
            field names to tensors, arrays, lists, nested mappings and values.
        cls: the schema: a class declared with ``TensorClass`` or ``@tensorclass``.
        batch_size: the batch size of the result. By default, an instance's own batch size;
            for a mapping, the one the ``*B`` dims of its tensors imply (else ``[]``).

    Returns:
        A new ``cls`` instance holding the same tensors (no copies).

    Raises:
        pydantic.ValidationError: listing every problem, each with its location.
    """
    if not is_schema_class(cls):
        raise TypeError(f"validate() needs a tensor class as the schema; got {cls!r}")
    problems = Problems()
    batch = as_batch_size(batch_size) if batch_size is not None else None
    result = _build(compiled(cls), data, batch, None, (), problems)
    problems.raise_if_any(cls.__name__)
    assert result is not None
    return result  # type: ignore[no-any-return]


def check_instance(instance: TensorCore) -> None:
    """Check a constructed instance in place (``validate=True`` classes call this)."""
    problems = Problems()
    validator = compiled(type(instance))
    check_level(validator, instance._data, instance._batch_size, (), problems)
    problems.raise_if_any(type(instance).__name__)


def check_construction(
    owner: TensorCore,
    values: dict[str, object],
    batch_size: BatchSizeLike,
    device: DeviceLike,
    error: Exception,
) -> None:
    """Raise the problems of a failed constructor call of a ``validate=True`` class.

    The constructor stops at the first value it cannot store (a string for a tensor, a
    shape that does not start with the batch size, a nested validating class that
    refused its mapping). ``values`` are its arguments: they are validated as a mapping,
    and every problem found is raised as one ``ValidationError`` with full locations
    (with the tensors on ``device``, where the constructor puts them).
    When validation finds nothing (the error was about something else, e.g. the dim
    names), ``error`` is raised as it is.
    """
    cls = type(owner)
    given = {name: value for name, value in values.items() if value is not None}
    try:
        if device is not None:
            given = _moved(given, torch.device(device))
        validate(given, cls, batch_size=() if batch_size is None else batch_size)
    except ValidationError as found:
        raise found from None
    except (TensorClassError, TypeError, ValueError):
        pass
    raise error


def _moved(value: object, device: torch.device) -> Any:
    """``value`` with its tensors (in mappings and instances too) moved to ``device``."""
    if isinstance(value, (Tensor, TensorCore)):
        moved: Any = value
        return moved.to(device)
    if isinstance(value, Mapping):
        return {key: _moved(item, device) for key, item in value.items()}
    return value


def check_tree(root: TensorCore) -> None:
    """Check every instance of a tensor class in a loaded tree, in place.

    Typed levels are checked against their class (with their nested levels); the
    members of lazy stacks and the nested levels of ``TensorDict``s are searched for
    typed levels. Every problem is raised as one ``ValidationError``, located from the
    root (a lazy stack member's location starts with its index). Symbolic dims are bound
    per typed level (the members of a lazy stack may differ).
    """
    problems = Problems()
    _check_node(root, (), problems)
    problems.raise_if_any(type(root).__name__)


def _check_node(node: TensorCore, loc: Loc, problems: Problems) -> None:
    if isinstance(node, LazyStackedTensorDict):  # typed or not: check each member
        for index, member in enumerate(node.members):
            _check_node(member, (*loc, index), problems)
        return
    cls = type(node)
    if is_schema_class(cls):
        problems.bindings = {}
        check_level(compiled(cls), node._data, node._batch_size, loc, problems)
        return
    for key, leaf in node._data.items():
        if isinstance(leaf, TensorCore):
            _check_node(leaf, (*loc, key), problems)


def _group(mapping: Mapping[Any, Any]) -> dict[Any, Any]:
    """A mapping with tuple keys (``("obs", "pixels")``) as nested dicts."""
    grouped: dict[Any, Any] = {}
    for key, value in mapping.items():
        if type(key) is tuple and len(key) > 1:
            grouped.setdefault(key[0], {})[key[1:]] = value
        else:
            grouped[key[0] if type(key) is tuple and key else key] = value
    return grouped


def _preferred(dtypes: tuple[torch.dtype, ...]) -> list[torch.dtype]:
    """A spec's dtypes, the usual ones first (so ``Float`` data becomes float32)."""
    usual = [d for d in (torch.get_default_dtype(), torch.int64, torch.bool) if d in dtypes]
    return usual + [d for d in dtypes if d not in usual]


def _as_tensor(raw: object, spec: Spec | None) -> object:
    """A number, list or array as a tensor (``raw`` itself if it cannot be one).

    Python values have no dtype: they take the spec's when the cast is exact (or between
    floating dtypes, as JSON has only one kind of float). Arrays keep theirs.
    """
    try:
        tensor = torch.as_tensor(raw)
    except (TypeError, ValueError, RuntimeError):
        return raw
    dtypes = spec.dtype if spec is not None else None
    if dtypes is None or tensor.dtype in dtypes or isinstance(raw, (np.ndarray, np.generic)):
        return tensor
    for dtype in _preferred(dtypes):
        try:
            cast = tensor.to(dtype)
            floats = dtype.is_floating_point and tensor.dtype.is_floating_point
            if floats or torch.equal(cast.to(tensor.dtype), tensor):
                return cast
        except (TypeError, RuntimeError):
            continue
    return tensor


def _tensorize(validator: ClassValidator, items: dict[str, object]) -> None:
    """Convert the numbers, lists and arrays of tensor fields to tensors, in place."""
    for check in validator.checks:
        if check.kind is FieldKind.TENSOR:
            raw = items.get(check.name)
            if raw is not None and isinstance(raw, _TENSORABLE):
                items[check.name] = _as_tensor(raw, check.spec)


def _shape_of(value: object) -> torch.Size | None:
    if isinstance(value, (Tensor, np.ndarray)):
        return torch.Size(value.shape)
    return None


def _infer(
    validator: ClassValidator, items: Mapping[str, object], parent: torch.Size | None
) -> torch.Size:
    """The batch size the values imply (else the parent's, else []).

    Each tensor field with ``*B`` in its spec proposes the batch size its shape implies,
    and each nested field its own. The most common proposal wins, so one bad field does
    not decide the batch size of the others; on a tie, tensor fields (whose ``*B`` is the
    batch size) win over nested fields (which may have more batch dims), then field order.
    """
    own: list[torch.Size] = []
    nested: list[torch.Size] = []
    for check in validator.checks:
        value = items.get(check.name)
        cls = check.field.nested_class
        found: torch.Size | None = None
        if check.kind is FieldKind.TENSOR and check.spec is not None:
            shape = _shape_of(value)
            found = check.spec.batch_of(shape) if shape is not None else None
            target = own
        elif check.kind is FieldKind.NESTED and cls is not None and is_schema_class(cls):
            if isinstance(value, TensorCore):
                found = value._batch_size
            elif isinstance(value, Mapping):
                found = _infer(compiled(cls), _group(value), parent)
            target = nested
        if found is not None and (parent is None or found[: len(parent)] == parent):
            target.append(found)
    proposals = own + nested
    if not proposals:
        return parent if parent is not None else torch.Size(())
    votes = Counter(proposals)
    return max(proposals, key=lambda size: (votes[size], -proposals.index(size)))


def _build(
    validator: ClassValidator,
    value: object,
    batch: torch.Size | None,
    parent: torch.Size | None,
    loc: Loc,
    problems: Problems,
) -> Any:
    """One level: a new instance of the validator's class, or None if it cannot be made."""
    cls: Any = validator.cls
    device = names = None
    if isinstance(value, TensorCore):
        items: Mapping[str, object] = value._data
        device, names = value._device, value._names
        own = value._batch_size
        if batch is None:
            # like setting a batch size: a nested level with fewer dims takes the parent's
            lifted = parent is not None and parent[: len(own)] == own
            batch = parent if lifted and parent is not None else own
        if batch != own:
            names = None
    elif isinstance(value, Mapping):
        items = _group(value)
        _tensorize(validator, items)
        if batch is None:
            batch = _infer(validator, items, parent)
    else:
        problems.add(
            loc,
            "tensorclass_type",
            "expected {article} {expected} instance, a TensorDict or a mapping of its fields, "
            "got {actual}",
            value,
            article="an" if cls.__name__[:1].lower() in "aeiou" else "a",
            expected=cls.__name__,
            actual=describe(value),
        )
        return None
    if parent is not None and batch[: len(parent)] != parent:
        problems.add(
            loc,
            "tensor_batch",
            "the batch size {actual} does not start with the enclosing one {expected}",
            value,
            expected=list(parent),
            actual=list(batch),
        )
        return None
    data: dict[str, object] = {}
    result = cls._new(data, batch, device, names)
    for check in validator.checks:
        here = (*loc, check.name)
        raw = _get(items, check.name, here, problems)
        if raw is _FAILED:
            continue
        if raw is None:
            raw = check.default()
        if raw is None:
            if check.required:
                problems.missing(here, None)
            continue
        leaf = _leaf(check, raw, result, here, problems)
        if leaf is not None:
            data[check.name] = leaf
    by_name = validator.schema.by_name
    for key in list(items):
        if key not in by_name:
            item = _get(items, key, (*loc, key), problems)
            if item is _FAILED:
                continue
            if not validator.schema.extra_keys:
                problems.extra((*loc, key), _unwrap(item))
                continue
            try:  # a key besides the fields (TypedTensorDict): stored as a TensorDict does
                data[key] = result._convert(key, item)
            except TensorClassError as err:
                problems.add((*loc, key), "invalid_value", "{message}", None, message=str(err))
    if validator.schema.frozen:
        result.lock_()
    return result


_FAILED = object()


def _get(items: Mapping[str, object], key: str, loc: Loc, problems: Problems) -> object:
    """``items.get(key)``; a lazy stack whose members cannot be stacked under ``key`` is a
    problem (``_FAILED``)."""
    try:
        return items.get(key)
    except TensorClassError as err:
        problems.add(loc, "invalid_value", "{message}", None, message=str(err))
        return _FAILED


def _unwrap(leaf: object) -> object:
    return leaf.value() if type(leaf) is NonTensorData or type(leaf) is NonTensorStack else leaf


def _leaf(
    check: FieldCheck, raw: object, owner: TensorCore, loc: Loc, problems: Problems
) -> object:
    """The checked leaf for one field, or None after recording why it cannot be stored."""
    batch: torch.Size = owner._batch_size
    kind = check.kind
    if kind is FieldKind.NESTED:
        return _nested(check, raw, batch, loc, problems)
    if kind is FieldKind.TENSOR:
        raw = raw.data if type(raw) is NonTensorData else raw
        if isinstance(raw, _TENSORABLE):
            raw = _as_tensor(raw, check.spec)
        if not isinstance(raw, Tensor):
            problems.add(
                loc, "tensor_type", "expected a tensor, got {actual}", raw, actual=describe(raw)
            )
            return None
        spec = check.spec
        has_batch = spec is not None and spec.dims and spec.dims[0].name == "B"
        if not has_batch and not _prefix_ok(raw, batch, loc, problems):
            return None
    elif kind is FieldKind.NON_TENSOR:
        if type(raw) is NonTensorStack:
            if not _prefix_ok(raw, batch, loc, problems):
                return None
        elif type(raw) is not NonTensorData:
            raw = NonTensorData(raw)
    else:
        try:
            raw = TensorCore._convert(owner, check.name, raw)
        except TensorClassError as err:
            problems.add(loc, "invalid_value", "{message}", raw, message=str(err))
            return None
    return check_leaf(check, raw, batch, loc, problems)


def _prefix_ok(
    leaf: Tensor | NonTensorStack | TensorCore, batch: torch.Size, loc: Loc, problems: Problems
) -> bool:
    shape = list(leaf.shape)
    if shape[: len(batch)] == list(batch):
        return True
    problems.add(
        loc,
        "tensor_batch",
        "shape {shape} does not start with the batch size {expected}",
        leaf,
        shape=shape,
        expected=list(batch),
    )
    return False


def _nested(
    check: FieldCheck, raw: object, batch: torch.Size, loc: Loc, problems: Problems
) -> object:
    nested = check.field.nested_class
    assert nested is not None
    if not is_schema_class(nested):  # a TensorDict field: any keys
        if isinstance(raw, TensorCore):
            return raw if _prefix_ok(raw, batch, loc, problems) else None
        if isinstance(raw, Mapping):
            try:
                return nested._from_mapping(raw, batch, None)
            except TensorClassError as err:
                problems.add(loc, "invalid_value", "{message}", raw, message=str(err))
                return None
        problems.add(
            loc,
            "tensorclass_type",
            "expected a TensorDict or a mapping, got {actual}",
            raw,
            actual=describe(raw),
        )
        return None
    target = type(raw) if isinstance(raw, nested) else nested
    return _build(compiled(target), raw, None, batch, loc, problems)
