"""``torch.vmap`` over tensor dicts, tensor classes and lazy stacks, as tensordict 0.15.3 does.

Each test states what tensordict 0.15.3 does (checked by running it): the mapped dim is
hidden from the batch inside the function and put back at ``out_dims`` outside (``(d,)`` for
one returned instance, as for one tensor), writes inside the function are in the output,
dims count the batch, names follow the dims, lazy stacks come back lazy. Beyond tensordict
(which refuses them): ``in_dims``/``out_dims`` given as a tensor class of dims, one per key.
"""

from typing import Any

import pytest
import torch
import torch._functorch.vmap as vmap_src
from torch import nn

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack
from tensorclass.errors import LockedError
from tensorclass.nn import TensorDictModule, TensorDictSequential


class Pair(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


def _batches(seen: list[Any]) -> Any:
    def fn(td: Any) -> Any:
        seen.append(td.batch_size)
        return td

    return fn


# -- batch-size bookkeeping ---------------------------------------------------------------


def test_the_mapped_dim_is_hidden_inside_and_back_at_out_dims() -> None:
    td = TensorDict(a=torch.zeros(5, 3, 2), batch_size=[5, 3])
    seen: list[Any] = []
    assert vmap_batch(td, seen, 0, 0) == torch.Size([5, 3])
    assert vmap_batch(td, seen, 1, 1) == torch.Size([5, 3])
    assert vmap_batch(td, seen, 1, 0) == torch.Size([3, 5])
    assert seen == [torch.Size([3]), torch.Size([5]), torch.Size([5])]


def vmap_batch(td: TensorDict, seen: list[Any], in_dim: int, out_dim: int) -> torch.Size:
    out = torch.vmap(_batches(seen), (in_dim,), (out_dim,))(td)
    assert out["a"].shape == (*out.batch_size, 2)
    return out.batch_size


def test_out_dims_as_a_one_tuple_for_one_returned_instance() -> None:
    td = TensorDict(a=torch.zeros(4, 2), batch_size=[4, 2])
    assert torch.vmap(lambda t: t, 1, (0,))(td).batch_size == torch.Size([2, 4])


def test_a_negative_dim_counts_from_the_end_of_the_batch() -> None:
    td = TensorDict(a=torch.zeros(5, 3, 2), batch_size=[5, 3])
    seen: list[Any] = []
    out = torch.vmap(_batches(seen), (-1,), (-1,))(td)
    assert seen == [torch.Size([5])]
    assert out.batch_size == torch.Size([5, 3]) and out["a"].shape == (5, 3, 2)


def test_nested_levels_lose_the_mapped_dim_too() -> None:
    inner = TensorDict(b=torch.zeros(4, 3, 2), batch_size=[4, 3])
    td = TensorDict(a=torch.zeros(4, 3), n=inner, batch_size=[4])
    seen: list[Any] = []

    def fn(t: TensorDict) -> TensorDict:
        seen.append((t.batch_size, t["n"].batch_size))
        return t

    out = torch.vmap(fn)(td)
    assert seen == [(torch.Size([]), torch.Size([3]))]
    assert out.batch_size == torch.Size([4]) and out["n"].batch_size == torch.Size([4, 3])


def test_a_tensor_class_keeps_its_class_and_fields() -> None:
    p = Pair(x=torch.ones(4, 3), y=torch.zeros(4), batch_size=[4])
    seen: list[Any] = []

    def fn(p: Pair) -> Pair:
        seen.append(p.batch_size)
        p.y = p.x.sum()
        return p

    out = torch.vmap(fn)(p)
    assert seen == [torch.Size([])]
    assert type(out) is Pair and out.batch_size == torch.Size([4])
    assert out.y.tolist() == [3.0] * 4


def test_an_unmapped_instance_and_a_returned_tensor() -> None:
    td = TensorDict(a=torch.ones(3), batch_size=[3])
    out = torch.vmap(lambda x, t: x + t["a"], (0, None))(torch.ones(4, 3), td)
    assert out.shape == (4, 3)
    assert torch.vmap(lambda t: t["a"].sum())(
        TensorDict(a=torch.ones(4, 3), batch_size=[4])
    ).shape == (4,)


def test_non_tensor_values_travel_through() -> None:
    td = TensorDict(a=torch.zeros(4, 3), s="hi", batch_size=[4])
    assert torch.vmap(lambda t: t)(td)["s"] == "hi"


def test_indexing_stacking_and_arithmetic_inside() -> None:
    td = TensorDict(a=torch.arange(24.0).reshape(4, 3, 2), batch_size=[4, 3])
    first = torch.vmap(lambda t: t[0])(td)
    assert first.batch_size == torch.Size([4]) and torch.equal(first["a"], td["a"][:, 0])
    stacked = torch.vmap(lambda t: torch.stack([t, t], 0))(td)
    assert stacked.batch_size == torch.Size([4, 2, 3])
    doubled = torch.vmap(lambda t: t * 2 + t)(td)
    assert torch.equal(doubled["a"], td["a"] * 3)


# -- writes inside the function -----------------------------------------------------------


def test_a_new_key_written_inside_is_in_the_output() -> None:
    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2])

    def fn(t: TensorDict) -> TensorDict:
        t["b"] = t["a"] + 1
        return t

    out = torch.vmap(fn)(td)
    assert torch.equal(out["b"], td["a"] + 1)
    assert "b" not in td.keys()  # the input keeps its keys


def test_set_in_place_writes_through_to_the_input() -> None:
    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2])

    def fn(t: TensorDict) -> TensorDict:
        t.set_("a", t["a"] * 10)
        return t

    out = torch.vmap(fn)(td)
    expected = torch.arange(6.0).reshape(2, 3) * 10
    assert torch.equal(out["a"], expected) and torch.equal(td["a"], expected)


def test_update_and_apply_in_place_inside() -> None:
    td = TensorDict(a=torch.arange(6.0).reshape(2, 3), batch_size=[2])

    def fn(t: TensorDict) -> TensorDict:
        t.update({"c": t["a"] * 2, "d": TensorDict(e=t["a"].sum())})
        return t.apply_(lambda x: x + 1)

    out = torch.vmap(fn)(td)
    base = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(out["c"], base * 2 + 1)
    assert out["d"].batch_size == torch.Size([2])
    assert out["d", "e"].tolist() == [4.0, 13.0]
    assert torch.equal(td["a"], base + 1)  # apply_ wrote into the input's tensors


def test_a_write_to_a_locked_input_is_refused() -> None:
    td = TensorDict(a=torch.zeros(2, 3), batch_size=[2]).lock_()
    with pytest.raises(LockedError):
        torch.vmap(lambda t: t.set("a", t["a"] + 1))(td)
    with pytest.raises(RuntimeError):  # LockedError is a RuntimeError, as in tensordict
        torch.vmap(lambda t: t.set("b", t["a"] + 1))(td)


# -- names --------------------------------------------------------------------------------


def test_names_follow_the_mapped_dim() -> None:
    def fn(a: TensorDict, b: TensorDict) -> TensorDict:
        b["c"] = a["a"] + b["b"]
        return b

    a = TensorDict(a=torch.randn(3, 4), batch_size=[3], names=["0"])
    b = TensorDict(b=torch.randn(3, 5, 4), batch_size=[3, 5], names=["A", "B"])
    assert torch.vmap(fn, (None, 1))(a, b).names == [None, "A"]
    a = TensorDict(a=torch.randn(5, 4), batch_size=[5], names=["0"])
    assert torch.vmap(fn, (None, 0))(a, b).names == [None, "B"]
    seen: list[Any] = []
    torch.vmap(lambda t: seen.append(t.names) or t, (1,))(b)
    assert seen == [["A"]]


# -- lazy stacks --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["a", ("a", "b")])
@pytest.mark.parametrize("stack_dim", [0, 1])
@pytest.mark.parametrize("in_dim", [0, 1])
@pytest.mark.parametrize("out_dim", [0, 1])
def test_a_write_into_a_lazy_stack(key: Any, stack_dim: int, in_dim: int, out_dim: int) -> None:
    x = lazy_stack([TensorDict({key: [1.0]}, [1]), TensorDict({key: [1.0]}, [1])], stack_dim)
    y = lazy_stack([TensorDict({key: [2.0]}, [1]), TensorDict({key: [2.0]}, [1])], stack_dim)
    fn = torch.vmap(lambda x, y: x.set(key, y.get(key) + x.get(key)), (in_dim, in_dim), (out_dim,))
    out = fn(x, y)
    assert isinstance(out, LazyStackedTensorDict)
    assert out.shape[out_dim] == x.shape[in_dim]
    assert out.batch_size.numel() == 2
    assert (out[key] == 3).all()


@pytest.mark.parametrize("in_dim", [0, 1])
def test_a_write_into_a_locked_lazy_stack_is_refused(in_dim: int) -> None:
    x = lazy_stack([TensorDict(a=[1.0], batch_size=[1])] * 2, 0).lock_()
    with pytest.raises(RuntimeError, match="locked"):
        torch.vmap(lambda x: x.set("a", x["a"] + 1), (in_dim,))(x)


def test_mapping_the_stack_dim_gives_the_members_batch() -> None:
    s = lazy_stack([TensorDict(a=torch.zeros(3), batch_size=[3])] * 2, 0)
    seen: list[Any] = []
    out = torch.vmap(_batches(seen))(s)
    other = torch.vmap(_batches(seen), (1,), (1,))(s)
    assert seen == [torch.Size([3]), torch.Size([2])]
    assert isinstance(out, LazyStackedTensorDict) and out.batch_size == torch.Size([2, 3])
    assert isinstance(other, LazyStackedTensorDict) and other.batch_size == torch.Size([2, 3])


def test_a_ragged_lazy_stack_maps_a_dim_its_members_share() -> None:
    s = lazy_stack(
        [
            TensorDict(a=torch.zeros(3, 2), batch_size=[3]),
            TensorDict(a=torch.ones(3, 4), batch_size=[3]),
        ],
        0,
    )
    out = torch.vmap(lambda t: t, (1,), (1,))(s)
    assert isinstance(out, LazyStackedTensorDict) and out.batch_size == torch.Size([2, 3])
    assert out[1]["a"].shape == (3, 4)


# -- randomness ---------------------------------------------------------------------------


def test_randomness_modes() -> None:
    td = TensorDict(a=torch.zeros(4, 3), batch_size=[4])

    def noisy(t: TensorDict) -> TensorDict:
        return t.apply(lambda x: x + torch.rand(()))

    different = torch.vmap(noisy, randomness="different")(td)["a"]
    assert different[0, 0] != different[1, 0]
    same = torch.vmap(noisy, randomness="same")(td)["a"]
    assert (same == same[0, 0]).all()
    with pytest.raises(RuntimeError, match="randomness"):
        torch.vmap(noisy)(td)


# -- modules and parameters ---------------------------------------------------------------


@pytest.mark.parametrize("sequential", [False, True])
@pytest.mark.parametrize("kind,batch_params", [("linear", False), ("linear", True), ("bn", True)])
def test_a_module_called_with_mapped_parameters(
    sequential: bool, kind: str, batch_params: bool
) -> None:
    first = nn.Linear(3, 4) if kind == "linear" else nn.BatchNorm1d(3)
    module: Any = TensorDictModule(first, in_keys=["x"], out_keys=["y"])
    if sequential:
        second = nn.Linear(4, 5) if kind == "linear" else nn.BatchNorm1d(3)
        module = TensorDictSequential(
            module, TensorDictModule(second, in_keys=["y"], out_keys=["z"])
        )
    params = TensorDict.from_module(module).lock_()
    td = TensorDict(x=torch.randn(10, 1 if kind == "linear" else 2, 3), batch_size=[10])

    def call(td: TensorDict, params: TensorDict) -> Any:
        with params.to_module(module):
            return module(td)

    if batch_params:
        params = params.expand(10, *params.batch_size).contiguous().lock_()
    out = torch.vmap(call, (0, 0 if batch_params else None))(td, params)
    width = (5 if sequential else 4) if kind == "linear" else 3
    assert out["z" if sequential else "y"].shape == (10, td["x"].shape[1], width)


# -- dims given as a tensor class (tensorclass only: tensordict refuses them) -------------


def test_in_dims_given_per_key() -> None:
    td = TensorDict(a=torch.zeros(4, 3), b=torch.zeros(3, 4), k=torch.ones(7))
    seen: list[Any] = []

    def fn(t: TensorDict) -> torch.Tensor:
        seen.append({key: tuple(v.shape) for key, v in t.items()})
        return t["a"] + t["b"] + t["k"].sum()

    out = torch.vmap(fn, (TensorDict(a=0, b=1),))(td)  # "k" absent: not mapped
    assert out.shape == (4, 3)
    assert seen == [{"a": (3,), "b": (3,), "k": (7,)}]


def test_in_dims_per_key_nested_and_none() -> None:
    td = TensorDict(a=torch.zeros(4, 3), n=TensorDict(b=torch.zeros(2, 4), c=torch.zeros(4)))
    dims = TensorDict(a=0, n=TensorDict(b=1, c=None))
    seen: list[Any] = []

    def fn(t: TensorDict) -> torch.Tensor:
        seen.append(t["n", "c"].shape)
        return t["a"].sum() + t["n", "b"].sum()

    assert torch.vmap(fn, (dims,))(td).shape == (4,)
    assert seen == [torch.Size([4])]
    whole = TensorDict(a=torch.zeros(4, 3), n=TensorDict(b=torch.zeros(4, 2)))
    assert torch.vmap(lambda t: t["n", "b"].sum(), (TensorDict(a=0, n=0),))(whole).shape == (4,)


def test_in_dims_given_as_a_tensor_class() -> None:
    p = Pair(x=torch.zeros(4, 3), y=torch.ones(3, 4))
    out = torch.vmap(lambda p: p.x + p.y, (Pair(x=0, y=1),))(p)
    assert out.shape == (4, 3)


def test_out_dims_given_per_key() -> None:
    td = TensorDict(a=torch.zeros(4, 3), b=torch.zeros(4, 2), batch_size=[4])
    out = torch.vmap(lambda t: t, (0,), (TensorDict(a=1, b=0),))(td)
    assert out["a"].shape == (3, 4) and out["b"].shape == (4, 2)
    assert out.batch_size == torch.Size([])  # the leaves share no leading dim


def test_a_dim_that_is_not_an_int_is_refused() -> None:
    td = TensorDict(a=torch.zeros(4, 3))
    with pytest.raises(ValueError, match="must be an int or None"):
        torch.vmap(lambda t: t["a"], (TensorDict(a=0.5),))(td)


def test_still_in_place_after_another_library_patches_vmap(monkeypatch: pytest.MonkeyPatch) -> None:
    # tensordict replaces these functions of torch when it is imported: the next vmap call
    # wraps whatever is there again
    theirs = vmap_src._unwrap_batched
    monkeypatch.setattr(vmap_src, "_unwrap_batched", lambda *args: theirs(*args))
    td = TensorDict(a=torch.zeros(4, 2), batch_size=[4, 2])
    assert torch.vmap(lambda t: t, 1, (0,))(td).batch_size == torch.Size([2, 4])


def test_chunk_size_joins_the_chunks_at_the_out_dim() -> None:
    td = TensorDict(a=torch.arange(24.0).reshape(4, 3, 2), batch_size=[4, 3])
    for out_dims in ((0,), 1, (-1,)):
        out = torch.vmap(lambda t: t * 2, 0, out_dims, chunk_size=3)(td)
        expected = torch.vmap(lambda t: t * 2, 0, out_dims)(td)
        assert out.batch_size == expected.batch_size and torch.equal(out["a"], expected["a"])
