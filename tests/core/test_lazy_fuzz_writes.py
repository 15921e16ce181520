"""Differential fuzz of writes through lazy stacks: every write made through
``lazy_stack(members, dim)`` must leave ``torch.stack(members, dim)`` holding what the same
write gives on the dense stack of copies of the members (torch's semantics); a write the
dense stack refuses must be refused without changing any member."""

import random
from collections.abc import Callable
from typing import Any

import pytest
import torch

from tensorclass import BatchSizeError, OperandError, TensorClass, TensorDict, lazy_stack


class Inner(TensorClass):
    c: torch.Tensor


class Rec(TensorClass):
    a: torch.Tensor
    b: torch.Tensor
    i: torch.Tensor
    inner: Inner


def _rand(rng: random.Random, shape: list[int]) -> torch.Tensor:
    gen = torch.Generator().manual_seed(rng.randrange(10**6))
    return torch.randn(tuple(shape), generator=gen)


def make_members(
    rng: random.Random, typed: bool, nested_lazy: bool, n: int, bs: list[int]
) -> list[Any]:
    """``n`` distinct members: a float key, one with a feature dim, an integer key and a
    nested level (with ``nested_lazy``, a lazy stack in each member, or each member a lazy
    stack itself)."""
    out: list[Any] = []
    nested_first = rng.random() < 0.5
    for _ in range(n):
        a, b = _rand(rng, bs), _rand(rng, [*bs, 2])
        i = (_rand(rng, bs) * 10).long()
        c = _rand(rng, [*bs, 3])
        nested: Any = Inner(c=c, batch_size=bs) if typed else TensorDict({"c": c}, bs)
        if nested_lazy and bs and nested_first:
            nested = lazy_stack(list(nested.unbind(0)), 0)
        if typed:
            member: Any = Rec(a=a, b=b, i=i, inner=nested, batch_size=bs)
        else:
            member = TensorDict({"a": a, "b": b, "i": i, "n": nested}, bs)
        if nested_lazy and bs and not nested_first:
            member = lazy_stack(list(member.unbind(-1)), len(bs) - 1)
        out.append(member)
    return out


def leaves(node: Any) -> dict[Any, torch.Tensor]:
    return {k: v.clone() for k, v in node.items(include_nested=True, leaves_only=True)}


def difference(x: dict[Any, torch.Tensor], y: dict[Any, torch.Tensor]) -> str | None:
    if set(x) != set(y):
        return f"keys {sorted(map(str, x))} != {sorted(map(str, y))}"
    for key in x:
        if x[key].shape != y[key].shape or x[key].dtype != y[key].dtype:
            return f"{key}: {x[key].shape} {x[key].dtype} != {y[key].shape} {y[key].dtype}"
        if not torch.equal(x[key], y[key]):
            return f"{key}: values differ"
    return None


def rand_index(rng: random.Random, bs: list[int]) -> Any:
    """Ints, stepped slices, None, Ellipsis, boolean masks and long tensors, mixed."""
    parts: list[Any] = []
    for size in bs:
        r = rng.random()
        if r < 0.3 or not size:
            parts.append(slice(None))
        elif r < 0.45:
            parts.append(rng.randrange(-size, size))
        elif r < 0.6:
            parts.append(slice(rng.randrange(size), None, rng.choice([1, 2, 3])))
        elif r < 0.72:
            parts.append(torch.tensor([rng.randrange(size) for _ in range(rng.randint(1, 3))]))
        elif r < 0.82:
            parts.append(torch.tensor([rng.random() < 0.5 for _ in range(size)]))
        elif r < 0.9:
            parts.extend([None, slice(None)])
        else:
            parts.append(Ellipsis)
            break
    if rng.random() < 0.2:
        return parts[0] if parts else 0
    return tuple(parts)


def rand_value(rng: random.Random, selected: Any, new_keys: bool = True) -> Any:
    """A scalar, a tensor broadcastable to the selected batch shape (or not), an instance
    of it, or a dict."""
    shape = list(selected.batch_size)
    kind = rng.choice(["scalar", "tensor", "instance", "dict"])
    if kind == "scalar":
        return rng.choice([rng.random(), rng.randrange(5)])
    if kind == "tensor":
        keep = shape[len(shape) - rng.randint(0, len(shape)) :]
        return _rand(rng, [1 if rng.random() < 0.3 else s for s in keep])
    if kind == "instance":
        value = selected.apply(lambda t: torch.randn(t.shape).to(t.dtype))
        if rng.random() < 0.3 and value.batch_dims and len(value):  # a lazy stack value
            value = lazy_stack(list(value.unbind(0)), 0)
        elif rng.random() < 0.3 and value.batch_dims:  # a broadcastable batch size
            value = value[:1]
        return value
    nested = "inner" if isinstance(selected, Rec) else "n"
    return rng.choice(
        [
            {"a": _rand(rng, shape if rng.random() < 0.7 else shape[1:])},
            {nested: {"c": _rand(rng, [*shape, 3])}, "b": _rand(rng, [2])},
            {"a": 1.5, "i": torch.tensor(3)},
        ]
        + ([{"z": _rand(rng, shape), nested: {"d": _rand(rng, [*shape, 2])}}] if new_keys else [])
    )


# -- the writes: each takes (rng, dense stack) and returns the write to make on both -------


Write = Callable[[Any], Any]


def w_index(rng: random.Random, dense: Any, new_keys: bool = True) -> Write:
    index = rand_index(rng, list(dense.batch_size))
    try:
        value = rand_value(rng, dense[index], new_keys)
    except IndexError:
        value = 1.0

    def write(td: Any) -> None:
        td[index] = value

    return write


def w_key(rng: random.Random, dense: Any, inplace_only: bool = False) -> Write:
    bs = list(dense.batch_size)
    key = rng.choice(["a", "new", ("n", "c"), ("n", "new"), "b"])
    typed = isinstance(dense, Rec)
    if typed and key in (("n", "c"), ("n", "new")):
        key = ("inner", "c")
    feat = {"b": [2], ("n", "c"): [3], ("inner", "c"): [3]}.get(key, [])
    value = _rand(rng, bs + feat)
    if rng.random() < 0.15:  # a shape that does not fit: refused
        value = _rand(rng, [*bs, 5])
    hows = ["set_", "set_at_", "get_at"] + ([] if inplace_only else ["setitem", "set"])
    if typed and key == "a" and not inplace_only:
        hows.append("setattr")
    how = rng.choice(hows)
    index = rand_index(rng, bs)
    given = rng.random() < 0.5

    def write(td: Any) -> Any:
        if how == "setitem":
            td[key] = value
        elif how == "set":
            td.set(key, value)
        elif how == "setattr":
            td.a = value
        elif how == "set_":
            td.set_(key, value)
        elif how == "set_at_":
            td.set_at_(key, value[index] if given else 0.5, index)
        else:
            return td.get_at(key, index)
        return None

    return write


def w_update(rng: random.Random, dense: Any) -> Write:
    bs = list(dense.batch_size)
    other = dense.apply(lambda t: torch.randn(t.shape).to(t.dtype))
    index = rand_index(rng, bs)
    how = rng.choice(
        "update update_ update_at_ copy_ copy_at_ update_new update_lazy update_nested".split()
    )
    nested = "inner" if isinstance(dense, Rec) else "n"

    def write(td: Any) -> None:
        if how == "update":
            td.update({"a": other["a"]})
        elif how == "update_":
            td.update_(other)
        elif how == "update_at_":
            td.update_at_(other[index], index)
        elif how == "copy_":
            td.copy_(other)
        elif how == "copy_at_":
            td.copy_at_(other[index], index)
        elif how == "update_new":
            td.update({"z": torch.zeros(*bs, 4)})
        elif how == "update_lazy":
            td.update_(lazy_stack(list(other.unbind(0)), 0))
        else:
            td.update({nested: {"d": torch.ones(*bs, 2)}, "a": 2.0})

    return write


def w_maths(rng: random.Random, dense: Any) -> Write:
    bs = list(dense.batch_size)
    operand = rng.choice(
        [
            2.5,
            3,
            _rand(rng, bs[len(bs) - rng.randint(0, len(bs)) :]),
            dense.apply(lambda t: (torch.randn(t.shape) * 3).to(t.dtype)),
        ]
    )
    mask = _rand(rng, bs) > 0
    how = rng.choice(
        "add_ mul_ sub_ clamp_ zero_ fill_ masked_fill_ apply_ lerp_ apply_others clamp_min_".split()
    )

    def write(td: Any) -> None:
        if how in ("add_", "mul_", "sub_"):
            getattr(td, how)(operand)
        elif how == "apply_others":
            if isinstance(operand, TensorClass | TensorDict):
                td.apply_(lambda x, y: x.add_(y), operand)
            else:
                td.apply_(lambda x: x.mul_(3))
        elif how == "clamp_min_":
            td.clamp_min_(0.1)
        elif how == "clamp_":
            td.clamp_(-0.5, 0.5)
        elif how == "zero_":
            td.zero_()
        elif how == "fill_":
            td.fill_("a", 7.0)
        elif how == "masked_fill_":
            td.masked_fill_(mask, 1.5)
        elif how == "apply_":
            td.apply_(lambda t: t * 2)
        else:
            td.select("a", "b").lerp_(
                operand.select("a", "b")
                if isinstance(operand, TensorClass | TensorDict)
                else operand,
                0.25,
            )

    return write


def w_remove(rng: random.Random, dense: Any) -> Write:
    how = rng.choice(["del", "pop", "rename_key_", "del_nested"])
    typed = isinstance(dense, Rec)

    def write(td: Any) -> Any:
        if how == "del":
            del td["b"]
        elif how == "pop":
            return td.pop("b")
        elif how == "rename_key_":
            td.rename_key_("a", "z")
        else:
            del td[("inner", "c") if typed else ("n", "c")]
        return None

    return write


def w_view(rng: random.Random, dense: Any) -> Write:
    """An in-place write through a view of the stack: the dense stack's views are torch
    views, whose writes reach the base. (Replacing or adding a key through a view is not
    compared: a lazy stack's views hold its members, whose keys they then change; a dense
    view's keys are its own.)"""
    n = dense.batch_dims
    order = list(range(n))
    rng.shuffle(order)
    d0, d1 = rng.randrange(n), rng.randrange(n)
    how = rng.choice(["slice", "unsqueeze", "permute", "transpose", "int", "unbind", "split"])
    views: dict[str, Callable[[Any], Any]] = {
        "slice": lambda td: td[1:],
        "unsqueeze": lambda td: td.unsqueeze(rng_dim),
        "permute": lambda td: td.permute(*order),
        "transpose": lambda td: td.transpose(d0, d1),
        "int": lambda td: td[0],
        "unbind": lambda td: td.unbind(d0)[-1],
        "split": lambda td: td.split(2, d1)[0],
    }
    rng_dim = rng.randint(-n - 1, n)
    view_dense = views[how](dense)
    in_place = [
        lambda r, d: w_index(r, d, new_keys=False),
        w_maths,
        lambda r, d: w_key(r, d, inplace_only=True),
    ]
    inner = rng.choice(in_place)(rng, view_dense)

    def write(td: Any) -> Any:
        return inner(views[how](td))

    return write


WRITES = [w_index, w_index, w_index, w_key, w_update, w_maths, w_remove, w_view]


def case(seed: int) -> str | None:
    """One random write, made on a lazy stack and on the dense stack: the difference, if
    any."""
    rng = random.Random(seed)
    typed = rng.random() < 0.4
    nested_lazy = rng.random() < 0.3
    member_bs = [rng.randint(1, 3) for _ in range(rng.randint(0, 3))]
    count = rng.randint(2, 3)
    dim = rng.randint(0, len(member_bs))
    members = make_members(rng, typed, nested_lazy, count, member_bs)
    dense = torch.stack([m.clone() for m in members], dim)
    write = rng.choice(WRITES)(rng, dense)
    lazy = lazy_stack(members, dim)
    before = [leaves(m) for m in members]
    dense_error = lazy_error = None
    try:
        dense_out = write(dense)
    except Exception as error:
        dense_error = error
    try:
        lazy_out = write(lazy)
    except Exception as error:
        lazy_error = error
    if dense_error is not None:
        if lazy_error is None:
            return f"dense refused ({dense_error!r}), lazy accepted"
        changed = [difference(b, leaves(m)) for b, m in zip(before, members)]
        if any(changed):
            return f"lazy refused ({lazy_error!r}) but changed the members: {changed}"
        return None
    if lazy_error is not None:
        return f"lazy refused: {lazy_error!r}"
    found = difference(leaves(dense), leaves(torch.stack(members, dim)))
    if found:
        return f"members differ from the dense stack: {found}"
    if isinstance(dense_out, torch.Tensor) and not torch.equal(dense_out, lazy_out):
        return "the returned tensor differs"
    return None


@pytest.mark.parametrize("block", range(4))
def test_lazy_writes_match_the_dense_stack(block: int) -> None:
    failures = []
    for seed in range(block * 60, (block + 1) * 60):
        found = case(seed)
        if found is not None:
            failures.append(f"seed {seed}: {found}")
    assert not failures, "\n".join(failures)


# -- regressions found by the fuzz above ------------------------------------------------------


def two(bs: list[int]) -> list[TensorDict]:
    return [
        TensorDict(
            {"a": torch.zeros(bs), "b": torch.zeros(*bs, 2), "n": {"c": torch.zeros(*bs, 3)}}, bs
        )
        for _ in range(2)
    ]


def test_a_value_refused_by_a_later_leaf_writes_no_member() -> None:
    members = two([2])
    with pytest.raises(BatchSizeError, match="'n', 'c'|n.c"):
        lazy_stack(members, 0)[:, 0] = torch.ones(2)  # fits "a" and "b", not "n.c" (3)
    assert all(not leaf.any() for m in members for leaf in leaves(m).values())


def test_a_refused_value_is_refused_for_an_empty_selection_too() -> None:
    members = two([2])
    stack = lazy_stack(members, 0)
    with pytest.raises(BatchSizeError):
        torch.stack(two([2]), 0)[torch.tensor([False, False])] = torch.ones(5)
    with pytest.raises(BatchSizeError):
        stack[torch.tensor([False, False])] = torch.ones(5)


def test_a_one_element_tensor_broadcasts_as_torch() -> None:
    members = two([])
    lazy_stack(members, 0)[:] = torch.tensor([4.0])  # [1] broadcasts to [2], [2, 2], [2, 3]
    assert all(bool((leaf == 4).all()) for m in members for leaf in leaves(m).values())
    with pytest.raises(BatchSizeError):  # [3, 1]: its extra leading dim is not 1
        lazy_stack(members, 0)[:] = torch.ones(3, 1)
    assert all(bool((leaf == 4).all()) for m in members for leaf in leaves(m).values())
    lazy_stack(members, 0)[:] = torch.ones(1, 1)  # as torch: the extra leading 1 is dropped
    assert all(bool((leaf == 1).all()) for m in members for leaf in leaves(m).values())


def test_each_leaf_receives_the_value_in_its_dtype() -> None:
    members = [TensorDict({"i": torch.zeros(2, dtype=torch.long)}, [2]) for _ in range(2)]
    lazy_stack(members, 1)[torch.tensor([0, 1]), 1] = torch.tensor([2.0, 3.0])
    assert members[1]["i"].tolist() == [2, 3] and members[1]["i"].dtype == torch.long


def test_a_dict_value_broadcasts_as_in_a_dense_write() -> None:
    members, dense = two([3]), torch.stack(two([3]), 1)
    value = {"a": torch.arange(2.0).reshape(2, 1), "n": {"c": torch.ones(3)}}
    dense[1:, ::2] = value
    lazy_stack(members, 1)[1:, ::2] = value
    assert difference(leaves(torch.stack(members, 1)), leaves(dense)) is None


def test_writes_at_an_index_reach_nested_lazy_stacks() -> None:
    inner = [TensorDict({"c": torch.zeros(2)}, [2]) for _ in range(2)]
    root = TensorDict({"n": lazy_stack(inner, 1), "a": torch.zeros(2, 2)}, [2])
    root[0] = 5.0
    root[1] = torch.tensor([3.0, 4.0])
    assert torch.stack(inner, 1)["c"].tolist() == [[5.0, 5.0], [3.0, 4.0]]
    members = [TensorDict({"n": lazy_stack([i.clone() for i in inner], 1)}, [2]) for _ in range(2)]
    dense = torch.stack([m.clone() for m in members], 0)
    dense[:, 1] = torch.tensor([7.0, 8.0])  # [2] broadcasts to "n.c" at [2, 2] as [7, 8] rows
    lazy_stack(members, 0)[:, 1] = torch.tensor([7.0, 8.0])
    assert [m["n", "c"][1].tolist() for m in members] == [[7.0, 8.0], [7.0, 8.0]]
    assert difference(leaves(torch.stack(members, 0)), leaves(dense)) is None


def test_set_at_of_a_single_element() -> None:
    members = [TensorDict({"a": torch.zeros(())}, []) for _ in range(3)]
    lazy_stack(members, 0).set_at_("a", 2.0, -2)
    assert [m["a"].item() for m in members] == [0.0, 2.0, 0.0]


def test_reshape_to_no_batch_dims() -> None:
    # a lazy stack of members of batch size [1] reshaped to [2]: the members to [] (as
    # writing a lazy stack value flattens it)
    stack = lazy_stack([TensorDict({"a": torch.ones(1)}, [1]) for _ in range(2)], 0)
    assert stack.reshape(-1)["a"].shape == (2,)
    assert TensorDict({"a": torch.ones(1)}, [1]).reshape(())["a"].shape == ()


def test_the_repeated_member_rule_holds_for_writes_at_an_index() -> None:
    member = TensorDict({"a": torch.zeros(2)}, [2])
    stack = lazy_stack([member, member], 0)
    stack[:, 1] = 3.0  # the same value at both positions: written once
    assert member["a"].tolist() == [0.0, 3.0]
    with pytest.raises(OperandError):
        stack[:, 0] = torch.tensor([1.0, 2.0])  # different values into one memory
    assert member["a"].tolist() == [0.0, 3.0]


def test_keys_a_value_brings_are_added_to_nested_lazy_stacks() -> None:
    inner = [TensorDict({"c": torch.zeros(2)}, [2]) for _ in range(2)]
    root = TensorDict({"n": lazy_stack(inner, 1), "a": torch.zeros(2)}, [2])
    root[0] = {"new": torch.ones(()), "n": {"d": torch.ones(2), "c": 3.0}}
    assert root["new"].tolist() == [1.0, 0.0]
    assert [m["d"].tolist() for m in inner] == [[1.0, 0.0], [1.0, 0.0]]
    assert [m["c"].tolist() for m in inner] == [[3.0, 0.0], [3.0, 0.0]]


def test_an_empty_selection_refuses_a_key_a_typed_member_lacks() -> None:
    members = [
        Rec(
            a=torch.zeros(2),
            b=torch.zeros(2, 2),
            i=torch.zeros(2, dtype=torch.long),
            inner=Inner(c=torch.zeros(2, 3), batch_size=[2]),
            batch_size=[2],
        )
        for _ in range(2)
    ]
    with pytest.raises(KeyError):
        torch.stack(members, 0)[torch.tensor([False, False])] = {"z": torch.zeros(0, 2)}
    with pytest.raises(KeyError):
        lazy_stack(members, 0)[torch.tensor([False, False])] = {"z": torch.zeros(0, 2)}
    assert all("z" not in m.keys() for m in members)


def test_an_exact_instance_written_at_an_int_reaches_nested_lazy_stacks() -> None:
    inner = [TensorDict({"c": torch.zeros(2)}, [2]) for _ in range(2)]
    root = TensorDict({"n": lazy_stack(inner, 1)}, [2])
    root[1] = TensorDict({"n": TensorDict({"c": torch.ones(2)}, [2])}, [])  # the fast path
    root[0:1] = TensorDict({"n": TensorDict({"c": torch.full((1, 2), 2.0)}, [1, 2])}, [1])
    assert [m["c"].tolist() for m in inner] == [[2.0, 1.0], [2.0, 1.0]]
