"""apply, clone, to, detach, grads, arithmetic, comparisons and reductions."""

import copy

import numpy as np
import pytest
import torch

from tensorclass import OperandError, StructureMismatchError, TensorClass, TensorDict


def make() -> TensorDict:
    return TensorDict(
        {"a": torch.arange(6.0).reshape(3, 2), "n": {"b": torch.ones(3)}, "s": "text"}, [3]
    )


class Point(TensorClass):
    xy: torch.Tensor
    weight: torch.Tensor
    tag: str = "p"


def test_apply_with_several_instances_and_none_drops() -> None:
    a, b = make(), make() * 2
    total = a.apply(lambda x, y: x + y, b)
    assert torch.equal(total["a"], a["a"] * 3) and torch.equal(
        total["n", "b"], torch.full((3,), 3.0)
    )
    assert total["s"] == "text"
    floats = TensorDict({"f": torch.ones(2), "i": torch.ones(2, dtype=torch.long)}, [2])
    assert list(floats.apply(lambda x: x if x.is_floating_point() else None).keys()) == ["f"]
    with pytest.raises(StructureMismatchError, match="'a'"):
        a.apply(lambda x, y: x + y, TensorDict({"n": {"b": torch.ones(3)}}, [3]))
    filled = a.apply(lambda x, y: x + y, TensorDict({}, [3]), default=torch.tensor(1.0))
    assert torch.equal(filled["a"], a["a"] + 1)


def test_apply_changes_batch_size() -> None:
    td = make()
    summed = td.apply(lambda x: x.sum(0), batch_size=[])
    assert summed.batch_size == () and summed["n"].batch_size == ()
    assert torch.equal(summed["a"], td["a"].sum(0))


def test_apply_inplace_and_named_apply() -> None:
    td = make()
    original = td["a"]
    td.apply_(lambda x: x * 0)
    assert td["a"] is original and (original == 0).all()
    seen = []
    td.named_apply(lambda key, x: seen.append(key) or x)
    assert seen == ["a", "b"]
    seen.clear()
    td.named_apply(lambda key, x: seen.append(key) or x, nested_keys=True)
    assert seen == ["a", ("n", "b")]  # a top-level key as itself, as tensordict passes it


def test_clone_copies_and_shallow_clone_shares() -> None:
    td = make()
    deep = td.clone()
    assert deep["a"] is not td["a"] and torch.equal(deep["a"], td["a"])
    shallow = td.clone(recurse=False)
    assert shallow["a"] is td["a"]
    shallow["new"] = torch.zeros(3)
    assert "new" not in td
    assert copy.deepcopy(td)["a"] is not td["a"]
    assert copy.copy(td)["a"] is td["a"]


def test_to_dtype_device_and_other() -> None:
    td = make()
    double = td.to(torch.float64)
    assert double["a"].dtype == torch.float64 and double["n", "b"].dtype == torch.float64
    assert td.to("cpu").device == torch.device("cpu")
    on_cpu = td.to("cpu")
    assert on_cpu.to("cpu") is on_cpu
    assert td.to(torch.zeros((), dtype=torch.float16))["a"].dtype == torch.float16
    assert td.double()["a"].dtype == torch.float64 and td.half()["a"].dtype == torch.float16
    assert td.cpu().device == torch.device("cpu")
    meta = td.to("meta")
    assert meta["a"].device.type == "meta" and meta["n"].device == torch.device("meta")


def test_grad_helpers() -> None:
    td = TensorDict({"a": torch.randn(3, 2), "n": {"b": torch.ones(3)}}, [3]).requires_grad_()
    assert td.requires_grad and td["a"].requires_grad
    loss = (td["a"] ** 2).sum()
    loss.backward()
    assert td["a"].grad is not None
    detached = td.detach()
    assert not detached.requires_grad
    assert detached["a"].data_ptr() == td["a"].data_ptr()
    td.detach_()
    assert not td.requires_grad


def test_contiguous_zero_fill() -> None:
    td = make().expand(2, 3)
    assert not td.is_contiguous()
    dense = td.contiguous()
    assert dense.is_contiguous() and torch.equal(dense["a"], td["a"])
    dense.zero_()
    assert (dense["a"] == 0).all() and (dense["n", "b"] == 0).all()
    dense.fill_("a", 2.0)
    assert (dense["a"] == 2).all()
    dense.fill_("n", 3.0)
    assert (dense["n", "b"] == 3).all()


@pytest.mark.parametrize(
    "op",
    [
        lambda x, y: x + y,
        lambda x, y: x - y,
        lambda x, y: x * y,
        lambda x, y: x / y,
        lambda x, y: x**y,
        lambda x, y: x // y,
        lambda x, y: x % y,
    ],
)
def test_binary_operators(op) -> None:  # type: ignore[no-untyped-def]
    td = make() + 1
    other = make() * 2 + 3
    for right in (2, 2.5, torch.tensor(3.0)):
        assert torch.allclose(op(td, right)["a"], op(td["a"], right))
        assert torch.allclose(op(right, td)["n", "b"], op(right, td["n", "b"]))
    result = op(td, other)
    assert torch.allclose(result["a"], op(td["a"], other["a"]))
    assert result["s"] == "text"


def test_inplace_operators_keep_storage() -> None:
    td = make()
    a = td["a"]
    td += 1
    td *= 2
    td -= make()
    td /= 2
    assert td["a"] is a
    assert torch.allclose(
        a, (torch.arange(6.0).reshape(3, 2) + 1) * 2 / 2 - torch.arange(6.0).reshape(3, 2) / 2
    )
    td.mul_(0).add_(make(), alpha=2)
    assert torch.equal(td["a"], make()["a"] * 2)
    td.lerp_(make(), 1.0)
    assert torch.equal(td["a"], make()["a"])


def test_comparisons_and_equality() -> None:
    td = make()
    assert (td == td.clone()).all()
    other = td.clone()
    other["a"][0, 0] = -1
    eq = td == other
    assert not eq.all() and eq.any()
    assert eq["a"].dtype == torch.bool and not eq["a"][0, 0]
    assert ((td > 0) | (td <= 0)).all()
    assert (~(td != td)).all()
    changed = td.clone()
    changed["s"] = "other"
    assert not (td == changed).all()  # non-tensor values take part in ==
    assert (td == 1.0)["n", "b"].all()


def test_reductions() -> None:
    td = make()
    total = td.sum()
    assert total.batch_size == () and total["a"] == 15 and total["n", "b"] == 3
    assert total["s"] == "text"
    per_batch = td.mean(dim=0)
    assert torch.equal(per_batch["a"], td["a"].mean(0))
    kept = td.sum(dim=0, keepdim=True)
    assert kept.batch_size == (1,) and kept["a"].shape == (1, 2)
    assert td.std(0)["n", "b"].item() == 0
    assert td.amax()["a"] == 5 and td.amin()["a"] == 0
    assert torch.sum(td)["a"] == 15
    assert td.prod(0)["a"].tolist() == [0.0, 15.0]
    assert (td > -1).all(0)["a"].all()
    assert isinstance(td.all(), bool) and isinstance(td.any(), bool)


def test_unary_and_misc() -> None:
    td = make() - 2
    assert torch.equal(abs(td)["a"], td["a"].abs()) and torch.equal((-td)["a"], -td["a"])
    assert torch.equal(td.clamp(0, 1)["a"], td["a"].clamp(0, 1))
    assert torch.allclose(td.exp().log()["a"], td["a"], atol=1e-5)
    assert torch.allclose(torch.sigmoid(td)["a"], td["a"].sigmoid())
    assert torch.allclose(td, td.clone())


def test_typed_class_arithmetic_keeps_class_and_non_tensors() -> None:
    p = Point(torch.ones(4, 2), torch.ones(4), batch_size=[4])
    q = p * 3 + p
    assert isinstance(q, Point) and torch.equal(q.xy, torch.full((4, 2), 4.0))
    assert q.tag == "p"
    assert isinstance(p == q, Point)


def test_bool_is_ambiguous_and_iteration() -> None:
    td = make()
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(td)
    rows = list(td)
    assert len(rows) == 3 and torch.equal(rows[1]["a"], td["a"][1])
    with pytest.raises(TypeError):
        iter(td[0])


def test_inplace_operators_pair_leaves_by_key_not_position() -> None:
    a = TensorDict(
        {"x": torch.zeros(2), "n": {"p": torch.ones(2), "q": torch.full((2,), 5.0)}}, [2]
    )
    b = TensorDict(
        {"n": {"q": torch.full((2,), 5.0), "p": torch.ones(2)}, "x": torch.zeros(2)}, [2]
    )
    c = a.clone()
    c += b
    assert torch.equal(c["x"], torch.zeros(2))
    assert torch.equal(c["n", "p"], torch.full((2,), 2.0))
    assert torch.equal(c["n", "q"], torch.full((2,), 10.0))
    c.lerp_(b, 1.0)
    assert torch.equal(c["n", "q"], b["n", "q"]) and torch.equal(c["x"], b["x"])
    assert torch.allclose(a, b)  # same keys, listed in another order
    assert not torch.allclose(a, TensorDict({"x": torch.zeros(2), "n": {"p": torch.ones(2)}}, [2]))


def test_inplace_operators_with_different_keys_raise_and_change_nothing() -> None:
    a = TensorDict({"x": torch.zeros(2), "y": torch.ones(2)}, [2])
    before = a.clone()
    with pytest.raises(StructureMismatchError, match=r"different keys.*\['x', 'y'\].*\['x', 'z'\]"):
        a += TensorDict({"x": torch.ones(2), "z": torch.ones(2)}, [2])
    with pytest.raises(StructureMismatchError, match="key 'y' holds a tensor"):
        a *= TensorDict({"x": torch.ones(2), "y": {"z": torch.ones(2)}}, [2])
    with pytest.raises(StructureMismatchError, match="different keys"):
        a.lerp_(TensorDict({"x": torch.ones(2)}, [2]), 0.5)
    assert (a == before).all()
    p = Point(torch.ones(2, 2), torch.ones(2), batch_size=[2])
    p += Point(torch.ones(2, 2), torch.full((2,), 3.0), batch_size=[2])
    assert torch.equal(p.weight, torch.full((2,), 4.0)) and torch.equal(
        p.xy, torch.full((2, 2), 2.0)
    )


def mixed() -> TensorDict:
    # a float leaf first, so a refusal of the int leaf comes after a leaf that could be written
    return TensorDict(
        {"f": torch.ones(3, 2), "i": torch.ones(3, dtype=torch.long), "n": {"g": torch.ones(3)}},
        [3],
    )


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (
            lambda td: td.__imul__(0.5),
            r"key 'i' .*int64.* cannot take 0\.5: the result, torch\.float32",
        ),
        (lambda td: td.__itruediv__(2), r"key 'i' .* cannot take 2: the result, torch\.float32"),
        (
            lambda td: td.__iadd__(torch.ones(3, 2) / 2),
            r"key 'i' .* shape \(3, 2\) does not broadcast to \(3,\)",
        ),
        (
            # (a tensor of the batch shape lines up with the batch dims: see elementwise.py)
            lambda td: td.__iadd__(torch.full((2, 3), 0.5)),
            r"key 'f' .* shape \(2, 3\) does not broadcast to \(3, 2\)",
        ),
        (lambda td: td.__iadd__(td.float() / 2), r"key 'i' .* the result, torch\.float32"),
        (lambda td: td.__iand__(1), r"key 'f' .* & needs integer or bool tensors"),
    ],
)
def test_a_refused_inplace_operator_writes_no_leaf(write, message) -> None:  # type: ignore[no-untyped-def]
    td = mixed()
    before = td.clone()
    with pytest.raises(OperandError, match=message) as caught:
        write(td)
    assert isinstance(caught.value, RuntimeError)  # what torch raises for these
    assert "no leaf was changed" in str(caught.value)
    assert (td == before).all()


def test_inplace_operators_refuse_leaves_that_require_grad_unless_grad_is_off() -> None:
    td = TensorDict({"x": torch.zeros(2), "w": torch.nn.Parameter(torch.ones(2))}, [2])
    with pytest.raises(OperandError, match="key 'w' .* requires grad"):
        td += 1
    assert torch.equal(td["x"], torch.zeros(2))
    with torch.no_grad():
        td += 1
    assert torch.equal(td["x"], torch.ones(2)) and torch.equal(td["w"].data, torch.full((2,), 2.0))


def test_inplace_operators_that_fit_still_run() -> None:
    td = mixed()
    td += 1  # an int fits every leaf
    td *= torch.tensor(2)  # a zero-dim integer tensor fits every leaf
    td //= 2
    assert td["i"].tolist() == [2, 2, 2] and td["f"].tolist() == [[2.0, 2.0]] * 3


def test_numpy_scalars_and_arrays_are_operands_on_either_side() -> None:
    td = TensorDict({"a": torch.ones(3), "n": {"b": torch.ones(3)}}, [3])
    for scalar in (np.float32(2), np.float64(2), np.int64(2)):
        assert torch.equal((td * scalar)["a"], torch.full((3,), 2.0))
        assert torch.equal((scalar * td)["n", "b"], torch.full((3,), 2.0))
        assert torch.equal((scalar - td)["a"], torch.ones(3))
        assert (td < scalar).all()
        assert (td * scalar)["a"].dtype == torch.float32  # a scalar keeps the leaf's dtype
    td *= np.float32(3)
    assert torch.equal(td["a"], torch.full((3,), 3.0))
    assert torch.equal((td + np.arange(3))["a"], torch.tensor([3.0, 4.0, 5.0], dtype=torch.float64))
    assert torch.equal((np.arange(3) + td)["a"], torch.tensor([3.0, 4.0, 5.0], dtype=torch.float64))
