"""What tensorclass lacks of tensordict 0.15.3's public API (the data in this folder).

``python -m tests.parity.gaps`` prints every missing name and keyword parameter that
``docs/migrating.md`` does not list under "Left out on purpose".
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = json.loads((HERE / "tensordict_0_15_3.json").read_text())
MIGRATING = HERE.parent.parent / "docs" / "migrating.md"

#: section of the data -> how to reach tensorclass's counterpart
TARGETS = {
    "TensorDict": ("tensorclass", "TensorDict"),
    "LazyStackedTensorDict": ("tensorclass", "LazyStackedTensorDict"),
    "MemoryMappedTensor": ("tensorclass", "MemoryMappedTensor"),
    "tensordict": ("tensorclass", None),
    "tensordict.nn": ("tensorclass.nn", None),
}


def target(section: str) -> Any:
    """tensorclass's object for a section of the data (None if it does not exist)."""
    if section.startswith("tensordict.nn."):
        module, name = "tensorclass.nn", section.rsplit(".", 1)[1]
    else:
        module, name = TARGETS[section]
    obj: Any = importlib.import_module(module)
    return obj if name is None else getattr(obj, name, None)


SECTIONS = ("## Left out on purpose", "## Not there yet")


def left_out() -> dict[str, str]:
    """Names docs/migrating.md lists as absent, with the reason it gives.

    Two sections list them: "Left out on purpose" and "Not there yet" (whose reasons name the
    open issue that brings them). Entries are list items ``- `name`, `other`: reason``; a
    name may be qualified by its section (``MemoryMappedTensor.from_handler``), stand for a
    whole section (``TensorDictParams.*``) or name a keyword of a method
    (``TensorDict.memmap(robust_key=)``).
    """
    text = MIGRATING.read_text()
    listed: dict[str, str] = {}
    for heading in SECTIONS:
        start = text.find(heading)
        if start < 0:
            continue
        end = text.find("\n## ", start + 1)
        section = text[start : end if end > 0 else len(text)]
        for item in re.findall(r"^- (.+?)(?=^- |^#|\Z)", section, flags=re.M | re.S):
            names, _, reason = item.partition(":")
            for name in re.findall(r"`([^`]+)`", names):
                listed[name] = " ".join(reason.split())
    return listed


def accepts(fn: Any) -> set[str] | None:
    """The parameter names ``fn`` accepts by keyword (None: cannot tell)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return {
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def gaps() -> tuple[list[str], list[str]]:
    """(missing names, missing keyword parameters), each as ``section.name[(kw=)]``."""
    listed = left_out()
    names: list[str] = []
    keywords: list[str] = []
    for section, entries in DATA.items():
        if section == "version":
            continue
        obj = target(section)
        short = section.removeprefix("tensordict.nn.").removeprefix("tensordict.")
        # TensorDictParams forwards its tensor-class methods to TensorDict: what TensorDict
        # leaves out (and why) holds for it too.
        forwarded = "TensorDict" if short == "TensorDictParams" else short
        for name, params in entries.items():
            qualified = name if section in ("tensordict", "tensordict.nn") else f"{short}.{name}"
            if qualified in listed or f"{short}.*" in listed or f"{forwarded}.{name}" in listed:
                continue
            ours = None if obj is None else getattr(obj, name, None)
            if ours is None:
                names.append(f"{section}:{name}")
                continue
            if not params:
                continue
            have = accepts(ours)
            if have is None:
                continue
            for param in params:
                if (
                    param not in have
                    and f"{qualified}({param}=)" not in listed
                    and f"{forwarded}.{name}({param}=)" not in listed
                ):
                    keywords.append(f"{section}:{name}({param}=)")
    return names, keywords


if __name__ == "__main__":
    missing, kwargs = gaps()
    print(f"{len(missing)} names missing")
    for line in missing:
        print(" ", line)
    print(f"{len(kwargs)} keyword parameters missing")
    for line in kwargs:
        print(" ", line)
