"""``TensorDictParams``: a tensor class of parameters, registered in an ``nn.Module``.

Put one in a module and its leaves are the module's parameters: ``.parameters()``,
optimizers, ``state_dict()`` and ``.to(device)`` see them.

>>> import torch
>>> from torch import nn
>>> from tensorclass import TensorDict
>>> from tensorclass.nn import TensorDictParams
>>> params = TensorDictParams(TensorDict({"w": torch.ones(3), "inner": {"b": torch.zeros(2)}}))
>>> [name for name, _ in params.named_parameters()]
['w', 'inner.b']
>>> params["inner", "b"] is params.inner.b
True
>>> sorted(params.keys())  # other attributes are the tensor class's
['inner', 'w']
"""

from __future__ import annotations

import builtins
import copy
import html
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import torch.utils._pytree as pytree
from torch import Tensor, nn
from torch.utils.hooks import RemovableHandle

from ..engine.core.state import TensorCore
from ..engine.torch_api.pytree import flatten_node, unflatten_node
from ..keys import NestedKey
from ..registry import register_params_class
from ..switches import get_printoptions
from ..tensordict import TensorDict
from .params_forward import install_forwards, unwrap
from .params_sync import reconcile, reconcile_level, registered

__all__ = ["TensorDictParams"]


def _as_tuple(key: object) -> tuple[object, ...]:
    return key if isinstance(key, tuple) else (key,)


def _check_keys(source: TensorCore) -> None:
    """Refuse keys that cannot name a parameter, at every depth."""
    for key, leaf in source._data.items():
        if "." in key or not key:
            raise ValueError(
                f"TensorDictParams: the key {key!r} cannot name a parameter (keys must be "
                f"non-empty and must not contain '.')"
            )
        if isinstance(leaf, TensorCore):
            _check_keys(leaf)


class TensorDictParams(nn.Module):
    """An ``nn.Module`` whose parameters (and buffers) are the leaves of a tensor class.

    Floating-point tensors become ``nn.Parameter`` s (sharing storage with the tensors
    given); other tensors are registered as buffers. Nested instances become nested
    ``TensorDictParams`` modules, so names follow the keys (``"inner.b"``).

    It is the tensor class as well: reading keys (``params["a", "b"]``), every
    tensor-class method (``params.to_module(m)``, ``params.expand(4)``, ``params.apply(fn)``),
    operators (``params + 1``, ``params == other``) and torch functions
    (``torch.stack([params, params])``) act on the held tensor class, whose leaves *are* the
    registered parameters. Out-of-place results are plain tensor classes; in-place methods
    return the module. ``to``, ``cpu``, ``cuda``, ``requires_grad_``, ``zero_grad`` and
    ``state_dict`` keep ``nn.Module``'s meaning (``to`` casts the parameters in place);
    ``float``, ``double``, ``half``, ``bfloat16`` and ``type`` give a cast tensor class.
    The module hashes by identity.

    The registration follows the keys: after any in-place change of them (``set``,
    ``update``, ``pop``, ``rename_key_``, ``exclude(..., inplace=True)``..., at any depth)
    the parameters, buffers and nested modules name exactly the leaves (see
    ``params_sync.py``).

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> p = TensorDictParams(TensorDict(w=torch.ones(2)))
    >>> type(p + 1).__name__, bool((p == p).all())
    ('TensorDict', True)
    >>> p.to(torch.float64) is p, p["w"].dtype
    (True, torch.float64)

    Args:
        parameters: a tensor class or a (nested) mapping of tensors.
        no_convert: register tensors as they are (parameters stay parameters, everything
            else is a buffer).
        lock: lock the tensor class (no keys added or removed).
    """

    _td: TensorCore

    if TYPE_CHECKING:  # forwarded at run time by install_forwards (params_forward.py)

        def __add__(self, other: object) -> TensorDict: ...
        def __radd__(self, other: object) -> TensorDict: ...
        def __sub__(self, other: object) -> TensorDict: ...
        def __rsub__(self, other: object) -> TensorDict: ...
        def __mul__(self, other: object) -> TensorDict: ...
        def __rmul__(self, other: object) -> TensorDict: ...
        def __truediv__(self, other: object) -> TensorDict: ...
        def __rtruediv__(self, other: object) -> TensorDict: ...
        def __pow__(self, other: object) -> TensorDict: ...
        def __neg__(self) -> TensorDict: ...
        def __eq__(self, other: object) -> TensorDict: ...  # type: ignore[override]
        def __ne__(self, other: object) -> TensorDict: ...  # type: ignore[override]
        def __lt__(self, other: object) -> TensorDict: ...
        def __le__(self, other: object) -> TensorDict: ...
        def __gt__(self, other: object) -> TensorDict: ...
        def __ge__(self, other: object) -> TensorDict: ...
        def apply(  # type: ignore[override]
            self, fn: Callable[..., object], *others: object, **kwargs: object
        ) -> TensorDict: ...

    def __init__(
        self,
        parameters: TensorCore | Mapping[Any, Any] | None = None,
        *,
        no_convert: bool = False,
        lock: bool = False,
    ) -> None:
        super().__init__()
        source = parameters if isinstance(parameters, TensorCore) else TensorDict(parameters)
        _check_keys(source)
        self._fill(source, no_convert)
        if lock:
            self._td.lock_()

    @classmethod
    def _wrap(cls, source: TensorCore, no_convert: bool) -> TensorDictParams:
        """A module for ``source``'s leaves, without the key checks (nested levels, and keys
        that in-place methods made, such as ``"a.b"`` after ``flatten_keys``)."""
        new = cls.__new__(cls)
        nn.Module.__init__(new)
        new._fill(source, no_convert)
        return new

    def _fill(self, source: TensorCore, no_convert: bool) -> None:
        self._no_convert = no_convert
        data: dict[str, object] = {}
        for key, leaf in source._data.items():
            data[key] = self._register(key, leaf, no_convert)
        td = type(source)._new(data, source._batch_size, source._device, source._names)
        object.__setattr__(self, "_td", td)

    def _register(self, key: str, leaf: object, no_convert: bool) -> object:
        if isinstance(leaf, TensorCore):
            child = type(self)._wrap(leaf, no_convert)
            self._modules[key] = child
            return child._td
        if isinstance(leaf, Tensor):
            leaf = registered(leaf, no_convert)
            if isinstance(leaf, nn.Parameter):
                self._parameters[key] = leaf
            else:
                self._buffers[key] = leaf
        return leaf

    def to_tensordict(self, *, retain_none: bool | None = None) -> TensorDict:
        """A :class:`TensorDict` whose leaves are the registered parameters (shared).

        ``retain_none`` is the held tensor class's (unset fields of a typed class as ``None``).
        """
        return self._td.to_tensordict(retain_none=retain_none)  # type: ignore[attr-defined,no-any-return]

    def __getitem__(self, key: object) -> Any:
        value = self._td[unwrap(key)]  # type: ignore[index]
        hooks = self.__dict__.get("_get_post_hooks")
        return self._run_get_hooks(value, hooks) if hooks else value

    def get(self, key: NestedKey, *default: object) -> Any:
        """The entry under ``key`` (or ``default``), passed through the get post-hooks."""
        value = self._td.get(key, *default)  # type: ignore[attr-defined]
        hooks = self.__dict__.get("_get_post_hooks")
        return self._run_get_hooks(value, hooks) if hooks else value

    def _run_get_hooks(self, value: object, hooks: Mapping[int, Callable[..., object]]) -> object:
        if not isinstance(value, Tensor):
            return value
        for hook in list(hooks.values()):
            result = hook(self, value)
            if result is not None:
                value = result
        return value

    def register_get_post_hook(self, hook: Callable[..., object]) -> RemovableHandle:
        """Call ``hook(params, value)`` after each read of a leaf by key (``get``, ``[]``).

        A result other than ``None`` replaces the value read. Returns a handle whose
        ``remove()`` unregisters the hook. Method results (``params.apply(fn)``,
        ``params + 1``) read the registered tensors directly, without the hooks.

        >>> import torch
        >>> from tensorclass import TensorDict
        >>> p = TensorDictParams(TensorDict(w=torch.ones(2)))
        >>> handle = p.register_get_post_hook(lambda params, value: value * 10)
        >>> p["w"]
        tensor([10., 10.], grad_fn=<MulBackward0>)
        >>> handle.remove()
        >>> p.get("w").sum().item()
        2.0
        """
        hooks: OrderedDict[int, Callable[..., object]] | None = self.__dict__.get("_get_post_hooks")
        if hooks is None:
            hooks = OrderedDict()  # RemovableHandle holds a weak reference to it
            object.__setattr__(self, "_get_post_hooks", hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def __setitem__(self, key: NestedKey, value: object) -> None:
        """Write ``value`` under ``key`` and register it (as a parameter if it can be one).

        An index (``params[0] = ...``, a mask, a slice) writes into the registered tensors
        in place, as on the tensor class.
        """
        if isinstance(key, (str, tuple)) and all(isinstance(k, str) for k in _as_tuple(key)):
            self.set(key, value)
        else:
            self._td[unwrap(key)] = unwrap(value)  # type: ignore[index]
            reconcile(self)  # a write at an index may add keys (pre-allocation)

    def set(
        self,
        key: NestedKey,
        item: object,
        inplace: bool = False,
        *,
        non_blocking: bool = False,
        no_convert: bool = False,
    ) -> TensorDictParams:
        """Write ``item`` under ``key`` and register it; returns this module.

        Missing nested levels are created (and registered as nested modules), as on the
        tensor class. With ``inplace=True`` an existing entry is written in place (the
        registered parameter keeps its identity, so optimizers keep stepping it); a missing
        key is created and registered. ``no_convert=True`` registers a tensor as it is (a
        buffer unless it is a parameter). ``non_blocking`` is the tensor class's.
        """
        if inplace and key in self._td:  # type: ignore[operator]
            self._td.set(key, item, inplace=True, non_blocking=non_blocking)  # type: ignore[attr-defined]
            return self
        self._td.set(key, unwrap(item), non_blocking=non_blocking)  # type: ignore[attr-defined]
        as_is = frozenset((id(self._td.get(key)),)) if no_convert else frozenset()  # type: ignore[attr-defined]
        reconcile(self, as_is)
        return self

    def del_(self, key: NestedKey) -> TensorDictParams:
        """Remove the entry under ``key`` and unregister it; returns this module."""
        self._td.del_(key)  # type: ignore[attr-defined]
        reconcile(self)
        return self

    def __delitem__(self, key: NestedKey) -> None:
        self.del_(key)

    def __contains__(self, key: object) -> bool:
        return key in self._td  # type: ignore[operator]

    def __len__(self) -> int:
        return len(self._td)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or "_td" not in self.__dict__:
                raise
            return getattr(self.__dict__["_td"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        # ``params.w = nn.Parameter(...)`` writes the tensor class too: a new name is a new
        # key (``set``); a registered one keeps ``nn.Module``'s checks, and its leaf follows.
        if value is None and "_td" in self.__dict__ and name in self.__dict__["_td"]._data:
            self.del_(name)
        elif name in self.__dict__.get("_parameters", ()) or name in self.__dict__.get(
            "_buffers", ()
        ):
            super().__setattr__(name, value)
            self._sync_leaves()
        elif (
            not name.startswith("_")
            and "_td" in self.__dict__
            and isinstance(value, (Tensor, TensorCore, TensorDictParams))
        ):
            self.set(name, value)
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if "_td" in self.__dict__ and name in self.__dict__["_td"]._data:
            self.del_(name)
        else:
            super().__delattr__(name)

    def named_modules(
        self,
        memo: builtins.set[nn.Module] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, nn.Module]]:
        """``nn.Module.named_modules``, after bringing the registration in step with the leaves.

        ``parameters()``, ``named_parameters()``, ``buffers()`` and ``modules()`` (so
        optimizers) go through it, also from a model holding this module.
        """
        reconcile_level(self)  # nested levels reconcile in their own named_modules
        modules: Iterator[tuple[str, nn.Module]] = super().named_modules(
            memo, prefix, remove_duplicate
        )
        return modules

    def _save_to_state_dict(
        self, destination: dict[str, object], prefix: str, keep_vars: bool
    ) -> None:
        reconcile_level(self)  # before ``state_dict`` reads the nested modules
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> TensorDictParams:
        reconcile_level(self)  # nested levels: in their own ``_apply``
        super()._apply(fn, recurse)  # type: ignore[no-untyped-call]
        # Conversions may replace the registered tensors: point the leaves at them again.
        self._sync_leaves()
        return self

    def _load_from_state_dict(self, *args: object, **kwargs: object) -> None:
        # ``load_state_dict(..., assign=True)`` replaces the registered tensors: the leaves
        # must follow (``nn.Module`` calls this once per module, nested levels included).
        reconcile_level(self)
        super()._load_from_state_dict(*args, **kwargs)
        self._sync_leaves()

    def _sync_leaves(self) -> None:
        """Point this level's leaves at the registered parameters and buffers."""
        data = self._td._data
        for registry in (self._parameters, self._buffers):
            for key, tensor in registry.items():
                if tensor is not None:
                    data[key] = tensor
        tensors = [
            t for t in (*self._parameters.values(), *self._buffers.values()) if t is not None
        ]
        if self._td._device is not None and tensors:
            self._td._device = tensors[0].device

    def __deepcopy__(self, memo: dict[int, object]) -> TensorDictParams:
        """A deep copy whose tensor class holds the copy's own registered parameters."""
        reconcile(self)
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            if name != "_td":
                object.__setattr__(new, name, copy.deepcopy(value, memo))
        td = self._td
        data: dict[str, object] = {}
        for key, leaf in td._data.items():
            if key in new._parameters:
                data[key] = new._parameters[key]
            elif key in new._buffers:
                data[key] = new._buffers[key]
            elif isinstance(new._modules.get(key), TensorDictParams):
                data[key] = new._modules[key]._td  # type: ignore[union-attr]
            else:
                data[key] = copy.deepcopy(leaf, memo)
        copied = type(td)._new(data, td._batch_size, td._device, td._names)
        object.__setattr__(new, "_td", copied)
        if td.is_locked:
            copied.lock_()
        return new

    def extra_repr(self) -> str:
        """The held tensor class, shown in the module's repr."""
        return f"params={self._td!r}"

    def __repr__(self) -> str:
        # tensordict's form: the held tensor class only, not the nested modules that
        # register its nested levels
        return f"{type(self).__name__}({self.extra_repr()})"

    def _repr_html_(self) -> str | None:
        """What a notebook shows: the text repr in a ``<pre>`` block, as in tensordict."""
        if not get_printoptions()["html"]:
            return None
        return f"<pre>{html.escape(repr(self))}</pre>"


def _flatten(params: TensorDictParams) -> tuple[list[Any], Any]:
    children, context = flatten_node(params._td)
    return children, (type(params._td), context)


def _unflatten(values: Any, context: Any) -> Any:
    cls, inner = context
    return unflatten_node(cls, values, inner)


install_forwards(TensorDictParams)
pytree.register_pytree_node(TensorDictParams, _flatten, _unflatten)
register_params_class(TensorDictParams)  # what from_module(as_module=True) returns
