"""``TensorDictModule``: a module (or any callable) that reads and writes by key.

>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictModule
>>> linear = TensorDictModule(nn.Linear(3, 4), in_keys=["x"], out_keys=["y"])
>>> td = linear(TensorDict({"x": torch.zeros(8, 3)}, batch_size=[8]))
>>> td["y"].shape
torch.Size([8, 4])
>>> linear(torch.zeros(3)).shape  # tensors in, tensors out
torch.Size([4])

Dict ``in_keys`` map input keys to keyword arguments:

>>> add = TensorDictModule(lambda x, *, y: x + y, in_keys={"a": "x", "b": "y"}, out_keys=["z"])
>>> add(TensorDict({"a": torch.ones(()), "b": torch.ones(()) * 2}))["z"]
tensor(3.)
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal

from torch import Tensor
from torch.nn import Module

from ..engine.ops import TensorOps
from ..errors import BatchSizeError, InvalidKeyError, StructureMismatchError
from ..keys import NestedKey, unravel_key
from ..non_tensor import NonTensorData, NonTensorStack
from .base import FixedKeysModule, T
from .keys import Key, KeysLike, as_keys, show_keys
from .schema_check import check_module_keys

__all__ = ["TensorDictModule"]

DROP = "_"
"""The out key that drops an output."""


def _flipped(in_keys: Mapping[Any, Any]) -> dict[NestedKey, str]:
    """``{argument: key}`` (tensordict's ``out_to_in_map=True``) as ``{key: argument}``."""
    flipped: dict[NestedKey, str] = {}
    for name, key in in_keys.items():
        if not isinstance(name, str):
            raise InvalidKeyError(
                f"out_to_in_map=True reads in_keys as {{argument name: key}}; {name!r} is not "
                f"an argument name"
            )
        flipped[key] = name
    return flipped


def _describe_output(result: object) -> str:
    if isinstance(result, (tuple, list)):
        return f"a {type(result).__name__} of {len(result)}"
    return f"one {type(result).__name__}"


class TensorDictModule(FixedKeysModule[T]):
    """Wrap a module or callable so that it reads ``in_keys`` and writes ``out_keys``.

    Args:
        module: an ``nn.Module`` or any callable (a lambda, a function; with
            ``in_keys=[]``, a factory called without arguments). It may return a tensor,
            a tuple of values (one per out key), or a dict holding the out keys.
        in_keys: the keys read and passed to ``module`` positionally, in order; or a dict
            mapping each key to the name of the keyword argument it is passed as.
        out_keys: where the outputs are written, in order; ``"_"`` drops an output. Nested
            keys create nested levels. The number of outputs must match.
        schema: a tensor class; every key must be one of its (nested) fields, and calling
            the module with an instance of another class is an error.
        inplace: write into the input (default) or into a new, empty instance of its class
            (``False``, or ``"empty"`` as tensordict spells it; ``None`` as ``False``).
        out_to_in_map: the direction of a dict ``in_keys``: ``None``/``False`` read it as
            ``{key: argument}``, ``True`` as ``{argument: key}`` (tensordict's default).
        method: the name of the method of ``module`` to call instead of ``module`` itself
            (its parameters stay registered in this wrapper).
        method_kwargs: keyword arguments passed to ``module`` (or ``method``) at each call.
        strict: ``True`` (default) raises when an input is missing; ``False`` passes
            ``None`` in its place (for optional inputs), and if the module then fails, the
            error names the missing keys.
        get_kwargs: keyword arguments of ``get`` used to read the inputs (``default=...``).
    """

    _fn: Callable[..., Any]

    def __init__(
        self,
        module: Callable[..., Any],
        in_keys: KeysLike | Mapping[NestedKey, str],
        out_keys: KeysLike,
        *,
        schema: type[T] | None = None,
        inplace: bool | Literal["empty"] | None = True,
        out_to_in_map: bool | None = None,
        method: str | None = None,
        method_kwargs: Mapping[str, Any] | None = None,
        strict: bool = True,
        get_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if method is None:
            if not callable(module):
                raise TypeError(f"TensorDictModule needs a callable; got {type(module).__name__}")
        elif not callable(getattr(module, method, None)):
            raise AttributeError(
                f"TensorDictModule(method={method!r}): {type(module).__name__} has no method "
                f"{method!r}"
            )
        if inplace not in (True, False, "empty", None):
            raise ValueError(
                f"TensorDictModule: inplace must be True, False, 'empty' or None; got {inplace!r}"
            )
        object.__setattr__(self, "_call_spec", (method, dict(method_kwargs or {})))
        self.module = module
        self.strict = strict
        self._get_kwargs = None if get_kwargs is None else dict(get_kwargs)
        if out_to_in_map is not None and not isinstance(in_keys, Mapping):
            warnings.warn(
                "TensorDictModule: out_to_in_map only applies to a dict in_keys",
                UserWarning,
                stacklevel=2,
            )
        if isinstance(in_keys, Mapping) and out_to_in_map:
            in_keys = _flipped(in_keys)
        if isinstance(in_keys, Mapping):
            self._in_keys = [unravel_key(key) for key in in_keys]
            names = list(in_keys.values())
            if not all(isinstance(name, str) for name in names):
                raise InvalidKeyError(
                    f"dict in_keys map input keys to keyword-argument names (strings); "
                    f"got {dict(in_keys)!r}"
                )
            self._kwargs: list[str] | None = names
        else:
            self._in_keys = as_keys(in_keys, "in_keys")
            self._kwargs = None
        source = as_keys(out_keys, "out_keys")
        written = [key for key in source if key != DROP]
        if len(set(written)) != len(written):
            raise ValueError(f"out_keys has a key twice: {source!r}")
        self._out_source = source
        # None: not in place, as False (and, for a sequential built through this
        # __init__ as TorchRL's SafeSequential is, each module decides)
        self.inplace: bool | None = None if inplace is None else inplace not in ("empty", False)
        if schema is not None:
            check_module_keys(schema, "TensorDictModule", self._in_keys, written)
            self._schema = schema
        self._out_keys_changed()

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "module":
            # A plain attribute for the forward pass (nn.Module keeps submodules in
            # _modules, reached through the slower __getattr__).
            method, kwargs = self.__dict__.get("_call_spec", (None, {}))
            fn = value if method is None else getattr(value, method)
            object.__setattr__(self, "_fn", functools.partial(fn, **kwargs) if kwargs else fn)

    @property
    def out_keys_source(self) -> list[Key]:
        """Every key the module writes (``"_"`` entries, which are dropped, left out)."""
        return [key for key in self._out_source if key != DROP]

    def _set_in_keys(self, keys: list[Key]) -> None:
        """Assigning ``in_keys``: the module reads those keys, in the order given (as many
        as its keyword names, for a dict ``in_keys``)."""
        names = self._kwargs
        if names is not None and len(keys) != len(names):
            raise ValueError(
                f"TensorDictModule.in_keys: the module takes its inputs as the keywords "
                f"{names!r}; assign {len(names)} keys, got {keys!r}"
            )
        if self._schema is not None:
            check_module_keys(self._schema, "TensorDictModule", keys, self.out_keys_source)
        self._in_keys = keys

    def _set_out_keys(self, keys: list[Key]) -> None:
        """Assigning ``out_keys``: the module writes its outputs there (a selection ends)."""
        written = [key for key in keys if key != DROP]
        if len(set(written)) != len(written):
            raise ValueError(f"out_keys has a key twice: {keys!r}")
        if self._schema is not None:
            check_module_keys(self._schema, "TensorDictModule", self._in_keys, written)
        self._out_source = keys
        self._selected = None
        self._out_keys_changed()

    def _out_keys_changed(self) -> None:
        wanted = set(self.out_keys)
        self._writes = tuple(
            (index, key)
            for index, key in enumerate(self._out_source)
            if key != DROP and key in wanted
        )

    def _call_names(self) -> dict[str, Key]:
        names = super()._call_names()
        if self._kwargs is not None:
            for key, name in zip(self._in_keys, self._kwargs):
                names.setdefault(name, key)
        return names

    # -- the forward pass ------------------------------------------------------------------

    def _forward_td(self, tensordict: TensorOps, tensordict_out: TensorOps | None) -> TensorOps:
        data = tensordict._data
        args = []
        try:
            if self._get_kwargs is not None:
                raise KeyError  # read through get() (the slower path below)
            for key in self._in_keys:
                leaf = data[key] if key.__class__ is str else tensordict._leaf(key)
                if leaf.__class__ is NonTensorData or leaf.__class__ is NonTensorStack:
                    leaf = leaf.value()
                args.append(leaf)
        except KeyError:
            slow = True  # read outside the handler: a missing key's error is not chained
        else:
            slow = False
        if slow:
            args = self._read_slowly(tensordict)
        names = self._kwargs
        try:
            if names is None:
                result = self._fn(*args)
            else:
                result = self._fn(**dict(zip(names, args)))
        except Exception as err:
            if self.strict or all(arg is not None for arg in args):
                raise
            absent = [key for key, arg in zip(self._in_keys, args) if arg is None]
            note = f"TensorDictModule(strict=False) passed None for the missing input(s) {absent!r}"
            if sys.version_info >= (3, 11):
                err.add_note(note)
                raise
            raise type(err)(f"{err} ({note})") from err
        if tensordict_out is None:
            tensordict_out = tensordict if self.inplace else tensordict.empty()
        try:
            self._write(result, tensordict_out)
        except BatchSizeError as err:
            raise self._output_error(err) from None
        return tensordict_out

    def _output_error(self, err: BatchSizeError) -> BatchSizeError:
        """``err`` (an output that does not fit the batch size) restated to name the module."""
        fn = self._fn
        name = fn.__class__.__name__ if isinstance(fn, Module) else getattr(fn, "__name__", fn)
        return BatchSizeError(
            f"{type(self).__name__} over {name} (out_keys={show_keys(self.out_keys)}) returned "
            f"an output that does not fit: {err} (the module must keep the input's batch "
            f"dims)",
            key=err.key,
        )

    def _read_slowly(self, tensordict: Any) -> list[Any]:
        """The inputs read through ``get`` (``get_kwargs``), or with ``None`` for missing
        ones (``strict=False``); a missing input raises when ``strict``."""
        options = self._get_kwargs or {}
        args = []
        for key in self._in_keys:
            if key in tensordict or options:
                leaf = tensordict.get(key, **options)
            elif self.strict:
                raise self._missing_input(tensordict, key)
            else:
                leaf = None
            if leaf.__class__ is NonTensorData or leaf.__class__ is NonTensorStack:
                leaf = leaf.value()
            args.append(leaf)
        return args

    def _write(self, result: Any, target: Any) -> None:
        # Writes go through _set_str/_set_path: the boundary checks (batch size, device,
        # typed fields) without the dispatch of set().
        if isinstance(result, Tensor):
            if len(self._out_source) != 1:
                raise self._count_error(result)
            for _, key in self._writes:
                if key.__class__ is str:
                    target._set_str(key, result)
                else:
                    target._set_path(key, result)
            return
        if isinstance(result, (tuple, list)):
            if len(result) != len(self._out_source):
                raise self._count_error(result)
            for index, key in self._writes:
                if key.__class__ is str:
                    target._set_str(key, result[index])
                else:
                    target._set_path(key, result[index])
            return
        if isinstance(result, Mapping):
            for _, key in self._writes:
                try:
                    value = result[key]
                except KeyError:
                    raise StructureMismatchError(
                        f"TensorDictModule: the module returned a dict without the out key "
                        f"{key!r} (it has {list(result)!r})"
                    ) from None
                target.set(key, value)
            return
        if result is None and not self._out_source:
            return  # a callable run for its effect, with nothing to write
        if len(self._out_source) != 1:
            raise self._count_error(result)
        for _, key in self._writes:
            target.set(key, result)  # one value of another kind (a tensor class, a number...)

    def _count_error(self, result: object) -> StructureMismatchError:
        return StructureMismatchError(
            f"TensorDictModule with out_keys={self._out_source!r} expects {len(self._out_source)} "
            f"output(s) from its module; it returned {_describe_output(result)}"
        )

    # -- repr ------------------------------------------------------------------------------

    def _repr_fields(self) -> list[tuple[str, str]]:
        fields = [("module", repr(self.module))]
        if self._kwargs is not None:
            mapping = {key: name for key, name in zip(self._in_keys, self._kwargs)}
            fields.append(("in_keys", repr(mapping)))
            fields.append(("out_keys", repr(self.out_keys)))
            return fields
        return fields + super()._repr_fields()
