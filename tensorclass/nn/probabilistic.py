"""Probabilistic modules: build a distribution from keys, write a value drawn from it.

>>> import torch
>>> from torch.distributions import Normal
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import ProbabilisticTensorDictModule, set_interaction_type
>>> policy = ProbabilisticTensorDictModule(
...     in_keys=["loc", "scale"], out_keys=["action"], distribution_class=Normal,
...     return_log_prob=True,
... )
>>> td = TensorDict({"loc": torch.zeros(3), "scale": torch.ones(3)}, [3])
>>> with set_interaction_type("mode"):
...     policy(td)["action"]
tensor([0., 0., 0.])
>>> sorted(td.keys())
['action', 'loc', 'sample_log_prob', 'scale']
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import torch
from torch import Tensor
from torch.distributions import Distribution

from ..engine.ops import TensorOps
from ..errors import InvalidKeyError
from ..keys import NestedKey, unravel_key
from .base import FixedKeysModule, T, TensorDictModuleBase, first_missing
from .distributions.composite import CompositeDistribution, suffixed
from .generators import as_generator_spec, drawing_from, generator_from
from .interaction import InteractionType, interaction_type, sample, set_interaction_type
from .keys import Key, KeysLike, as_keys, read_input, structure_copy
from .lp_aggregate import composite_lp_aggregate
from .schema_check import check_module_keys
from .sequential import TensorDictSequential, named_chain

# tensordict.nn.probabilistic's names, importable from here too
__all__ = [
    "InteractionType",
    "ProbabilisticTensorDictModule",
    "ProbabilisticTensorDictSequential",
    "interaction_type",
    "set_interaction_type",
]


class ProbabilisticTensorDictModule(FixedKeysModule[T]):
    """Read distribution parameters by key, build the distribution, write a value from it.

    Args:
        in_keys: the keys holding the distribution's parameters. A list passes each value
            as the keyword named after the key (its last part for a nested key); a dict
            maps each keyword name of the distribution to the key it is read from
            (``{"loc": "my_loc"}`` passes ``td["my_loc"]`` as ``loc``; a nested key is a
            tuple), as tensordict does. This is the reverse of ``TensorDictModule``'s dict.
        out_keys: the key the value is written to (default ``"sample"``; for a
            :class:`CompositeDistribution`, the keys of its ``distribution_map`` renamed by
            its ``name_map``, one per component).
        distribution_class: a ``torch.distributions.Distribution`` class (or any callable
            taking the parameters as keywords and returning one), or
            :class:`CompositeDistribution` (then ``distribution_kwargs`` holds its
            ``distribution_map``, and an in key holds its ``params``).
        distribution_kwargs: more keyword arguments for ``distribution_class``.
        return_log_prob: also write the log-probability of the value under
            ``log_prob_keys``.
        log_prob_key: where the log-probability goes (default ``"sample_log_prob"``). For
            a :class:`CompositeDistribution` the default depends on
            :func:`composite_lp_aggregate` when the module is built: ``False`` (the
            default) gives one ``"<sample key>_log_prob"`` entry (on the last part of a
            nested key) per sampled key and no ``log_prob_key``; ``True`` writes those
            entries and their sum at ``"sample_log_prob"``.
        log_prob_keys: one log-probability key per sampled key.
        default_interaction_type: the value drawn outside ``set_interaction_type`` blocks
            (default: deterministic, the mean or else the mode).
        schema: a tensor class whose fields every key must be.
        num_samples: draw that many values per call (an int or a shape): the result is the
            input expanded to ``num_samples + batch_size`` (a new instance; the input is
            unchanged) holding them. With ``RANDOM``, each is a new draw; otherwise the one
            value is repeated.
        n_empirical_estimate: the number of samples ``MEAN`` averages for a distribution
            without a mean.
        generator: what ``RANDOM`` (and the estimate of ``MEAN``) draws from: ``None`` the
            global generator, a ``torch.Generator``, an ``int`` (the seed of a new one), or
            a key of the input holding a generator or a seed (a new seed is written back
            after each call). The global generator's state is left unchanged.
        cache_dist: has no effect (as in tensordict, where it is deprecated).
    """

    def __init__(
        self,
        in_keys: KeysLike | Mapping[str, NestedKey],
        out_keys: KeysLike | None = None,
        *,
        distribution_class: Any,
        distribution_kwargs: Mapping[str, Any] | None = None,
        return_log_prob: bool = False,
        log_prob_keys: KeysLike | None = None,
        log_prob_key: NestedKey | None = None,
        default_interaction_type: InteractionType | str = InteractionType.DETERMINISTIC,
        schema: type[T] | None = None,
        cache_dist: bool = False,
        n_empirical_estimate: int = 1000,
        num_samples: int | Sequence[int] | None = None,
        generator: torch.Generator | int | NestedKey | None = None,
    ) -> None:
        super().__init__()
        if cache_dist:
            warnings.warn(
                "ProbabilisticTensorDictModule(cache_dist=True) has no effect",
                FutureWarning,
                stacklevel=2,
            )
        if n_empirical_estimate < 1:
            raise ValueError(f"n_empirical_estimate must be >= 1; got {n_empirical_estimate}")
        self.n_empirical_estimate = n_empirical_estimate
        self.num_samples: tuple[int, ...] = (
            ()
            if num_samples is None
            else (num_samples,)
            if isinstance(num_samples, int)
            else tuple(num_samples)
        )
        self._generator = as_generator_spec(generator)
        if isinstance(in_keys, Mapping):
            self._names, self._in_keys = _keywords_and_keys(in_keys)
        else:
            self._in_keys = as_keys(in_keys, "in_keys")
            self._names = [key if type(key) is str else key[-1] for key in self._in_keys]
        self.distribution_class = distribution_class
        self.distribution_kwargs = dict(distribution_kwargs or {})
        self._composite = isinstance(distribution_class, type) and issubclass(
            distribution_class, CompositeDistribution
        )
        if out_keys is None and self._composite:
            keys = _composite_sample_keys(self.distribution_kwargs)
        else:
            keys = as_keys("sample" if out_keys is None else out_keys, "out_keys")
        if len(keys) != 1 and not self._composite:
            raise InvalidKeyError(
                f"ProbabilisticTensorDictModule writes one value; got out_keys={keys!r}"
            )
        self.sample_keys: list[Key] = keys
        self.sample_key: Key = keys[0]
        self._aggregate = composite_lp_aggregate()
        self._set_log_prob_keys(log_prob_key, log_prob_keys)
        self.return_log_prob = return_log_prob
        self.default_interaction_type = InteractionType.from_str(default_interaction_type)
        if schema is not None:
            check_module_keys(
                schema, "ProbabilisticTensorDictModule", self._in_keys, self.out_keys_source
            )
            self._schema = schema

    def _set_in_keys(self, keys: list[Key]) -> None:
        """Assigning ``in_keys`` (as many as the distribution's parameters) reads the same
        parameters from those keys, in order."""
        names = self._names
        if len(keys) != len(names):
            raise ValueError(
                f"ProbabilisticTensorDictModule.in_keys: the distribution takes {names!r}; "
                f"assign {len(names)} keys (one per parameter, in order), got {keys!r}"
            )
        if self._schema is not None:
            check_module_keys(
                self._schema, "ProbabilisticTensorDictModule", keys, self.out_keys_source
            )
        self._in_keys = keys

    def _set_out_keys(self, keys: list[Key]) -> None:
        """Assigning ``out_keys`` (the sample and log-probability keys) is an error, as in
        tensordict."""
        self._refuse_keys("out_keys", "they are the sample and log-probability keys")

    def _set_log_prob_keys(
        self, log_prob_key: NestedKey | None, log_prob_keys: KeysLike | None
    ) -> None:
        if log_prob_keys is not None:
            listed = as_keys(log_prob_keys, "log_prob_keys")
            if len(listed) != len(self.sample_keys):
                raise InvalidKeyError(
                    f"log_prob_keys holds one key per sampled key {self.sample_keys!r}; got "
                    f"{listed!r}"
                )
            if log_prob_key is not None and [unravel_key(log_prob_key)] != listed:
                raise InvalidKeyError(
                    f"log_prob_key={log_prob_key!r} and log_prob_keys={listed!r} disagree"
                )
        elif log_prob_key is not None:
            listed = [unravel_key(log_prob_key)]
            if not self._aggregate and len(self.sample_keys) != 1:
                raise InvalidKeyError(
                    f"log_prob_key={log_prob_key!r} names one key, and this module samples "
                    f"{self.sample_keys!r}: pass log_prob_keys (one per sampled key), or "
                    f"build it under set_composite_lp_aggregate(True) for their sum"
                )
        elif self._aggregate or not self._composite:
            # one sampled key: tensorclass's documented key (tensordict 0.15.3 writes
            # "<key>_log_prob" there unless aggregating; see docs/migrating.md)
            listed = ["sample_log_prob"]
        else:
            listed = [suffixed(key, "_log_prob") for key in self.sample_keys]
        clash = [key for key in listed if key in self.sample_keys]
        if clash:
            raise InvalidKeyError(
                f"the log-probability key {clash[0]!r} is a sampled key: the "
                f"log-probability would overwrite the value"
            )
        # with aggregation, a composite writes its per-key entries and the sum here
        self._log_prob_keys: list[Key] = listed
        self._log_prob_keys_given = log_prob_key is not None or log_prob_keys is not None

    @property
    def out_keys_source(self) -> list[Key]:
        """The sample keys, and the log-probability keys when ``return_log_prob``."""
        if self.return_log_prob:
            return [*self.sample_keys, *self._log_prob_keys]
        return list(self.sample_keys)

    def get_dist(self, tensordict: Any) -> Distribution:
        """The distribution whose parameters ``tensordict`` holds."""
        try:
            values = [read_input(tensordict, key) for key in self._in_keys]
        except KeyError:
            missing = first_missing(tensordict, self._in_keys)
            if missing is None:
                raise
            raise self._missing_input(tensordict, missing) from None
        params = dict(zip(self._names, values))
        dist: Distribution = self.distribution_class(**params, **self.distribution_kwargs)
        return dist

    @property
    def log_prob_key(self) -> Key:
        """Where the log-probability of the value is written (with several sampled keys,
        only under :func:`composite_lp_aggregate`: the key of their sum)."""
        if len(self._log_prob_keys) != 1:
            raise RuntimeError(
                f"log_prob_key: this module writes one log-probability per sampled key, "
                f"at {self._log_prob_keys!r}; read log_prob_keys (or build the module under "
                f"set_composite_lp_aggregate(True) for one summed key)"
            )
        return self._log_prob_keys[0]

    @property
    def log_prob_keys(self) -> list[Key]:
        """The log-probability keys: one per sampled key, or the one key of their sum
        (when built under :func:`composite_lp_aggregate`)."""
        return list(self._log_prob_keys)

    @property
    def dist_params_keys(self) -> list[Key]:
        """The keys of the distribution's parameters: the ``in_keys``."""
        return self.in_keys

    @property
    def dist_sample_keys(self) -> list[Key]:
        """The keys of the drawn values: the ``out_keys`` without the log-probability keys."""
        return list(self.sample_keys)

    def build_dist_from_params(self, tensordict: Any) -> Distribution:
        """The distribution whose parameters ``tensordict`` holds at ``in_keys`` (as
        :meth:`get_dist`; tensordict's name for it)."""
        return self.get_dist(tensordict)

    def log_prob(self, tensordict: Any, *, dist: Distribution | None = None) -> Any:
        """The log-probability of the value under the sample key (under ``dist`` if given,
        else the distribution ``tensordict`` holds the parameters of). For a composite
        distribution, the value is ``tensordict`` itself (see
        :meth:`CompositeDistribution.log_prob`)."""
        if dist is None:
            dist = self.get_dist(tensordict)
        if isinstance(dist, CompositeDistribution):
            return dist.log_prob(tensordict)
        log_prob: Tensor = dist.log_prob(tensordict._leaf(self.sample_key))
        return log_prob

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        dist = self.get_dist(tensordict)
        generator, write_back = generator_from(self._generator, tensordict)
        kind = interaction_type() or self.default_interaction_type
        with drawing_from(generator):
            value = sample(dist, kind, self.num_samples, self.n_empirical_estimate)
        if write_back is not None:
            write_back()
        target = tensordict if tensordict_out is None else tensordict_out
        if self.num_samples:
            target = target.expand(*self.num_samples, *target.batch_size)
        selected = self._selected
        if isinstance(dist, CompositeDistribution):
            self._write_composite(target, dist, value, selected)
            return target
        if selected is None or self.sample_key in selected:
            target.set(self.sample_key, value)
        lp_key = self._log_prob_keys[0]
        if self.return_log_prob and (selected is None or lp_key in selected):
            target.set(lp_key, dist.log_prob(value))
        return target

    def _write_composite(
        self, target: Any, dist: CompositeDistribution, value: Any, selected: Any
    ) -> None:
        for key, sample_key in zip(dist.keys(), self.sample_keys):
            if selected is None or sample_key in selected:
                target.set(sample_key, value.get(key))
        if not self.return_log_prob:
            return
        scores = dist.log_prob_composite(value, include_sum=self._aggregate)
        if self._aggregate:
            keys = [suffixed(key, "_log_prob") for key in self.sample_keys]
            sources = [suffixed(key, "_log_prob") for key in dist.keys()]
            keys.append(self._log_prob_keys[0])
            sources.append(dist.log_prob_key)
        else:
            keys = self._log_prob_keys
            sources = [suffixed(key, "_log_prob") for key in dist.keys()]
        for key, source in zip(keys, sources):
            if selected is None or key in selected:
                target.set(key, scores.get(source))

    def _repr_fields(self) -> list[tuple[str, str]]:
        name = getattr(self.distribution_class, "__name__", repr(self.distribution_class))
        return [
            ("distribution_class", name),
            *super()._repr_fields(),
            ("default_interaction_type", self.default_interaction_type.name),
        ]


def _keywords_and_keys(in_keys: Mapping[Any, Any]) -> tuple[list[str], list[Key]]:
    """The keyword names and the keys of a dict ``in_keys`` ``{keyword: key}``."""
    names = list(in_keys)
    wrong = [name for name in names if type(name) is not str]
    if wrong:
        raise ValueError(
            f"ProbabilisticTensorDictModule: a dict in_keys maps each keyword name of the "
            f"distribution (a string) to the key it is read from, as {{'loc': 'my_loc'}}; "
            f"got the keyword {wrong[0]!r} (TensorDictModule's dict runs the other way)"
        )
    return names, [unravel_key(key) for key in in_keys.values()]


def _composite_sample_keys(kwargs: Mapping[str, Any]) -> list[Key]:
    """The sample keys of a ``CompositeDistribution`` built with ``kwargs``."""
    try:
        names = kwargs["distribution_map"]
    except KeyError:
        raise InvalidKeyError(
            "ProbabilisticTensorDictModule(distribution_class=CompositeDistribution): pass "
            "out_keys, or distribution_kwargs={'distribution_map': {key: class, ...}}"
        ) from None
    renames = {unravel_key(k): unravel_key(v) for k, v in kwargs.get("name_map", {}).items()}
    return [renames.get(unravel_key(key), unravel_key(key)) for key in names]


class ProbabilisticTensorDictSequential(TensorDictSequential[T]):
    """A chain whose last module is a ``ProbabilisticTensorDictModule``.

    Besides running the chain, it gives the distribution the chain ends with
    (:meth:`get_dist`) and the log-probability of a value under it (:meth:`log_prob`).
    With ``return_composite=True``, :meth:`get_dist` gives a :class:`CompositeDistribution`
    over the sampled keys of every probabilistic module of the chain (a module whose
    values are already in the input is not re-run, so :meth:`log_prob` scores the values
    given; nested probabilistic sequentials included), and :meth:`log_prob` returns what
    its ``log_prob`` returns: one ``<key>_log_prob`` entry per sampled key, or their sum
    under :func:`composite_lp_aggregate`. ``return_composite`` defaults to ``True`` when
    more than one of the chain's modules is a ``ProbabilisticTensorDictModule`` (as in
    tensordict 0.15.3), else ``False``; pass ``return_composite=False`` for the last
    module's distribution alone. ``dist_params_keys``, ``dist_sample_keys`` and
    ``log_prob_keys`` cover every probabilistic module either way.
    """

    def __init__(
        self,
        *modules: TensorDictModuleBase[Any] | Mapping[str, TensorDictModuleBase[Any]],
        partial_tolerant: bool = False,
        selected_out_keys: KeysLike | None = None,
        schema: type[T] | None = None,
        inplace: bool | Literal["empty"] | None = None,
        return_composite: bool | None = None,
    ) -> None:
        chain, _ = named_chain(modules)
        if not chain:
            raise ValueError(
                "ProbabilisticTensorDictSequential needs modules, the last of them (unless "
                "return_composite=True) probabilistic"
            )
        kinds = (ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential)
        ends_probabilistic = isinstance(chain[-1], kinds)
        if return_composite is None:
            # tensordict 0.15.3's default: on when the chain holds several of them, or when
            # it ends with a module that draws nothing
            count = sum(isinstance(m, ProbabilisticTensorDictModule) for m in chain)
            return_composite = count > 1 or not ends_probabilistic
        elif not return_composite and not ends_probabilistic:
            raise TypeError(
                f"ProbabilisticTensorDictSequential(return_composite=False) must end with a "
                f"ProbabilisticTensorDictModule (its distribution is the chain's); it ends "
                f"with {type(chain[-1]).__name__}"
            )
        self.return_composite = bool(return_composite)
        # the keywords given only: a subclass that also derives from another sequential
        # (TorchRL's SafeProbabilisticTensorDictSequential) takes fewer of them
        options: dict[str, Any] = {"partial_tolerant": partial_tolerant, "inplace": inplace}
        if selected_out_keys is not None:
            options["selected_out_keys"] = selected_out_keys
        if schema is not None:
            options["schema"] = schema
        super().__init__(*modules, **options)

    def _class_for(self, modules: list[Any]) -> type[TensorDictSequential[Any]]:
        # A cut that still ends with the probabilistic module keeps get_dist and log_prob.
        if modules and isinstance(modules[-1], ProbabilisticTensorDictModule):
            return ProbabilisticTensorDictSequential
        return TensorDictSequential

    @property
    def last(self) -> ProbabilisticTensorDictModule[Any]:
        """The last probabilistic module of the chain (the one it ends with, unless a
        module that draws nothing follows it)."""
        for module in reversed(self._chain()):
            if isinstance(module, ProbabilisticTensorDictSequential):
                return module.last
            if isinstance(module, ProbabilisticTensorDictModule):
                return module
        raise AttributeError(f"{type(self).__name__} holds no probabilistic module")

    @property
    def log_prob_key(self) -> Key:
        """The last module's log-probability key."""
        return self.last.log_prob_key

    @property
    def log_prob_keys(self) -> list[Key]:
        """The log-probability keys of every probabilistic module of the chain, the last
        module's first (a nested probabilistic sequential gives its own list), with or
        without ``return_composite``."""
        return [key for module in self._probabilistic() for key in module.log_prob_keys]

    @property
    def dist_params_keys(self) -> list[Key]:
        """The keys of the distribution parameters (the modules' ``in_keys``) of every
        probabilistic module of the chain, the last module's first, with or without
        ``return_composite``."""
        return [key for module in self._probabilistic() for key in module.dist_params_keys]

    @property
    def dist_sample_keys(self) -> list[Key]:
        """The keys of the values drawn by every probabilistic module of the chain, the
        last module's first, with or without ``return_composite``."""
        return [key for module in self._probabilistic() for key in module.dist_sample_keys]

    def _final(self) -> ProbabilisticTensorDictModule[Any] | ProbabilisticTensorDictSequential[Any]:
        """The module the chain ends with, which must draw (``return_composite=False``)."""
        final = self._chain()[-1]
        if not isinstance(
            final, (ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential)
        ):
            raise TypeError(
                f"{type(self).__name__} ends with a {type(final).__name__}, which draws nothing"
            )
        return final

    def _probabilistic(
        self,
    ) -> list[ProbabilisticTensorDictModule[Any] | ProbabilisticTensorDictSequential[Any]]:
        """The probabilistic modules and nested probabilistic sequentials, last first."""
        kinds = (ProbabilisticTensorDictModule, ProbabilisticTensorDictSequential)
        return [m for m in reversed(self._chain()) if isinstance(m, kinds)]

    def _chosen_log_prob_keys(self) -> list[tuple[Key, Key]]:
        """``(<key>_log_prob, chosen key)`` for each sampled key whose module was given
        ``log_prob_key``/``log_prob_keys`` (nested probabilistic sequentials included):
        the composite log-probability is written under the module's own key."""
        pairs: list[tuple[Key, Key]] = []
        for module in self._probabilistic():
            if isinstance(module, ProbabilisticTensorDictSequential):
                pairs += module._chosen_log_prob_keys()
            elif module._log_prob_keys_given and len(module.log_prob_keys) == len(
                module.sample_keys
            ):
                pairs += [
                    (suffixed(sample_key, "_log_prob"), key)
                    for sample_key, key in zip(module.sample_keys, module.log_prob_keys)
                ]
        return pairs

    def _composite_dist(self, tensordict: Any) -> CompositeDistribution:
        dists: dict[NestedKey, Distribution] = {}
        kind = interaction_type() or self.default_interaction_type
        with set_interaction_type(kind):
            work = self._collect_dists(structure_copy(tensordict), dists)
        return CompositeDistribution.from_distributions(work, dists)

    def _collect_dists(self, work: Any, dists: dict[NestedKey, Distribution]) -> Any:
        """Run the chain on ``work``, recording each probabilistic module's distribution
        (nested probabilistic sequentials included) in ``dists``; a module whose values
        ``work`` already holds is not run."""
        for module in self._chain():
            if isinstance(module, ProbabilisticTensorDictSequential):
                work = module._collect_dists(work, dists)
                continue
            if not isinstance(module, ProbabilisticTensorDictModule):
                work = module(work)
                continue
            dist = module.get_dist(work)
            if isinstance(dist, CompositeDistribution):
                dists.update(zip(module.sample_keys, dist.values()))
            else:
                dists[module.sample_key] = dist
            if not all(key in work for key in module.sample_keys):
                work = module(work)
        return work

    @property
    def default_interaction_type(self) -> InteractionType | None:
        """The ``default_interaction_type`` of the last module that has one (else the
        current ``interaction_type()``, ``None`` outside a ``set_interaction_type`` block)."""
        for module in reversed(self._chain()):
            kind = getattr(module, "default_interaction_type", None)
            if isinstance(kind, InteractionType):
                return kind
        return interaction_type()

    @property
    def num_samples(self) -> tuple[int, ...]:
        """The leading dims the probabilistic modules add to the output, the last
        module's first (``()`` if none draws several samples)."""
        dims: tuple[int, ...] = ()
        for module in reversed(self._chain()):
            if isinstance(module, ProbabilisticTensorDictModule):
                dims += module.num_samples
        return dims

    def build_dist_from_params(self, tensordict: Any) -> Distribution:
        """The last module's distribution from parameters already in ``tensordict`` (the
        other modules do not run)."""
        return self.last.get_dist(tensordict)

    def get_dist_params(self, tensordict: Any, tensordict_out: Any = None, **kwargs: Any) -> Any:
        """Run every module but the last; returns the instance holding the distribution's
        parameters (``tensordict``, or ``tensordict_out`` when given).

        The modules run under the current interaction type, or else this chain's
        :attr:`default_interaction_type`, so probabilistic modules among them draw as a
        call to the chain would.
        """
        kind = interaction_type() or self.default_interaction_type
        with set_interaction_type(kind):
            for module in self._chain()[:-1]:
                tensordict = module(tensordict, **kwargs)
        if tensordict_out is None:
            return tensordict
        tensordict_out.update(tensordict)
        return tensordict_out

    def get_dist(self, tensordict: Any, tensordict_out: Any = None) -> Distribution:
        """Run every module but the last on ``tensordict``; the last one's distribution.

        The intermediate entries are written into ``tensordict``, or into
        ``tensordict_out`` (which then receives what the modules write, the input
        staying as it was). With ``return_composite``, a :class:`CompositeDistribution`
        over every sampled key (``tensordict`` is left unchanged)."""
        if self.return_composite:
            return self._composite_dist(tensordict)
        modules = self._chain()[:-1]
        if tensordict_out is None:
            for module in modules:
                tensordict = module(tensordict)
            return self._final().get_dist(tensordict)
        work = structure_copy(tensordict)
        for module in modules:
            work = module(work)
        for module in modules:
            for key in module.out_keys:
                if key in work:
                    tensordict_out.set(key, work._leaf(key))
        return self._final().get_dist(work)

    def log_prob(
        self, tensordict: Any, tensordict_out: Any = None, *, dist: Distribution | None = None
    ) -> Any:
        """The log-probability of the value under the last module's sample key.

        ``dist`` is used if given; otherwise :meth:`get_dist` builds it (on a copy of
        ``tensordict`` when ``tensordict_out`` is given, so the input gets no new entry).
        With ``return_composite`` (or a composite ``dist``), the composite log-probability
        of the values in ``tensordict``: per key, or their sum under
        :func:`composite_lp_aggregate`."""
        if self.return_composite or isinstance(dist, CompositeDistribution):
            if dist is None:
                dist = self.get_dist(tensordict)
            scores: Any = dist.log_prob(tensordict)
            if isinstance(scores, Tensor):
                return scores
            for source, key in self._chosen_log_prob_keys():
                if source in scores and source != key:
                    scores.rename_key_(source, key)
            return scores
        value = tensordict._leaf(self.last.sample_key)
        if dist is None:
            source = structure_copy(tensordict) if tensordict_out is not None else tensordict
            dist = self.get_dist(source)
        log_prob: Tensor = dist.log_prob(value)
        return log_prob
