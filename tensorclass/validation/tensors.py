"""Checking one tensor against its :class:`~tensorclass.Spec`: dtype, device, shape.

Shape checking binds symbolic dims in the run's shared bindings, so a later field (or a
nested instance) that disagrees is reported with the binding it conflicts with.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..specs import Dim, DimKind, Layout, Spec, dtype_name
from .problems import Loc, Problems, where

__all__ = ["check_tensor", "device_ok"]


def device_ok(expected: torch.device, actual: torch.device) -> bool:
    """Whether ``actual`` is ``expected`` (a device without index accepts every index)."""
    if expected.type != actual.type:
        return False
    return expected.index is None or expected.index == actual.index


def check_tensor(
    spec: Spec, tensor: Tensor, batch: torch.Size, loc: Loc, problems: Problems
) -> None:
    """Record every way ``tensor`` breaks ``spec`` (``batch`` is what ``*B`` must be)."""
    if spec.dtype is not None and tensor.dtype not in spec.dtype:
        names = [dtype_name(d) for d in spec.dtype]
        problems.add(
            loc,
            "tensor_dtype",
            "expected dtype {expected}, got {actual}",
            tensor,
            expected=spec.dtype_label or " or ".join(names),
            actual=dtype_name(tensor.dtype),
        )
    if spec.device is not None and not device_ok(spec.device, tensor.device):
        problems.add(
            loc,
            "tensor_device",
            "expected device {expected}, got {actual}",
            tensor,
            expected=str(spec.device),
            actual=str(tensor.device),
        )
    layout = spec.layout
    if layout is not None:
        _check_shape(spec, layout, tensor, batch, loc, problems)


def _check_shape(
    spec: Spec, layout: Layout, tensor: Tensor, batch: torch.Size, loc: Loc, p: Problems
) -> None:
    shape = tensor.shape
    n = len(shape)
    start = len(batch) if layout.batch_first else 0  # *B takes the batch size's dims
    head, tail = layout.head, layout.tail
    fixed = start + len(head) + len(tail)
    if n < fixed or (layout.variadic is None and n != fixed):
        p.add(
            loc,
            "tensor_rank",
            "expected {expected} dims ('{spec}'), got {actual}: shape {shape}",
            tensor,
            expected=str(fixed) if layout.variadic is None else f"at least {fixed}",
            actual=n,
            spec=spec.shape,
            shape=list(shape),
        )
        return
    if start and shape[:start] != batch:
        _batch_error(spec, list(shape[:start]), tensor, batch, loc, p)
    for offset, dim in enumerate(head):
        _check_dim(spec, dim, start + offset, tensor, loc, p)
    end = n - len(tail)
    for offset, dim in enumerate(tail):
        _check_dim(spec, dim, end + offset, tensor, loc, p)
    variadic = layout.variadic
    if variadic is not None and variadic.kind is DimKind.VARIADIC:
        assert variadic.name is not None
        group = list(shape[start + len(head) : end])
        _bind(spec, variadic.name, group, "dims", tensor, loc, p)


def _batch_error(
    spec: Spec, group: list[int], tensor: Tensor, batch: torch.Size, loc: Loc, p: Problems
) -> None:
    p.add(
        loc,
        "tensor_batch",
        "the batch dims (*B in '{spec}') should be {expected}, got {actual}: shape {shape}",
        tensor,
        expected=list(batch),
        actual=group,
        spec=spec.shape,
        shape=list(tensor.shape),
    )


def _check_dim(spec: Spec, dim: Dim, index: int, tensor: Tensor, loc: Loc, p: Problems) -> None:
    kind = dim.kind
    if kind is DimKind.ANY:
        return
    size: int = tensor.shape[index]
    if dim.broadcast and size == 1:
        return
    if kind is DimKind.FIXED:
        if size != dim.size:
            p.add(
                loc,
                "tensor_dim",
                "dim {dim} should be {expected} ('{spec}'), got {actual}: shape {shape}",
                tensor,
                dim=index,
                expected=dim.size,
                actual=size,
                spec=spec.shape,
                shape=list(tensor.shape),
            )
    else:
        assert dim.name is not None
        _bind(spec, dim.name, size, f"dim {index}", tensor, loc, p)


def _bind(
    spec: Spec, name: str, size: int | list[int], dims: str, tensor: Tensor, loc: Loc, p: Problems
) -> None:
    bound = p.bindings.get(name)
    if bound is None:
        p.bindings[name] = (size, loc)
    elif bound[0] != size:
        p.add(
            loc,
            "tensor_binding",
            "{name}={bound} from {bound_at}, {actual} here ({dims} of '{spec}', shape {shape})",
            tensor,
            name=name,
            bound=bound[0],
            bound_at=where(bound[1]),
            actual=size,
            dims=dims,
            spec=spec.shape,
            shape=list(tensor.shape),
        )
