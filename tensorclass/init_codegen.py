"""The generated ``__init__`` of a tensor class.

Generated once per class from its schema (as dataclasses do): per field, an inline fast
path for a plain tensor, else the field's converter. The source is registered with
``linecache`` under a real file name, so a traceback through ``__init__`` shows its lines.
"""

from __future__ import annotations

import linecache
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from .engine.core.state import (
    TensorCore,
    as_batch_size,
    as_device,
    check_names,
    fits_batch,
    set_state,
)
from .errors import TensorClassError
from .field_access import (
    set_batch_size,
    set_data,
    set_device,
    set_locked,
    set_names,
)
from .fields import MISSING
from .keys import unravel_key_tuple
from .schema import Schema

__all__ = ["FACTORY", "make_init"]

_set = object.__setattr__
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
#: the default of a field with a ``default_factory`` (the factory runs in ``__init__``)
FACTORY: Any = type("_Factory", (), {"__repr__": lambda self: "<factory>"})()


def _dict_setter(cls: type) -> Any:
    """The setter of the instance ``__dict__`` of ``cls`` (the nearest class in its MRO
    that has one), or ``object.__setattr__``-based when there is none."""
    for klass in cls.__mro__:
        descriptor = vars(klass).get("__dict__")
        if descriptor is not None and hasattr(descriptor, "__set__"):
            return descriptor.__set__
    return lambda obj, data: _set(obj, "__dict__", data)


def make_init(cls: type, schema: Schema) -> Any:
    """Generate ``__init__``: per field, an inline fast path for plain tensors, else the
    field's converter (bound once)."""
    namespace: dict[str, Any] = {
        "_FACTORY": FACTORY,
        "_Tensor": Tensor,
        "_Size": torch.Size,
        "_as_batch_size": as_batch_size,
        "_fits": fits_batch,
        "_as_device": as_device,
        "_check_names": check_names,
        "_compiling": _is_dynamo_compiling,
        "_set_state": set_state,
        "_set_data": set_data,
        "_set_dict": _dict_setter(cls),
        "_set_batch_size": set_batch_size,
        "_set_device": set_device,
        "_set_names": set_names,
        "_set_locked": set_locked,
    }
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, f in enumerate(schema.fields):
        name = f.name
        namespace[f"_convert_{index}"] = f.convert
        if f.default is not MISSING:
            namespace[f"_default_{index}"] = f.default
            param = f"{name}=_default_{index}"
        elif f.default_factory is not MISSING:
            namespace[f"_factory_{index}"] = f.default_factory
            param = f"{name}=_FACTORY"
            body.append(f"    if {name} is _FACTORY: {name} = _factory_{index}()")
        else:
            param = name
        (keyword if f.kw_only else positional).append(param)
        if f.holds_tensors:
            # A plain tensor that fits the batch is stored as it is; anything else goes
            # through the field's converter.
            body.append(
                f"    if {name}.__class__ is _Tensor and _device is None"
                f" and _fits({name}.shape, _size): _data[{name!r}] = {name}"
            )
            body.append(
                f"    elif {name} is not None: _data[{name!r}] = _convert_{index}(_tc_self_, {name})"
            )
        else:
            body.append(
                f"    if {name} is not None: _data[{name!r}] = _convert_{index}(_tc_self_, {name})"
            )
    params = ", ".join(
        ["_tc_self_", *positional, "*", *keyword, "batch_size=None", "device=None", "names=None"]
    )
    # The instance dict is the storage unless the schema takes extra keys (which would
    # shadow methods there).
    dict_storage = not schema.extra_keys
    lines = [
        f"def __init__({params}):",
        "    _size = batch_size if batch_size.__class__ is _Size else _as_batch_size(batch_size)",
        "    _device = None if device is None else _as_device(device)",
        "    _n = len(_size)",
        "    _cls = _tc_self_.__class__",
        "    if not _cls.__tensorclass_schema__.resolved: _cls.__tensorclass_schema__.resolve()",
        # The state is set before the fields are converted (converters read it). A fresh
        # dict keeps attribute reads fast; under torch.compile the instance's own dict is
        # used, since Dynamo does not follow a replaced __dict__ of a new object.
        "    if _compiling():",
        f"        _data = {'_tc_self_.__dict__' if dict_storage else '{}'}",
        "        _set_state(_tc_self_, _cls, _data, _size, _device, None, False)",
        "    else:",
        "        _data = {}",
        "        _set_data(_tc_self_, _data)",
        *(["        _set_dict(_tc_self_, _data)"] if dict_storage else []),
        "        _set_batch_size(_tc_self_, _size)",
        "        _set_device(_tc_self_, _device)",
        "        _set_names(_tc_self_, None)",
        "        _set_locked(_tc_self_, False)",
        *body,
        "    if names is not None: _set_names(_tc_self_, _check_names(names, _n))",
        "    if _cls._frozen: _tc_self_.lock_()",
    ]
    if schema.validate:  # only validating classes pay for the check
        lines = _validating(lines, schema, namespace)
    if hasattr(cls, "__post_init__"):
        lines.append("    _tc_self_.__post_init__()")
    source = "\n".join(lines) + "\n"
    filename = _register_source(cls, source)
    exec(compile(source, filename, "exec"), namespace)  # generated once per class
    init = namespace["__init__"]
    if schema.extra_keys:
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init = _taking_extra_keys(init, schema)
    init.__tensorclass_generated__ = True  # rebuilt classes (@tensorclass(...)) make a new one
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = (
        f"Create a {cls.__name__}: fields ({', '.join(schema.names)}), batch_size, device, names."
    )
    return init


def _taking_extra_keys(fields_init: Any, schema: Schema) -> Any:
    """The ``__init__`` of a class whose schema takes extra keys (``TypedTensorDict``): as
    ``TensorDict``, an optional mapping (or tensor class) of entries first, then the fields
    by keyword; entries that are not fields are stored as in a ``TensorDict``."""
    by_name = schema.by_name

    def __init__(
        self: Any,
        _source: Mapping[Any, Any] | TensorCore | None = None,
        /,
        *,
        batch_size: Any = None,
        device: Any = None,
        names: Any = None,
        non_blocking: bool | None = None,
        lock: bool = False,
        **fields: Any,
    ) -> None:
        # (non_blocking: accepted as tensordict's is; moves to the device are synchronous)
        extra: list[tuple[Any, Any]] = []
        if _source is not None:
            if isinstance(_source, TensorCore):
                if batch_size is None:
                    batch_size = _source._batch_size
                _source = _source._data
            if not isinstance(_source, Mapping):
                raise TypeError(
                    f"{type(self).__name__}: the entries must be a mapping or a tensor class; "
                    f"got {type(_source).__name__}"
                )
            given = {}
            for key, value in _source.items():
                if key.__class__ is str and key in by_name:
                    given[key] = value
                else:
                    extra.append((key, value))
            fields = {**given, **fields}
        fields_init(self, batch_size=batch_size, device=device, names=names, **fields)
        for key, value in extra:  # written past a frozen class's lock, as the fields are
            path = unravel_key_tuple(key)
            if len(path) == 1:
                self._data[path[0]] = self._convert(path[0], value)
            else:
                locked, self._locked = self._locked, False
                self._set_path(path, value)
                self._locked = locked
        if lock:
            self.lock_()

    return __init__


def _validating(lines: list[str], schema: Schema, namespace: dict[str, Any]) -> list[str]:
    """The ``__init__`` of a ``validate=True`` class: the same body, then the check.

    A value the body cannot store (it stops at the first) is reported with every other
    problem of the arguments, as one ``ValidationError`` (``check_construction``).
    """
    # Validation (and pydantic) is imported by the classes that validate, not by every user.
    from pydantic import ValidationError

    from .validation.run import check_construction, check_instance

    namespace["_check"] = check_instance
    namespace["_report"] = check_construction
    namespace["_Refused"] = (TensorClassError, ValidationError)
    given = ", ".join(f"{name!r}: {name}" for name in schema.names)
    return [
        lines[0],
        "    try:",
        *("    " + line for line in lines[1:]),
        "    except _Refused as _err:",
        f"        _given = {{{given}}}",
        "        _report(_tc_self_, {k: v for k, v in _given.items() if v is not _FACTORY},"
        " batch_size, device, _err)",
        "    _check(_tc_self_)",
    ]


_generated = 0


def _register_source(cls: type, source: str) -> str:
    """Register generated source with ``linecache`` under a unique name; return the name."""
    global _generated
    _generated += 1
    filename = (
        f"<tensorclass generated __init__ of {cls.__module__}.{cls.__qualname__} #{_generated}>"
    )
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename
