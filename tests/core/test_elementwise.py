"""Element-wise maths, casts and element-wise torch functions, on every kind of instance.

Each result is checked leaf by leaf against the torch function applied to that leaf, on a
TensorDict, a typed class with a nested field and a lazy stack.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from tensorclass import (
    OperandError,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)

pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")


class Inner(TensorClass):
    w: Tensor


class Sample(TensorClass):
    x: Tensor
    inner: Inner
    label: str = "s"


def _values(shape: tuple[int, ...], seed: int) -> Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=gen) * 1.6 - 0.8  # in (-0.8, 0.8): asin, acos, log1p


def tensordict(seed: int = 0) -> TensorDict:
    return TensorDict(
        {"x": _values((4, 3), seed), "inner": {"w": _values((4, 2, 2), seed + 1)}}, [4]
    )


def sample(seed: int = 0) -> Sample:
    return Sample(
        _values((4, 3), seed), Inner(_values((4, 2, 2), seed + 1), batch_size=[4]), batch_size=[4]
    )


def stack(seed: int = 0) -> Any:
    td = tensordict(seed)
    return lazy_stack([td[i] for i in range(4)])


MAKERS = {"tensordict": tensordict, "typed": sample, "lazy": stack}
KEYS = [("x",), ("inner", "w")]


@pytest.fixture(params=sorted(MAKERS))
def make(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return MAKERS[request.param]


def leaves(obj: Any) -> list[Tensor]:
    return [obj[key] for key in KEYS]


def check(result: Any, expected: list[Tensor]) -> None:
    for key, want in zip(KEYS, expected):
        got = result[key]
        assert got.dtype == want.dtype, key
        torch.testing.assert_close(got, want, equal_nan=True, msg=f"at {key}")


UNARY = (
    "abs neg exp expm1 log log1p log2 log10 sqrt rsqrt sin cos tan sinh cosh tanh asin acos "
    "atan sigmoid erf erfc lgamma floor ceil round trunc frac sign reciprocal logical_not "
    "isnan isfinite isposinf isneginf isreal nan_to_num"
).split()


@pytest.mark.parametrize("name", UNARY)
def test_unary_methods_match_torch(make: Callable[..., Any], name: str) -> None:
    obj = make()
    before = [leaf.clone() for leaf in leaves(obj)]
    result = getattr(obj, name)()
    # the receiver's class (a lazy stack's result is a lazy stack of the members' results)
    assert type(result) is type(obj)
    check(result, [getattr(torch, name)(leaf) for leaf in before])
    check(getattr(torch, name)(obj), [getattr(torch, name)(leaf) for leaf in before])
    check(obj, before)  # untouched


@pytest.mark.parametrize("name", [n for n in UNARY if not n.startswith("is")])
def test_unary_inplace_methods_write_every_leaf(make: Callable[..., Any], name: str) -> None:
    obj = make()
    before = [leaf.clone() for leaf in leaves(obj)]
    assert getattr(obj, f"{name}_")() is obj
    expected = [getattr(torch, name)(leaf).to(leaf.dtype) for leaf in before]
    check(obj, expected)
    if hasattr(obj, "members"):  # a lazy stack writes its members
        check(torch.stack(list(obj.members)), expected)


def test_bitwise_not_and_invert_on_integer_and_bool_leaves(make: Callable[..., Any]) -> None:
    obj = make().apply(lambda t: (t * 10).to(torch.int64))
    check(obj.bitwise_not(), [torch.bitwise_not(leaf) for leaf in leaves(obj)])
    check(~obj, [~leaf for leaf in leaves(obj)])
    flags = obj > 0
    check(~flags, [leaf <= 0 for leaf in leaves(obj)])
    with pytest.raises(OperandError, match=r"in-place bitwise_not_: key .*float"):
        make().bitwise_not_()


BINARY: dict[str, Callable[[Tensor, Any], Tensor]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "mod": torch.remainder,
    "rsub": torch.rsub,
    "maximum": lambda t, o: torch.maximum(t, torch.as_tensor(o)),
    "minimum": lambda t, o: torch.minimum(t, torch.as_tensor(o)),
    "clamp_min": torch.clamp_min,
    "clamp_max": torch.clamp_max,
    "logical_and": lambda t, o: torch.logical_and(t, torch.as_tensor(o)),
    "logical_or": lambda t, o: torch.logical_or(t, torch.as_tensor(o)),
    "logical_xor": lambda t, o: torch.logical_xor(t, torch.as_tensor(o)),
}


def operands(obj: Any) -> list[Any]:
    """A number, a zero-dim tensor, a tensor of the batch shape and an instance."""
    return [0.25, torch.tensor(-0.5), torch.linspace(-1, 1, 4), obj.apply(lambda t: t.flip(-1))]


def per_leaf(obj: Any, other: Any) -> list[Any]:
    """What each leaf of ``obj`` meets: the instance's leaf, or the batch tensor with
    trailing singleton dims, or the operand itself."""
    if hasattr(other, "batch_size"):
        return leaves(other)
    if isinstance(other, Tensor) and other.ndim:
        return [other.reshape(other.shape + (1,) * (leaf.ndim - 1)) for leaf in leaves(obj)]
    return [other] * len(KEYS)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_methods_match_torch(make: Callable[..., Any], name: str) -> None:
    obj = make()
    for other in operands(obj):
        expected = [BINARY[name](a, b) for a, b in zip(leaves(obj), per_leaf(obj, other))]
        check(getattr(obj, name)(other), expected)
        if hasattr(torch, name) and not isinstance(other, float):
            check(getattr(torch, name)(obj, other), expected)


@pytest.mark.parametrize(
    "name",
    [n for n in sorted(BINARY) if n not in ("add", "sub", "mul", "div", "mod", "rsub")],
)
def test_binary_inplace_methods_write_every_leaf(make: Callable[..., Any], name: str) -> None:
    obj = make()
    for other in operands(obj)[:3]:
        before = [leaf.clone() for leaf in leaves(obj)]
        expected = [BINARY[name](a, b).to(a.dtype) for a, b in zip(before, per_leaf(obj, other))]
        assert getattr(obj, f"{name}_")(other) is obj
        check(obj, expected)


def test_bitwise_binary_methods_and_operators() -> None:
    td = TensorDict({"a": torch.arange(6).reshape(3, 2), "b": torch.tensor([1, 2, 3])}, [3])
    mask = TensorDict(
        {"a": torch.ones(3, 2, dtype=torch.long) * 5, "b": torch.tensor([6, 6, 6])}, [3]
    )
    for name, op in (
        ("bitwise_and", operator.and_),
        ("bitwise_or", operator.or_),
        ("bitwise_xor", operator.xor),
    ):
        for other in (3, mask):
            expected = [
                getattr(torch, name)(td[k], other[k] if hasattr(other, "keys") else other)
                for k in ("a", "b")
            ]
            for result in (
                getattr(td, name)(other),
                op(td, other),
                getattr(torch, name)(td, other),
            ):
                assert all(torch.equal(result[k], e) for k, e in zip(("a", "b"), expected))
        copy = td.clone()
        assert getattr(copy, f"{name}_")(3) is copy
        assert torch.equal(copy["a"], getattr(torch, name)(td["a"], 3))
    with pytest.raises(OperandError, match="key 'f'.*bitwise_and needs integer or bool"):
        TensorDict({"i": torch.ones(2, dtype=torch.long), "f": torch.ones(2)}, [2]).bitwise_and_(1)


def test_python_operators_match_torch() -> None:
    td = TensorDict({"a": torch.arange(-3.0, 3.0).reshape(3, 2)}, [3])
    a = td["a"]
    assert torch.equal((td % 2)["a"], a % 2)
    assert torch.equal((7 % td.clamp_min(1))["a"], 7 % a.clamp_min(1))
    for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        assert torch.equal(op(td, 0.0)["a"], op(a, 0.0))
    flags = td > 0
    assert torch.equal((flags & (td < 2))["a"], (a > 0) & (a < 2))
    assert torch.equal((flags | (td < -2))["a"], (a > 0) | (a < -2))
    assert torch.equal((flags ^ (td < 2))["a"], (a > 0) ^ (a < 2))
    assert torch.equal((~flags)["a"], ~(a > 0))


# -- batch-aligned tensors ---------------------------------------------------------------------


def test_a_tensor_of_the_batch_shape_lines_up_with_the_batch_dims(make: Callable[..., Any]) -> None:
    obj = make()
    scale = torch.arange(4.0)
    expected = [leaf * scale.reshape(4, *(1,) * (leaf.ndim - 1)) for leaf in leaves(obj)]
    check(obj * scale, expected)
    check(scale * obj, expected)
    check(obj.mul(scale), expected)
    check(obj * torch.ones(obj.batch_size) * scale, expected)
    copy = obj.clone()
    copy *= scale
    check(copy, expected)
    check(obj == scale, [leaf == s for leaf, s in zip(leaves(obj), per_leaf(obj, scale))])


def test_batch_alignment_follows_torch_broadcasting_of_the_batch_shape() -> None:
    td = TensorDict({"a": torch.ones(2, 4, 3)}, [2, 4])
    col = torch.arange(4.0)  # the trailing batch dim (aligned right, as torch aligns)
    assert torch.equal((td * col)["a"], torch.ones(2, 4, 3) * col.reshape(4, 1))
    row = torch.tensor([[1.0], [2.0]])  # a batch prefix needs its singleton dim, as in torch
    assert torch.equal((td * row)["a"], torch.ones(2, 4, 3) * row.reshape(2, 1, 1))
    # a tensor that does not broadcast to the batch shape broadcasts with each leaf
    last = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal((td * last)["a"], torch.ones(2, 4, 3) * last)
    with pytest.raises(RuntimeError):
        td * torch.ones(2)  # neither a batch shape (aligned right) nor a leaf's trailing dims


def test_a_tensor_matching_trailing_leaf_dims_still_broadcasts() -> None:
    td = TensorDict({"a": torch.ones(4, 3), "n": {"b": torch.ones(4, 2, 3)}}, [4])
    last = torch.tensor([1.0, 2.0, 3.0])
    result = td + last
    assert torch.equal(result["a"], torch.ones(4, 3) + last)
    assert torch.equal(result["n", "b"], torch.ones(4, 2, 3) + last)
    td.mul_(last)
    assert torch.equal(td["n", "b"], torch.ones(4, 2, 3) * last)


def test_a_refused_aligned_inplace_write_changes_no_leaf() -> None:
    td = TensorDict({"f": torch.ones(3, 2), "i": torch.ones(3, dtype=torch.long)}, [3])
    before = td.clone()
    with pytest.raises(
        OperandError, match=r"key 'i'.*cannot take a torch.float32 tensor of shape \(3,\)"
    ):
        td += torch.full((3,), 0.5)
    assert (td == before).all()


# -- default= ----------------------------------------------------------------------------------


def _pair() -> tuple[TensorDict, TensorDict]:
    left = TensorDict({"a": torch.ones(2), "n": {"b": torch.full((2,), 2.0)}}, [2])
    right = TensorDict(
        {"a": torch.full((2,), 3.0), "n": {"c": torch.full((2,), 5.0)}, "x": torch.ones(2, 3)},
        [2],
    )
    return left, right


def test_default_none_needs_the_same_keys() -> None:
    left, right = _pair()
    with pytest.raises(StructureMismatchError, match="different keys"):
        left.add(right)


def test_default_intersection_keeps_the_shared_keys() -> None:
    left, right = _pair()
    result = left.mul(right, default="intersection")
    assert set(result.keys(include_nested=True, leaves_only=True)) == {"a"}
    assert torch.equal(result["a"], torch.full((2,), 3.0))


def test_default_value_stands_in_for_a_missing_leaf() -> None:
    left, right = _pair()
    for default in (10, torch.tensor(10.0), torch.full((2,), 10.0)):
        result = left.sub(right, default=default)
        assert set(result.keys(include_nested=True, leaves_only=True)) == {
            "a",
            ("n", "b"),
            ("n", "c"),
            "x",
        }
        assert torch.equal(result["a"], torch.full((2,), -2.0))
        assert torch.equal(result["n", "b"], torch.full((2,), 2.0 - 10))  # self - default
        assert torch.equal(result["n", "c"], torch.full((2,), 10 - 5.0))  # default - other
        assert torch.equal(result["x"], torch.full((2, 3), 9.0))
    scaled = left.add(right, alpha=2, default=0)
    assert torch.equal(scaled["n", "c"], torch.full((2,), 10.0))  # 0 + 2 * 5
    assert torch.equal(scaled["n", "b"], torch.full((2,), 2.0))  # 2 + 2 * 0
    reversed_ = left.rsub(right, default=0)  # other - self
    assert torch.equal(reversed_["n", "b"], torch.full((2,), -2.0))
    assert torch.equal(left.maximum(right, default=4.0)["n", "b"], torch.full((2,), 4.0))
    for name in ("mul", "div", "pow", "minimum", "clamp_min", "clamp_max", "logical_and", "mod"):
        assert getattr(left, name)(right, default=1).keys() == result.keys()


def test_default_refuses_keys_a_typed_class_does_not_declare() -> None:
    s = sample()
    other = TensorDict({"x": torch.ones(4, 3), "y": torch.ones(4)}, [4])
    with pytest.raises(StructureMismatchError, match=r"\['y'\].*Sample does not declare"):
        s.add(other, default=0)
    with pytest.raises(ValueError, match="default="):
        s.add(other, default="union")  # type: ignore[arg-type]
    with pytest.raises(StructureMismatchError, match=r"drop \['inner'\].*Sample declares"):
        s.add(other, default="intersection")
    both = TensorDict({"x": torch.ones(4, 3), "s": "text", "y": torch.ones(4)}, [4])
    kept = both.add(TensorDict({"x": torch.ones(4, 3)}, [4]), default="intersection")
    assert set(kept.keys()) == {"x", "s"}  # non-tensor leaves are kept, as by every operator


# -- clamp, addcmul, addcdiv, lerp, nan_to_num ---------------------------------------------------


def test_clamp_takes_numbers_tensors_and_instances(make: Callable[..., Any]) -> None:
    obj = make()
    low = obj.apply(lambda t: torch.full_like(t, -0.2))
    check(obj.clamp(-0.1, 0.3), [leaf.clamp(-0.1, 0.3) for leaf in leaves(obj)])
    check(obj.clamp(max=0.0), [leaf.clamp(max=0.0) for leaf in leaves(obj)])
    check(obj.clamp(low), [leaf.clamp(min=-0.2) for leaf in leaves(obj)])
    check(torch.clamp(obj, low, 0.5), [leaf.clamp(-0.2, 0.5) for leaf in leaves(obj)])
    bound = torch.linspace(0.0, 0.3, 4)
    check(
        obj.clamp(min=bound),
        [leaf.clamp(min=b) for leaf, b in zip(leaves(obj), per_leaf(obj, bound))],
    )
    with pytest.raises(ValueError, match="min=, max="):
        obj.clamp()
    before = [leaf.clone() for leaf in leaves(obj)]
    assert obj.clamp_(-0.1, 0.1) is obj
    check(obj, [leaf.clamp(-0.1, 0.1) for leaf in before])


def test_clamp_out_receives_the_result() -> None:
    td = tensordict()
    out = td.clone().zero_()
    assert td.clamp(0.0, 0.5, out=out) is out
    assert torch.equal(out["x"], td["x"].clamp(0.0, 0.5))


def test_addcmul_and_addcdiv_with_value(make: Callable[..., Any]) -> None:
    obj = make()
    other = obj.apply(lambda t: t + 2.0)
    for name in ("addcmul", "addcdiv"):
        fn = getattr(torch, name)
        expected = [fn(a, b, b, value=0.5) for a, b in zip(leaves(obj), leaves(other))]
        check(getattr(obj, name)(other, other, value=0.5), expected)
        check(fn(obj, other, other, value=0.5), expected)
        copy = obj.clone()
        assert getattr(copy, f"{name}_")(other, other, value=0.5) is copy
        check(copy, expected)


def test_an_inplace_ternary_refusal_names_the_key_and_writes_nothing() -> None:
    td = TensorDict({"f": torch.ones(2), "i": torch.ones(2, dtype=torch.long)}, [2])
    before = td.clone()
    with pytest.raises(OperandError, match=r"in-place addcmul_: key 'i'.*torch.float32"):
        td.addcmul_(torch.full((2,), 0.5), 2.0)
    assert (td == before).all()


def test_lerp_with_number_tensor_and_instance_weights(make: Callable[..., Any]) -> None:
    obj = make()
    end = obj.apply(lambda t: t + 1.0)
    weight = obj.apply(lambda t: torch.full_like(t, 0.25))
    for w, per in ((0.5, [0.5, 0.5]), (weight, leaves(weight))):
        expected = [torch.lerp(a, b, c) for a, b, c in zip(leaves(obj), leaves(end), per)]
        check(obj.lerp(end, w), expected)
        check(torch.lerp(obj, end, w), expected)
        copy = obj.clone()
        assert copy.lerp_(end, w) is copy
        check(copy, expected)
    check(obj.lerp(1.0, 0.5), [torch.lerp(a, torch.ones_like(a), 0.5) for a in leaves(obj)])


def test_nan_to_num_with_its_keywords(make: Callable[..., Any]) -> None:
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.5])
    obj = make() * 0 + special  # special lines up with the batch dim
    for kwargs in ({}, {"nan": 1.0, "posinf": 2.0, "neginf": -2.0}):
        expected = [torch.nan_to_num(leaf, **kwargs) for leaf in leaves(obj)]
        check(obj.nan_to_num(**kwargs), expected)
        check(torch.nan_to_num(obj, **kwargs), expected)
    assert obj.nan_to_num_(7.0) is obj
    assert (obj["x"][0] == 7.0).all()


# -- casts, dtype, bytes -----------------------------------------------------------------------

CASTS = {
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "complex32": torch.complex32,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
    "bfloat16": torch.bfloat16,
    "half": torch.float16,
    "float": torch.float32,
    "double": torch.float64,
    "int": torch.int32,
    "long": torch.int64,
    "bool": torch.bool,
}


@pytest.mark.parametrize("name", sorted(CASTS))
def test_casts(make: Callable[..., Any], name: str) -> None:
    obj = make().abs()
    result = getattr(obj, name)()
    check(result, [leaf.to(CASTS[name]) for leaf in leaves(obj)])
    assert result.dtype == CASTS[name]
    check(obj.type(CASTS[name]), [leaf.to(CASTS[name]) for leaf in leaves(obj)])


def test_cast_filter_picks_the_leaves_to_cast(make: Callable[..., Any]) -> None:
    obj = make()
    seen: list[tuple[str, ...]] = []

    def only_x(key: tuple[str, ...], leaf: Tensor) -> bool:
        seen.append(key)
        return key == ("x",)

    result = obj.double(cast_filter=only_x)
    assert sorted(seen) == sorted(KEYS)
    assert result["x"].dtype == torch.float64 and result["inner", "w"].dtype == torch.float32
    assert result.dtype is None
    assert obj.type("torch.IntTensor", cast_filter=only_x)["x"].dtype == torch.int32


@pytest.mark.parametrize("name", ["qint8", "qint32", "quint8", "quint4x2"])
def test_quantized_casts_name_the_key(make: Callable[..., Any], name: str) -> None:
    with pytest.raises(
        OperandError, match=rf"cannot cast key 'x' \(a torch.float32 tensor\) to torch.{name}"
    ):
        getattr(make(), name)()
    with pytest.raises(OperandError, match="quantize_per_tensor"):
        make().type(getattr(torch, name))


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_a_quantized_leaf_is_kept_by_its_own_cast() -> None:
    q = torch.quantize_per_tensor(torch.rand(2), 0.1, 0, torch.qint8)
    td = TensorDict({"q": q, "f": torch.ones(2)}, [2])
    kept = td.qint8(cast_filter=lambda key, leaf: leaf.is_quantized)
    assert kept["q"] is q and kept["f"] is td["f"]


def test_dtype_is_the_common_dtype_or_none(make: Callable[..., Any]) -> None:
    obj = make()
    assert obj.dtype == torch.float32
    assert obj.double().dtype == torch.float64
    assert obj.float(cast_filter=lambda key, leaf: False).dtype == torch.float32
    assert obj.int(cast_filter=lambda key, leaf: key == ("x",)).dtype is None
    assert TensorDict({}, [3]).dtype is None


def test_bytes_counts_the_tensor_leaves() -> None:
    x = torch.zeros(6)
    td = TensorDict({"a": x, "b": x, "c": torch.zeros(2, 3, dtype=torch.int16), "s": "text"}, [])
    assert td.bytes() == 24 + 24 + 12
    assert td.bytes(count_duplicates=False) == 24 + 12
    w = torch.ones(3, requires_grad=True)
    w.sum().backward()
    assert TensorDict({"w": w}, [3]).bytes() == 12 + 12  # its gradient counts too
    assert sample().bytes() == (12 + 16) * 4
    assert stack().bytes() == (12 + 16) * 4


# -- torch.nn.functional ------------------------------------------------------------------------

ACTIVATIONS: list[tuple[Callable[..., Tensor], tuple[Any, ...]]] = [
    (F.relu, ()),
    (F.relu6, ()),
    (F.elu, (0.5,)),
    (F.selu, ()),
    (F.celu, ()),
    (F.leaky_relu, (0.1,)),
    (F.gelu, ()),
    (F.silu, ()),
    (F.mish, ()),
    (F.softplus, ()),
    (F.softsign, ()),
    (F.hardtanh, (-0.5, 0.5)),
    (F.hardsigmoid, ()),
    (F.hardswish, ()),
    (F.logsigmoid, ()),
    (F.tanhshrink, ()),
    (F.softshrink, (0.2,)),
    (F.hardshrink, (0.2,)),
    (F.threshold, (0.1, -1.0)),
]


@pytest.mark.parametrize(("fn", "args"), ACTIVATIONS, ids=[f.__name__ for f, _ in ACTIVATIONS])
def test_activations_run_on_every_leaf(
    make: Callable[..., Any], fn: Callable[..., Tensor], args: tuple[Any, ...]
) -> None:
    obj = make()
    check(fn(obj, *args), [fn(leaf, *args) for leaf in leaves(obj)])


def test_an_inplace_activation_writes_the_leaves(make: Callable[..., Any]) -> None:
    obj = make()
    before = [leaf.clone() for leaf in leaves(obj)]
    assert F.relu(obj, inplace=True) is obj
    assert F.leaky_relu(obj, 0.1, True) is obj
    check(obj, [F.relu(leaf) for leaf in before])
    if hasattr(obj, "members"):
        check(torch.stack(list(obj.members)), [F.relu(leaf) for leaf in before])


def test_dropout_keeps_the_structure() -> None:
    td = tensordict()
    assert torch.equal(F.dropout(td, 0.5, training=False)["x"], td["x"])
    dropped = F.dropout(td, 1.0)
    assert (dropped["inner", "w"] == 0).all()


@pytest.mark.parametrize("loss", [F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_losses_pair_the_leaves(
    make: Callable[..., Any], loss: Callable[..., Tensor], reduction: str
) -> None:
    obj, target = make(0), make(5)
    result = loss(obj, target, reduction=reduction)
    check(result, [loss(a, b, reduction=reduction) for a, b in zip(leaves(obj), leaves(target))])
    assert result.batch_size == (obj.batch_size if reduction == "none" else torch.Size())
    zeros = torch.zeros(4)  # a tensor of the batch shape: aligned with the batch dims
    check(
        loss(obj, zeros, reduction=reduction),
        [loss(a, torch.zeros_like(a), reduction=reduction) for a in leaves(obj)],
    )
    check(
        loss(zeros, obj, reduction=reduction),
        [loss(torch.zeros_like(a), a, reduction=reduction) for a in leaves(obj)],
    )


def test_torch_functions_with_the_instance_second() -> None:
    td = tensordict()
    t = torch.tensor(0.1)
    assert torch.equal(torch.sub(t, td)["x"], t - td["x"])
    assert torch.equal(torch.maximum(t, td)["x"], torch.maximum(t, td["x"]))
    assert torch.equal(torch.div(t, td)["x"], t / td["x"])
    assert torch.equal(torch.clamp_min_(td.clone(), 0.0)["x"], td["x"].clamp_min(0.0))
    assert torch.equal(torch.exp_(td.clone())["x"], td["x"].exp())
