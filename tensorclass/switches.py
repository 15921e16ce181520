"""Behaviour switches, scoped to a ``with`` block (or a decorated function).

tensordict has process-wide switches that change what an operation does. tensorclass has
one behaviour for each, so its switches are *statements*: a switch given the value that
matches tensorclass's behaviour is accepted (as a context manager or a decorator, so code
written for tensordict runs unchanged), and any other value is a :class:`ModeError` that
says what tensorclass does instead. The one switch that really changes something,
:class:`set_printoptions`, changes only how instances print, and only inside its block.

Every switch stores its value in a :class:`contextvars.ContextVar`: leaving the block
restores the previous value, and threads and asyncio tasks each see their own.

=============================  ==========  ===============================================
switch (getter)                 accepted    what tensorclass does
=============================  ==========  ===============================================
``set_lazy_legacy``             ``False``   shape operations return a tensor class and
(``lazy_legacy``)                           ``torch.stack`` stacks densely; ``lazy_stack``
                                            builds a lazy stack
``set_list_to_stack``           ``False``   a list written to a key is one value shared by
(``list_to_stack``)                         the batch; ``NonTensorStack.from_list`` gives
                                            one value per element
``set_capture_non_tensor_``     ``True``    stacking equal non-tensor values keeps one
``stack``                                   shared value
(``capture_non_tensor_stack``)
``set_get_defaults_to_none``    ``False``   ``get`` of a missing key raises
(``get_defaults_to_none``)                  ``KeyNotFoundError``; ``get(key, None)``
                                            returns ``None``
=============================  ==========  ===============================================
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from contextlib import ContextDecorator
from types import MappingProxyType, TracebackType
from typing import Any

from typing_extensions import Self

from .errors import ModeError

__all__ = [
    "ExitRestores",
    "ModeError",
    "capture_non_tensor_stack",
    "get_defaults_to_none",
    "get_printoptions",
    "lazy_legacy",
    "list_to_stack",
    "printoption",
    "set_capture_non_tensor_stack",
    "set_get_defaults_to_none",
    "set_lazy_legacy",
    "set_list_to_stack",
    "set_printoptions",
]


class ExitRestores:
    """A context manager whose exit undoes what its ``__enter__`` did (``_restore``),
    whether the block ended normally or by an exception (which propagates).

    The base of the scoped settings: the switches here, ``set_interaction_type`` and
    ``set_skip_existing`` (``tensorclass.nn``), and ``ParamSwap`` (``to_module``; listed
    first among its bases, before the engine whose ``__exit__`` ends shape contexts).
    """

    __slots__ = ()

    def _restore(self) -> None:
        raise NotImplementedError

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._restore()


class _Scoped(ContextDecorator, ExitRestores):
    """A context manager (and decorator) that sets a context variable for its block."""

    _var: contextvars.ContextVar[Any]

    def __init__(self) -> None:
        self._tokens: list[contextvars.Token[Any]] = []

    def _value(self) -> Any:
        raise NotImplementedError

    def _recreate_cm(self) -> Self:
        # ContextDecorator reuses the instance on every call: give each call its own
        # token list, so recursive or concurrent calls of a decorated function nest.
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._tokens = []
        return clone

    def __enter__(self) -> None:
        self._tokens.append(self._var.set(self._value()))

    def _restore(self) -> None:
        self._var.reset(self._tokens.pop())


# -- switches whose one accepted value is tensorclass's behaviour -------------------------


class _Statement(_Scoped):
    """A switch with one accepted value (the subclass's ``_accepted``)."""

    _accepted: bool
    _instead: str

    def __init__(self, mode: bool) -> None:
        super().__init__()
        if mode is not self._accepted and mode != self._accepted:
            raise ModeError(
                f"{type(self).__name__}({mode!r}) is not supported: {self._instead} "
                f"({type(self).__name__}({self._accepted!r}) is accepted)"
            )
        self.mode = self._accepted

    def _value(self) -> bool:
        return self._accepted


def _getter(var: contextvars.ContextVar[bool | None], default: bool) -> Callable[[bool], Any]:
    def get(allow_none: bool = False) -> bool | None:
        value = var.get()
        if value is None:
            return None if allow_none else default
        return value

    return get


_LAZY_LEGACY: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "tensorclass_lazy_legacy", default=None
)
_LIST_TO_STACK: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "tensorclass_list_to_stack", default=None
)
_CAPTURE: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "tensorclass_capture_non_tensor_stack", default=None
)
_GET_NONE: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "tensorclass_get_defaults_to_none", default=None
)


class set_lazy_legacy(_Statement):
    """Accepts ``False`` only: shape operations and ``torch.stack`` are never lazy.

    tensordict's legacy lazy mode made ``unsqueeze``, ``permute``... return lazy views and
    ``torch.stack`` a lazy stack. In tensorclass they always return a tensor class; use
    :func:`tensorclass.lazy_stack` for a lazy stack. ``True`` raises :class:`ModeError`.

    >>> import torch
    >>> from tensorclass import TensorDict, lazy_legacy, set_lazy_legacy
    >>> with set_lazy_legacy(False):
    ...     print(lazy_legacy(), type(torch.stack([TensorDict(), TensorDict()])).__name__)
    False TensorDict
    """

    _var = _LAZY_LEGACY
    _accepted = False
    _instead = (
        "tensorclass has no legacy lazy mode: shape operations return a tensor class and "
        "torch.stack stacks densely; use tensorclass.lazy_stack to build a lazy stack"
    )


class set_list_to_stack(_Statement):
    """Accepts ``False`` only: a list written to a key is one value shared by the batch.

    tensordict (by default) turns ``td[key] = ["a", "b"]`` into a stack with one value per
    element. In tensorclass a list that is not numeric is one non-tensor value; write
    ``NonTensorStack.from_list(values)`` to store one value per element. ``True`` raises
    :class:`ModeError`.

    >>> from tensorclass import TensorDict, set_list_to_stack
    >>> td = TensorDict(batch_size=[2])
    >>> with set_list_to_stack(False):
    ...     td["x"] = ["a", "b"]
    >>> td["x"]
    ['a', 'b']
    """

    _var = _LIST_TO_STACK
    _accepted = False
    _instead = (
        "tensorclass stores a list as one value shared by the batch; write "
        "NonTensorStack.from_list(values) to store one value per element"
    )


class set_capture_non_tensor_stack(_Statement):
    """Accepts ``True`` only: stacking equal non-tensor values keeps one shared value.

    ``False`` (tensordict's default) would make a stack of equal values per element; in
    tensorclass equal values stay one shared value, and reading it returns the value.
    ``False`` raises :class:`ModeError`.

    >>> import torch
    >>> from tensorclass import TensorDict, set_capture_non_tensor_stack
    >>> a = TensorDict(batch_size=[]); a["name"] = "run"
    >>> with set_capture_non_tensor_stack(True):
    ...     torch.stack([a, a.clone()])["name"]
    'run'
    """

    _var = _CAPTURE
    _accepted = True
    _instead = (
        "tensorclass keeps equal non-tensor values stacked together as one shared value "
        "(read it with td[key]); different values make a NonTensorStack"
    )


class set_get_defaults_to_none(_Statement):
    """Accepts ``False`` only: ``get`` of a missing key raises ``KeyNotFoundError``.

    Pass a default to get one back instead: ``td.get(key, None)``. ``True`` raises
    :class:`ModeError`. (tensordict's function applies the setting for the rest of the
    program; here it is a context manager and a decorator like the other switches, and
    calling it alone changes nothing.)

    >>> from tensorclass import TensorDict, set_get_defaults_to_none
    >>> with set_get_defaults_to_none(False):
    ...     print(TensorDict().get("missing", None))
    None
    """

    _var = _GET_NONE
    _accepted = False
    _instead = (
        "tensorclass's get raises KeyNotFoundError for a missing key; pass a default "
        "(td.get(key, None)) to get None"
    )

    def __init__(self, set_to_none: bool = True) -> None:
        super().__init__(set_to_none)


_lazy_legacy = _getter(_LAZY_LEGACY, False)
_list_to_stack = _getter(_LIST_TO_STACK, False)
_capture = _getter(_CAPTURE, True)


def lazy_legacy(allow_none: bool = False) -> bool | None:
    """Whether the legacy lazy mode is on: always ``False`` (see :class:`set_lazy_legacy`).

    With ``allow_none=True``, ``None`` outside a :class:`set_lazy_legacy` block.

    >>> from tensorclass import lazy_legacy
    >>> lazy_legacy(), lazy_legacy(allow_none=True)
    (False, None)
    """
    result: bool | None = _lazy_legacy(allow_none)
    return result


def list_to_stack(allow_none: bool = False) -> bool | None:
    """Whether a written list becomes a per-element stack: always ``False``.

    See :class:`set_list_to_stack`; with ``allow_none=True``, ``None`` outside its block.

    >>> from tensorclass import list_to_stack
    >>> list_to_stack()
    False
    """
    result: bool | None = _list_to_stack(allow_none)
    return result


def capture_non_tensor_stack(allow_none: bool = False) -> bool | None:
    """Whether stacking equal non-tensor values keeps one value: always ``True``.

    See :class:`set_capture_non_tensor_stack`; with ``allow_none=True``, ``None`` outside
    its block.

    >>> from tensorclass import capture_non_tensor_stack
    >>> capture_non_tensor_stack()
    True
    """
    result: bool | None = _capture(allow_none)
    return result


def get_defaults_to_none(set_to_none: bool = True) -> bool:
    """Whether ``get`` returns ``None`` for a missing key: always ``False``.

    ``set_to_none`` is ignored (as in tensordict). See :class:`set_get_defaults_to_none`.

    >>> from tensorclass import get_defaults_to_none
    >>> get_defaults_to_none()
    False
    """
    return False


# -- print options -------------------------------------------------------------------------

#: The defaults, tensordict 0.15.3's: the compact form, entries sorted by name.
_DEFAULT_PRINT: Mapping[str, Any] = MappingProxyType(
    {
        "show_batch_size": True,
        "show_device": True,
        "show_is_shared": True,
        "show_shape": True,
        "show_field_device": True,
        "show_dtype": True,
        "show_field_is_shared": True,
        "show_grad": False,
        "show_is_contiguous": False,
        "show_is_view": False,
        "show_storage_size": False,
        "plain": False,
        "sort_keys": "alphabetical",
        "compact": True,
        "html": True,
    }
)
#: The options only the detailed form uses: passing one without ``compact`` turns the
#: compact form off, as in tensordict.
_DETAILED_ONLY = frozenset(
    {
        "show_is_shared",
        "show_shape",
        "show_field_device",
        "show_field_is_shared",
        "show_grad",
        "show_is_contiguous",
        "show_is_view",
        "show_storage_size",
        "plain",
    }
)
#: What ``verbose=False`` hides unless an option sets it.
_NOT_VERBOSE = (
    "show_device",
    "show_is_shared",
    "show_field_device",
    "show_dtype",
    "show_field_is_shared",
)

_PRINT: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "tensorclass_printoptions", default=_DEFAULT_PRINT
)


def _check_print_option(name: str, value: Any) -> None:
    if name not in _DEFAULT_PRINT:
        raise TypeError(
            f"set_printoptions: unknown option {name!r}; the options are "
            f"{', '.join(sorted(_DEFAULT_PRINT))}"
        )
    if name == "sort_keys":
        if value is None or isinstance(value, bool) or value == "alphabetical" or callable(value):
            return
        raise ModeError(
            f"set_printoptions: sort_keys must be 'alphabetical', a callable that gives the "
            f"sort key of an entry's text, or None (insertion order); got {value!r}"
        )
    if not isinstance(value, bool):
        raise ModeError(f"set_printoptions: {name} must be a bool; got {value!r}")


class set_printoptions(_Scoped):
    """Change how instances print, inside a ``with`` block or a decorated function.

    Options not passed keep their current value; leaving the block restores the previous
    ones (:func:`get_printoptions` reads them). The defaults are tensordict 0.15.3's:

    - ``compact=True``: each entry as its short dtype and its dims after the batch dims
      (``f32[3]``), entries past 80 columns one a line; ``compact=False`` gives the
      detailed form, one ``Tensor(shape=..., device=..., dtype=..., is_shared=...)`` per
      entry;
    - ``show_batch_size``, ``show_device``: the ``batch_size=`` and ``device=`` entries;
      ``show_dtype``: each tensor's dtype (both forms);
    - ``sort_keys``: ``"alphabetical"`` (the default), a callable giving the sort key of
      each entry's text, or anything else for insertion order;
    - the detailed form only: ``show_shape``, ``show_field_device``, ``show_is_shared``,
      ``show_field_is_shared``, ``show_grad``, ``show_is_contiguous``, ``show_is_view``,
      ``show_storage_size``, ``plain``. Passing one of these without ``compact`` turns
      the compact form off;
    - ``html``: the HTML tree notebooks show (``_repr_html_``); ``False`` turns it off,
      and under ``compact=False`` a notebook shows the detailed text.

    ``verbose=False`` hides the devices, dtypes and ``is_shared`` unless an option sets
    them. An unknown option is a ``TypeError``.

    >>> import torch
    >>> from tensorclass import TensorDict, set_printoptions
    >>> td = TensorDict({"b": torch.zeros(2, 3), "a": torch.zeros(2)}, batch_size=[2])
    >>> print(td)
    TensorDict(batch_size=[2], fields={a: f32[], b: f32[3]})
    >>> with set_printoptions(sort_keys=None, show_dtype=False):
    ...     print(td)
    TensorDict(batch_size=[2], fields={b: [3], a: []})
    >>> with set_printoptions(compact=False, verbose=False):
    ...     print(td)
    TensorDict(
        fields={
            a: Tensor(shape=torch.Size([2])),
            b: Tensor(shape=torch.Size([2, 3]))},
        batch_size=torch.Size([2]))
    """

    _var = _PRINT

    def __init__(self, *, verbose: bool = True, **options: Any) -> None:
        super().__init__()
        for name, value in options.items():
            _check_print_option(name, value)
        if "compact" not in options and not _DETAILED_ONLY.isdisjoint(options):
            options["compact"] = False
        if not verbose:
            options = {**dict.fromkeys(_NOT_VERBOSE, False), **options}
        self._options = options

    def _value(self) -> Mapping[str, Any]:
        return MappingProxyType({**_PRINT.get(), **self._options})


def get_printoptions() -> dict[str, Any]:
    """The print options in force (a new dict; see :class:`set_printoptions`).

    >>> from tensorclass import get_printoptions, set_printoptions
    >>> get_printoptions()["compact"]
    True
    >>> with set_printoptions(compact=False):
    ...     get_printoptions()["compact"]
    False
    """
    return dict(_PRINT.get())


def printoption(name: str) -> Any:
    """The value of one print option in force (for the repr)."""
    return _PRINT.get()[name]
