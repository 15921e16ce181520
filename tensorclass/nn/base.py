"""``TensorDictModuleBase``: what every module that reads and writes by key shares.

A module has ``in_keys`` (what it reads) and ``out_keys`` (what it writes). Called with a
tensor class, it reads the inputs from it, writes the outputs into it (or into
``tensordict_out``) and returns it. Called with tensors (positionally, in ``in_keys``
order, or by keyword), it builds a ``TensorDict`` from them and returns the output tensors:
one tensor for one out key, else a tuple.

``select_out_keys`` narrows what is written; ``reset_out_keys`` undoes it;
``out_keys_source`` keeps every key the module can write.
"""

from __future__ import annotations

import warnings
from collections.abc import Container, Iterable
from typing import TYPE_CHECKING, Any, Generic, overload

import torch
from torch import Tensor, nn
from typing_extensions import Self, TypeVar

from ..engine.base import TensorDictBase
from ..engine.core.self_types import is_op
from ..engine.ops import TensorOps
from ..errors import BatchSizeError, KeyNotFoundError, SchemaError
from ..tensordict import TensorDict
from .keys import Key, as_keys, call_name, show_keys
from .skip import ACTIVE as _SKIP_BLOCKS
from .skip import current_mode, should_skip

__all__ = ["FixedKeysModule", "HeldKeysModule", "TensorDictModuleBase"]

T = TypeVar("T", bound=TensorDictBase, default=TensorDictBase)
S = TypeVar("S", bound=TensorDictBase)


def indent(text: str, by: int) -> str:
    """Indent every line of ``text`` but the first (for nested reprs)."""
    return text.replace("\n", "\n" + " " * by)


class TensorDictModuleBase(nn.Module, Generic[T]):
    """Base class of the modules that read ``in_keys`` and write ``out_keys``.

    Subclasses implement ``in_keys``, ``out_keys_source`` and ``_forward_td`` (or
    ``forward``), or assign ``self.in_keys`` and ``self.out_keys`` in ``__init__``. With a
    schema (``schema=X``), calling the module with an instance of another class is an
    error.
    """

    _schema: type[T] | None
    _selected: list[Key] | None

    def __init__(self) -> None:
        super().__init__()
        self._schema = None
        self._selected = None

    # -- keys ------------------------------------------------------------------------------

    @property
    def in_keys(self) -> list[Key]:
        """The keys read from the input; a subclass may assign them (``self.in_keys =
        ["obs"]``), as in tensordict."""
        return list(self._assigned("_in_keys_set", "in_keys"))

    @in_keys.setter
    def in_keys(self, keys: Any) -> None:  # Any: a subclass may declare a class attribute
        self._set_in_keys(as_keys(keys, "in_keys"))

    @property
    def out_keys_source(self) -> list[Key]:
        """Every key this module can write (``select_out_keys`` does not change it)."""
        return list(self._assigned("_out_keys_set", "out_keys"))

    @property
    def out_keys(self) -> list[Key]:
        """The keys written to the output (all of ``out_keys_source`` unless selected); a
        subclass may assign them (``self.out_keys = ["action"]``), which ends a selection."""
        return self._current_out_keys()

    @out_keys.setter
    def out_keys(self, keys: Any) -> None:  # Any: a subclass may declare a class attribute
        self._set_out_keys(as_keys(keys, "out_keys"))

    def _current_out_keys(self) -> list[Key]:
        """The selected out keys, or every key of ``out_keys_source``."""
        selected = self._selected
        return list(selected) if selected is not None else self.out_keys_source

    def _assigned(self, slot: str, what: str) -> list[Key]:
        keys: list[Key] | None = self.__dict__.get(slot)
        if keys is None:
            raise AttributeError(
                f"{type(self).__name__} has no {what}: assign them (self.{what} = [...]) or "
                f"define the {what} property"
            )
        return keys

    def _set_in_keys(self, keys: list[Key]) -> None:
        """Assign the keys read (a subclass whose keys are derived refuses)."""
        object.__setattr__(self, "_in_keys_set", keys)

    def _set_out_keys(self, keys: list[Key]) -> None:
        """Assign every key written; a selection of out keys ends."""
        object.__setattr__(self, "_out_keys_set", keys)
        self._selected = None
        self._out_keys_changed()

    def _refuse_keys(self, what: str, why: str) -> None:
        """For subclasses whose keys cannot be assigned: the error says why."""
        raise AttributeError(f"{type(self).__name__}.{what} cannot be assigned: {why}")

    @property
    def schema(self) -> type[T] | None:
        """The tensor class this module reads and writes, if it was given one."""
        return self._schema

    def select_out_keys(self, *out_keys: object) -> Self:
        """Write only ``out_keys`` (a subset of ``out_keys_source``); returns this module.

        Undo with :meth:`reset_out_keys`.
        """
        keys = as_keys(list(out_keys), "select_out_keys")
        source = self.out_keys_source
        for key in keys:
            if key not in source:
                raise KeyNotFoundError(
                    f"{type(self).__name__}.select_out_keys: {key!r} is not one of its out "
                    f"keys {show_keys(source)}",
                    key=key,
                )
        self._selected = [key for key in source if key in keys]
        self._out_keys_changed()
        return self

    def reset_out_keys(self) -> Self:
        """Write every key of ``out_keys_source`` again; returns this module."""
        self._selected = None
        self._out_keys_changed()
        return self

    @staticmethod
    def is_tdmodule_compatible(module: object) -> bool:
        """Whether ``module`` reads and writes by key: it has ``in_keys`` and ``out_keys``.

        >>> from torch import nn
        >>> from tensorclass.nn import TensorDictModule
        >>> TensorDictModule.is_tdmodule_compatible(nn.Linear(2, 2))
        False
        >>> TensorDictModule.is_tdmodule_compatible(TensorDictModule(nn.Linear(2, 2), ["x"], ["y"]))
        True
        """
        return hasattr(module, "in_keys") and hasattr(module, "out_keys")

    def reset_parameters_recursive(self, parameters: TensorDictBase | None = None) -> Any:
        """Re-initialise every submodule that has a ``reset_parameters`` method.

        Without ``parameters`` the module's own parameters are reset in place (a warning
        says so when no submodule can be reset) and ``None`` is returned. With
        ``parameters`` (the layout :meth:`TensorDict.from_module` gives, no batch dims)
        the module is left as it is: new values are drawn into ``parameters``' storage, as
        if they had been loaded into the module, and returned as a new instance whose
        leaves share that storage and require grad.

        >>> import torch
        >>> from torch import nn
        >>> from tensorclass import TensorDict
        >>> from tensorclass.nn import TensorDictModule
        >>> module = TensorDictModule(nn.Linear(3, 3), ["x"], ["y"])
        >>> params = TensorDict.from_module(module).clone().zero_()
        >>> fresh = module.reset_parameters_recursive(params)
        >>> bool(params["module", "weight"].abs().sum() > 0)  # drawn into params' storage
        True
        """
        if parameters is None:
            if not _reset_each(self):
                warnings.warn(
                    f"{type(self).__name__}.reset_parameters_recursive: no submodule has a "
                    "reset_parameters method; nothing was reset",
                    stacklevel=2,
                )
            return None
        if parameters.batch_dims:
            raise BatchSizeError(
                "reset_parameters_recursive: parameters must have no batch dims, got "
                f"batch_size={list(parameters.batch_size)} (reset each copy separately)"
            )
        fresh = parameters.apply(
            lambda leaf: leaf.detach().requires_grad_(leaf.is_floating_point())
        )
        with fresh.to_module(self):
            _reset_each(self)
        return fresh

    def _out_keys_changed(self) -> None:
        """Hook: the selected out keys changed (modules recompute what they write)."""

    def _call_names(self) -> dict[str, Key]:
        """Keyword names accepted by a call with tensors, and the key each one fills."""
        return {call_name(key): key for key in self.in_keys}

    # -- calling ---------------------------------------------------------------------------

    if TYPE_CHECKING:

        @overload
        def __call__(
            self: TensorDictModuleBase[TensorDictBase],
            tensordict: S,
            /,
            *,
            tensordict_out: None = None,
        ) -> S: ...

        @overload
        def __call__(self, tensordict: T, /, *, tensordict_out: T | None = None) -> T: ...

        @overload
        def __call__(self, *tensors: Tensor, **named: Tensor) -> Any: ...

        def __call__(self, *args: object, **kwargs: object) -> object: ...

    def forward(
        self,
        tensordict: object = None,
        *args: object,
        tensordict_out: Any = None,
        **kwargs: object,
    ) -> Any:
        """Run on a tensor class (returned, with the outputs written), or on tensors.

        With tensors (positional in ``in_keys`` order, or keywords named after the keys,
        nested keys joined by ``_``), the outputs are returned: one tensor, or a tuple
        (and also written into ``tensordict_out`` when one is given).
        """
        if is_op(tensordict):  # an instance (typed with its operations)
            schema = self._schema
            if schema is not None:
                if not isinstance(tensordict, schema):
                    raise self._wrong_class(tensordict, "")
                if tensordict_out is not None and not isinstance(tensordict_out, schema):
                    raise self._wrong_class(tensordict_out, " as tensordict_out")
            if args or kwargs:
                args, kwargs, tensordict_out = _tensordict_call(args, kwargs, tensordict_out)
            if args or kwargs:
                raise TypeError(
                    f"{type(self).__name__}: pass either a tensor class or tensors, not both"
                )
            if (
                _SKIP_BLOCKS[0]
                and tensordict_out is None
                and should_skip(current_mode(), self.in_keys, self.out_keys, tensordict)
            ):
                return tensordict
            return self._forward_td(tensordict, tensordict_out)
        values = args if tensordict is None else (tensordict, *args)
        return self._forward_tensors(values, kwargs, tensordict_out)

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        raise NotImplementedError

    def _forward_tensors(
        self,
        values: tuple[object, ...],
        named: dict[str, object],
        tensordict_out: TensorOps | None = None,
    ) -> object:
        in_keys = self.in_keys
        if len(values) > len(in_keys):
            raise TypeError(
                f"{type(self).__name__} takes {len(in_keys)} input(s) {show_keys(in_keys)}; "
                f"got {len(values)}"
            )
        data: dict[Key, object] = dict(zip(in_keys, values))
        if named:
            names = self._call_names()
            for name, value in named.items():
                key = names.get(name)
                if key is None:
                    raise TypeError(
                        f"{type(self).__name__} got an unexpected keyword {name!r}; it accepts "
                        f"{', '.join(map(repr, names)) or 'none'}"
                    )
                if key in data:
                    raise TypeError(f"{type(self).__name__} got {key!r} twice")
                data[key] = value
        result = self._forward_td(TensorDict(data), tensordict_out)
        outputs = tuple(result.get(key) for key in self.out_keys)
        return outputs[0] if len(outputs) == 1 else outputs

    def _wrong_class(self, tensordict: object, role: str) -> SchemaError:
        name = self._schema.__name__ if self._schema is not None else "?"
        return SchemaError(
            f"{type(self).__name__}(schema={name}) was called with a "
            f"{type(tensordict).__name__}{role}; "
            f"pass a {name} (or build the module without schema=)"
        )

    def _missing_input(self, tensordict: TensorOps, key: Key) -> KeyNotFoundError:
        held = [k for k in tensordict.keys(include_nested=True, leaves_only=True)]
        return KeyNotFoundError(
            f"{type(self).__name__} reads {key!r}, which the input {type(tensordict).__name__} "
            f"does not hold (in_keys={show_keys(self.in_keys)}; the input holds "
            f"{show_keys(held)})",
            key=key,
        )

    # -- repr ------------------------------------------------------------------------------

    def _repr_fields(self) -> list[tuple[str, str]]:
        return [("in_keys", show_keys(self.in_keys)), ("out_keys", show_keys(self.out_keys))]

    def __repr__(self) -> str:
        fields = self._repr_fields()
        if self._schema is not None:
            fields.append(("schema", self._schema.__name__))
        body = ",\n".join(f"    {name}={indent(text, 4)}" for name, text in fields)
        return f"{type(self).__name__}(\n{body})"


class FixedKeysModule(TensorDictModuleBase[T]):
    """A module whose keys are fixed when it is built (``_in_keys``, ``_out_keys``)."""

    _in_keys: list[Key]
    _out_keys: list[Key]

    @property
    def in_keys(self) -> list[Key]:
        """The keys read, as fixed when the module was built (assignable)."""
        return list(self._in_keys)

    @in_keys.setter
    def in_keys(self, keys: Any) -> None:  # Any: a subclass may declare a class attribute
        self._set_in_keys(as_keys(keys, "in_keys"))

    @property
    def out_keys_source(self) -> list[Key]:
        """The keys written, as fixed when the module was built."""
        return list(self._out_keys)

    def _set_in_keys(self, keys: list[Key]) -> None:
        self._in_keys = keys

    def _set_out_keys(self, keys: list[Key]) -> None:
        self._out_keys = keys
        self._selected = None
        self._out_keys_changed()


class HeldKeysModule(TensorDictModuleBase[T]):
    """A module whose keys are those of a key-reading module it holds (``_held()``): its
    in and out keys, and the selection of out keys, which is made on the held module."""

    def _held(self) -> TensorDictModuleBase[Any]:
        raise NotImplementedError

    @property
    def in_keys(self) -> list[Key]:
        """The held module's in keys (assigning sets the held module's)."""
        return list(self._held().in_keys)

    @in_keys.setter
    def in_keys(self, keys: Any) -> None:  # Any: a subclass may declare a class attribute
        self._set_in_keys(as_keys(keys, "in_keys"))

    @property
    def out_keys_source(self) -> list[Key]:
        """The held module's ``out_keys_source``."""
        return list(self._held().out_keys_source)

    @property
    def out_keys(self) -> list[Key]:
        """The held module's out keys (its selection included; assigning sets the held
        module's)."""
        return list(self._held().out_keys)

    @out_keys.setter
    def out_keys(self, keys: Any) -> None:  # Any: a subclass may declare a class attribute
        self._set_out_keys(as_keys(keys, "out_keys"))

    def _set_in_keys(self, keys: list[Key]) -> None:
        self._held().in_keys = keys

    def _set_out_keys(self, keys: list[Key]) -> None:
        self._held().out_keys = keys

    def select_out_keys(self, *out_keys: object) -> Self:
        """Select the out keys of the held module; returns this module."""
        self._held().select_out_keys(*out_keys)
        return self

    def reset_out_keys(self) -> Self:
        """Undo :meth:`select_out_keys` on the held module; returns this module."""
        self._held().reset_out_keys()
        return self


def _reset_each(module: nn.Module) -> bool:
    """Call ``reset_parameters`` on every submodule that has one; whether any had."""
    found = False
    with torch.no_grad():
        for submodule in module.modules():
            reset = getattr(submodule, "reset_parameters", None)
            if submodule is not module and callable(reset):
                reset()
                found = True
    return found


def first_missing(tensordict: Container[Key], keys: Iterable[Key]) -> Key | None:
    """The first of ``keys`` that ``tensordict`` does not hold, or ``None``."""
    for key in keys:
        if key not in tensordict:
            return key
    return None


def _tensordict_call(
    args: tuple[object, ...], kwargs: dict[str, object], tensordict_out: Any
) -> tuple[tuple[object, ...], dict[str, object], Any]:
    """The other arguments of a call on a tensor class, as tensordict's modules take them:
    ``tensordict_out`` second, and ``_requires_sample=True`` (its private keyword, which
    subclasses written for tensordict pass, TorchRL's ``SafeProbabilisticModule`` for one:
    sampling is what the modules here do)."""
    if tensordict_out is None and len(args) == 1 and (args[0] is None or is_op(args[0])):
        tensordict_out, args = args[0], ()
    if kwargs.get("_requires_sample") is True:
        kwargs = {k: v for k, v in kwargs.items() if k != "_requires_sample"}
    return args, kwargs, tensordict_out
