"""The private tensordict names TorchRL 0.14.1 uses, each mapped onto tensorclass's own
primitives: :data:`TABLE`, the one list of them.

A program that imports ``tensordict`` under :func:`~tensorclass.install_as_tensordict` reaches
these names by tensordict's paths (``from tensordict.utils import _zip_strict``) or as
methods of its objects (``td._get_str(key, default)``). Each entry says where tensordict keeps
the name, what it means, and which TorchRL code uses it; its value is an engine function or a
thin adapter of its arguments onto one. Module names live only on the alias modules; methods
are attached to the engine's classes when the alias is installed (never otherwise), under
names no tensorclass code uses.

>>> from tensorclass.compat.private import TABLE
>>> entry = next(e for e in TABLE if e.name == "_zip_strict")
>>> entry.path, list(entry.value([1, 2], [3, 4]))
('tensordict.utils', [(1, 3), (2, 4)])
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.utils import _pytree as pytree

from ..engine.base import TensorDictBase
from ..engine.core.lazy_stacks import is_lazy_stack
from ..engine.core.state import TensorCore
from ..engine.keys.predicates import default_is_leaf, is_leaf_nontensor
from ..engine.shape.batch_dims import batch_dim
from ..engine.shape.indexing import indexed_batch_size, normalize_index
from ..keys import unravel_key_to_tuple
from ..nn.base import TensorDictModuleBase
from ..nn.generators import drawing_from, generator_from
from ..nn.probabilistic import ProbabilisticTensorDictModule
from ..nn.sequential import TensorDictSequential
from ..nn.skip import set_skip_existing
from ..non_tensor import NonTensorData, NonTensorStack
from ..typed import is_tensorclass

__all__ = ["TABLE", "Private", "install_methods", "module_names"]


@dataclass(frozen=True)
class Private:
    """One private tensordict name: where tensordict keeps it (a module path, or a class path
    for a method), its value here, what it means, and the TorchRL code that uses it."""

    path: str
    name: str
    value: Any
    meaning: str
    users: str


# -- module-level names ----------------------------------------------------------------------


def _zip_strict(*iterables: Any) -> Iterator[tuple[Any, ...]]:
    """``zip(..., strict=True)``."""
    return zip(*iterables, strict=True)


def _getitem_batch_size(shape: Sequence[int], index: Any) -> torch.Size:
    """The shape a tensor of ``shape`` has once indexed by ``index``."""
    size = torch.Size(shape)
    return indexed_batch_size(size, normalize_index(index, size))


def _maybe_correct_neg_dim(dim: int, shape: Sequence[int] | None, ndim: int | None = None) -> int:
    """A dim of ``shape`` (or of ``ndim`` dims) made non-negative; out of range raises."""
    count = len(shape) if ndim is None and shape is not None else ndim
    if count is None:
        raise TypeError("_maybe_correct_neg_dim: give a shape or ndim")
    return batch_dim(dim, count)


def _is_non_tensor(cls: type) -> bool:
    """Whether a class is a non-tensor leaf class (what ``is_leaf`` receives)."""
    return issubclass(cls, (NonTensorData, NonTensorStack))


def _is_tensorclass(cls: type) -> bool:
    """Whether a class is a tensor class with declared fields."""
    return is_tensorclass(cls)


class _NestedTensorsAsLists:
    """The ``is_leaf`` marker TorchRL passes to its spec iterators to list a lazy stack's
    members one by one: called, it is :func:`default_is_leaf`; it is false as a flag."""

    def __call__(self, cls: type) -> bool:
        return default_is_leaf(cls)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "_NESTED_TENSORS_AS_LISTS"


_NESTED_TENSORS_AS_LISTS = _NestedTensorsAsLists()


@contextlib.contextmanager
def _set_dispatch_td_nn_modules(mode: bool) -> Iterator[None]:
    """tensordict's switch that turns ``@dispatch`` off while a module receives tensor
    collections. tensorclass's ``dispatch`` hands a tensor collection to the module as it is
    in every mode, so the block changes nothing here."""
    del mode
    yield


def _set_skip_existing_None() -> set_skip_existing:
    """The decorator ``set_skip_existing(None)``: the decorated ``forward`` follows the
    enclosing :func:`~tensorclass.nn.skip_existing` mode."""
    return set_skip_existing(None)


@contextlib.contextmanager
def _exclude_td_from_pytree() -> Iterator[None]:
    """Inside the block, torch's pytree treats tensor collections as leaves (their classes
    are unregistered, then registered again as they were)."""
    saved = {
        cls: node
        for cls, node in pytree.SUPPORTED_NODES.items()
        if isinstance(cls, type) and issubclass(cls, TensorCore)
    }
    for cls in saved:
        del pytree.SUPPORTED_NODES[cls]
    try:
        yield
    finally:
        pytree.SUPPORTED_NODES.update(saved)


class _NestedKeyMeta(type):
    def __instancecheck__(cls, value: object) -> bool:
        if isinstance(value, str):
            return True
        return type(value) is tuple and bool(value) and all(isinstance(p, cls) for p in value)


class NestedKey(metaclass=_NestedKeyMeta):
    """tensordict's ``NestedKey`` at run time: ``isinstance(x, NestedKey)`` tells a key (a
    string, or a non-empty tuple of keys) from anything else. (tensorclass's
    :data:`tensorclass.NestedKey` is the type alias for annotations.)"""


def is_seq_of_nested_key(seq: object) -> bool:
    """Whether ``seq`` is a sequence of keys (tensordict deprecated it for
    ``isinstance(key, NestedKey)`` on each key)."""
    return isinstance(seq, (str, list, tuple)) and all(isinstance(k, NestedKey) for k in seq)


_ACCEPTED_CLASSES: tuple[type, ...] = (Tensor, TensorDictBase, NonTensorData, NonTensorStack)


# -- methods -------------------------------------------------------------------------------


def _get_str(self: TensorDictBase, key: str, default: Any) -> Any:
    """``get`` of a one-level key."""
    return self.get(key, default)


def _fast_apply(
    self: TensorDictBase,
    fn: Callable[..., Any],
    *others: Any,
    **kwargs: Any,
) -> Any:
    """``apply`` (tensordict's variant without checks; ``checked=`` and ``num_threads=``
    are accepted and do nothing)."""
    kwargs.pop("checked", None)  # the checks always run here
    kwargs.pop("num_threads", None)  # and the leaves are visited in this thread
    return self.apply(fn, *others, **kwargs)


def _new_unsafe(cls: Any, /, source: Any = None, batch_size: Any = None, **kwargs: Any) -> Any:
    """The constructor (tensordict's variant without checks; here, with them)."""
    return cls({} if source is None else source, batch_size=batch_size, **kwargs)


def _has_names(self: TensorDictBase) -> bool:
    """Whether some batch dim has a name."""
    return any(name is not None for name in self.names)


def _has_exclusive_keys(self: TensorDictBase) -> bool:
    """Whether a lazy stack's members differ in their keys, at any depth (``False`` for an
    instance that is not a lazy stack)."""
    if not is_lazy_stack(self):
        return False
    members = self.tensordicts
    first = set(members[0].keys(True, True)) if members else set()
    return any(set(member.keys(True, True)) != first for member in members[1:])


def _compute_in_and_out_keys(
    self: TensorDictSequential[Any], modules: Sequence[TensorDictModuleBase[Any]]
) -> tuple[list[Any], list[Any]]:
    """The in and out keys of a chain of ``modules`` (those a sequential of them has)."""
    chain = TensorDictSequential(*modules)
    return chain.in_keys, chain.out_keys


def _out_keys(self: ProbabilisticTensorDictModule[Any]) -> list[Any]:
    """The sampled keys (the out keys without the log-probability keys)."""
    return list(self.sample_keys)


def _resolve_generator(
    self: ProbabilisticTensorDictModule[Any], tensordict: Any
) -> tuple[torch.Generator | None, Callable[[torch.Generator], None] | None]:
    """The generator one call draws from, and what writes the next seed back (or ``None``)."""
    generator, write_back = generator_from(self._generator, tensordict)
    if write_back is None:
        return generator, None
    advance = write_back

    def writeback(used: torch.Generator) -> None:
        del used
        advance()

    return generator, writeback


def _composite_lp_aggreate_at_init(self: ProbabilisticTensorDictModule[Any]) -> bool:
    """Whether the module was built under ``set_composite_lp_aggregate(True)``."""
    return bool(self._aggregate)


# -- the table -------------------------------------------------------------------------------

TABLE: tuple[Private, ...] = (
    Private(
        "tensordict",
        "NestedKey",
        NestedKey,
        "the key type, usable with isinstance",
        "objectives/common.py (LossModule.set_keys), ppo.py, a2c.py, envs/common.py, "
        "modules/models/exploration.py",
    ),
    Private(
        "tensordict.utils",
        "NestedKey",
        NestedKey,
        "the key type, usable with isinstance (as tensordict.NestedKey)",
        "envs, objectives, modules (imported from tensordict.utils)",
    ),
    Private(
        "tensordict.utils",
        "is_seq_of_nested_key",
        is_seq_of_nested_key,
        "is a sequence made of keys (deprecated in tensordict)",
        "envs/llm/transforms/kl.py (imported by torchrl.collectors)",
    ),
    Private(
        "tensordict.utils",
        "_zip_strict",
        _zip_strict,
        "zip(..., strict=True)",
        "envs (batched_envs, async_envs, transforms), data (tensor_specs, replay buffers), "
        "modules, objectives: 97 calls in 28 modules",
    ),
    Private(
        "tensordict.utils",
        "_unravel_key_to_tuple",
        unravel_key_to_tuple,
        "a nested key as a flat tuple of strings",
        "envs/transforms/_reward.py (RewardSum), envs/utils.py",
    ),
    Private(
        "tensordict.utils",
        "_getitem_batch_size",
        _getitem_batch_size,
        "the shape after indexing, without indexing",
        "data/tensor_specs.py (spec indexing), envs/common.py (EnvBase.__getitem__)",
    ),
    Private(
        "tensordict.utils",
        "_maybe_correct_neg_dim",
        _maybe_correct_neg_dim,
        "a dim made non-negative against a shape",
        "data/llm/history.py",
    ),
    Private(
        "tensordict.utils",
        "_is_non_tensor",
        _is_non_tensor,
        "is a class a non-tensor leaf class",
        "data/datasets/openx.py",
    ),
    Private(
        "tensordict.utils",
        "_is_tensorclass",
        _is_tensorclass,
        "is a class a tensor class",
        "data/replay_buffers/storages/store.py",
    ),
    Private(
        "tensordict.base",
        "_default_is_leaf",
        default_is_leaf,
        "the default is_leaf: tensors are leaves, tensor collections are not",
        "envs/utils.py (check_env_specs)",
    ),
    Private(
        "tensordict.base",
        "_is_leaf_nontensor",
        is_leaf_nontensor,
        "is_leaf that also stops at non-tensor leaves",
        "envs/common.py, envs/batched_envs.py, envs/transforms, envs/utils.py",
    ),
    Private(
        "tensordict.base",
        "_NESTED_TENSORS_AS_LISTS",
        _NESTED_TENSORS_AS_LISTS,
        "is_leaf marker: list a lazy stack's members one by one",
        "envs/common.py (spec iteration of batched envs)",
    ),
    Private(
        "tensordict.base",
        "_ACCEPTED_CLASSES",
        _ACCEPTED_CLASSES,
        "the classes a tensordict stores as values",
        "data/replay_buffers/storages/list.py (ListStorage)",
    ),
    Private(
        "tensordict.nn.utils",
        "_set_dispatch_td_nn_modules",
        _set_dispatch_td_nn_modules,
        "turn @dispatch off while transforms get tensor collections",
        "data/replay_buffers/replay_buffers/base.py, ensemble.py, prioritized_tensordict.py",
    ),
    Private(
        "tensordict.nn.utils",
        "_set_skip_existing_None",
        _set_skip_existing_None,
        "decorator: forward follows the enclosing skip-existing mode",
        "modules/tensordict_module/probabilistic.py (SafeProbabilisticModule)",
    ),
    Private(
        "tensordict.nn.probabilistic",
        "_use_generator",
        drawing_from,
        "draw from a given torch.Generator inside the block",
        "modules/tensordict_module/probabilistic.py (SafeProbabilisticModule)",
    ),
    Private(
        "tensordict.nn.functional_modules",
        "_exclude_td_from_pytree",
        _exclude_td_from_pytree,
        "pytree treats tensor collections as leaves inside the block",
        "objectives/utils.py (_pseudo_vmap)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_get_str",
        _get_str,
        "get of a one-level key with a default",
        "envs (transforms, batched envs), data (replay buffers)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_set_str",
        TensorCore._set_str,
        "set of a one-level key; the engine's own, which takes tensordict's keywords "
        "(validated=, inplace=, non_blocking=)",
        "envs/utils.py (step_mdp, _update_during_reset), envs/common.py (EnvBase.reset)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_fast_apply",
        _fast_apply,
        "apply without its checks",
        "envs, collectors, data, objectives (22 calls)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_new_unsafe",
        classmethod(_new_unsafe),
        "the constructor without its checks",
        "envs/batched_envs.py, envs/common.py, collectors",
    ),
    Private(
        "tensordict.nn.TensorDictSequential",
        "_compute_in_and_out_keys",
        _compute_in_and_out_keys,
        "the in and out keys of a chain of modules",
        "modules/tensordict_module/sequence.py (SafeSequential, hence QValueActor, "
        "ActorCriticOperator...)",
    ),
    Private(
        "tensordict.nn.ProbabilisticTensorDictModule",
        "_out_keys",
        property(_out_keys),
        "the sampled keys",
        "modules/tensordict_module/probabilistic.py (SafeProbabilisticModule, hence "
        "ProbabilisticActor)",
    ),
    Private(
        "tensordict.nn.ProbabilisticTensorDictModule",
        "_resolve_generator",
        _resolve_generator,
        "the generator of one call, and what advances its seed in the input",
        "modules/tensordict_module/probabilistic.py (SafeProbabilisticModule.forward)",
    ),
    Private(
        "tensordict.nn.ProbabilisticTensorDictModule",
        "_composite_lp_aggreate_at_init",
        property(_composite_lp_aggreate_at_init),
        "the composite_lp_aggregate mode at construction (tensordict's spelling)",
        "modules/tensordict_module/probabilistic.py (SafeProbabilisticModule.forward)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_has_names",
        _has_names,
        "does some batch dim have a name",
        "objectives/value/advantages.py (the time dim of GAE and the other estimators)",
    ),
    Private(
        "tensordict.base.TensorDictBase",
        "_has_exclusive_keys",
        property(_has_exclusive_keys),
        "does a lazy stack hold keys that not every member has",
        "envs/batched_envs.py",
    ),
)
"""Every private tensordict name TorchRL 0.14.1 uses, one entry each."""

_CLASSES: dict[str, type] = {
    "tensordict.base.TensorDictBase": TensorDictBase,
    "tensordict.nn.TensorDictSequential": TensorDictSequential,
    "tensordict.nn.ProbabilisticTensorDictModule": ProbabilisticTensorDictModule,
}


def module_names(path: str) -> dict[str, Any]:
    """The private names of :data:`TABLE` that the alias module of ``path`` holds."""
    return {entry.name: entry.value for entry in TABLE if entry.path == path}


@functools.cache
def install_methods() -> None:
    """Attach the method entries of :data:`TABLE` to the engine's classes (once)."""
    for entry in TABLE:
        cls = _CLASSES.get(entry.path)
        if cls is not None and not hasattr(cls, entry.name):  # the engine's own: kept
            setattr(cls, entry.name, entry.value)
