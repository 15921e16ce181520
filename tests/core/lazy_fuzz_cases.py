"""Random cases for the differential fuzz of lazy-stack reads (test_lazy_fuzz_reads.py).

A case is a list of members with one batch size and one set of leaf shapes (so their dense
stack exists), a stack dim, and an operation: a function of the stack, run on the lazy stack
and on the dense stack of the same members. Everything is drawn from one ``random.Random``
and one ``torch.Generator`` seeded by the case number, so a case is reproducible by number.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from tensorclass import NonTensorStack, TensorClass, TensorDict
from tensorclass.engine.core.state import TensorCore


class FuzzInner(TensorClass):
    x: torch.Tensor
    k: torch.Tensor


class FuzzTyped(TensorClass):
    a: torch.Tensor
    b: torch.Tensor
    inner: FuzzInner
    tag: str = "t"


@dataclass
class Case:
    """One differential case: ``op`` applied to the lazy and to the dense stack."""

    members: list[Any]
    dense_members: list[Any]
    dim: int
    op: Callable[[Any], Any]
    text: str


def _values(g: torch.Generator, shape: tuple[int, ...], kind: str) -> Tensor:
    """Small integer values (exact sums and means), as float, long or bool."""
    raw = torch.randint(-4, 5, shape, generator=g)
    if kind == "float":
        return raw.float()
    if kind == "bool":
        return raw > 0
    return raw


def _members(rng: random.Random, g: torch.Generator) -> list[Any]:
    low = 0 if rng.random() < 0.1 else 1
    bs = tuple(rng.randint(low, 3) for _ in range(rng.randint(1, 4)))
    count = rng.randint(1, 4)
    feat_a = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 2)))
    feat_x = tuple(rng.randint(1, 2) for _ in range(rng.randint(0, 1)))
    typed = rng.random() < 0.5
    members: list[Any] = []
    for _ in range(count):
        a, b = _values(g, (*bs, *feat_a), "float"), _values(g, bs, "long")
        x, k = _values(g, (*bs, *feat_x), "float"), _values(g, bs, "long")
        if typed:
            inner = FuzzInner(x=x, k=k, batch_size=bs)
            members.append(FuzzTyped(a=a, b=b, inner=inner, batch_size=bs))
        else:
            deep = {"y": _values(g, bs, "float"), "f": _values(g, (*bs, 2), "bool")}
            members.append(TensorDict({"a": a, "b": b, "n": {"x": x, "k": k, "m": deep}}, bs))
    if rng.random() < 0.2:
        names = [f"d{i}" for i in range(len(bs))]
        for member in members:
            member.names = names
    # Left out: members with different non-tensor values (a dense split keeps a stack of
    # one value where a lazy stack of one member reads the value), members with their keys
    # in different orders (a lazy stack lists its first member's order, and indexing the
    # stack dim gives the member itself, in its own order).
    return members


# -- indices -------------------------------------------------------------------------------


def _long(rng: random.Random, size: int, shape: tuple[int, ...], bad: bool) -> Tensor:
    high = size + (2 if bad else 0)
    values = [rng.randrange(-size, high) if size else 0 for _ in range(math.prod(shape))]
    return torch.tensor(values, dtype=torch.long).reshape(shape)


def _part(
    rng: random.Random, g: torch.Generator, bs: tuple[int, ...], at: int, bad: bool
) -> tuple[Any, int]:
    """One index part at batch dim ``at``: the part and how many batch dims it consumes."""
    size = bs[at]
    choice = rng.randrange(9) if size else rng.choice([1, 2, 3])
    if choice == 0:
        return rng.randrange(-size, size + (1 if bad else 0)), 1
    if choice == 1:
        start = rng.choice([None, rng.randint(-size - 1, size + 1)])
        stop = rng.choice([None, rng.randint(-size - 1, size + 1)])
        return slice(start, stop, rng.choice([None, 1, 2, 3])), 1
    if choice == 2:
        return slice(None), 1
    if choice in (3, 4):
        rank = rng.randint(1, len(bs) - at)
        shape = bs[at : at + rank]
        if bad and rng.random() < 0.5:
            shape = (shape[0] + 1, *shape[1:])
        return torch.rand(shape, generator=g) > 0.4, rank
    if choice in (5, 6):
        shape = rng.choice([(rng.randint(1, 4),), (rng.randint(1, 2), rng.randint(1, 3)), ()])
        return _long(rng, size, shape, bad), 1
    if choice == 7:
        listed = [rng.randrange(-size, size) for _ in range(rng.randint(1, 3))]
        form = rng.randrange(4)
        if form == 1:
            return np.array(listed), 1
        if form == 2:
            return [rng.random() < 0.5 for _ in range(size)], 1
        if form == 3:
            return torch.tensor(rng.randrange(-size, size)), 1
        return listed, 1
    if rng.random() < 0.3:
        return rng.choice([True, False, torch.tensor(True), torch.tensor(False)]), 0
    return range(0, size, rng.randint(1, 2)), 1


def random_index(rng: random.Random, g: torch.Generator, bs: tuple[int, ...]) -> Any:
    """A random batch index (mostly valid; ``bad`` ones test the errors)."""
    bad = rng.random() < 0.1
    parts: list[Any] = []
    at, used_ellipsis = 0, False
    target = rng.randint(0, len(bs))
    while at < target:
        roll = rng.random()
        if roll < 0.1:
            parts.append(None)
            continue
        if roll < 0.17 and not used_ellipsis:
            used_ellipsis = True
            parts.append(Ellipsis)
            # the ellipsis stands for some dims: skip them
            skipped = rng.randint(0, len(bs) - at - 1) if len(bs) - at > 1 else 0
            at += skipped
            continue
        part, consumed = _part(rng, g, bs, at, bad)
        parts.append(part)
        at += consumed
    if rng.random() < 0.1:
        parts.append(None)
    if len(parts) == 1 and rng.random() < 0.5:
        return parts[0]
    return tuple(parts)


# -- operations ----------------------------------------------------------------------------


def _dim(rng: random.Random, n: int) -> int:
    d = rng.randrange(n)
    return d - n if rng.random() < 0.3 else d


def random_op(
    rng: random.Random, g: torch.Generator, bs: tuple[int, ...], typed: bool
) -> tuple[Callable[[Any], Any], str]:
    """A random read or out-of-place operation of a stack of batch size ``bs``."""
    n = len(bs)
    kind = rng.randrange(48)
    if kind <= 7:
        index = random_index(rng, g, bs)
        return (lambda s: s[index]), f"s[{index!r}]"
    if kind == 8:
        d = _dim(rng, n)
        return (lambda s: s.unbind(d)), f"s.unbind({d})"
    if kind == 9:
        d = _dim(rng, n)
        if rng.random() < 0.5:
            size: Any = rng.randint(1, bs[d] + 1)
        else:
            size = []
            left = bs[d]
            while left:
                take = rng.randint(0, left)
                size.append(take)
                left -= take
        return (lambda s: s.split(size, d)), f"s.split({size!r}, {d})"
    if kind == 10:
        d, chunks = _dim(rng, n), rng.randint(1, 4)
        return (lambda s: s.chunk(chunks, d)), f"s.chunk({chunks}, {d})"
    if kind == 11:
        d = rng.randint(-n - 1, n)
        if rng.random() < 0.5:
            return (lambda s: s.unsqueeze(d)), f"s.unsqueeze({d})"
        sq: int | None = _dim(rng, n) if rng.random() < 0.7 else None
        return (lambda s: s.squeeze(sq) if sq is not None else s.squeeze()), f"s.squeeze({sq})"
    if kind == 12:
        order = list(range(n))
        rng.shuffle(order)
        choice = rng.randrange(3)
        if choice == 0:
            return (lambda s: s.permute(*order)), f"s.permute{tuple(order)}"
        d0, d1 = _dim(rng, n), _dim(rng, n)
        if choice == 1:
            return (lambda s: s.transpose(d0, d1)), f"s.transpose({d0}, {d1})"
        return (lambda s: s.movedim(d0, d1)), f"s.movedim({d0}, {d1})"
    if kind == 13:
        total = math.prod(bs)
        shape = _factor(rng, total)
        if shape and rng.random() < 0.3:
            shape[rng.randrange(len(shape))] = -1
        method = rng.choice(["view", "reshape"])
        return (lambda s: getattr(s, method)(*shape)), f"s.{method}({shape})"
    if kind == 14:
        start = rng.randrange(n)
        end = rng.randrange(start, n)
        if rng.random() < 0.5:
            return (lambda s: s.flatten(start, end)), f"s.flatten({start}, {end})"
        d = _dim(rng, n)
        sizes = _factor(rng, bs[d])
        if len(sizes) == 0:
            sizes = [1]
        if rng.random() < 0.3:
            sizes[0] = -1
        return (lambda s: s.unflatten(d, sizes)), f"s.unflatten({d}, {sizes})"
    if kind == 15:
        extra = [rng.randint(1, 2) for _ in range(rng.randint(0, 2))]
        shape = [
            *extra,
            *[rng.choice([size, -1]) if size != 1 else rng.choice([1, 2, -1]) for size in bs],
        ]
        return (lambda s: s.expand(*shape)), f"s.expand({shape})"
    if kind == 16:
        dims = sorted(set(rng.randrange(n) for _ in range(rng.randint(1, n))))
        if rng.random() < 0.5:
            return (lambda s: s.flip(dims)), f"s.flip({dims})"
        shift, d = rng.randint(-3, 3), _dim(rng, n)
        return (lambda s: s.roll(shift, d)), f"s.roll({shift}, {d})"
    if kind == 17:
        d = _dim(rng, n)
        start = rng.randint(0, bs[d])
        length = rng.randint(0, bs[d] - start)
        return (lambda s: s.narrow(d, start, length)), f"s.narrow({d}, {start}, {length})"
    if kind == 18:
        d = _dim(rng, n)
        shape = list(bs)
        shape[d] = rng.randint(1, 4)
        index = torch.randint(0, max(bs[d], 1), shape, generator=g)
        return (lambda s: s.gather(d, index)), f"s.gather({d}, {index.tolist()})"
    if kind == 19:
        rank = rng.randint(1, n)
        mask = torch.rand(bs[:rank], generator=g) > 0.5
        if rng.random() < 0.3:
            mask = torch.rand(bs, generator=g) > 0.5
        return (lambda s: s.masked_select(mask)), f"s.masked_select(mask{list(mask.shape)})"
    if kind == 20:
        cut = rng.randint(0, n)
        mask = torch.rand(bs[cut:], generator=g) > 0.5  # broadcast from the right
        if rng.random() < 0.5:
            return (
                lambda s: s.masked_fill(mask, 7.0)
            ), f"s.masked_fill(mask{list(mask.shape)}, 7.0)"
        other_value = rng.choice([0, -2.5])
        return (
            lambda s: s.where(mask, other_value)
        ), f"s.where(mask{list(mask.shape)}, {other_value})"
    if kind == 21:
        name = rng.choice(["sum", "mean", "amax", "amin", "prod", "nansum", "std", "max", "min"])
        choice = rng.randrange(3)
        if choice == 0 and name not in ("max", "min"):
            return (lambda s: getattr(s, name)()), f"s.{name}()"
        if choice == 1 and name not in ("max", "min", "std"):
            dims = tuple(sorted(set(_dim(rng, n) for _ in range(rng.randint(1, n)))))
            dims = tuple(sorted(set(d % n for d in dims)))
            keep = rng.random() < 0.3
            return (
                lambda s: getattr(s, name)(dim=dims, keepdim=keep)
            ), f"s.{name}(dim={dims}, keepdim={keep})"
        d = _dim(rng, n)
        if name in ("max", "min"):
            return (lambda s: getattr(s, name)(dim=d)), f"s.{name}(dim={d})"
        return (lambda s: getattr(s, name)(dim=d)), f"s.{name}(dim={d})"
    if kind == 22:
        d = _dim(rng, n)
        name = rng.choice(["cumsum", "cumprod"])
        return (lambda s: getattr(s, name)(d)), f"s.{name}({d})"
    if kind == 23:
        choice = rng.randrange(6)
        if choice == 0:
            value = rng.choice([2, -1.5, torch.tensor(3.0)])
            op = rng.choice(["add", "sub", "mul", "truediv", "pow"])
            import operator as o

            f = getattr(o, op)
            if rng.random() < 0.5:
                return (lambda s: f(s, value)), f"{op}(s, {value})"
            return (lambda s: f(value, s)), f"{op}({value}, s)"
        if choice == 1:
            return (lambda s: s + s.clone()), "s + s.clone()"
        if choice == 2:
            return (
                lambda s: s * s.contiguous() if hasattr(s, "members") else s * s
            ), "s * dense(s)"
        if choice == 3:
            t = torch.randint(-2, 3, bs[rng.randint(0, n) :], generator=g).float()
            return (lambda s: s + t), f"s + tensor{list(t.shape)}"
        if choice == 4:
            return (lambda s: -s.abs()), "-s.abs()"
        return (lambda s: s.exp().clamp(max=3.0)), "s.exp().clamp(max=3)"
    if kind == 24:
        cmp = rng.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        import operator as o

        f = getattr(o, cmp)
        if rng.random() < 0.5:
            return (lambda s: f(s, 0)), f"{cmp}(s, 0)"
        return (lambda s: f(s, s.flip(0))), f"{cmp}(s, s.flip(0))"
    if kind == 25:
        choice = rng.randrange(5)
        if choice == 0:
            return (lambda s: s.clone()), "s.clone()"
        if choice == 1:
            return (lambda s: s.to(torch.float64)), "s.to(float64)"
        if choice == 2:
            return (lambda s: s.apply(lambda t: t * 2)), "s.apply(t * 2)"
        if choice == 3:
            return (
                lambda s: s.apply(lambda a, b: a - 2 * b, s.clone())
            ), "s.apply(a - 2 * b, s.clone())"
        return (lambda s: s.to(torch.int32)), "s.to(int32)"
    if kind == 26:
        keys = (
            [("a",), ("inner", "x")] if typed else [("a",), ("n", "x"), ("n", "m"), ("n", "m", "y")]
        )
        chosen = rng.sample(keys, rng.randint(1, len(keys)))
        chosen_keys = [k[0] if len(k) == 1 else k for k in chosen]
        if rng.random() < 0.5:
            return (lambda s: s.select(*chosen_keys)), f"s.select({chosen_keys})"
        return (lambda s: s.exclude(*chosen_keys)), f"s.exclude({chosen_keys})"
    if kind == 27:
        nested, leaves = rng.random() < 0.5, rng.random() < 0.5
        return (lambda s: list(s.keys(nested, leaves))), f"list(s.keys({nested}, {leaves}))"
    if kind == 28:
        key = rng.choice(
            [("inner", "x"), ("inner",), "inner"]
            if typed
            else [("n", "m", "f"), ("n", "m"), "n", ("n", "k")]
        )
        choice = rng.randrange(3)
        if choice == 0:
            return (lambda s: s.get(key)), f"s.get({key!r})"
        d = _dim(rng, n)
        if choice == 1:
            return (lambda s: s.get(key).unbind(d)), f"s.get({key!r}).unbind({d})"
        return (lambda s: s[key]), f"s[{key!r}]"
    if kind == 29:
        name = rng.choice(["repeat", "tile"])
        reps = [rng.randint(1, 2) for _ in range(n + rng.randint(0, 1))]
        return (
            lambda s: getattr(s, name)(*reps) if name == "repeat" else s.tile(reps)
        ), f"s.{name}({reps})"
    if kind == 30:
        d = _dim(rng, n)
        name = rng.choice(["softmax", "logsumexp", "cummax", "all", "any"])
        return (lambda s: getattr(s, name)(d)), f"s.{name}({d})"
    if kind == 31:
        d = _dim(rng, n)
        sections = rng.choice(
            [rng.randint(1, 3), sorted(rng.sample(range(bs[d] + 1), min(2, bs[d] + 1)))]
        )
        return (lambda s: s.tensor_split(sections, d)), f"s.tensor_split({sections}, {d})"
    if kind == 32:
        choice = rng.randrange(5)
        if choice == 0:
            return (lambda s: s.flatten_keys()), "s.flatten_keys()"
        if choice == 1:
            return (lambda s: list(s.items(True, True))), "list(s.items(True, True))"
        if choice == 2:
            return (
                lambda s: (s.numel(), s.ndim, s.shape, s.batch_dims)
            ), "(numel, ndim, shape, batch_dims)"
        if choice == 3:
            return (lambda s: s.to_dict()), "s.to_dict()"
        return (lambda s: list(s.values(True, True))), "list(s.values(True, True))"
    if kind == 33:
        d = _dim(rng, n)
        reps = rng.choice([2, torch.randint(0, 3, (bs[d],), generator=g)])
        return (lambda s: s.repeat_interleave(reps, d)), f"s.repeat_interleave({reps}, {d})"
    if kind == 34:
        other = rng.choice(["maximum", "minimum", "lerp"])
        if other == "lerp":
            return (
                lambda s: s.float().lerp(s.flip(0).float(), 0.5) if hasattr(s, "float") else s
            ), "s.lerp(s.flip(0), .5)"
        return (lambda s: getattr(s, other)(s.flip(0))), f"s.{other}(s.flip(0))"
    if kind == 35:
        shape = [*[rng.randint(1, 2) for _ in range(rng.randint(0, 1))], *bs]
        return (
            lambda s: torch.stack([s, s.clone()], rng_dim(len(shape)))
        ), "torch.stack([s, s.clone()])"
    if kind == 36:
        d = _dim(rng, n)
        return (lambda s: torch.cat([s, s.flip(d)], d)), f"torch.cat([s, s.flip({d})], {d})"
    if kind == 37:
        d = rng.randint(-n - 2, n + 1)
        name = rng.choice(["unbind", "squeeze", "sum", "flip", "cumsum", "unsqueeze"])
        return (lambda s: getattr(s, name)(d)), f"s.{name}({d}) (maybe out of range)"
    if kind == 38:
        choice = rng.randrange(6)
        d = _dim(rng, n)
        if choice == 0:
            return (lambda s: torch.unbind(s, d)), f"torch.unbind(s, {d})"
        if choice == 1:
            return (lambda s: torch.split(s, 1, d)), f"torch.split(s, 1, {d})"
        if choice == 2:
            return (lambda s: torch.squeeze(s, d)), f"torch.squeeze(s, {d})"
        if choice == 3:
            return (lambda s: torch.flatten(s, 0, d % n)), f"torch.flatten(s, 0, {d % n})"
        if choice == 4:
            return (lambda s: torch.unsqueeze(s, d)), f"torch.unsqueeze(s, {d})"
        return (lambda s: torch.clone(s)), "torch.clone(s)"
    if kind == 39:
        if typed:
            return (
                lambda s: (s.a, s.inner.x, s.inner.k, s.b, s.tag, s.get("tag"))
            ), "(s.a, s.inner.x, s.inner.k, s.b, s.tag)"
        return (
            lambda s: (s["n", "m", "y"], s.get(("n", "zz"), None), s.get("b"))
        ), "(s['n','m','y'], get default, s.get('b'))"
    if kind == 40:
        dims = tuple(sorted(set(rng.randrange(n) for _ in range(rng.randint(1, n)))))
        return (lambda s: s.squeeze(dims)), f"s.squeeze({dims})"
    if kind == 41:
        cut = rng.randint(0, n)
        mask = torch.rand(bs[cut:], generator=g) > 0.5
        return (
            lambda s: s.where(mask, s.flip(0) * 0)
        ), f"s.where(mask{list(mask.shape)}, s.flip(0) * 0)"
    if kind == 42:
        order = list(range(n))
        rng.shuffle(order)
        if rng.random() < 0.3:
            order[0] = order[-1]
        return (lambda s: s.permute(order)), f"s.permute({order})"
    if kind == 43:
        name = rng.choice(
            [
                "float",
                "bool",
                "int",
                "double",
                "detach",
                "is_empty",
                "isfinite",
                "sign",
                "round",
                "logical_not",
                "sigmoid",
                "numel",
            ]
        )
        return (lambda s: getattr(s, name)()), f"s.{name}()"
    if kind == 44:
        factory = rng.choice([torch.zeros_like, torch.ones_like])
        return (lambda s: factory(s)), f"{factory.__name__}(s)"
    if kind == 45:
        choice = rng.randrange(5)
        if choice == 0:
            return (lambda s: s.sum(reduce=True)), "s.sum(reduce=True)"
        if choice == 1:
            return (lambda s: s.std(dim=_DIM, correction=0)), "s.std(dim, correction=0)"
        if choice == 2:
            return (lambda s: s.norm()), "s.norm()"
        if choice == 3:
            return (lambda s: (s.all(), s.any())), "(s.all(), s.any())"
        d = _dim(rng, n)
        return (lambda s: s.log_softmax(d)), f"s.log_softmax({d})"
    if kind == 46:
        return (lambda s: s.split_keys(["a"], ["b"])), "s.split_keys(['a'], ['b'])"
    if kind == 47:
        d = rng.randrange(n)
        cut = (slice(None),) * d + (slice(0, 1),)
        if rng.random() < 0.5:
            return (lambda s: s[cut] + s), f"s[{cut}] + s"
        return (lambda s: s * s[cut]), f"s * s[{cut}]"
    raise AssertionError(kind)


_DIM = 0


def rng_dim(n: int) -> int:
    """A fixed dim for ``torch.stack`` of two stacks with ``n - 1`` batch dims."""
    return n // 2


def _factor(rng: random.Random, total: int) -> list[int]:
    """A random shape whose product is ``total``."""
    shape: list[int] = []
    left = total
    while left > 1:
        divisors = [d for d in range(2, left + 1) if left % d == 0]
        d = rng.choice(divisors)
        shape.append(d)
        left //= d
        if rng.random() < 0.2:
            shape.append(1)
    if rng.random() < 0.2:
        shape.insert(rng.randint(0, len(shape)), 1)
    return shape


def _lazy_members(rng: random.Random, g: torch.Generator) -> tuple[list[Any], list[Any]]:
    """Members that are lazy stacks themselves (and their dense copies), or members
    holding a lazy stack under a nested key."""
    from tensorclass import lazy_stack

    inner = _members(rng, g)
    bs = inner[0].batch_size
    count = rng.randint(1, 3)
    if rng.random() < 0.5 or 0 in bs:
        d = rng.randint(0, len(bs))
        groups = [_clone_all(inner, g) for _ in range(count)]
        # lazy members, with dense ones of the same class among them at times
        stackers = [rng.choice([lazy_stack, lazy_stack, torch.stack]) for _ in groups]
        members = [stack(group, d) for stack, group in zip(stackers, groups)]
        return members, [torch.stack(group, d) for group in groups]
    members, dense = [], []
    for _ in range(count):
        group = _clone_all(inner, g)
        d = rng.randint(0, len(bs) - 1)
        parts = [m.unbind(d) for m in group]
        lazy_n = TensorDict(
            {
                "s": lazy_stack(list(parts[0]), d),
                "t": group[0].get("a") if not isinstance(group[0], FuzzTyped) else group[0].a,
            },
            bs,
        )
        dense_n = TensorDict({"s": torch.stack(list(parts[0]), d), "t": lazy_n["t"]}, bs)
        members.append(lazy_n)
        dense.append(dense_n)
    return members, dense


def _clone_all(members: list[Any], g: torch.Generator) -> list[Any]:
    """New members with the same structure (new values)."""
    return [m.apply(lambda t: _values(g, tuple(t.shape), _kind(t))) for m in members]


def _kind(t: Tensor) -> str:
    return "float" if t.is_floating_point() else "bool" if t.dtype is torch.bool else "long"


def make_case(seed: int) -> Case:
    """The case numbered ``seed``."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    if rng.random() < 0.25:
        members, dense_members = _lazy_members(rng, g)
    else:
        members = dense_members = _members(rng, g)
        if rng.random() < 0.15:  # a member held at several positions
            members = dense_members = [rng.choice(members) for _ in range(rng.randint(2, 4))]
        if rng.random() < 0.15 and not isinstance(members[0], FuzzTyped):
            for member in members:
                member.set_non_tensor("txt", "same")
    dim = rng.randint(0, len(members[0].batch_size))
    if rng.random() < 0.2:
        dim = dim - len(members[0].batch_size) - 1
    dense = torch.stack(dense_members, dim)
    op, text = random_op(rng, g, tuple(dense.batch_size), isinstance(members[0], FuzzTyped))
    if rng.random() < 0.3:  # a second operation on the result (a lazy stack, often)
        try:
            first = op(dense)
        except Exception:
            return Case(members, dense_members, dim, op, text)
        if isinstance(first, TensorCore) and first.batch_dims:
            second, text2 = random_op(rng, g, tuple(first.batch_size), isinstance(first, FuzzTyped))
            return Case(
                members, dense_members, dim, lambda s: second(op(s)), f"{text} then {text2}"
            )
    return Case(members, dense_members, dim, op, text)


# -- comparing -------------------------------------------------------------------------------


def differences(lazy: Any, dense: Any, where: str = "result") -> list[str]:
    """How ``lazy`` reads differently from ``dense`` (empty if it does not)."""
    if isinstance(dense, TensorCore):
        if not isinstance(lazy, TensorCore):
            return [f"{where}: a {type(lazy).__name__}, expected a {type(dense).__name__}"]
        found = []
        if not isinstance(lazy, type(dense)):
            found.append(f"{where}: a {type(lazy).__name__}, expected a {type(dense).__name__}")
        if lazy.batch_size != dense.batch_size:
            return [
                *found,
                f"{where}: batch_size {list(lazy.batch_size)} != {list(dense.batch_size)}",
            ]
        if lazy.names != dense.names:
            found.append(f"{where}: names {lazy.names} != {dense.names}")
        keys_l, keys_d = list(lazy.keys(True, True)), list(dense.keys(True, True))
        if keys_l != keys_d:
            return [*found, f"{where}: keys {keys_l} != {keys_d}"]
        for key in keys_d:
            found += differences(lazy.get(key), dense.get(key), f"{where}[{key!r}]")
        return found
    if isinstance(dense, NonTensorStack) or isinstance(lazy, NonTensorStack):
        # get gives a stack of values as itself; a stack of equal values and the shared
        # value read the same element by element (a lazy stack of one member squeezed is
        # the member, whose value is shared; the dense stack stacked it)
        if not isinstance(lazy, NonTensorStack) or not isinstance(dense, NonTensorStack):
            stack, value = (lazy, dense) if isinstance(lazy, NonTensorStack) else (dense, lazy)
            equal = all(item == value for item in stack.array.reshape(-1).tolist())
            return [] if equal else [f"{where}: {lazy!r} != {dense!r}"]
        if lazy.shape != dense.shape:
            return [f"{where}: shape {list(lazy.shape)} != {list(dense.shape)}"]
        return differences(lazy.tolist(), dense.tolist(), where)
    if isinstance(dense, Tensor):
        if not isinstance(lazy, Tensor):
            return [f"{where}: a {type(lazy).__name__}, expected a tensor"]
        if lazy.shape != dense.shape:
            return [f"{where}: shape {list(lazy.shape)} != {list(dense.shape)}"]
        if lazy.dtype != dense.dtype:
            return [f"{where}: dtype {lazy.dtype} != {dense.dtype}"]
        same = (
            torch.allclose(lazy, dense, equal_nan=True)
            if dense.is_floating_point()
            else torch.equal(lazy, dense)
        )
        return [] if same else [f"{where}: values differ"]
    if isinstance(dense, dict):
        if not isinstance(lazy, dict) or list(lazy) != list(dense):
            return [f"{where}: {lazy!r} != {dense!r}"]
        return [d for k in dense for d in differences(lazy[k], dense[k], f"{where}[{k!r}]")]
    if isinstance(dense, (tuple, list)):
        if not isinstance(lazy, (tuple, list)) or len(lazy) != len(dense):
            return [
                f"{where}: {type(lazy).__name__} of {len(lazy) if isinstance(lazy, (tuple, list)) else '?'}, expected {len(dense)} items"
            ]
        return [
            d
            for i, (a, b) in enumerate(zip(lazy, dense))
            for d in differences(a, b, f"{where}[{i}]")
        ]
    return [] if lazy == dense else [f"{where}: {lazy!r} != {dense!r}"]


def run_case(case: Case) -> list[str]:
    """Run ``case`` on the lazy and the dense stack: the differences (errors included)."""
    from tensorclass import lazy_stack

    dense_stack = torch.stack(case.dense_members, case.dim)
    lazy = lazy_stack(case.members, case.dim)
    try:
        expected = case.op(dense_stack)
    except Exception as err:
        try:
            got = case.op(lazy)
        except Exception:
            return []
        if "view size is not compatible" in str(err):
            return []  # a lazy stack is never one memory: its dense views are copies
        return [f"dense raised {type(err).__name__}: {err}; lazy returned {type(got).__name__}"]
    try:
        got = case.op(lazy)
    except Exception as err:
        return [f"lazy raised {type(err).__name__}: {err}"]
    return differences(got, expected)
