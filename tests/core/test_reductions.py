"""Reductions and scans over batch dims, against torch leaf by leaf, on a TensorDict, a typed
class with a nested field (with a batch dim of its own) and a lazy stack."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree
from torch import Tensor

from tensorclass import TensorClass, TensorDict, ValuesIndices, lazy_stack
from tensorclass.errors import InvalidKeyError, StructureMismatchError


class Inner(TensorClass):
    c: torch.Tensor


class Sample(TensorClass):
    a: torch.Tensor
    inner: Inner
    label: str = "train"


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def make_td() -> TensorDict:
    gen = _gen()
    return TensorDict(
        {
            "a": torch.randn(3, 4, 5, generator=gen),
            "n": {"b": torch.randn(3, 4, generator=gen), "c": torch.randn(3, 4, 2, generator=gen)},
        },
        [3, 4],
    )


def make_typed() -> Sample:
    gen = _gen()
    return Sample(
        torch.randn(3, 4, 5, generator=gen),
        Inner(torch.randn(3, 4, 2, 6, generator=gen), batch_size=[3, 4, 2]),
        batch_size=[3, 4],
    )


def make_lazy() -> Any:
    gen = _gen()
    members = [
        TensorDict(
            {"a": torch.randn(4, 5, generator=gen), "n": {"b": torch.randn(4, generator=gen)}},
            [4],
        )
        for _ in range(3)
    ]
    return lazy_stack(members)


MAKERS: dict[str, Callable[[], Any]] = {"td": make_td, "typed": make_typed, "lazy": make_lazy}


@pytest.fixture(params=sorted(MAKERS))
def obj(request: pytest.FixtureRequest) -> Any:
    return MAKERS[request.param]()


def leaves(obj: Any) -> dict[Any, Tensor]:
    """The tensor leaves, by key."""
    found = {key: obj[key] for key in obj.keys(include_nested=True, leaves_only=True)}
    return {key: leaf for key, leaf in found.items() if isinstance(leaf, Tensor)}


def levels(obj: Any) -> dict[Any, int]:
    """The batch dims of the level holding each leaf."""
    out: dict[Any, int] = {}
    for key in leaves(obj):
        parent = obj if isinstance(key, str) or len(key) == 1 else obj[key[:-1]]
        out[key] = parent.batch_dims
    return out


def check_leafwise(result: Any, obj: Any, ref: Callable[[Tensor, int], Tensor]) -> None:
    """Every leaf of ``result`` is ``ref(leaf, level batch dims)`` of ``obj``'s."""
    depth = levels(obj)
    for key, leaf in leaves(obj).items():
        want = ref(leaf, depth[key])
        got = result[key]
        assert got.dtype == want.dtype, key
        torch.testing.assert_close(got, want, equal_nan=True, msg=str(key))


def member_class(obj: Any) -> type:
    return obj.member_class if hasattr(obj, "member_class") else type(obj)


# -- over batch dims -----------------------------------------------------------------------

DIM_CASES = [
    ("sum", (0,), {}, lambda t: t.sum(0)),
    ("sum", ((0, 1),), {}, lambda t: t.sum((0, 1))),
    ("sum", (-1,), {"keepdim": True}, lambda t: t.sum(1, keepdim=True)),
    ("sum", ([1, -2],), {"dtype": torch.float64}, lambda t: t.sum((0, 1), dtype=torch.float64)),
    ("mean", (1,), {}, lambda t: t.mean(1)),
    ("nansum", (0,), {}, lambda t: t.nansum(0)),
    ("nanmean", ((0, 1),), {"keepdim": True}, lambda t: t.nanmean((0, 1), keepdim=True)),
    ("prod", (1,), {"dtype": torch.float64}, lambda t: t.prod(1, dtype=torch.float64)),
    ("prod", ((0, 1),), {}, lambda t: t.prod(1).prod(0)),
    ("std", (0,), {"correction": 0}, lambda t: t.std(0, correction=0)),
    ("var", ((0, 1),), {}, lambda t: t.var((0, 1))),
    ("amax", ((0, 1),), {}, lambda t: t.amax((0, 1))),
    ("amin", (-1,), {}, lambda t: t.amin(1)),
    ("logsumexp", (1,), {}, lambda t: t.logsumexp(1)),
    ("logsumexp", (), {}, lambda t: t.logsumexp((0, 1))),  # every batch dim, never features
    ("quantile", (0.25, 1), {}, lambda t: t.quantile(0.25, 1)),
    ("quantile", (0.5, 0, True), {"interpolation": "lower"}, lambda t: t.quantile(0.5, 0, True, interpolation="lower")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "args", "kwargs", "ref"), DIM_CASES)
def test_reduction_over_batch_dims(
    obj: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], ref: Callable[..., Tensor]
) -> None:
    result = getattr(obj, name)(*args, **kwargs)
    assert type(result) is member_class(obj)
    check_leafwise(result, obj, lambda t, n: ref(t))
    keepdim = kwargs.get("keepdim", len(args) > 2 and args[2] is True)
    expected = ref(torch.zeros(3, 4)).shape
    assert result.batch_size == expected, (name, args, keepdim)


EVERY_CASES = [
    ("sum", {}, torch.sum),
    ("mean", {"dtype": torch.float64}, lambda t: t.mean(dtype=torch.float64)),
    ("prod", {}, torch.prod),
    ("std", {}, torch.std),
    ("amax", {}, torch.amax),
    ("max", {}, torch.max),
    ("min", {}, torch.min),
    ("norm", {}, torch.linalg.vector_norm),
    ("norm", {"dtype": torch.float64}, lambda t: torch.linalg.vector_norm(t, dtype=torch.float64)),
    ("quantile", {"q": 0.75}, lambda t: t.quantile(0.75)),
]


@pytest.mark.parametrize(("name", "kwargs", "ref"), EVERY_CASES)
def test_without_dim_every_element_of_each_leaf(
    obj: Any, name: str, kwargs: dict[str, Any], ref: Callable[..., Tensor]
) -> None:
    result = getattr(obj, name)(**kwargs)
    assert result.batch_size == () and type(result) is member_class(obj)
    check_leafwise(result, obj, lambda t, n: ref(t))


def test_every_element_with_keepdim_keeps_each_dim_with_size_1(obj: Any) -> None:
    result = obj.sum(keepdim=True)
    assert result.batch_size == (1, 1)
    check_leafwise(result, obj, lambda t, n: t.sum().reshape((1,) * t.ndim))
    assert obj.max(keepdim=True).batch_size == (1, 1)


def test_an_empty_dim_tuple_is_every_element() -> None:
    td = make_td()
    assert (td.sum(()) == td.sum()).all()
    assert td.mean(dim=()).batch_size == ()


def test_feature_reduces_each_leaf_over_its_own_feature_dims(obj: Any) -> None:
    def ref(t: Tensor, n: int) -> Tensor:
        return (t.flatten(n) if t.ndim > n else t.unsqueeze(-1)).mean(-1)

    result = obj.mean("feature")
    assert result.batch_size == obj.batch_size
    check_leafwise(result, obj, ref)
    values, indices = obj.max("feature")
    check_leafwise(
        indices,
        obj,
        lambda t, n: (
            t.flatten(n).argmax(-1) if t.ndim > n else torch.zeros_like(t, dtype=torch.long)
        ),
    )


def test_feature_refuses_keepdim() -> None:
    with pytest.raises(ValueError, match="keepdim"):
        make_td().sum("feature", keepdim=True)


# -- reduce=True: one tensor ---------------------------------------------------------------


def test_reduce_true_reduces_every_leaf_together(obj: Any) -> None:
    flat = torch.cat([t.reshape(-1) for t in leaves(obj).values()])
    torch.testing.assert_close(obj.sum(reduce=True), flat.sum())
    torch.testing.assert_close(obj.mean(reduce=True), flat.mean())
    torch.testing.assert_close(obj.std(reduce=True, correction=0), flat.std(correction=0))
    torch.testing.assert_close(obj.amax(reduce=True), flat.amax())
    torch.testing.assert_close(obj.max(reduce=True), flat.max())
    torch.testing.assert_close(obj.quantile(0.3, reduce=True), flat.quantile(0.3))
    n = obj.batch_dims
    per_batch = torch.cat(
        [t.flatten(n) if t.ndim > n else t.unsqueeze(-1) for t in leaves(obj).values()], -1
    )
    torch.testing.assert_close(obj.sum("feature", reduce=True), per_batch.sum(-1))


def test_reduce_true_along_a_dim_joins_the_leaves_along_it() -> None:
    td = TensorDict({"a": torch.rand(3, 4), "b": torch.rand(5, 4)}, [])
    td.batch_size = []
    joined = torch.cat([td["a"], td["b"]])
    same = TensorDict({"a": torch.rand(3, 4), "b": torch.rand(3, 4)}, [3, 4])
    both = torch.cat([same["a"], same["b"]], 1)
    torch.testing.assert_close(same.sum(1, reduce=True), both.sum(1))
    torch.testing.assert_close(same.mean(-1, reduce=True), both.mean(1))  # a batch dim
    values, indices = same.max(0, reduce=True)
    torch.testing.assert_close(values, torch.cat([same["a"], same["b"]]).max(0).values)
    assert isinstance(same.max(0, reduce=True), ValuesIndices)
    torch.testing.assert_close(same.cummax(1, reduce=True).indices, both.cummax(1).indices)
    assert joined.shape == (8, 4)


def test_reduce_true_errors_name_the_problem() -> None:
    with pytest.raises(StructureMismatchError, match="has none"):
        TensorDict({}, [3]).sum(reduce=True)
    td = TensorDict({"a": torch.rand(3, 4), "b": torch.rand(3, 2)}, [3])
    with pytest.raises(StructureMismatchError, match=r"shapes \[\[3, 4\], \[3, 2\]\]"):
        td.sum(0, reduce=True)


# -- key_transform ---------------------------------------------------------------------------


def test_key_transform_renames_every_level(obj: Any) -> None:
    result = obj.mean(0, key_transform=lambda key: f"avg_{key}")
    assert type(result) is TensorDict  # a typed class's fields cannot be renamed
    plain = obj.mean(0)
    for key, leaf in leaves(plain).items():
        path = (key,) if isinstance(key, str) else key
        torch.testing.assert_close(result[tuple(f"avg_{k}" for k in path)], leaf)
    assert result.batch_size == plain.batch_size
    assert all(key.isupper() for key in obj.norm(key_transform=str.upper).keys())


def test_key_transform_refuses_collisions_and_non_strings() -> None:
    td = make_td()
    with pytest.raises(StructureMismatchError, match="two entries"):
        td.sum(key_transform=lambda key: "same")
    with pytest.raises(InvalidKeyError, match="must return a str"):
        td.sum(key_transform=lambda key: 1)  # type: ignore[arg-type,return-value]


# -- values and indices ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_along_a_dim_give_values_and_indices(obj: Any, name: str) -> None:
    result = getattr(obj, name)(1)
    assert isinstance(result, ValuesIndices) and isinstance(result, tuple)
    values, indices = result
    assert values is result.values and indices is result.indices
    for part in result:
        assert type(part) is member_class(obj) and part.batch_size == (3,)
    check_leafwise(values, obj, lambda t, n: getattr(t, name)(1).values)
    check_leafwise(indices, obj, lambda t, n: getattr(t, name)(1).indices)
    only = getattr(obj, name)(-2, keepdim=True, return_indices=False)
    assert type(only) is member_class(obj) and only.batch_size == (1, 4)
    check_leafwise(only, obj, lambda t, n: getattr(t, name)(0, keepdim=True).values)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_keep_the_batch_size(obj: Any, name: str) -> None:
    values, indices = getattr(obj, name)(-1)
    assert values.batch_size == indices.batch_size == obj.batch_size
    check_leafwise(values, obj, lambda t, n: getattr(t, name)(1).values)
    check_leafwise(indices, obj, lambda t, n: getattr(t, name)(1).indices)
    assert type(getattr(obj, name)(0, return_indices=False)) is member_class(obj)


def test_values_indices_pickles_and_is_a_pytree_node() -> None:
    pair = make_td().max(0)
    again = pickle.loads(pickle.dumps(pair))
    assert isinstance(again, ValuesIndices) and (again.values == pair.values).all()
    children, spec = pytree.tree_flatten(pair)
    assert len(children) == 6  # 3 leaves each
    rebuilt = pytree.tree_unflatten(children, spec)
    assert isinstance(rebuilt, ValuesIndices) and rebuilt.indices.batch_size == (4,)
    assert "ValuesIndices(values=" in repr(pair)


def test_max_refuses_several_dims() -> None:
    with pytest.raises(TypeError, match="one batch dim"):
        make_td().max((0, 1))  # type: ignore[arg-type]


# -- quantiles, logsumexp, norm --------------------------------------------------------------


def test_quantile_with_several_q_puts_their_dim_in_front(obj: Any) -> None:
    q = torch.tensor([0.1, 0.5, 0.9])
    result = obj.quantile(q, 0)
    assert result.batch_size == (3, 4)
    check_leafwise(result, obj, lambda t, n: t.quantile(q, 0))
    assert obj.quantile(q).batch_size == (3,)
    doubles = TensorDict({"x": torch.rand(4, dtype=torch.float64)}, [4])
    torch.testing.assert_close(doubles.quantile(q, 0)["x"], doubles["x"].quantile(q.double()))


def test_logsumexp_and_norm_write_into_out() -> None:
    td = make_td()
    out = td.logsumexp(0).zero_()
    assert td.logsumexp(0, out=out) is out
    torch.testing.assert_close(out["a"], td["a"].logsumexp(0))
    norms = td.norm().zero_()
    assert td.norm(out=norms) is norms
    torch.testing.assert_close(norms["n", "c"], td["n", "c"].norm())


def test_logsumexp_without_batch_dims_keeps_the_leaves() -> None:
    td = TensorDict({"a": torch.rand(3)}, [])
    assert torch.equal(td.logsumexp()["a"], td["a"])


# -- scans -------------------------------------------------------------------------------------

SCAN_CASES = [
    ("cumsum", (1,), {}, lambda t: t.cumsum(1)),
    ("cumsum", (0,), {"dtype": torch.float64}, lambda t: t.cumsum(0, dtype=torch.float64)),
    ("cumprod", (-2,), {}, lambda t: t.cumprod(0)),
    ("softmax", (0,), {}, lambda t: t.softmax(0)),
    ("softmax", (-1, torch.float64), {}, lambda t: t.softmax(1, torch.float64)),
    ("log_softmax", (1,), {}, lambda t: t.log_softmax(1)),
]


@pytest.mark.parametrize(("name", "args", "kwargs", "ref"), SCAN_CASES)
def test_scans_along_a_batch_dim(
    obj: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], ref: Callable[..., Tensor]
) -> None:
    result = getattr(obj, name)(*args, **kwargs)
    assert type(result) is member_class(obj) and result.batch_size == obj.batch_size
    check_leafwise(result, obj, lambda t, n: ref(t))


def test_scans_check_their_dim() -> None:
    td = make_td()
    with pytest.raises(IndexError, match="out of range for 2 batch dims"):
        td.softmax(2)
    with pytest.raises(TypeError, match="one batch dim"):
        td.cumsum((0, 1))  # type: ignore[arg-type]


# -- what the leaves carry ---------------------------------------------------------------------


def test_names_of_the_dims_left_are_kept() -> None:
    td = make_td()
    td.names = ["batch", "time"]
    assert td.sum(0).names == ["time"]
    assert td.sum(1, keepdim=True).names == ["batch", "time"]
    assert td.softmax(1).names == ["batch", "time"]
    assert td.quantile(torch.tensor([0.5]), 0).names == [None, "time"]


def test_non_tensor_values() -> None:
    sample = make_typed()
    assert sample.sum(0).label == "train"  # a shared value survives a reduction
    parts = [TensorDict({"x": torch.ones(2)}, [2]) for _ in range(2)]
    parts[0]["tag"], parts[1]["tag"] = "a", "b"
    td = torch.stack(parts)  # one value per element: kept by scans only
    assert "tag" not in td.sum(0).keys()
    assert td.cumsum(0)["tag"] == td["tag"] == [["a", "a"], ["b", "b"]]


def test_integer_and_bool_leaves_follow_torch() -> None:
    td = TensorDict({"i": torch.arange(6).reshape(3, 2), "b": torch.ones(3, dtype=torch.bool)}, [3])
    assert td.sum(0)["i"].dtype == torch.int64 and td.sum(0)["b"].dtype == torch.int64
    assert torch.equal(td.cumprod(0)["i"], td["i"].cumprod(0))
    assert torch.equal(td.max(0).indices["b"], td["b"].max(0).indices)


# -- torch functions -----------------------------------------------------------------------


def test_torch_functions_dispatch_to_the_methods(obj: Any) -> None:
    def same(a: Any, b: Any) -> None:
        assert type(a) is type(b)
        for key, leaf in leaves(b).items():
            torch.testing.assert_close(a[key], leaf)

    same(torch.sum(obj, 0), obj.sum(0))
    same(torch.nanmean(obj, dim=1, keepdim=True), obj.nanmean(1, keepdim=True))
    same(torch.max(obj), obj.max())
    values, indices = torch.max(obj, 1)
    same(indices, obj.max(1).indices)
    same(torch.min(obj, dim=0, keepdim=True).values, obj.min(0, keepdim=True).values)
    same(torch.logsumexp(obj, 0), obj.logsumexp(0))
    same(torch.quantile(obj, 0.5, 1), obj.quantile(0.5, 1))
    same(torch.cumsum(obj, 1), obj.cumsum(1))
    same(torch.cummin(obj, 0).values, obj.cummin(0).values)
    same(torch.softmax(obj, 0), obj.softmax(0))
    same(F.softmax(obj, dim=-1), obj.softmax(1))
    same(F.log_softmax(obj, 0, dtype=torch.float64), obj.log_softmax(0, torch.float64))
    same(torch.log_softmax(obj, 1), obj.log_softmax(1))
    same(torch.norm(obj), obj.norm())


def test_torch_max_of_two_instances_is_element_wise() -> None:
    td = make_td()
    other = td * -1
    same = torch.max(td, other)
    assert torch.equal(same["a"], torch.maximum(td["a"], other["a"]))
    assert torch.equal(torch.min(td, other=other)["n", "b"], -td["n", "b"].abs())
    bound = torch.zeros(())
    assert torch.equal(torch.max(bound, td)["a"], torch.maximum(bound, td["a"]))
    assert torch.equal(torch.min(bound, other=td)["a"], torch.minimum(bound, td["a"]))


def test_torch_function_refusals() -> None:
    td = make_td()
    with pytest.raises(TypeError, match="needs a batch dim"):
        F.softmax(td)
    with pytest.raises(TypeError, match="p=1"):
        torch.norm(td, p=1)


def test_reductions_compile_without_graph_breaks() -> None:
    sample = make_typed()

    def f(s: Sample) -> tuple[Sample, Tensor]:
        return s.max(0).values.softmax(0), s.mean("feature").sum(reduce=True)

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    got, total = compiled(sample)
    want, want_total = f(sample)
    assert type(got) is Sample and got.inner.batch_size == (4, 2)
    torch.testing.assert_close(got.inner.c, want.inner.c)
    torch.testing.assert_close(total, want_total)
