"""torch.func transforms beyond vmap (grad, jacrev, jacfwd, hessian, vjp, jvp) with tensor
classes as inputs and outputs, against the same transforms over plain tensors.

A result is always a valid instance: a gradient keeps the input's batch size; a jacobian with
respect to an instance puts the output's dims in front of every leaf and of the batch size
(as ``vmap`` does); an instance returned by the function keeps its batch size, each leaf
followed by the input's dims.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import Tensor
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp

from tensorclass import TensorClass, TensorDict, lazy_stack


class Inner(TensorClass):
    c: torch.Tensor


class Sample(TensorClass):
    a: torch.Tensor
    inner: Inner
    label: str = "train"


def make_td() -> TensorDict:
    gen = torch.Generator().manual_seed(0)
    return TensorDict(
        {"a": torch.randn(3, 2, generator=gen), "n": {"b": torch.randn(3, generator=gen)}}, [3]
    )


def make_typed() -> Sample:
    gen = torch.Generator().manual_seed(1)
    return Sample(
        torch.randn(3, 2, generator=gen),
        Inner(torch.randn(3, 4, generator=gen), batch_size=[3, 4]),
        batch_size=[3],
    )


def is_valid(obj: Any) -> bool:
    """Every leaf (and nested batch size) starts with the batch size, at every level."""
    size = obj.batch_size
    for value in obj.values():
        if isinstance(value, Tensor):
            if value.shape[: len(size)] != size:
                return False
        elif hasattr(value, "batch_size"):
            if value.batch_size[: len(size)] != size or not is_valid(value):
                return False
    return True


# the same functions, of an instance and of its leaves as plain tensors
def loss(td: Any) -> Tensor:
    return (td["a"] ** 2).sum() + td["n", "b"].sin().sum()


def loss_plain(a: Tensor, b: Tensor) -> Tensor:
    return (a**2).sum() + b.sin().sum()


def vector(td: Any) -> Tensor:
    return td["a"].sum(-1) * td["n", "b"]


def vector_plain(a: Tensor, b: Tensor) -> Tensor:
    return a.sum(-1) * b


def test_grad_keeps_the_class_and_batch_size() -> None:
    td = make_td()
    result = grad(loss)(td)
    assert type(result) is TensorDict and result.batch_size == (3,) and is_valid(result)
    want_a, want_b = grad(loss_plain, argnums=(0, 1))(td["a"], td["n", "b"])
    torch.testing.assert_close(result["a"], want_a)
    torch.testing.assert_close(result["n", "b"], want_b)


def test_grad_of_a_typed_class_with_a_nested_batch_dim() -> None:
    sample = make_typed()

    def f(s: Sample) -> Tensor:
        return (s.a * 3).sum() + (s.inner.c**2).sum()

    result = grad(f)(sample)
    assert type(result) is Sample and type(result.inner) is Inner
    assert result.batch_size == (3,) and result.inner.batch_size == (3, 4)
    assert result.label == "train"
    torch.testing.assert_close(result.a, torch.full_like(sample.a, 3.0))
    torch.testing.assert_close(result.inner.c, 2 * sample.inner.c)


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobian_of_a_tensor_with_respect_to_an_instance(transform: Any) -> None:
    td = make_td()
    result = transform(vector)(td)
    # the output's dims (3,) in front of the batch size (3,)
    assert type(result) is TensorDict and result.batch_size == (3, 3) and is_valid(result)
    want_a, want_b = transform(vector_plain, argnums=(0, 1))(td["a"], td["n", "b"])
    torch.testing.assert_close(result["a"], want_a)
    torch.testing.assert_close(result["n", "b"], want_b)

    def longer(t: Any) -> Tensor:
        return torch.cat([t["a"].sum(-1), t["n", "b"]])

    assert transform(longer)(td).batch_size == (6, 3)


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobian_of_an_instance_with_respect_to_an_instance(transform: Any) -> None:
    td = make_td()

    def double(t: TensorDict) -> TensorDict:
        return TensorDict({"a": t["a"] * 2, "n": {"b": t["n", "b"].exp()}}, [3])

    result = transform(double)(td)
    assert type(result) is TensorDict and result.batch_size == (3,) and is_valid(result)

    def plain(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        return a * 2, b.exp()

    (daa, dab), (dba, dbb) = transform(plain, argnums=(0, 1))(td["a"], td["n", "b"])
    torch.testing.assert_close(result["a", "a"], daa)
    torch.testing.assert_close(result["a", "n", "b"], dab)
    torch.testing.assert_close(result["n", "b", "a"], dba)
    torch.testing.assert_close(result["n", "b", "n", "b"], dbb)


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobian_of_an_instance_with_respect_to_a_tensor(transform: Any) -> None:
    x = torch.randn(3, 2)

    def build(x: Tensor) -> TensorDict:
        return TensorDict({"y": x * 2, "z": {"w": x.sum(-1)}}, [3])

    result = transform(build)(x)
    # the leaves differ in their dims: the returned batch size is kept
    assert result.batch_size == (3,) and is_valid(result)
    torch.testing.assert_close(result["y"], transform(lambda x: x * 2)(x))
    torch.testing.assert_close(result["z", "w"], transform(lambda x: x.sum(-1))(x))


def test_hessian_of_a_scalar_function_of_an_instance() -> None:
    td = make_td()

    def f(t: TensorDict) -> Tensor:
        return (t["a"] ** 3).sum() + (t["a"].sum(-1) * t["n", "b"] ** 2).sum()

    result = hessian(f)(td)
    assert result.batch_size == (3,) and is_valid(result)

    def plain(a: Tensor, b: Tensor) -> Tensor:
        return (a**3).sum() + (a.sum(-1) * b**2).sum()

    want = hessian(plain, argnums=(0, 1))(td["a"], td["n", "b"])
    torch.testing.assert_close(result["a", "a"], want[0][0])
    torch.testing.assert_close(result["a", "n", "b"], want[0][1])
    torch.testing.assert_close(result["n", "b", "a"], want[1][0])
    torch.testing.assert_close(result["n", "b", "n", "b"], want[1][1])


def test_vjp_and_jvp() -> None:
    td = make_td()
    out, pull = vjp(lambda t: t * 3, td)
    (cotangent,) = pull(td.apply(torch.ones_like))
    assert cotangent.batch_size == (3,)
    torch.testing.assert_close(cotangent["a"], torch.full((3, 2), 3.0))
    value, tangent = jvp(loss, (td,), (td.apply(torch.ones_like),))
    want_value, want_tangent = jvp(
        loss_plain, (td["a"], td["n", "b"]), (torch.ones(3, 2), torch.ones(3))
    )
    torch.testing.assert_close(value, want_value)
    torch.testing.assert_close(tangent, want_tangent)


def test_grad_and_jacrev_of_a_lazy_stack() -> None:
    gen = torch.Generator().manual_seed(2)
    members = [TensorDict({"a": torch.randn(4, 2, generator=gen)}, [4]) for _ in range(3)]
    stack = lazy_stack(members)
    result = grad(lambda s: (s["a"] ** 2).sum())(stack)
    assert result.batch_size == (3, 4)
    torch.testing.assert_close(result["a"], 2 * stack["a"])
    jac = jacrev(lambda s: s["a"].sum(-1))(stack)
    assert jac.batch_size == (3, 4, 3, 4) and is_valid(jac)
    want = jacrev(lambda a: a.sum(-1))(stack["a"])
    torch.testing.assert_close(jac["a"], want)


def test_reductions_inside_transforms() -> None:
    td = make_td()
    result = grad(lambda t: t.logsumexp(0).sum(reduce=True))(td)
    want_a = grad(lambda a: a.logsumexp(0).sum())(td["a"])
    torch.testing.assert_close(result["a"], want_a)
    grid = TensorDict({"x": torch.randn(3, 4, 2)}, [3, 4])
    per_row = torch.vmap(lambda t: t.softmax(0))(grid)  # inside, the batch size is [4]
    assert per_row.batch_size == (3, 4)
    torch.testing.assert_close(per_row["x"], grid["x"].softmax(1))
    maxima = torch.vmap(lambda t: t.max(0))(grid)  # values and indices out of vmap
    torch.testing.assert_close(maxima.indices["x"], grid["x"].max(1).indices)
