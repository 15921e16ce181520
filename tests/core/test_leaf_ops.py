"""Every entry of the leaf-wise table (leaf_ops.py) against its torch function, leaf by leaf.

The tests run over ``TABLE``: a new entry of an existing kind is tested without a new test.
A new kind needs its calls and its reference below (the first test says so).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import Tensor

from tensorclass import TensorDict, lazy_stack
from tensorclass.engine.leafwise.elementwise_kinds import QUANTIZED
from tensorclass.engine.leafwise.kind import TABLE, LeafOp
from tensorclass.engine.leafwise.table import LeafOps
from tensorclass.errors import OperandError

# a cast to complex32 (ComplexHalf) warns that torch's support of it is experimental
pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")

ENTRIES = sorted(TABLE)
OTHER = "other instance"  # stands for a second instance with the same keys


def _data(integers: bool = False) -> TensorDict:
    gen = torch.Generator().manual_seed(0)
    if integers:  # for the bitwise entries
        return TensorDict(
            {
                "a": torch.randint(0, 9, (4, 3), generator=gen),
                "nested": {"b": torch.randint(0, 9, (4, 2, 5), generator=gen, dtype=torch.int32)},
                "c": torch.randint(0, 9, (4,), generator=gen, dtype=torch.uint8),
            },
            [4],
        )
    return TensorDict(
        {
            "a": torch.rand(4, 3, generator=gen) + 0.5,
            "nested": {"b": torch.rand(4, 2, 5, generator=gen) + 0.5},
            "c": torch.rand(4, generator=gen, dtype=torch.float64) + 0.5,
        },
        [4],
    )


def _integers(name: str) -> bool:
    return name.startswith("bitwise")


def _reduce_ref(fn: Callable[..., Tensor], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    def ref(leaf: Tensor) -> Tensor:
        extra = {k: v for k, v in kwargs.items() if k not in ("dim", "keepdim")}
        dim = args[0] if args else kwargs.get("dim")
        keepdim = args[1] if len(args) > 1 else kwargs.get("keepdim", False)
        if dim is None:
            return fn(leaf, **extra)
        if isinstance(dim, int):
            dim %= 1  # a batch dim of the data (batch size [4]), as a dim of the leaf
        return fn(leaf, dim, keepdim=keepdim, **extra)

    return ref


def _features(leaf: Tensor) -> Tensor:
    """A leaf's feature dims as one (the data's batch size is ``[4]``)."""
    return leaf.flatten(1) if leaf.ndim > 1 else leaf.unsqueeze(-1)


def _values(result: Any) -> Any:
    """The values of a (values, indices) pair, a tensor as it is."""
    return result.values if isinstance(result, tuple) else result


def _pair(other: Any, key: tuple[str, ...], second: TensorDict) -> Any:
    return second[key] if isinstance(other, str) and other == OTHER else other


#: kind -> the calls to make (args, kwargs), and the expected leaf for a call
CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "unary": [((), {})],
    "unary_inplace": [((), {})],
    "cast": [((), {})],
    "binary": [((2.0,), {}), ((torch.tensor(1.5),), {}), ((OTHER,), {})],
    "binary_inplace": [((2.0,), {}), ((torch.tensor(1.5),), {}), ((OTHER,), {})],
    "binary_alpha": [((2.0,), {}), ((OTHER,), {"alpha": 0.5})],
    "binary_alpha_inplace": [((2.0,), {}), ((OTHER,), {"alpha": 0.5})],
    "reduction": [((), {}), ((0,), {}), ((), {"dim": [0], "keepdim": True}), (("feature",), {})],
    "reduction_dtype": [
        ((), {}),
        ((0, True), {}),
        ((), {"dim": 0, "dtype": torch.float64}),
        (("feature",), {}),
    ],
    "reduction_correction": [
        ((), {}),
        ((0,), {}),
        ((), {"dim": (0,), "correction": 0}),
        (("feature",), {"correction": 0}),
    ],
    "reduction_one_dim": [((), {}), ((0,), {}), ((), {"dim": 0, "keepdim": True})],
    "reversed_alpha": [((2.0,), {}), ((OTHER,), {"alpha": 0.5}), ((torch.tensor(3.0),), {})],
    "ternary_value": [((OTHER, OTHER), {}), ((OTHER, 2.0), {"value": 0.5})],
    "ternary_value_inplace": [((OTHER, OTHER), {}), ((OTHER, 2.0), {"value": 0.5})],
    "ternary": [((OTHER, 0.5), {}), ((2.0, OTHER), {}), ((OTHER, torch.tensor(0.25)), {})],
    "nan_replace": [((), {}), ((1.0,), {"posinf": 2.0, "neginf": -2.0})],
    "nan_replace_inplace": [((), {}), ((1.0,), {"posinf": 2.0, "neginf": -2.0})],
    "cast_to": [((torch.float64,), {}), (("torch.IntTensor",), {})],
    # reductions and scans (tests/core/test_reductions.py tests their other options)
    "quantiles": [((0.5,), {}), ((0.25, 0), {}), ((torch.tensor([0.2, 0.8]), 0, True), {})],
    "reduction_indices": [((), {}), ((0,), {}), ((-1,), {"keepdim": True})],
    "scan": [((0,), {}), ((-1,), {"dtype": torch.float64})],
    "scan_indices": [((0,), {}), ((0,), {"return_indices": False})],
    "batch_reduction": [((), {}), ((0,), {"keepdim": True})],
    "leaf_norm": [((), {}), ((), {"dtype": torch.float64})],
}
#: entries whose calls differ from their kind's (integer operands for the bitwise ones)
ENTRY_CALLS: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    name: [((3,), {}), ((torch.tensor(5),), {}), ((OTHER,), {})]
    for name in TABLE
    if _integers(name) and TABLE[name].kind.name.startswith("binary")
}


def _calls(name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return ENTRY_CALLS.get(name) or CALLS.get(TABLE[name].kind.name, [((), {})])


def _expected(entry: LeafOp[...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The reference for one leaf: ``(key, leaf, second) -> expected leaf``."""
    fn, kind = entry.fn, entry.kind.name
    if kind == "unary":
        return lambda key, leaf, second: fn(leaf)
    if kind == "unary_inplace":
        return lambda key, leaf, second: fn(leaf.clone())
    if kind == "cast":
        return lambda key, leaf, second: leaf.to(fn)
    if kind == "binary":
        return lambda key, leaf, second: fn(leaf, _pair(args[0], key, second))
    if kind == "binary_inplace":  # what the in-place form writes: the result, in the leaf's dtype
        return lambda key, leaf, second: fn(leaf, _pair(args[0], key, second)).to(leaf.dtype)
    if kind in ("binary_alpha", "binary_alpha_inplace"):
        alpha = kwargs.get("alpha", 1)
        return lambda key, leaf, second: fn(leaf, _pair(args[0], key, second) * alpha)
    if kind == "reversed_alpha":
        alpha = kwargs.get("alpha", 1)
        return lambda key, leaf, second: fn(leaf, _pair(args[0], key, second), alpha=alpha)
    if kind in ("ternary_value", "ternary_value_inplace", "ternary"):
        return lambda key, leaf, second: fn(leaf, *(_pair(a, key, second) for a in args), **kwargs)
    if kind in ("nan_replace", "nan_replace_inplace"):
        return lambda key, leaf, second: fn(leaf, *args, **kwargs)
    if kind == "cast_to":
        return lambda key, leaf, second: leaf.type(args[0])
    if kind in ("reduction", "reduction_dtype", "reduction_correction", "leaf_norm") and (
        args[:1] == ("feature",)
    ):
        return lambda key, leaf, second: fn(_features(leaf), dim=1, **kwargs)
    if kind.startswith("reduction") or kind == "leaf_norm":
        ref = _reduce_ref(fn, args, kwargs)
        return lambda key, leaf, second: ref(leaf)
    if kind == "quantiles":  # a tensor q is cast to each leaf's dtype
        q, rest = args[0], args[1:]
        return lambda key, leaf, second: fn(
            leaf, q.to(leaf.dtype) if isinstance(q, Tensor) else q, *rest, **kwargs
        )
    if kind in ("scan", "scan_indices"):
        dtype = {"dtype": kwargs["dtype"]} if "dtype" in kwargs else {}
        pairs = kind == "scan_indices" and kwargs.get("return_indices", True)
        return lambda key, leaf, second: (
            tuple(fn(leaf, 0)) if pairs else _values(fn(leaf, 0, **dtype))
        )
    if kind == "batch_reduction":
        return lambda key, leaf, second: fn(leaf, (0,), *args[1:], **kwargs)
    raise AssertionError(f"no reference for the kind {kind!r}: add one to {__name__}")


CASES = [
    pytest.param(name, args, kwargs, id=f"{name}-{i}")
    for name in ENTRIES
    for i, (args, kwargs) in enumerate(_calls(name))
    if TABLE[name].fn not in QUANTIZED  # a cast to a quantized dtype is refused (see below)
]


@pytest.mark.parametrize("name", ENTRIES)
def test_every_kind_is_covered(name: str) -> None:
    assert TABLE[name].kind.name in CALLS, f"add the calls of kind {TABLE[name].kind.name}"


@pytest.mark.parametrize(("name", "args", "kwargs"), CASES)
def test_entry_matches_torch_leaf_by_leaf(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    entry = TABLE[name]
    integers = _integers(name)
    td = _data(integers)
    second = _data(integers).apply(lambda t: t // 2 + 1 if integers else t * 0.5 + 0.25)
    before = td.clone()
    expected = _expected(entry, args, kwargs)
    call_args = tuple(second if isinstance(a, str) and a == OTHER else a for a in args)
    result = getattr(td, name)(*call_args, **kwargs)

    inplace = name.endswith("_")
    results = tuple(result) if isinstance(result, tuple) else (result,)  # values, indices
    assert all(type(part) is TensorDict for part in results)
    if inplace:
        assert result is td
    else:
        assert (td == before).all()  # the receiver is untouched
    for key in before.keys(include_nested=True, leaves_only=True):
        want = expected(key, before[key], second)
        wants = want if isinstance(want, tuple) else (want,)
        assert len(wants) == len(results), key
        for part, want in zip(results, wants):
            got = part[key]
            assert got.dtype == want.dtype, key
            torch.testing.assert_close(got, want, equal_nan=True, msg=f"{name} at {key}")
        if inplace:
            assert results[0][key].data_ptr() == td[key].data_ptr()


@pytest.mark.parametrize("name", ENTRIES)
def test_entry_is_a_plain_documented_function(name: str) -> None:
    entry = TABLE[name]
    method = LeafOps.__dict__[name]
    assert isinstance(method, types.FunctionType)  # no descriptor left on the class
    assert method.__name__ == name and method.__qualname__ == f"LeafOps.{name}"
    assert method.__code__.co_name == name
    assert method.__doc__ and method.__doc__.strip()
    # the builder's method takes exactly the parameters the kind's stub declares
    stub = inspect.signature(entry.kind.signature)
    assert inspect.signature(method).parameters.keys() == stub.parameters.keys()
    for got, want in zip(inspect.signature(method).parameters.values(), stub.parameters.values()):
        assert (got.kind, got.default, got.annotation) == (
            want.kind,
            want.default,
            want.annotation,
        ) or got.name == "self"


def test_entries_keep_the_receiver_class_and_batch_size() -> None:
    td = _data()
    assert td.exp().batch_size == td.batch_size
    assert td.sum(0).batch_size == torch.Size([])
    assert td.sum(0, keepdim=True).batch_size == torch.Size([1])
    assert td.float()["c"].dtype == torch.float32
    assert td.prod(0)["nested", "b"].shape == (2, 5)


def test_unary_inplace_writes_every_leaf_or_none() -> None:
    td = TensorDict({"a": torch.ones(3), "b": torch.arange(3)}, [3])
    a = td["a"].clone()
    with pytest.raises(OperandError, match=r"in-place exp_: key 'b' \(a torch.int64 tensor"):
        td.exp_()
    assert torch.equal(td["a"], a)  # "a" comes first and was not written


def test_unary_inplace_refuses_a_leaf_requiring_grad() -> None:
    td = TensorDict({"a": torch.ones(3), "w": torch.ones(3, requires_grad=True)}, [3])
    with pytest.raises(OperandError, match="key 'w'.*requires grad"):
        td.exp_()
    assert torch.equal(td["a"], torch.ones(3))
    with torch.no_grad():
        td.exp_()
    assert torch.allclose(td["w"], torch.full((3,), torch.e))


def test_unary_inplace_reaches_the_members_of_a_lazy_stack() -> None:
    members = [TensorDict({"a": torch.zeros(2)}, [2]) for _ in range(2)]
    stack = lazy_stack(members)
    assert stack.exp_() is stack
    assert all(torch.equal(m["a"], torch.ones(2)) for m in members)
    same = lazy_stack([members[0], members[0]])
    same.neg_()  # a member listed twice is written once
    assert torch.equal(members[0]["a"], -torch.ones(2))


def test_unary_inplace_under_vmap() -> None:
    td = TensorDict({"a": torch.zeros(3, 2)}, [3])
    out = torch.vmap(lambda t: t.exp_())(td)
    assert torch.equal(out["a"], torch.ones(3, 2))


@pytest.mark.parametrize("name", [name for name in ENTRIES if TABLE[name].fn in QUANTIZED])
def test_a_cast_to_a_quantized_dtype_names_the_key(name: str) -> None:
    td = _data()
    with pytest.raises(OperandError, match=rf"cannot cast key 'a' .* to torch\.{name}"):
        getattr(td, name)()
    # a filter that picks no leaf casts nothing
    assert (getattr(td, name)(cast_filter=lambda key, leaf: False) == td).all()
