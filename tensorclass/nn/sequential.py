"""``TensorDictSequential``: modules run one after the other on the same tensor class.

Each module reads what it needs (inputs, or what an earlier module wrote) and writes its
outputs, so a chain can branch and merge by key:

>>> import torch
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictModule as Mod, TensorDictSequential as Seq
>>> seq = Seq(Mod(lambda x: x + 1, ["x"], ["y"]), Mod(lambda x, y: x * y, ["x", "y"], ["z"]))
>>> seq.in_keys, seq.out_keys
(['x'], ['y', 'z'])
>>> seq(TensorDict({"x": torch.ones(2)}, [2]))["z"]
tensor([2., 2.])
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, Literal, cast, overload

from torch import nn

from ..engine.lazy.stack import LazyStackedTensorDict
from ..engine.ops import TensorOps
from ..errors import KeyNotFoundError, SchemaError
from .base import T, TensorDictModuleBase, first_missing
from .keys import Key, KeysLike, as_keys, show_keys, structure_copy
from .schema_check import available_keys, check_keys, check_schema_class, is_available

__all__ = ["TensorDictSequential"]


def named_chain(modules: tuple[Any, ...]) -> tuple[list[Any], dict[str, Any] | None]:
    """The modules of a chain given as modules, or as one list or one (ordered) dict of
    modules (tensordict's forms): ``(modules, names)``, ``names`` being the dict's order."""
    if len(modules) == 1 and isinstance(modules[0], Mapping):
        named = dict(modules[0])
        return list(named.values()), named
    if len(modules) == 1 and isinstance(modules[0], (list, nn.ModuleList)):
        return list(modules[0]), None
    return list(modules), None


def leaf_modules(modules: Iterable[nn.Module]) -> Iterator[TensorDictModuleBase[Any]]:
    """The modules of a chain, nested sequentials flattened."""
    for module in modules:
        if isinstance(module, TensorDictSequential):
            yield from leaf_modules(module._chain())
        else:
            yield module  # type: ignore[misc]


class TensorDictSequential(TensorDictModuleBase[T]):
    """Run key-reading modules in order on one tensor class.

    ``in_keys`` are the keys some module reads before any module writes them;
    ``out_keys`` are every key a module writes, in order.

    Args:
        *modules: the modules (``TensorDictModule``, nested sequentials, probabilistic
            modules...).
        partial_tolerant: skip a module whose inputs are missing instead of failing. On a
            lazy stack whose members hold different keys, such a module runs on each
            member that holds its inputs.
        selected_out_keys: write only these keys into the input (intermediate results
            stay out of it); see :meth:`select_out_keys`.
        schema: a tensor class; every key of every module must be one of its fields, and
            each module's inputs must be available: a field ``schema`` always holds (not
            defaulting to ``None``) or written by an earlier module (not checked when
            ``partial_tolerant``).
        inplace: where the chain's ``out_keys`` end up. ``None`` (default): each module
            writes as its own ``inplace`` says, and the chain returns what the last one
            returns. ``True``: into the input, which is returned. ``False`` or ``"empty"``:
            the modules run on a shallow copy of the input (which does not change), and the
            out keys are written into ``input.empty()`` (same class, batch size, device).
    """

    _list: Collection[nn.Module]

    def __init__(
        self,
        *modules: TensorDictModuleBase[Any] | Mapping[str, TensorDictModuleBase[Any]],
        partial_tolerant: bool = False,
        selected_out_keys: KeysLike | None = None,
        schema: type[T] | None = None,
        inplace: bool | Literal["empty"] | None = None,
    ) -> None:
        super().__init__()
        if inplace not in (None, True, False, "empty"):
            raise ValueError(
                f"{type(self).__name__}: inplace must be None, True, False or 'empty'; "
                f"got {inplace!r}"
            )
        self.inplace = inplace
        chain, names = named_chain(modules)
        for index, module in enumerate(chain):
            if not isinstance(module, TensorDictModuleBase):
                raise TypeError(
                    f"TensorDictSequential: module {index} is a {type(module).__name__}; wrap "
                    f"it as TensorDictModule(module, in_keys=..., out_keys=...)"
                )
        # one dict of modules: a ModuleDict (its names in the state dict), as in tensordict
        self.module = nn.ModuleList(chain) if names is None else nn.ModuleDict(names)
        self.partial_tolerant = partial_tolerant
        if schema is not None:
            check_schema_class(schema)
            self._check_schema(schema)
            self._schema = schema
        if selected_out_keys is not None:
            self.select_out_keys(*as_keys(selected_out_keys, "selected_out_keys"))

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "module":
            # a plain attribute, fast to reach: the ModuleList, or the modules of a
            # ModuleDict (the chain given as a dict; assign `module` to change it)
            steps = list(value.values()) if isinstance(value, nn.ModuleDict) else value
            object.__setattr__(self, "_list", steps)

    def _chain(self) -> list[TensorDictModuleBase[Any]]:
        return cast("list[TensorDictModuleBase[Any]]", list(self._list))

    # -- keys ------------------------------------------------------------------------------

    @property
    def in_keys(self) -> list[Key]:
        """The keys some module reads before any module writes them."""
        keys: list[Key] = []
        written: set[Key] = set()
        for module in self._chain():
            keys.extend(k for k in module.in_keys if k not in written and k not in keys)
            written.update(module.out_keys)
        return keys

    @in_keys.setter
    def in_keys(self, keys: Any) -> None:
        self._set_in_keys(as_keys(keys, "in_keys"))

    @property
    def out_keys_source(self) -> list[Key]:
        """Every key some module writes, in the order of the last write of each (as
        tensordict orders them: a key written again by a later module comes with it)."""
        written = [key for module in self._chain() for key in module.out_keys]
        return [key for i, key in enumerate(written) if key not in written[i + 1 :]]

    @property
    def out_keys(self) -> list[Key]:
        """The keys written (every module's, unless selected; derived from the modules:
        assigning them is an error, set the keys of the modules)."""
        return self._current_out_keys()

    @out_keys.setter
    def out_keys(self, keys: Any) -> None:
        self._set_out_keys(as_keys(keys, "out_keys"))

    def _set_in_keys(self, keys: list[Key]) -> None:
        self._refuse_keys("in_keys", "they are derived from its modules; set theirs")

    def _set_out_keys(self, keys: list[Key]) -> None:
        self._refuse_keys(
            "out_keys", "they are derived from its modules; set theirs, or select_out_keys"
        )

    def _check_schema(self, schema: type) -> None:
        owner = f"TensorDictSequential(schema={schema.__name__})"
        provided, open_levels = available_keys(schema)
        written: set[Key] = set()
        for index, module in enumerate(self._chain()):
            other = module.schema
            if other is not None and other is not schema:
                raise SchemaError(
                    f"{owner}: module {index} has schema={other.__name__}; the modules of a "
                    f"sequential share its schema"
                )
            for leaf in leaf_modules([module]):
                check_keys(schema, leaf.in_keys, owner, f"module {index} reads the key")
                check_keys(schema, leaf.out_keys_source, owner, f"module {index} writes the key")
            if not self.partial_tolerant:
                for key in module.in_keys:
                    if key not in written and not is_available(key, provided, open_levels):
                        raise KeyNotFoundError(
                            f"{owner}: module {index} reads {key!r}, which {schema.__name__} "
                            f"does not always hold (it is not a field, or it defaults to None) "
                            f"and no earlier module writes; available at that point: "
                            f"{show_keys(sorted(provided | written, key=str))}",
                            key=key,
                        )
            written.update(module.out_keys)

    # -- the forward pass ------------------------------------------------------------------

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        inplace = self.inplace
        if tensordict_out is None and inplace is not None and inplace is not True:
            tensordict_out = tensordict.empty()  # False / "empty"
        selected = self._selected
        if selected is None and tensordict_out is None:
            result: TensorOps = self._run(tensordict)
            if inplace is None or result is tensordict:
                return result
            for key in self.out_keys:  # inplace=True: the outputs go into the input
                if key in result:
                    tensordict.set(key, result._leaf(key))
            return tensordict
        # Intermediate keys go to a copy of the structure; only the out keys come back.
        work = self._run(structure_copy(tensordict))
        target = tensordict if tensordict_out is None else tensordict_out
        for key in self.out_keys:
            if key in work:
                target.set(key, work._leaf(key))
        return target

    def _run(self, tensordict: Any) -> Any:
        if self.partial_tolerant:
            for module in self._chain():
                tensordict = _run_where_possible(module, tensordict)
            return tensordict
        for step in self._list:
            tensordict = step(tensordict)
        return tensordict

    # -- sub-chains ------------------------------------------------------------------------

    @overload
    def __getitem__(self, index: int) -> TensorDictModuleBase[Any]: ...

    @overload
    def __getitem__(self, index: slice) -> TensorDictSequential[T]: ...

    @overload
    def __getitem__(self, index: str) -> TensorDictModuleBase[Any]: ...

    def __getitem__(self, index: int | slice | str) -> Any:
        """A module of the chain (``seq[i]``; ``seq[name]`` for a chain given as a dict) or
        a new sequential of a slice (``seq[1:]``)."""
        if isinstance(index, slice):
            return self._with_modules(self._chain()[index])
        steps = self.module
        if isinstance(steps, nn.ModuleDict):
            if not isinstance(index, str):
                raise KeyError(f"a chain given as a dict is indexed by name ({list(steps)})")
            return steps[index]
        if isinstance(index, str):
            raise TypeError(f"a chain given as modules is indexed by position, not {index!r}")
        return steps[index]

    def __len__(self) -> int:
        """The number of modules in the chain (nested sequentials count as one)."""
        return len(self._list)

    def __iter__(self) -> Iterator[TensorDictModuleBase[Any]]:
        """The modules of the chain, in order (``ProbabilisticTensorDictSequential(*seq)``).

        >>> import torch
        >>> from tensorclass.nn import TensorDictModule, TensorDictSequential
        >>> seq = TensorDictSequential(TensorDictModule(torch.nn.Identity(), ["a"], ["b"]))
        >>> [m.out_keys for m in seq]
        [['b']]
        """
        return iter(self._chain())

    def _with_modules(self, modules: list[TensorDictModuleBase[Any]]) -> TensorDictSequential[T]:
        """A sequential of ``modules`` with this one's settings (keys already checked)."""
        new: TensorDictSequential[T] = self._class_for(modules)(
            *modules, partial_tolerant=self.partial_tolerant, inplace=self.inplace
        )
        new._schema = self._schema
        if self._selected is not None:
            kept = [key for key in self._selected if key in new.out_keys_source]
            new._selected = kept
        return new

    def _class_for(
        self, modules: list[TensorDictModuleBase[Any]]
    ) -> type[TensorDictSequential[Any]]:
        """The class of a sequential of ``modules`` cut from this one."""
        return TensorDictSequential

    def select_subsequence(
        self, in_keys: KeysLike | None = None, out_keys: KeysLike | None = None
    ) -> TensorDictSequential[T]:
        """A new sequential with only the modules needed between ``in_keys`` and ``out_keys``.

        With ``in_keys``, a module is kept when it reads one of them or an output of a kept
        module (its result depends on ``in_keys``). With ``out_keys``, a module is kept when
        it writes one of them or an input of a later kept module. Nested sequentials are
        pruned the same way. The modules themselves are shared, not copied.
        """
        modules: list[TensorDictModuleBase[Any]] = list(self._chain())
        if in_keys is not None:
            modules = _keep_dependents(modules, set(as_keys(in_keys, "in_keys")))
        if out_keys is not None:
            modules = _keep_dependencies(modules, set(as_keys(out_keys, "out_keys")))
        return self._with_modules(modules)

    # -- repr ------------------------------------------------------------------------------

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [("module", repr(self.module)), *super()._repr_fields()]


def _run_where_possible(module: TensorDictModuleBase[Any], tensordict: Any) -> Any:
    """Run ``module`` on ``tensordict`` if it holds the inputs; else, on a lazy stack, on
    each member that holds them (members of nested stacks included)."""
    if first_missing(tensordict, module.in_keys) is None:
        return module(tensordict)
    if isinstance(tensordict, LazyStackedTensorDict):
        for member in tensordict.members:
            _run_where_possible(module, member)  # writes reach the stack through its members
    return tensordict


def _keep_dependents(
    modules: list[TensorDictModuleBase[Any]], affected: set[Key]
) -> list[TensorDictModuleBase[Any]]:
    """The modules that read ``affected`` or an output of an earlier kept module."""
    return _keep_linked(modules, affected, downstream=True)


def _keep_dependencies(
    modules: list[TensorDictModuleBase[Any]], needed: set[Key]
) -> list[TensorDictModuleBase[Any]]:
    """The modules that write ``needed`` or an input of a later kept module."""
    return _keep_linked(modules, needed, downstream=False)


def _keep_linked(
    modules: list[TensorDictModuleBase[Any]], keys: set[Key], downstream: bool
) -> list[TensorDictModuleBase[Any]]:
    """The modules linked to ``keys`` (which grows as modules are kept): walking forward,
    those that read one of them (their outputs join); walking backward, those that write
    one (their inputs join). Nested sequentials are pruned the same way."""
    kept: list[TensorDictModuleBase[Any]] = []
    for module in modules if downstream else reversed(modules):
        if isinstance(module, TensorDictSequential):
            inner = _keep_linked(module._chain(), keys, downstream)
            if inner:
                kept.append(module._with_modules(inner))
            continue
        linked, joined = (
            (module.in_keys, module.out_keys) if downstream else (module.out_keys, module.in_keys)
        )
        if keys.intersection(linked):
            kept.append(module)
            keys.update(joined)
    return kept if downstream else kept[::-1]
