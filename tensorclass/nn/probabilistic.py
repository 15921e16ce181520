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

from collections.abc import Mapping
from typing import Any, cast

from torch import Tensor
from torch.distributions import Distribution

from ..errors import InvalidKeyError
from ..tensordict_core.keys import NestedKey, unravel_key
from .base import T, TensorDictModuleBase, first_missing
from .interaction import InteractionType, interaction_type, sample
from .keys import Key, KeysLike, as_keys, read_input
from .schema_check import check_keys, check_schema_class
from .sequential import TensorDictSequential

__all__ = ["ProbabilisticTensorDictModule", "ProbabilisticTensorDictSequential"]


class ProbabilisticTensorDictModule(TensorDictModuleBase[T]):
    """Read distribution parameters by key, build the distribution, write a value from it.

    Args:
        in_keys: the keys holding the distribution's parameters. A list passes each value
            as the keyword named after the key (its last part for a nested key); a dict
            maps each key to the keyword name, as for ``TensorDictModule``.
        out_keys: the key the value is written to (default ``"sample"``).
        distribution_class: a ``torch.distributions.Distribution`` class (or any callable
            taking the parameters as keywords and returning one).
        distribution_kwargs: more keyword arguments for ``distribution_class``.
        return_log_prob: also write the log-probability of the value under
            ``log_prob_key``.
        log_prob_key: where the log-probability goes (default ``"sample_log_prob"``).
        default_interaction_type: the value drawn outside ``set_interaction_type`` blocks
            (default: deterministic, the mean or else the mode).
        schema: a tensor class whose fields every key must be.
    """

    def __init__(
        self,
        in_keys: KeysLike | Mapping[NestedKey, str],
        out_keys: KeysLike | None = None,
        *,
        distribution_class: Any,
        distribution_kwargs: Mapping[str, Any] | None = None,
        return_log_prob: bool = False,
        log_prob_key: NestedKey = "sample_log_prob",
        default_interaction_type: InteractionType | str = InteractionType.DETERMINISTIC,
        schema: type[T] | None = None,
    ) -> None:
        super().__init__()
        if isinstance(in_keys, Mapping):
            self._in_keys = [unravel_key(key) for key in in_keys]
            self._names = list(in_keys.values())
        else:
            self._in_keys = as_keys(in_keys, "in_keys")
            self._names = [key if type(key) is str else key[-1] for key in self._in_keys]
        keys = as_keys("sample" if out_keys is None else out_keys, "out_keys")
        if len(keys) != 1:
            raise InvalidKeyError(
                f"ProbabilisticTensorDictModule writes one value; got out_keys={keys!r}"
            )
        self.sample_key: Key = keys[0]
        self.log_prob_key: Key = unravel_key(log_prob_key)
        self.distribution_class = distribution_class
        self.distribution_kwargs = dict(distribution_kwargs or {})
        self.return_log_prob = return_log_prob
        self.default_interaction_type = InteractionType.from_str(default_interaction_type)
        if schema is not None:
            check_schema_class(schema)
            owner = f"ProbabilisticTensorDictModule(schema={schema.__name__})"
            check_keys(schema, self._in_keys, owner, "in key")
            check_keys(schema, self.out_keys_source, owner, "out key")
            self._schema = schema

    @property
    def in_keys(self) -> list[Key]:
        """The keys holding the distribution's parameters."""
        return list(self._in_keys)

    @property
    def out_keys_source(self) -> list[Key]:
        """The sample key, and the log-probability key when ``return_log_prob``."""
        return [self.sample_key, self.log_prob_key] if self.return_log_prob else [self.sample_key]

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

    def log_prob(self, tensordict: Any) -> Tensor:
        """The log-probability of the value under the sample key."""
        log_prob: Tensor = self.get_dist(tensordict).log_prob(tensordict._leaf(self.sample_key))
        return log_prob

    def _forward_td(self, tensordict: Any, tensordict_out: Any) -> Any:
        dist = self.get_dist(tensordict)
        value = sample(dist, interaction_type() or self.default_interaction_type)
        target = tensordict if tensordict_out is None else tensordict_out
        selected = self._selected
        if selected is None or self.sample_key in selected:
            target.set(self.sample_key, value)
        if self.return_log_prob and (selected is None or self.log_prob_key in selected):
            target.set(self.log_prob_key, dist.log_prob(value))
        return target

    def _repr_fields(self) -> list[tuple[str, str]]:
        name = getattr(self.distribution_class, "__name__", repr(self.distribution_class))
        return [
            ("distribution_class", name),
            *super()._repr_fields(),
            ("default_interaction_type", self.default_interaction_type.name),
        ]


class ProbabilisticTensorDictSequential(TensorDictSequential[T]):
    """A chain whose last module is a ``ProbabilisticTensorDictModule``.

    Besides running the chain, it gives the distribution the chain ends with
    (:meth:`get_dist`) and the log-probability of a value under it (:meth:`log_prob`).
    """

    def __init__(
        self,
        *modules: TensorDictModuleBase[Any],
        partial_tolerant: bool = False,
        selected_out_keys: KeysLike | None = None,
        schema: type[T] | None = None,
    ) -> None:
        if not modules or not isinstance(modules[-1], ProbabilisticTensorDictModule):
            last = type(modules[-1]).__name__ if modules else "nothing"
            raise TypeError(
                f"ProbabilisticTensorDictSequential must end with a "
                f"ProbabilisticTensorDictModule; it ends with {last}"
            )
        super().__init__(
            *modules,
            partial_tolerant=partial_tolerant,
            selected_out_keys=selected_out_keys,
            schema=schema,
        )

    def _class_for(self, modules: list[Any]) -> type[TensorDictSequential[Any]]:
        # A cut that still ends with the probabilistic module keeps get_dist and log_prob.
        if modules and isinstance(modules[-1], ProbabilisticTensorDictModule):
            return ProbabilisticTensorDictSequential
        return TensorDictSequential

    @property
    def last(self) -> ProbabilisticTensorDictModule[Any]:
        """The probabilistic module the chain ends with."""
        return cast("ProbabilisticTensorDictModule[Any]", self._list[-1])

    def get_dist(self, tensordict: Any) -> Distribution:
        """Run every module but the last on ``tensordict``; the last one's distribution."""
        modules = list(self._list)[:-1]
        for module in modules:
            tensordict = module(tensordict)
        return self.last.get_dist(tensordict)

    def log_prob(self, tensordict: Any) -> Tensor:
        """The log-probability of the value under the last module's sample key."""
        value = tensordict._leaf(self.last.sample_key)
        log_prob: Tensor = self.get_dist(tensordict).log_prob(value)
        return log_prob
