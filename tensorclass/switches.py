"""Behaviour switches: tensordict 0.15.3's, with its defaults and both of their values.

Each switch changes what an operation does, for the whole process (as in tensordict):

- as a context manager (``with set_list_to_stack(False): ...``) the value holds inside the
  block and the previous one comes back when it ends;
- as a decorator (``@set_lazy_legacy(True)``) it holds during each call of the function
  (decorating changes nothing at import time);
- ``switch.set()`` applies it for the rest of the program, and ``switch.unset()`` brings
  back the value that ``set()`` replaced.

A mode is ``True`` or ``False`` (``0``/``1`` too); anything else is a :class:`ModeError`,
so a typo never switches a behaviour silently. The value is one per process, not per thread.

==================================  =========  =============================================
switch (getter)                     default    what ``True`` does (``False``: the other)
==================================  =========  =============================================
``set_list_to_stack``               ``True``   a list written to a key of a ``TensorDict``
(``list_to_stack``)                            holds one value per element (a
                                               :class:`~tensorclass.NonTensorStack` whose
                                               dims start with the batch size); ``False``:
                                               one value shared by the batch
``set_capture_non_tensor_stack``    ``False``  stacking equal non-tensor values gives one
(``capture_non_tensor_stack``)                 shared value; ``False``: a ``NonTensorStack``
``set_get_defaults_to_none``        ``True``   ``td.get(key)`` of a missing key returns
(``get_defaults_to_none``)                     ``None``; ``False``: it raises ``KeyError``
``set_lazy_legacy``                 ``False``  ``torch.stack`` of tensor classes gives a
(``lazy_legacy``)                              lazy stack; ``view``, ``permute``,
                                               ``transpose``, ``unsqueeze``, ``squeeze``
                                               give lazy views that write through
==================================  =========  =============================================

As in tensordict, the values it deprecates warn when the switch is made:
``set_list_to_stack(False)``, ``set_capture_non_tensor_stack(True)`` and
``set_lazy_legacy(True)`` emit a ``DeprecationWarning``, as does every call of
``set_get_defaults_to_none`` (a call that also applies its value at once, as tensordict's
function does; it is a context manager and a decorator as well). The environment variables
``LIST_TO_STACK``, ``CAPTURE_NONTENSOR_STACK``, ``TD_GET_DEFAULTS_TO_NONE`` and
``LAZY_LEGACY_OP`` set the starting values, as in tensordict.
"""

from __future__ import annotations

import contextvars
import os
import warnings
from collections.abc import Callable, Mapping
from contextlib import ContextDecorator
from types import MappingProxyType, TracebackType
from typing import Any, TypeVar

from typing_extensions import Self

from .errors import ModeError

__all__ = [
    "ExitRestores",
    "ModeError",
    "Nesting",
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

F = TypeVar("F", bound=Callable[..., Any])


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


class Nesting(ContextDecorator, ExitRestores):
    """A context manager, a decorator and ``set()``/``unset()`` whose uses nest: each
    ``__enter__`` pushes what it replaces on ``_saved``, each exit (``_restore``) pops it
    back. The base of the scoped settings and the switches (here and in ``nn``)."""

    _saved: list[Any]

    def __enter__(self) -> None:
        raise NotImplementedError

    def _recreate_cm(self) -> Self:
        # ContextDecorator reuses the instance on every call: give each call its own
        # saved values, so recursive or concurrent calls of a decorated function nest.
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._saved = []
        return clone

    def set(self) -> None:
        """Apply the value outside a block, until :meth:`unset`."""
        self.__enter__()

    def unset(self) -> None:
        """Bring back the value that the last :meth:`set` replaced."""
        if not self._saved:
            raise RuntimeError(f"{type(self).__name__}.unset() without a set() before it")
        self.__exit__(None, None, None)


class _Scoped(Nesting):
    """A setting held in a context variable for its block (in the calling thread)."""

    _var: contextvars.ContextVar[Any]

    def __init__(self) -> None:
        self._saved: list[contextvars.Token[Any]] = []

    def _value(self) -> Any:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._saved.append(self._var.set(self._value()))

    def _restore(self) -> None:
        self._var.reset(self._saved.pop())


# -- process-wide switches ------------------------------------------------------------------


class _Modes:
    """The value of every switch, one per process (``None``: never set, the default)."""

    list_to_stack: bool | None = None
    capture_non_tensor_stack: bool | None = None
    get_defaults_to_none: bool | None = None
    lazy_legacy: bool | None = None


_TRUE = ("y", "yes", "t", "true", "on", "1")
_FALSE = ("n", "no", "f", "false", "off", "0")


def _from_env(name: str) -> bool | None:
    text = os.environ.get(name)
    if text is None or text.lower() == "none":
        return None
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ModeError(f"the environment variable {name}={text!r} is not a truth value")


_Modes.list_to_stack = _from_env("LIST_TO_STACK")
_Modes.capture_non_tensor_stack = _from_env("CAPTURE_NONTENSOR_STACK")
_Modes.get_defaults_to_none = _from_env("TD_GET_DEFAULTS_TO_NONE")
_Modes.lazy_legacy = _from_env("LAZY_LEGACY_OP")


def check_mode(switch: str, mode: object) -> bool:
    """``mode`` as a bool: ``True``/``False`` (or ``1``/``0``); anything else is a
    :class:`ModeError` that names the switch."""
    if mode is True or mode is False:
        return mode
    if type(mode) is int and mode in (0, 1):
        return bool(mode)
    raise ModeError(f"{switch}({mode!r}): the mode must be True or False")


class _Switch(Nesting):
    """A process-wide switch (its value one per process, not per thread)."""

    _attr: str  # its attribute of _Modes
    _deprecated: bool | None = None  # the value that warns when the switch is made
    _advice: str = ""

    def __init__(self, mode: bool) -> None:
        self.mode = check_mode(type(self).__name__, mode)
        self._saved: list[bool | None] = []
        if self.mode is self._deprecated:
            self._warn()

    def _warn(self) -> None:
        warnings.warn(
            f"{type(self).__name__}({self.mode}) is deprecated in tensordict (removed in "
            f"its 0.17): {self._advice}",
            DeprecationWarning,
            stacklevel=3,
        )

    def __enter__(self) -> None:
        self._saved.append(getattr(_Modes, self._attr))
        setattr(_Modes, self._attr, self.mode)

    def _restore(self) -> None:
        setattr(_Modes, self._attr, self._saved.pop())


class set_list_to_stack(_Switch):
    """Whether a list written to a key holds one value per element (``True``, the default).

    With ``True``, ``td["tags"] = ["a", "b", "c"]`` on a ``TensorDict`` of batch size ``[3]``
    stores a :class:`~tensorclass.NonTensorStack`: ``td[1]["tags"] == "b"``. Nested lists
    give one dim each; the dims must start with the batch size (a list of the wrong length
    is refused). A list of numbers still becomes a tensor, and a list of tensors of one
    shape their stack. With ``False`` (deprecated in tensordict, so it warns) a list that
    is not numeric is one value shared by the batch; ``td.set_non_tensor(key, values)``
    stores a list as one value in either mode.

    >>> import warnings
    >>> from tensorclass import TensorDict, set_list_to_stack
    >>> td = TensorDict(batch_size=[2])
    >>> td["x"] = ["a", "b"]
    >>> td[1]["x"], td.get("x").tolist()
    ('b', ['a', 'b'])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     with set_list_to_stack(False):
    ...         td["y"] = ["a", "b"]
    >>> td[1]["y"]
    ['a', 'b']
    """

    _attr = "list_to_stack"
    _deprecated = False
    _advice = "use td.set_non_tensor(key, value) to store a list as one value"


class set_capture_non_tensor_stack(_Switch):
    """Whether stacking equal non-tensor values gives one shared value (``True``) or a
    :class:`~tensorclass.NonTensorStack` with one value per element (``False``, the
    default).

    Either way, indexing one element gives the value back; ``NonTensorStack.data`` gives
    the one value of a stack of equal values. ``True`` is deprecated in tensordict, so it
    warns.

    >>> import torch, warnings
    >>> from tensorclass import TensorDict, set_capture_non_tensor_stack
    >>> stacked = torch.stack([TensorDict(name="run"), TensorDict(name="run")])
    >>> stacked.get("name").tolist(), stacked[0]["name"], stacked.get("name").data
    (['run', 'run'], 'run', 'run')
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     with set_capture_non_tensor_stack(True):
    ...         torch.stack([TensorDict(name="run"), TensorDict(name="run")])["name"]
    'run'
    """

    _attr = "capture_non_tensor_stack"
    _deprecated = True
    _advice = "use NonTensorStack.data to get the one value of a stack of equal values"


class set_lazy_legacy(_Switch):
    """Whether ``torch.stack`` of tensor classes gives a lazy stack and the shape operations
    ``view``, ``permute``, ``transpose``, ``unsqueeze`` and ``squeeze`` give lazy views whose
    writes land in the instance they view (``True``), or dense instances (``False``, the
    default).

    ``True`` is tensordict's legacy lazy mode (deprecated there, so it warns when the switch
    is made); the views are described in :mod:`tensorclass.engine.lazy.views`.
    :func:`tensorclass.lazy_stack` builds a lazy stack in either mode.

    >>> import torch, warnings
    >>> from tensorclass import TensorDict, lazy_legacy, set_lazy_legacy
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     @set_lazy_legacy(True)
    ...     def stacked():
    ...         return torch.stack([TensorDict(), TensorDict()])
    >>> type(stacked()).__name__, type(torch.stack([TensorDict(), TensorDict()])).__name__
    ('LazyStackedTensorDict[TensorDict]', 'TensorDict')
    """

    _attr = "lazy_legacy"
    _deprecated = True
    _advice = "shape operations return a tensor class; use lazy_stack for a lazy stack"


class set_get_defaults_to_none(_Switch):
    """Whether ``get(key)`` of a missing key returns ``None`` (``True``, the default) or
    raises a ``KeyError`` (``False``); a ``default=`` given to ``get`` wins either way.

    As tensordict's function, calling it applies the value for the rest of the program
    and warns (tensordict deprecates it: ``td[key]`` raises for a missing key). It is
    also a context manager (the value from before the call comes back at the end of the
    block) and a decorator (the value holds during each call; decorating changes nothing).

    >>> import warnings
    >>> from tensorclass import TensorDict, set_get_defaults_to_none
    >>> td = TensorDict()
    >>> print(td.get("missing"))
    None
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     with set_get_defaults_to_none(False):
    ...         try:
    ...             td.get("missing")
    ...         except KeyError as err:
    ...             print(type(err).__name__)
    KeyNotFoundError
    """

    _attr = "get_defaults_to_none"
    _advice = "td[key] raises a KeyError for a missing key"

    def __init__(self, set_to_none: bool = True) -> None:
        super().__init__(set_to_none)
        self._warn()
        self.__enter__()  # applied at once, as tensordict's function

    def __call__(self, func: F) -> F:
        self.__exit__(None, None, None)  # a decorator: undo the call's change
        return super().__call__(func)

    def __enter__(self) -> None:
        if len(self._saved) == 1 and getattr(_Modes, self._attr) is self.mode:
            self._saved.append(self._saved[0])  # the call applied it already
            return
        super().__enter__()


def _mode(value: bool | None, allow_none: bool, default: bool) -> bool | None:
    """A switch's value for its getter: ``default`` while never set (``None`` with
    ``allow_none``)."""
    if value is None:
        return None if allow_none else default
    return value


def lazy_legacy(allow_none: bool = False) -> bool | None:
    """Whether ``torch.stack`` gives lazy stacks (see :class:`set_lazy_legacy`); ``False``
    unless set. With ``allow_none=True``, ``None`` while it was never set.

    >>> from tensorclass import lazy_legacy
    >>> lazy_legacy(), lazy_legacy(allow_none=True)
    (False, None)
    """
    return _mode(_Modes.lazy_legacy, allow_none, False)


def list_to_stack(allow_none: bool = False) -> bool | None:
    """Whether a list written to a key holds one value per element (see
    :class:`set_list_to_stack`); ``True`` unless set. With ``allow_none=True``, ``None``
    while it was never set.

    >>> from tensorclass import list_to_stack
    >>> list_to_stack()
    True
    """
    return _mode(_Modes.list_to_stack, allow_none, True)


def capture_non_tensor_stack(allow_none: bool = False) -> bool | None:
    """Whether stacking equal non-tensor values gives one value (see
    :class:`set_capture_non_tensor_stack`); ``False`` unless set. With
    ``allow_none=True``, ``None`` while it was never set.

    >>> from tensorclass import capture_non_tensor_stack
    >>> capture_non_tensor_stack()
    False
    """
    return _mode(_Modes.capture_non_tensor_stack, allow_none, False)


def get_defaults_to_none(set_to_none: bool = True) -> bool:
    """Whether ``get`` of a missing key returns ``None`` (see
    :class:`set_get_defaults_to_none`); ``True`` unless set. ``set_to_none`` is ignored
    (as in tensordict).

    >>> from tensorclass import get_defaults_to_none
    >>> get_defaults_to_none()
    True
    """
    return _Modes.get_defaults_to_none is not False


def lists_per_element() -> bool:
    """:func:`list_to_stack` for the engine (a plain bool, no argument)."""
    return _Modes.list_to_stack is not False


def stacks_capture() -> bool:
    """:func:`capture_non_tensor_stack` for the engine (a plain bool, no argument)."""
    return _Modes.capture_non_tensor_stack is True


def stacks_lazily() -> bool:
    """:func:`lazy_legacy` for the engine (a plain bool, no argument)."""
    return _Modes.lazy_legacy is True


def missing_gets_none() -> bool:
    """:func:`get_defaults_to_none` for the engine."""
    return _Modes.get_defaults_to_none is not False


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
