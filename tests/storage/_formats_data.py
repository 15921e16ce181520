"""Shared data for the file-format tests: a TensorDict, a typed class and a lazy stack."""

from __future__ import annotations

import torch

from tensorclass import TensorClass, TensorDict, lazy_stack


class FmtInner(TensorClass):
    z: torch.Tensor


class FmtRecord(TensorClass):
    x: torch.Tensor
    name: str
    inner: FmtInner
    maybe: torch.Tensor | None = None


def plain() -> TensorDict:
    return TensorDict(
        a=torch.arange(12, dtype=torch.float64).reshape(4, 3),
        b={"c": torch.randint(0, 9, (4, 2), generator=torch.Generator().manual_seed(0))},
        h=torch.ones(4, dtype=torch.bfloat16),
        flag=torch.tensor([True, False, True, True]),
        batch_size=[4],
    )


def typed() -> FmtRecord:
    inner = FmtInner(z=torch.linspace(0, 1, 8).reshape(4, 2), batch_size=[4])
    return FmtRecord(x=torch.arange(4), name="run-1", inner=inner, batch_size=[4])


def stacked() -> TensorDict:
    members = [TensorDict(a=torch.full((3,), float(i)), batch_size=[3]) for i in range(2)]
    return lazy_stack(members, 0)


def same(a: object, b: object) -> None:
    """``a`` and ``b`` have the same class, batch size, keys and values."""
    assert type(a).__name__ == type(b).__name__
    assert a.batch_size == b.batch_size  # type: ignore[attr-defined]
    left = a.to_dict() if hasattr(a, "to_dict") else a  # type: ignore[attr-defined]
    right = b.to_dict() if hasattr(b, "to_dict") else b  # type: ignore[attr-defined]
    _equal(left, right)


def _equal(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (a, b)
        for key in a:
            _equal(a[key], b[key])
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    else:
        assert a == b
