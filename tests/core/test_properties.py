"""Property-based tests: random operation sequences on a tensor class and on a plain dict of
tensors, side by side; every leaf must agree after every step."""

from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import torch
from hypothesis import HealthCheck, given, settings

from tensorclass import TensorClass, TensorDict


class Inner(TensorClass):
    z: torch.Tensor


class Outer(TensorClass):
    x: torch.Tensor
    y: torch.Tensor
    inner: Inner


Plain = dict[str, torch.Tensor]  # keys "x", "y", "inner.z"; batch ndim tracked alongside
Op = tuple[str, Callable[[Any, int], Any], Callable[[Plain, int], Plain]]


def each(plain: Plain, fn: Callable[[torch.Tensor], torch.Tensor]) -> Plain:
    return {key: fn(value) for key, value in plain.items()}


def ops_for(batch: tuple[int, ...], draw: st.DrawFn) -> list[Op]:
    """The operations that are valid for a batch shape, with their plain equivalents."""
    n = len(batch)
    ops: list[Op] = [
        ("clone", lambda t, n: t.clone(), lambda p, n: each(p, torch.clone)),
        ("add", lambda t, n: t + 1.5, lambda p, n: each(p, lambda v: v + 1.5)),
        ("mul", lambda t, n: 2 * t, lambda p, n: each(p, lambda v: 2 * v)),
        ("apply", lambda t, n: t.apply(lambda v: v - 1), lambda p, n: each(p, lambda v: v - 1)),
        ("unsqueeze", lambda t, n: t.unsqueeze(0), lambda p, n: each(p, lambda v: v.unsqueeze(0))),
        (
            "stack",
            lambda t, n: torch.stack([t, t * 2], 0),
            lambda p, n: {k: torch.stack([v, v * 2], 0) for k, v in p.items()},
        ),
    ]
    if n:
        d = draw(st.integers(0, n - 1))
        i = draw(st.integers(0, batch[d] - 1)) if batch[d] else 0
        size = batch[d]
        ops += [
            ("flip", lambda t, n: t.flip([d]), lambda p, n: each(p, lambda v: v.flip([d]))),
            ("roll", lambda t, n: t.roll(1, d), lambda p, n: each(p, lambda v: v.roll(1, d))),
            (
                "cat",
                lambda t, n: torch.cat([t, t], d),
                lambda p, n: each(p, lambda v: torch.cat([v, v], d)),
            ),
            (
                "flatten",
                lambda t, n: t.flatten(),
                lambda p, n: each(p, lambda v: v.reshape(-1, *v.shape[n:])),
            ),
            (
                "where",
                lambda t, n: t.where(
                    torch.ones(batch, dtype=torch.bool).tril()
                    if n > 1
                    else torch.ones(batch, dtype=torch.bool),
                    0.0,
                ),
                lambda p, n: each(
                    p,
                    lambda v: torch.where(
                        (
                            torch.ones(batch, dtype=torch.bool).tril()
                            if n > 1
                            else torch.ones(batch, dtype=torch.bool)
                        ).reshape(*batch, *[1] * (v.ndim - n)),
                        v,
                        0.0,
                    ),
                ),
            ),
        ]
        if size:
            idx = (slice(None),) * d + (i,)
            ops += [
                ("index", lambda t, n: t[idx], lambda p, n: each(p, lambda v: v[idx])),
                (
                    "unbind",
                    lambda t, n: t.unbind(d)[i],
                    lambda p, n: each(p, lambda v: v.unbind(d)[i]),
                ),
                (
                    "slice",
                    lambda t, n: t[(slice(None),) * d + (slice(0, None, 2),)],
                    lambda p, n: each(p, lambda v: v[(slice(None),) * d + (slice(0, None, 2),)]),
                ),
                ("setitem", _setitem(idx), _plain_setitem(idx)),
                (
                    "split",
                    lambda t, n: t.split(1, d)[0],
                    lambda p, n: each(p, lambda v: v.split(1, d)[0]),
                ),
            ]
        if n >= 2:
            perm = draw(st.permutations(list(range(n))))
            ops += [
                (
                    "permute",
                    lambda t, n: t.permute(*perm),
                    lambda p, n: each(p, lambda v: v.permute(*perm, *range(n, v.ndim))),
                ),
                (
                    "transpose",
                    lambda t, n: t.transpose(0, 1),
                    lambda p, n: each(p, lambda v: v.transpose(0, 1)),
                ),
            ]
        if batch[-1] == 1:
            ops.append(
                (
                    "squeeze",
                    lambda t, n: t.squeeze(-1),
                    lambda p, n: each(p, lambda v: v.squeeze(n - 1)),
                )
            )
    return ops


def _setitem(idx: tuple[Any, ...]) -> Callable[[Any, int], Any]:
    def write(t: Any, n: int) -> Any:
        t = t.clone()
        t[idx] = -7.0
        return t

    return write


def _plain_setitem(idx: tuple[Any, ...]) -> Callable[[Plain, int], Plain]:
    def write(p: Plain, n: int) -> Plain:
        out = each(p, torch.clone)
        for value in out.values():
            value[idx] = -7.0
        return out

    return write


def batch_ndim_after(name: str, n: int) -> int:
    return {
        "index": n - 1,
        "unbind": n - 1,
        "unsqueeze": n + 1,
        "stack": n + 1,
        "flatten": 1,
        "squeeze": n - 1,
    }.get(name, n)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_op_sequences_match_plain_tensors(data: st.DataObject) -> None:
    batch = tuple(data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    x = torch.randn((*batch, 2))
    y = torch.randn(batch)
    z = torch.randn((*batch, 3, 1))
    tc = Outer(x, y, Inner(z, batch_size=batch), batch_size=batch)
    plain: Plain = {"x": x, "y": y, "inner.z": z}
    n = len(batch)
    steps = data.draw(st.integers(1, 6))
    for _ in range(steps):
        options = ops_for(tuple(tc.batch_size), data.draw)
        name, on_tc, on_plain = options[data.draw(st.integers(0, len(options) - 1))]
        tc = on_tc(tc, n)
        plain = on_plain(plain, n)
        n = batch_ndim_after(name, n)
        assert isinstance(tc, Outer), name
        assert len(tc.batch_size) == n, name
        assert tc.inner.batch_size == tc.batch_size, name
        for key, value in plain.items():
            got = tc["inner", "z"] if key == "inner.z" else tc[key]
            assert got.shape == value.shape, (name, key)
            assert torch.allclose(got, value), (name, key)
            assert got.shape[:n] == tc.batch_size, (name, key)


@settings(max_examples=40, deadline=None)
@given(
    keys=st.lists(st.text("abc", min_size=1, max_size=2), min_size=1, max_size=4, unique=True),
    batch=st.lists(st.integers(1, 3), max_size=2),
)
def test_tensordict_set_get_select_exclude_round_trip(keys: list[str], batch: list[int]) -> None:
    values = {key: torch.randn((*batch, 2)) for key in keys}
    td = TensorDict({}, batch_size=batch)
    for key, value in values.items():
        td["nest", key] = value
    assert list(td["nest"].keys()) == keys
    for key, value in values.items():
        assert td.get(("nest", key)) is value
    first = keys[0]
    assert list(td.select(("nest", first)).keys(True, True)) == [("nest", first)]
    assert ("nest", first) not in td.exclude(("nest", first)).keys(True)
    flat = td.flatten_keys("/")
    assert set(flat.keys()) == {f"nest/{k}" for k in keys}
    assert (flat.unflatten_keys("/") == td).all()
