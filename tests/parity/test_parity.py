"""tensordict 0.15.3's public API is here, or docs/migrating.md says why not.

The data (``tensordict_0_15_3.json``, generated once from the release by ``generate.py``)
holds the public names of ``TensorDict``, ``LazyStackedTensorDict``,
``MemoryMappedTensor``, the top-level package, ``tensordict.nn`` and its module classes,
with the keyword parameters of each callable.
"""

from __future__ import annotations

import re

from .gaps import DATA, MIGRATING, gaps, left_out, target


def test_every_name_exists_or_is_listed() -> None:
    missing, _ = gaps()
    assert not missing, (
        f"{len(missing)} public names of tensordict are neither in tensorclass nor listed in "
        f"docs/migrating.md: {missing}"
    )


def test_every_keyword_is_accepted_or_listed() -> None:
    _, keywords = gaps()
    assert not keywords, (
        f"{len(keywords)} keyword parameters of tensordict are neither accepted nor listed in "
        f"docs/migrating.md: {keywords}"
    )


def test_listed_names_are_really_absent() -> None:
    """A name listed as absent that tensorclass has would make the page untrue."""
    present = []
    for name in left_out():
        if "(" in name or name.endswith(".*"):
            continue
        section, _, attr = name.rpartition(".")
        if section:
            full = section if section in DATA else f"tensordict.nn.{section}"
            obj = target(full) if full in DATA else None
        else:
            obj = target("tensordict") if name in DATA["tensordict"] else target("tensordict.nn")
        if obj is not None and hasattr(obj, attr):
            present.append(name)
    assert not present, f"docs/migrating.md lists as absent names tensorclass has: {present}"


def test_every_listed_name_has_a_reason() -> None:
    for name, reason in left_out().items():
        assert len(reason) > 10, f"{name!r} is listed in docs/migrating.md without a reason"


def test_pending_names_cite_an_open_issue() -> None:
    text = MIGRATING.read_text()
    start = text.find("## Not there yet")
    if start < 0:
        return
    end = text.find("\n## ", start + 1)
    for item in re.findall(r"^- (.+)$", text[start : end if end > 0 else None], flags=re.M):
        assert re.search(r"issue \d+", item), f"a pending entry names no issue: {item}"
