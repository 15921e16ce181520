"""Checking one tensor against its :class:`~tensorclass.Spec`: dtype, device, shape.

Shape checking binds symbolic dims in the run's shared bindings, so a later field (or a
nested instance) that disagrees is reported with the binding it conflicts with.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..specs import Dim, DimKind, Spec, dtype_name
from .problems import Loc, Problems, where

__all__ = ["check_tensor"]


def _device_ok(expected: torch.device, actual: torch.device) -> bool:
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
            expected=names[0] if len(names) == 1 else " or ".join(names),
            actual=dtype_name(tensor.dtype),
        )
    if spec.device is not None and not _device_ok(spec.device, tensor.device):
        problems.add(
            loc,
            "tensor_device",
            "expected device {expected}, got {actual}",
            tensor,
            expected=str(spec.device),
            actual=str(tensor.device),
        )
    if spec.dims is not None:
        _check_shape(spec, spec.dims, tensor, batch, loc, problems)


def _check_shape(
    spec: Spec, dims: tuple[Dim, ...], tensor: Tensor, batch: torch.Size, loc: Loc, p: Problems
) -> None:
    shape = list(tensor.shape)
    start = 0  # *B, always first, takes as many dims as the batch size has
    if dims and dims[0].kind is DimKind.BATCH:
        start, dims = len(batch), dims[1:]
    variadic = next((i for i, dim in enumerate(dims) if dim.variadic), None)
    fixed_count = start + len(dims) - (variadic is not None)
    if len(shape) < fixed_count or (variadic is None and len(shape) != fixed_count):
        p.add(
            loc,
            "tensor_rank",
            "expected {expected} dims ('{spec}'), got {actual}: shape {shape}",
            tensor,
            expected=str(fixed_count) if variadic is None else f"at least {fixed_count}",
            actual=len(shape),
            spec=spec.shape,
            shape=shape,
        )
        return
    if start:
        _check_group(spec, Dim(DimKind.BATCH), shape[:start], shape, batch, loc, p, tensor)
    if variadic is None:
        positions = [(start + i, dim) for i, dim in enumerate(dims)]
    else:
        after = len(dims) - variadic - 1
        positions = [(start + i, dim) for i, dim in enumerate(dims[:variadic])]
        positions += [(len(shape) - after + i, dim) for i, dim in enumerate(dims[variadic + 1 :])]
        group = shape[start + variadic : len(shape) - after]
        _check_group(spec, dims[variadic], group, shape, batch, loc, p, tensor)
    for index, dim in positions:
        _check_dim(spec, dim, index, shape, loc, p, tensor)


def _check_dim(
    spec: Spec, dim: Dim, index: int, shape: list[int], loc: Loc, p: Problems, tensor: Tensor
) -> None:
    size = shape[index]
    if dim.kind is DimKind.FIXED:
        if size != dim.size and not (dim.broadcast and size == 1):
            p.add(
                loc,
                "tensor_dim",
                "dim {dim} should be {expected} ('{spec}'), got {actual}: shape {shape}",
                tensor,
                dim=index,
                expected=dim.size,
                actual=size,
                spec=spec.shape,
                shape=shape,
            )
    elif dim.kind is DimKind.NAMED and not (dim.broadcast and size == 1):
        assert dim.name is not None
        _bind(spec, dim.name, size, f"dim {index}", shape, loc, p, tensor)


def _check_group(
    spec: Spec,
    dim: Dim,
    group: list[int],
    shape: list[int],
    batch: torch.Size,
    loc: Loc,
    p: Problems,
    tensor: Tensor,
) -> None:
    if dim.kind is DimKind.BATCH and group != list(batch):
        p.add(
            loc,
            "tensor_batch",
            "the batch dims (*B in '{spec}') should be {expected}, got {actual}: shape {shape}",
            tensor,
            expected=list(batch),
            actual=group,
            spec=spec.shape,
            shape=shape,
        )
    elif dim.kind is DimKind.VARIADIC:
        assert dim.name is not None
        _bind(spec, dim.name, group, "dims", shape, loc, p, tensor)


def _bind(
    spec: Spec,
    name: str,
    size: int | list[int],
    dims: str,
    shape: list[int],
    loc: Loc,
    p: Problems,
    tensor: Tensor,
) -> None:
    bound = p.bindings.get(name)
    if bound is None:
        p.bindings[name] = (size, where(loc))
    elif bound[0] != size:
        p.add(
            loc,
            "tensor_binding",
            "{name}={bound} from {bound_at}, {actual} here ({dims} of '{spec}', shape {shape})",
            tensor,
            name=name,
            bound=bound[0],
            bound_at=bound[1],
            actual=size,
            dims=dims,
            spec=spec.shape,
            shape=shape,
        )
