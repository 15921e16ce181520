"""Property-based tests: random operation sequences on a tensor class and on a plain dict of
tensors, side by side; every leaf must agree after every step.

The same sequences run on a ``TensorDict`` and on a typed class (nested typed field, optional
field), so both faces of the engine are held to plain tensor semantics.
"""

from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from tensorclass import TensorClass, TensorDict, tensorclass


class Inner(TensorClass):
    z: torch.Tensor


class Outer(TensorClass):
    x: torch.Tensor
    y: torch.Tensor
    inner: Inner
    extra: torch.Tensor | None = None


@tensorclass
class Decorated:  # the decorator spelling of Outer
    x: torch.Tensor
    y: torch.Tensor
    inner: Inner
    extra: torch.Tensor | None = None


Key = tuple[str, ...]
Plain = dict[Key, torch.Tensor]  # every leaf by its key path; the batch ndim is tracked aside
# an operation: (name, on the tensor class, on the plain dict, batch ndim after it)
Op = tuple[str, Callable[[Any], Any], Callable[[Plain], Plain], int]

X, Y, Z, EXTRA = ("x",), ("y",), ("inner", "z"), ("extra",)


def each(plain: Plain, fn: Callable[[torch.Tensor], torch.Tensor]) -> Plain:
    return {key: fn(value) for key, value in plain.items()}


def cloned(fn: Callable[[Any], None]) -> Callable[[Any], Any]:
    """Run an in-place step on a copy (the copy is what the next step sees)."""

    def run(obj: Any) -> Any:
        obj = obj.clone()
        fn(obj)
        return obj

    return run


def plain_cloned(fn: Callable[[torch.Tensor], None]) -> Callable[[Plain], Plain]:
    def run(plain: Plain) -> Plain:
        out = each(plain, torch.clone)
        for value in out.values():
            fn(value)
        return out

    return run


def draw_index(draw: st.DrawFn, batch: tuple[int, ...]) -> tuple[str, Any, Any, int]:
    """A random batch index: (kind, index for the tensor class, index for tensors, ndim)."""
    n = len(batch)
    kinds = []
    if n:
        kinds += ["mask", "slice", "mask after ..."]
        if batch[0]:
            kinds += ["int", "long", "list", "range"]
        if batch[-1]:
            kinds.append("tuple")
    kinds += ["ellipsis", "none"]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return kind, None, None, n + 1
    if kind == "ellipsis":
        return kind, ..., (), n
    size = batch[0]
    if kind == "int":
        i = draw(st.integers(-size, size - 1))
        return kind, i, i, n - 1
    if kind == "slice":
        start = draw(st.one_of(st.none(), st.integers(-size, size)))
        stop = draw(st.one_of(st.none(), st.integers(-size, size)))
        step = draw(st.integers(1, 3))
        return kind, slice(start, stop, step), slice(start, stop, step), n
    if kind == "mask":
        k = draw(st.integers(1, n))  # a mask over the first k batch dims
        seed = draw(st.integers(0, 2**16))
        mask = torch.rand(batch[:k], generator=torch.Generator().manual_seed(seed)) > 0.5
        return kind, mask, mask, n - k + 1
    if kind == "mask after ...":  # a mask over the last k batch dims, the others kept
        k = draw(st.integers(1, n))
        seed = draw(st.integers(0, 2**16))
        mask = torch.rand(batch[n - k :], generator=torch.Generator().manual_seed(seed)) > 0.5
        return kind, (..., mask), (slice(None),) * (n - k) + (mask,), n - k + 1
    if kind == "tuple":  # every dim but the last kept, the last one picked with a negative int
        last = batch[-1]
        i = draw(st.integers(-last, last - 1))
        index = (..., i) if n > 1 else (i,)
        return kind, index, (slice(None),) * (n - 1) + (i,), n - 1
    picks = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=4))
    if kind == "long":
        return kind, torch.tensor(picks), torch.tensor(picks), n
    if kind == "list":
        return kind, picks, torch.tensor(picks), n
    r = range(draw(st.integers(0, size - 1)), size, draw(st.integers(1, 2)))
    return kind, r, torch.tensor(list(r)), n


def ops_for(obj: Any, plain: Plain, n: int, draw: st.DrawFn) -> list[Op]:
    """The operations that are valid for the current batch shape, with plain equivalents."""
    batch = tuple(obj.batch_size)
    seed = draw(st.integers(0, 2**16))
    full_mask = torch.rand(batch, generator=torch.Generator().manual_seed(seed)) > 0.5

    def masked(v: torch.Tensor) -> torch.Tensor:
        return full_mask.reshape(batch + (1,) * (v.ndim - n))

    ops: list[Op] = [
        ("clone", lambda t: t.clone(), lambda p: each(p, torch.clone), n),
        ("add", lambda t: t + 1.5, lambda p: each(p, lambda v: v + 1.5), n),
        ("rsub", lambda t: 2 - t, lambda p: each(p, lambda v: 2 - v), n),
        ("rmul", lambda t: 3 * t, lambda p: each(p, lambda v: 3 * v), n),
        ("pair", lambda t: t * t - t, lambda p: each(p, lambda v: v * v - v), n),
        ("div", lambda t: 2 / (t * t + 1), lambda p: each(p, lambda v: 2 / (v * v + 1)), n),
        ("pow", lambda t: t**2, lambda p: each(p, lambda v: v**2), n),
        ("neg", lambda t: -t, lambda p: each(p, lambda v: -v), n),
        (
            "compare",
            lambda t: (t > 0).float(),
            lambda p: each(p, lambda v: (v > 0).float()),
            n,
        ),
        (
            "eq",
            lambda t: (t == t.clone()).float() + t,
            lambda p: each(p, lambda v: 1 + v),
            n,
        ),
        ("apply", lambda t: t.apply(lambda v: v - 1), lambda p: each(p, lambda v: v - 1), n),
        (
            "apply two",
            lambda t: t.apply(lambda a, b: a - 2 * b, t.abs()),
            lambda p: each(p, lambda v: v - 2 * v.abs()),
            n,
        ),
        ("iadd", cloned(lambda t: t.__iadd__(0.5)), plain_cloned(lambda v: v.add_(0.5)), n),
        ("imul pair", cloned(lambda t: t.__imul__(t)), plain_cloned(lambda v: v.mul_(v)), n),
        (
            "full_like",
            lambda t: torch.full_like(t, 2.0),
            lambda p: each(p, lambda v: torch.full_like(v, 2.0)),
            n,
        ),
        (
            "zeros_like",
            lambda t: torch.zeros_like(t),
            lambda p: each(p, torch.zeros_like),
            n,
        ),
        (
            "masked_fill",
            lambda t: t.masked_fill(full_mask, -3.0),
            lambda p: each(p, lambda v: v.masked_fill(masked(v), -3.0)),
            n,
        ),
        (
            "where",
            lambda t: t.where(full_mask, t * 10),
            lambda p: each(p, lambda v: torch.where(masked(v), v, v * 10)),
            n,
        ),
        (
            "torch.where",
            lambda t: torch.where(full_mask, 0.0, t),
            lambda p: each(p, lambda v: torch.where(masked(v), 0.0, v)),
            n,
        ),
    ]
    if n < 4:
        d = draw(st.integers(-n - 1, n))
        ops += [
            (
                "unsqueeze",
                lambda t: t.unsqueeze(d),
                lambda p: each(p, lambda v: v.unsqueeze(d % (n + 1))),
                n + 1,
            ),
            (
                "stack",
                lambda t: torch.stack([t, t * 2], d),
                lambda p: each(p, lambda v: torch.stack([v, v * 2], d % (n + 1))),
                n + 1,
            ),
            (
                "expand",
                lambda t: t.expand(2, *batch),
                lambda p: each(p, lambda v: v.expand(2, *v.shape)),
                n + 1,
            ),
        ]
    kind, index, tensor_index, after = draw_index(draw, batch)
    ops.append(
        (f"index {kind}", lambda t: t[index], lambda p: each(p, lambda v: v[tensor_index]), after)
    )
    if kind != "none":  # None adds a dim: nothing to write there beyond what tensors do
        ops += [
            (
                f"setitem scalar {kind}",
                cloned(lambda t: t.__setitem__(index, -7.0)),
                plain_cloned(lambda v: v.__setitem__(tensor_index, -7.0)),
                n,
            ),
            (
                f"setitem instance {kind}",
                cloned(lambda t: t.__setitem__(index, t[index] * 2 + 1)),
                plain_cloned(lambda v: v.__setitem__(tensor_index, v[tensor_index] * 2 + 1)),
                n,
            ),
        ]
    if n:
        d = draw(st.integers(-n, n - 1))
        size = batch[d]
        ops += [
            ("flip", lambda t: t.flip(d), lambda p: each(p, lambda v: v.flip(d % n)), n),
            (
                "roll",
                lambda t: t.roll(-1, d),
                lambda p: each(p, lambda v: v.roll(-1, d % n)),
                n,
            ),
            (
                "cat",
                lambda t: torch.cat([t, t + 1], d),
                lambda p: each(p, lambda v: torch.cat([v, v + 1], d % n)),
                n,
            ),
            (
                "reshape",
                lambda t: t.reshape(-1),
                lambda p: each(p, lambda v: v.reshape(-1, *v.shape[n:])),
                1,
            ),
            (
                "view",
                lambda t: t.contiguous().view(*reversed(batch)),
                lambda p: each(p, lambda v: v.contiguous().view(*reversed(batch), *v.shape[n:])),
                n,
            ),
            (
                "flatten",
                lambda t: t.flatten(0, d),
                lambda p: each(p, lambda v: v.flatten(0, d % n)),
                n - d % n,
            ),
            (
                "repeat",
                lambda t: t.repeat(*[2 if i == d % n else 1 for i in range(n)]),
                lambda p: each(
                    p, lambda v: v.repeat(*[2 if i == d % n else 1 for i in range(v.ndim)])
                ),
                n,
            ),
            (
                "sum",
                lambda t: t.sum(d),
                lambda p: each(p, lambda v: v.sum(d % n)),
                n - 1,
            ),
            (
                "mean keepdim",
                lambda t: t.mean(d, keepdim=True),
                lambda p: each(p, lambda v: v.mean(d % n, keepdim=True)),
                n,
            ),
        ]
        if size:
            i = draw(st.integers(0, size - 1))
            chunks = draw(st.integers(1, 3))
            ops += [
                (
                    "unbind",
                    lambda t: t.unbind(d)[i],
                    lambda p: each(p, lambda v: v.unbind(d % n)[i]),
                    n - 1,
                ),
                (
                    "split",
                    lambda t: t.split(2, d)[-1],
                    lambda p: each(p, lambda v: v.split(2, d % n)[-1]),
                    n,
                ),
                (
                    "chunk",
                    lambda t: t.chunk(chunks, d)[0],
                    lambda p: each(p, lambda v: v.chunk(chunks, d % n)[0]),
                    n,
                ),
                (
                    "torch.unbind",
                    lambda t: torch.unbind(t, d)[-1],
                    lambda p: each(p, lambda v: v.unbind(d % n)[-1]),
                    n - 1,
                ),
            ]
        if size == 1:
            ops.append(
                (
                    "squeeze",
                    lambda t: t.squeeze(d),
                    lambda p: each(p, lambda v: v.squeeze(d % n)),
                    n - 1,
                )
            )
    if n >= 2:
        perm = draw(st.permutations(list(range(n))))
        d0, d1 = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))
        ops += [
            (
                "permute",
                lambda t: t.permute(*perm),
                lambda p: each(p, lambda v: v.permute(*perm, *range(n, v.ndim))),
                n,
            ),
            (
                "transpose",
                lambda t: t.transpose(d0, d1),
                lambda p: each(p, lambda v: v.transpose(d0 % n, d1 % n)),
                n,
            ),
            (
                "unflatten",
                lambda t: t.reshape(-1).unflatten(0, batch),
                lambda p: each(p, lambda v: v.reshape(-1, *v.shape[n:]).unflatten(0, batch)),
                n,
            ),
        ]
    # key-level writes (on a copy: the tensor class and the dict both keep the old value)
    value = torch.arange(float(torch.Size(batch).numel())).reshape(*batch, 1).expand(*batch, 2)
    ops += [
        (
            "set extra",
            cloned(lambda t: t.set("extra", value.clone())),
            lambda p: {**p, EXTRA: value.clone()},
            n,
        ),
        (
            "update nested",
            cloned(lambda t: t.update({"inner": {"z": t["inner", "z"] + 4}, "y": t["y"] * 0})),
            lambda p: {**p, Z: p[Z] + 4, Y: p[Y] * 0},
            n,
        ),
        (
            "update_ in place",
            cloned(lambda t: t.update_({"x": t["x"] - 1})),
            lambda p: {**p, X: p[X] - 1},
            n,
        ),
    ]
    if EXTRA in plain:
        ops.append(
            (
                "pop extra",
                cloned(lambda t: t.pop("extra")),
                lambda p: {k: v for k, v in p.items() if k != EXTRA},
                n,
            )
        )
    # batch indexing first: the choice of the simplest examples (all-zero draws) lands there
    ops.sort(key=lambda op: not op[0].startswith(("index", "setitem")))
    return ops


def build(kind: str, batch: tuple[int, ...]) -> tuple[Any, Plain]:
    x = torch.randn((*batch, 2))
    y = torch.randn(batch)
    z = torch.randn((*batch, 3, 1))
    plain = {X: x.clone(), Y: y.clone(), Z: z.clone()}
    if kind == "TensorDict":
        return TensorDict({"x": x, "y": y, "inner": {"z": z}}, batch_size=batch), plain
    cls = Outer if kind == "Outer" else Decorated
    return cls(x, y, Inner(z, batch_size=batch), batch_size=batch), plain


def read(obj: Any, key: Key) -> Any:
    return obj[key] if len(key) > 1 else obj[key[0]]


@pytest.mark.parametrize("kind", ["TensorDict", "Outer", "Decorated"])
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_op_sequences_match_plain_tensors(kind: str, data: st.DataObject) -> None:
    batch = tuple(data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    obj, plain = build(kind, batch)
    cls = type(obj)
    n = len(batch)
    history: list[str] = []
    for _ in range(data.draw(st.integers(1, 6))):
        options = ops_for(obj, plain, n, data.draw)
        # a uniform choice (hypothesis integers and sampled_from favour the first ops)
        name, on_obj, on_plain, n = data.draw(st.randoms(), label="op").choice(options)
        history.append(name)
        obj = on_obj(obj)
        plain = on_plain(plain)
        assert type(obj) is cls, history
        assert len(obj.batch_size) == n, history
        assert obj["inner"].batch_size == obj.batch_size, history
        assert type(obj["inner"]) is (TensorDict if cls is TensorDict else Inner), history
        assert set(obj.keys(include_nested=True, leaves_only=True)) == {
            key if len(key) > 1 else key[0] for key in plain
        }, history
        for key, expected in plain.items():
            got = read(obj, key)
            assert got.shape == expected.shape, (history, key)
            assert got.dtype == expected.dtype, (history, key)
            assert torch.allclose(got, expected, equal_nan=True), (history, key)
            assert got.shape[:n] == obj.batch_size, (history, key)


@settings(max_examples=40, deadline=None)
@given(
    keys=st.lists(st.text("abc", min_size=1, max_size=2), min_size=1, max_size=4, unique=True),
    batch=st.lists(st.integers(1, 3), max_size=2),
    data=st.data(),
)
def test_tensordict_key_operations_match_a_dict(
    keys: list[str], batch: list[int], data: st.DataObject
) -> None:
    values = {key: torch.randn((*batch, 2)) for key in keys}
    td = TensorDict({}, batch_size=batch)
    for key, value in values.items():
        td["nest", key] = value
    assert list(td["nest"].keys()) == keys
    for key, value in values.items():
        assert td.get(("nest", key)) is value
        assert td[("nest",), (key,)] is value  # nested tuples are flattened
    first = keys[0]
    assert list(td.select(("nest", first)).keys(True, True)) == [("nest", first)]
    assert ("nest", first) not in td.exclude(("nest", first)).keys(True)
    flat = td.flatten_keys("/")
    assert set(flat.keys()) == {f"nest/{k}" for k in keys}
    assert (flat.unflatten_keys("/") == td).all()
    # random renames, pops and setdefaults, mirrored on a plain dict
    mirror = dict(values)
    for _ in range(data.draw(st.integers(1, 5))):
        action = data.draw(st.sampled_from(["rename", "pop", "setdefault", "pop default"]))
        key = data.draw(st.sampled_from(keys))
        if action == "rename" and key in mirror:
            new = key + "_r"
            td.rename_key_(("nest", key), ("nest", new))
            mirror[new] = mirror.pop(key)
        elif action == "pop" and key in mirror:
            assert td.pop(("nest", key)) is mirror.pop(key)
        elif action == "setdefault":
            fresh = torch.zeros((*batch, 2))
            got = td.setdefault(("nest", key), fresh)
            assert got is mirror.setdefault(key, fresh)
        else:
            assert td.pop(("nest", "missing"), None) is None
        assert set(td["nest"].keys()) == set(mirror)
        for key, value in mirror.items():
            assert td["nest", key] is value


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 6),
    batch=st.lists(st.integers(1, 2), max_size=1),
    data=st.data(),
)
def test_lazy_preallocation_in_any_order_matches_stacking(
    n: int, batch: list[int], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(list(range(n))))

    def item(i: int) -> TensorDict:
        return TensorDict(
            {"a": torch.full((*batch, 3), float(i)), "b": {"c": torch.full(batch, i)}, "s": "x"},
            batch_size=batch,
        )

    preallocated = TensorDict({}, batch_size=[n, *batch])
    for i in order:
        preallocated[i] = item(i)
    stacked = torch.stack([item(i) for i in range(n)])
    assert preallocated.batch_size == stacked.batch_size
    assert list(preallocated.keys(True, True)) == list(stacked.keys(True, True))
    assert (preallocated.exclude("s") == stacked.exclude("s")).all()
    assert preallocated["b"].batch_size == stacked["b"].batch_size
    assert preallocated["s"] == "x"
