"""One check per entry of ``tensorclass.compat.private.TABLE``, run under the alias (the
way TorchRL reaches each name: by tensordict's module path, or as a method of tensorclass's
objects). Prints ``{"path.name": true | "what failed"}`` as JSON."""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable

import tensorclass

tensorclass.install_as_tensordict()

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from tensordict import NonTensorData, TensorDict, lazy_stack  # noqa: E402
from tensordict.nn import (  # noqa: E402
    ProbabilisticTensorDictModule,
    TensorDictModule,
    TensorDictSequential,
    set_skip_existing,
)

from tensorclass.compat.private import TABLE  # noqa: E402

CHECKS: dict[str, Callable[[], bool]] = {}


def check(name: str) -> Callable[[Callable[[], bool]], Callable[[], bool]]:
    def register(fn: Callable[[], bool]) -> Callable[[], bool]:
        CHECKS[name] = fn
        return fn

    return register


def _td() -> TensorDict:
    return TensorDict(
        a=torch.zeros(3, 2), n=TensorDict(b=torch.ones(3), batch_size=[3]), batch_size=[3]
    )


@check("tensordict.NestedKey")
def _() -> bool:
    from tensordict import NestedKey

    return (
        isinstance("a", NestedKey)
        and isinstance(("a", ("b",)), NestedKey)
        and not isinstance(["a"], NestedKey)
        and not isinstance(("a", 1), NestedKey)
        and not isinstance((), NestedKey)
    )


@check("tensordict.utils.NestedKey")
def _() -> bool:
    import tensordict
    from tensordict.utils import NestedKey

    return NestedKey is tensordict.NestedKey and isinstance(("x",), NestedKey)


@check("tensordict.utils.is_seq_of_nested_key")
def _() -> bool:
    from tensordict.utils import is_seq_of_nested_key

    return is_seq_of_nested_key(["a", ("b", "c")]) and not is_seq_of_nested_key([1])


@check("tensordict.utils._zip_strict")
def _() -> bool:
    from tensordict.utils import _zip_strict

    try:
        list(_zip_strict([1, 2], [3]))
    except ValueError:
        return list(_zip_strict([1], [2])) == [(1, 2)]
    return False


@check("tensordict.utils._unravel_key_to_tuple")
def _() -> bool:
    from tensordict.utils import _unravel_key_to_tuple

    return _unravel_key_to_tuple(("a", ("b", "c"))) == ("a", "b", "c")


@check("tensordict.utils._getitem_batch_size")
def _() -> bool:
    from tensordict.utils import _getitem_batch_size

    index = (None, ..., 0, slice(1, 3))
    return _getitem_batch_size(torch.Size([4, 3, 5]), index) == torch.zeros(4, 3, 5)[index].shape


@check("tensordict.utils._maybe_correct_neg_dim")
def _() -> bool:
    from tensordict.utils import _maybe_correct_neg_dim

    try:
        _maybe_correct_neg_dim(3, torch.Size([2, 2]))
    except IndexError:
        return _maybe_correct_neg_dim(-1, torch.Size([2, 2])) == 1
    return False


@check("tensordict.utils._is_non_tensor")
def _() -> bool:
    from tensordict.utils import _is_non_tensor

    return _is_non_tensor(NonTensorData) and not _is_non_tensor(torch.Tensor)


@check("tensordict.utils._is_tensorclass")
def _() -> bool:
    from tensordict import tensorclass as decorator
    from tensordict.utils import _is_tensorclass

    @decorator
    class Point:
        x: torch.Tensor

    return _is_tensorclass(Point) and not _is_tensorclass(TensorDict)


@check("tensordict.base._default_is_leaf")
def _() -> bool:
    from tensordict.base import _default_is_leaf

    return _default_is_leaf(torch.Tensor) and not _default_is_leaf(TensorDict)


@check("tensordict.base._is_leaf_nontensor")
def _() -> bool:
    from tensordict.base import _is_leaf_nontensor

    td = _td()
    td["s"] = "text"
    keys = set(td.keys(True, True, is_leaf=_is_leaf_nontensor))
    return keys == {"a", ("n", "b"), "s"}


@check("tensordict.base._NESTED_TENSORS_AS_LISTS")
def _() -> bool:
    from tensordict.base import _NESTED_TENSORS_AS_LISTS as marker

    return not marker and marker(torch.Tensor) and not marker(TensorDict)


@check("tensordict.base._ACCEPTED_CLASSES")
def _() -> bool:
    from tensordict.base import _ACCEPTED_CLASSES

    return isinstance(_td(), _ACCEPTED_CLASSES) and isinstance(torch.zeros(1), _ACCEPTED_CLASSES)


@check("tensordict.nn.utils._set_dispatch_td_nn_modules")
def _() -> bool:
    from tensordict.nn.utils import _set_dispatch_td_nn_modules

    module = TensorDictModule(lambda a: a + 1, in_keys=["a"], out_keys=["b"])
    with _set_dispatch_td_nn_modules(True):
        out = module(_td())
    return bool((out["b"] == 1).all())


@check("tensordict.nn.utils._set_skip_existing_None")
def _() -> bool:
    from tensordict.nn.utils import _set_skip_existing_None

    class Double(TensorDictModule):
        @_set_skip_existing_None()
        def forward(self, tensordict):
            return super().forward(tensordict)

    module = Double(lambda a: a * 2, in_keys=["a"], out_keys=["b"])
    td = TensorDict(a=torch.ones(2), b=torch.zeros(2), batch_size=[2])
    module(td)
    runs = bool((td["b"] == 2).all())
    td["b"] = torch.zeros(2)
    with set_skip_existing(True):
        module(td)
    return runs and bool((td["b"] == 0).all())


@check("tensordict.nn.probabilistic._use_generator")
def _() -> bool:
    from tensordict.nn.probabilistic import _use_generator

    generator = torch.Generator().manual_seed(3)
    with _use_generator(generator):
        drawn = torch.randn(3)
    return torch.equal(drawn, torch.randn(3, generator=torch.Generator().manual_seed(3)))


@check("tensordict.nn.functional_modules._exclude_td_from_pytree")
def _() -> bool:
    from tensordict.nn.functional_modules import _exclude_td_from_pytree

    td = _td()
    with _exclude_td_from_pytree():
        inside = len(pytree.tree_leaves(td))
    return inside == 1 and len(pytree.tree_leaves(td)) == 2


@check("tensordict.base.TensorDictBase._get_str")
def _() -> bool:
    td = _td()
    return td._get_str("a", None) is td["a"] and td._get_str("zz", default=None) is None


@check("tensordict.base.TensorDictBase._set_str")
def _() -> bool:
    td = _td()
    td._set_str("c", torch.ones(3), validated=True, inplace=False, non_blocking=False)
    return bool((td["c"] == 1).all())


@check("tensordict.base.TensorDictBase._fast_apply")
def _() -> bool:
    td = _td()
    out = td._fast_apply(lambda x: x + 1, checked=False, num_threads=0, propagate_lock=True)
    named = td._fast_apply(
        lambda k, x: x if k == "a" else None, named=True, nested_keys=True, filter_empty=True
    )
    return bool((out["n", "b"] == 2).all()) and set(named.keys()) == {"a"}


@check("tensordict.base.TensorDictBase._new_unsafe")
def _() -> bool:
    td = TensorDict._new_unsafe({"x": torch.zeros(2)}, batch_size=[2])
    return type(td) is TensorDict and td.batch_size == torch.Size([2])


@check("tensordict.nn.TensorDictSequential._compute_in_and_out_keys")
def _() -> bool:
    first = TensorDictModule(lambda a: a, in_keys=["a"], out_keys=["b"])
    second = TensorDictModule(lambda b, c: b, in_keys=["b", "c"], out_keys=["d"])
    seq = TensorDictSequential(first)
    return seq._compute_in_and_out_keys([first, second]) == (["a", "c"], ["b", "d"])


def _prob(**kwargs: object) -> ProbabilisticTensorDictModule:
    return ProbabilisticTensorDictModule(
        in_keys=["loc", "scale"],
        out_keys=["action"],
        distribution_class=torch.distributions.Normal,
        return_log_prob=True,
        **kwargs,
    )


@check("tensordict.nn.ProbabilisticTensorDictModule._out_keys")
def _() -> bool:
    return _prob()._out_keys == ["action"]


@check("tensordict.nn.ProbabilisticTensorDictModule._resolve_generator")
def _() -> bool:
    module = _prob(generator="seed")
    td = TensorDict(seed=torch.tensor([5]), batch_size=[])
    generator, writeback = module._resolve_generator(td)
    writeback(generator)
    fixed, none = _prob(generator=7)._resolve_generator(td)
    return (
        isinstance(generator, torch.Generator)
        and int(td["seed"]) != 5
        and none is None
        and isinstance(fixed, torch.Generator)
    )


@check("tensordict.nn.ProbabilisticTensorDictModule._composite_lp_aggreate_at_init")
def _() -> bool:
    from tensordict.nn import set_composite_lp_aggregate

    with set_composite_lp_aggregate(True):
        on = _prob()._composite_lp_aggreate_at_init
    with set_composite_lp_aggregate(False):
        off = _prob()._composite_lp_aggreate_at_init
    return on is True and off is False


@check("tensordict.base.TensorDictBase._has_names")
def _() -> bool:
    td = _td()
    before = td._has_names()
    td.names = ["time"]
    return not before and td._has_names()


@check("tensordict.base.TensorDictBase._has_exclusive_keys")
def _() -> bool:
    same = lazy_stack([TensorDict(x=torch.zeros(1)), TensorDict(x=torch.ones(1))])
    different = lazy_stack([TensorDict(x=torch.zeros(1)), TensorDict(y=torch.ones(1))])
    return (
        not same._has_exclusive_keys
        and different._has_exclusive_keys
        and not _td()._has_exclusive_keys
    )


results: dict[str, object] = {}
for entry in TABLE:
    name = f"{entry.path}.{entry.name}"
    fn = CHECKS.get(name)
    if fn is None:
        results[name] = "no check"
        continue
    try:
        results[name] = True if fn() else "returned False"
    except Exception:  # reported to the test, which shows it
        results[name] = traceback.format_exc(limit=3)
print(json.dumps(results))
