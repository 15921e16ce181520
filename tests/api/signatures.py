"""The public surface as ``{qualified name: signature}``: what the snapshot test freezes.

Every public top-level name of ``tensorclass`` and ``tensorclass.nn``, and every public
method, property and attribute of the public classes among them, mapped to the text of
``inspect.signature`` (or the kind of attribute when it has none). A restructuring of the
engine must leave this map unchanged; ``python -m tests.api.signatures --write`` records it
after a deliberate change of the API.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
from pathlib import Path
from typing import Any

import tensorclass
import tensorclass.nn

SNAPSHOT = Path(__file__).with_name("signatures.json")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_TYPE_OF = re.compile(r"^type\[(\w+)\]$")


def _signature(obj: Any, bound: bool = False) -> str:
    """The signature as text; a method written as a function typed ``self: E`` (a type
    variable) reads as one written in its class with ``Self``: the same API. ``bound``: the
    function of a class method, read without its ``cls``."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return f"<{type(obj).__name__}>"
    params = list(signature.parameters.values())
    self_type = None
    if params and params[0].name in ("self", "cls") and isinstance(params[0].annotation, str):
        self_type = _TYPE_OF.sub(r"\1", params[0].annotation)
        params[0] = params[0].replace(annotation=inspect.Parameter.empty)
        signature = signature.replace(parameters=params)
    elif params and params[0].name in ("self", "cls"):
        # an annotation another library evaluated in place (torch's ``Module.__init__`` reads
        # ``self: Module`` once something resolved its hints): the same API
        params[0] = params[0].replace(annotation=inspect.Parameter.empty)
        signature = signature.replace(parameters=params)
    if bound and params:
        signature = signature.replace(parameters=params[1:])
    text = str(signature)
    if self_type is not None and self_type != "Self" and self_type.isidentifier():
        text = re.sub(rf"\b{self_type}\b", "Self", text)
    return _ADDRESS.sub("", text)


def _members(prefix: str, cls: type) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in dir(cls):
        if name.startswith("_") and name not in ("__init__", "__getitem__", "__setitem__"):
            continue
        try:
            raw = inspect.getattr_static(cls, name)
        except AttributeError:
            continue
        if isinstance(raw, property):
            found[f"{prefix}.{name}"] = "<property>"
        elif isinstance(raw, classmethod) and inspect.isfunction(raw.__func__):
            found[f"{prefix}.{name}"] = _signature(raw.__func__, bound=True)
        elif isinstance(raw, (staticmethod, classmethod)):
            found[f"{prefix}.{name}"] = _signature(getattr(cls, name))
        elif callable(raw):
            found[f"{prefix}.{name}"] = _signature(raw)
        elif hasattr(type(raw), "__get__") and isinstance(getattr(cls, name, None), property):
            found[f"{prefix}.{name}"] = "<property>"  # a descriptor giving a property
        elif hasattr(type(raw), "__get__") and callable(bound := getattr(cls, name, None)):
            # a descriptor giving a callable (a name read from another class): its signature,
            # a bound class method's read from its function as above
            found[f"{prefix}.{name}"] = (
                _signature(bound.__func__, bound=True)
                if inspect.ismethod(bound) and inspect.isfunction(bound.__func__)
                else _signature(bound)
            )
        else:
            found[f"{prefix}.{name}"] = f"<{type(raw).__name__}>"
    return found


def public_signatures() -> dict[str, str]:
    """The signature of every public name and class member (see the module docstring)."""
    found: dict[str, str] = {}
    for package in (tensorclass, tensorclass.nn):
        for name in sorted(package.__all__):
            obj = getattr(package, name)
            qualified = f"{package.__name__}.{name}"
            if isinstance(obj, type):
                found[qualified] = _signature(obj)
                found.update(_members(qualified, obj))
            elif callable(obj):
                found[qualified] = _signature(obj)
            else:
                found[qualified] = f"<{type(obj).__name__}>"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="record the snapshot")
    args = parser.parse_args()
    current = public_signatures()
    if args.write:
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(current)} signatures in {SNAPSHOT}")
    else:
        print(json.dumps(current, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
