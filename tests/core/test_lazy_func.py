"""torch.func transforms and vmap over lazy stacks, checked against the same computation on
the dense stack (members of one shape) or on the members one by one (ragged members)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.utils._pytree as pytree
from torch import Tensor
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, vmap

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack
from tensorclass.errors import StructureMismatchError


class Point(TensorClass):
    w: torch.Tensor
    name: str = "p"


def members(sizes: tuple[int, ...] = (2, 2, 2), seed: int = 0) -> list[TensorDict]:
    gen = torch.Generator().manual_seed(seed)
    return [
        TensorDict(
            {"a": torch.randn(4, k, generator=gen), "n": {"b": torch.randn(4, generator=gen)}},
            [4],
        )
        for k in sizes
    ]


def scalar(t: Any) -> Tensor:
    return (t["a"] ** 3).sum() + t["n", "b"].sin().sum()


def summed(t: Any) -> Tensor:
    """``scalar`` of each member, summed (ragged members cannot be read stacked)."""
    return sum((scalar(m) for m in t.members), torch.zeros(()))


def vector(t: Any) -> Tensor:
    return t["a"].sum(-1) * t["n", "b"]


def assert_same(lazy: Any, dense: Any) -> None:
    """Same batch size and same leaves, key by key."""
    assert lazy.batch_size == dense.batch_size
    keys = sorted(dense.keys(include_nested=True, leaves_only=True), key=str)
    assert sorted(lazy.keys(include_nested=True, leaves_only=True), key=str) == keys
    for key in keys:
        torch.testing.assert_close(lazy[key], dense[key])


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("transform", [grad, jacrev, jacfwd, hessian])
def test_transforms_of_a_scalar_match_the_dense_stack(transform: Any, dim: int) -> None:
    stack = lazy_stack(members(), dim)
    result = transform(scalar)(stack)
    assert isinstance(result, LazyStackedTensorDict) and result.stack_dim == dim
    assert_same(result, transform(scalar)(stack.contiguous()))


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobians_of_a_vector_match_the_dense_stack(transform: Any) -> None:
    stack = lazy_stack(members(), 1)
    result = transform(vector)(stack)
    # the output's dims (4, 3) in front: the stack dim moves after them
    assert isinstance(result, LazyStackedTensorDict) and result.stack_dim == 3
    assert_same(result, transform(vector)(stack.contiguous()))


def test_grad_of_ragged_members_is_each_members_grad() -> None:
    parts = members((2, 3, 5))
    result = grad(summed)(lazy_stack(parts))
    assert isinstance(result, LazyStackedTensorDict)
    for got, member in zip(result.members, parts):
        assert_same(got, grad(scalar)(member))


@pytest.mark.parametrize("transform", [jacrev, jacfwd])
def test_jacobian_over_ragged_members(transform: Any) -> None:
    parts = members((2, 3, 5))

    def per_member(t: Any) -> Tensor:  # one value per member: a (3,) output
        return torch.stack([(m["a"] ** 2).sum() + m["n", "b"].sum() for m in t.unbind(0)])

    result = transform(per_member)(lazy_stack(parts))
    assert result.batch_size == (3, 3, 4)
    for i, column in enumerate(result.unbind(0)):
        for j, (got, member) in enumerate(zip(column.members, parts)):
            want = grad(lambda m: (m["a"] ** 2).sum() + m["n", "b"].sum())(member)
            if i != j:
                want = want.apply(torch.zeros_like)
            assert_same(got, want)


def test_hessian_over_ragged_members_diagonal_blocks() -> None:
    parts = members((2, 3))
    result = hessian(summed)(lazy_stack(parts))
    for m, member in enumerate(parts):
        want = hessian(scalar)(member)["a", "a"]  # (4, k, 4, k)
        got = result.members[m]["a"].members[m]["a"]
        torch.testing.assert_close(got, want)
        other = result.members[m]["a"].members[1 - m]["a"]
        assert other.shape == (4, parts[m]["a"].shape[1], 4, parts[1 - m]["a"].shape[1])
        assert not other.any()


def test_vmap_over_the_stack_dim_sees_one_dense_member() -> None:
    stack = lazy_stack(members())
    seen: list[type] = []

    def f(t: Any) -> Tensor:
        seen.append(type(t))
        return scalar(t)

    torch.testing.assert_close(vmap(f)(stack), vmap(scalar)(stack.contiguous()))
    assert seen == [TensorDict]


@pytest.mark.parametrize("sizes", [(2, 2, 2), (2, 3, 5)])
def test_vmap_over_another_dim_keeps_the_members(sizes: tuple[int, ...]) -> None:
    parts = members(sizes)
    stack = lazy_stack(parts)  # batch (3, 4): in_dims=1 maps each member's dim 0
    result = vmap(lambda t: t * 2, in_dims=(1,))(stack)
    assert isinstance(result, LazyStackedTensorDict)
    assert result.batch_size == (4, 3) and result.stack_dim == 1
    for got, member in zip(result.members, parts):
        assert_same(got, member * 2)
    values = vmap(lambda t: torch.stack([m["a"].sum() for m in t.unbind(0)]), in_dims=(1,))(stack)
    want = torch.stack([m["a"].sum(-1) for m in parts], 1)
    torch.testing.assert_close(values, want)


def test_vmap_returning_a_lazy_stack() -> None:
    x = torch.randn(5, 3)
    result = vmap(lambda v: lazy_stack([TensorDict(a=v), TensorDict(a=v[:2] * 2)]))(x)
    assert isinstance(result, LazyStackedTensorDict) and result.batch_size == (5, 2)
    torch.testing.assert_close(result.members[0]["a"], x)
    torch.testing.assert_close(result.members[1]["a"], x[:, :2] * 2)


def test_vmap_over_a_ragged_dim_names_the_key_and_shapes() -> None:
    stack = lazy_stack(members((2, 3, 5)))
    with pytest.raises(StructureMismatchError, match=r"'a'.*\[\[4, 2\], \[4, 3\], \[4, 5\]\]"):
        vmap(scalar)(stack)
    only_a = lazy_stack([m.select("a") for m in members((2, 3, 5))])
    with pytest.raises(StructureMismatchError, match="dim 2 .*'a'"):
        vmap(lambda t: t["a"], in_dims=(2,))(only_a)


def test_jacobian_of_a_returned_lazy_stack() -> None:
    x = torch.randn(3)

    def build(v: Tensor) -> Any:
        return lazy_stack([TensorDict(a=v * 2), TensorDict(a=v[:2].exp())])

    for transform in (jacrev, jacfwd):
        result = transform(build)(x)
        assert isinstance(result, LazyStackedTensorDict) and result.batch_size == (2,)
        torch.testing.assert_close(result.members[0]["a"], transform(lambda v: v * 2)(x))
        torch.testing.assert_close(result.members[1]["a"], transform(lambda v: v[:2].exp())(x))


def test_typed_members_keep_their_class_and_fields() -> None:
    gen = torch.Generator().manual_seed(3)
    points = [Point(torch.randn(2, generator=gen), name=str(i)) for i in range(3)]
    stack = lazy_stack(points)
    result = grad(lambda s: (s.w**2).sum())(stack)
    assert isinstance(result, Point) and isinstance(result, LazyStackedTensorDict)
    assert [m.name for m in result.members] == ["0", "1", "2"]
    torch.testing.assert_close(result.w, 2 * stack.w)


def test_lazy_stack_nested_in_a_dense_instance() -> None:
    parts = members((2, 3))
    outer = TensorDict({"s": lazy_stack(parts), "x": torch.randn(2)}, [2])
    result = grad(lambda t: sum(scalar(m) for m in t["s"].members) + t["x"].sum())(outer)
    assert isinstance(result["s"], LazyStackedTensorDict)
    for got, member in zip(result["s"].members, parts):
        assert_same(got, grad(scalar)(member))


def test_flatten_round_trip_keeps_members_and_children() -> None:
    stack = lazy_stack(members((2, 3)))
    leaves, spec = pytree.tree_flatten(stack)
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert isinstance(rebuilt, LazyStackedTensorDict)
    for got, member in zip(rebuilt.members, stack.members):
        assert_same(got, member)
    again, _ = pytree.tree_flatten(rebuilt)  # the same tensors: transforms rely on it
    assert all(a is b for a, b in zip(again, leaves))


def test_functional_call_vmapped_over_a_stack_of_params() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    params = [
        TensorDict({k: torch.randn_like(v) for k, v in model.named_parameters()}, [])
        for _ in range(4)
    ]
    x = torch.randn(5, 3)

    def run(p: Any) -> Tensor:
        return functional_call(model, dict(p.items()), (x,))

    out = vmap(run)(lazy_stack(params))
    torch.testing.assert_close(out, torch.stack([run(p) for p in params]))
    grads = grad(lambda s: vmap(run)(s).pow(2).sum())(lazy_stack(params))
    for got, p in zip(grads.members, params):
        assert_same(got, grad(lambda q: run(q).pow(2).sum())(p))


def test_compositions_match_the_dense_stack() -> None:
    stack = lazy_stack(members())
    dense = stack.contiguous()

    def square(t: Any) -> Tensor:
        return (t["a"] ** 2).sum() + t["n", "b"].sum()

    # per-sample grads over the stack dim (one dense member each), then over dim 1
    assert_same(vmap(grad(square))(stack), vmap(grad(square))(dense))
    per_row = vmap(grad(square), in_dims=(1,))(stack)
    assert isinstance(per_row, LazyStackedTensorDict)
    assert_same(per_row, vmap(grad(square), in_dims=(1,))(dense))
    nested = vmap(vmap(lambda t: t["a"].sum() * t["n", "b"]))(stack)
    torch.testing.assert_close(nested, vmap(vmap(lambda t: t["a"].sum() * t["n", "b"]))(dense))
    second = grad(lambda t: grad(scalar)(t)["a"].sum())(stack)
    assert isinstance(second, LazyStackedTensorDict)
    assert_same(second, grad(lambda t: grad(scalar)(t)["a"].sum())(dense))


def test_per_row_grads_of_ragged_members() -> None:
    parts = members((2, 3))
    result = vmap(grad(summed), in_dims=(1,))(lazy_stack(parts))
    assert isinstance(result, LazyStackedTensorDict) and result.batch_size == (4, 2)
    for got, member in zip(result.members, parts):
        assert_same(got, vmap(grad(scalar))(member))


def test_a_locked_stack_comes_back_locked() -> None:
    stack = lazy_stack([m.lock_() for m in members()])
    result = grad(scalar)(stack)
    assert isinstance(result, LazyStackedTensorDict)
    assert result.is_locked and all(m.is_locked for m in result.members)
    assert_same(result, grad(scalar)(stack.contiguous()))
