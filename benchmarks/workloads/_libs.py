"""The two libraries under test behind one small interface, and shared helpers.

Most workloads run the *same* code on tensorclass and on tensordict (the public names are
the same), so :func:`both` turns one builder taking a :class:`Lib` into a builder for each
library. A builder asks for optional APIs with :meth:`Lib.require`, which raises
:class:`~benchmarks.harness.Unavailable` (shown as "n/a") when the API is not there yet.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ..harness import PEER_MISSING, Builder, Case, Scale, Unavailable

__all__ = ["Lib", "both", "scratch_dir", "with_plain"]


class Lib:
    """One library under test: ``tensorclass`` or ``tensordict``."""

    def __init__(self, name: str) -> None:
        self.name = name
        try:
            self.module: ModuleType = importlib.import_module(name)
        except ImportError:
            raise Unavailable(
                PEER_MISSING if name == "tensordict" else f"{name} not importable"
            ) from None

    @property
    def TensorDict(self) -> Any:
        """The library's ``TensorDict`` class."""
        return self.module.TensorDict

    def tensorclass(self, cls: type) -> Any:
        """Apply the library's ``@tensorclass`` decorator to ``cls``."""
        return self.module.tensorclass(cls)

    def require(self, owner: Any, name: str) -> Any:
        """``owner.name``, or :class:`Unavailable` naming the missing API."""
        value = getattr(owner, name, None)
        if value is None:
            where = getattr(owner, "__name__", type(owner).__name__)
            raise Unavailable(f"{self.name}: {where}.{name} is not available yet")
        return value

    def submodule(self, name: str) -> ModuleType:
        """``<library>.<name>`` (for example ``tensorclass.nn``), or :class:`Unavailable`."""
        try:
            return importlib.import_module(f"{self.name}.{name}")
        except ImportError as err:
            raise Unavailable(f"{self.name}.{name} is not importable yet ({err})") from None


@cache
def _lib(name: str) -> Lib:
    return Lib(name)


def lib(name: str) -> Lib:
    """The :class:`Lib` for ``name`` (imported once)."""
    try:
        return _lib(name)
    except Unavailable:
        raise
    except Exception as err:  # a broken install: report, do not crash the run
        raise Unavailable(f"{name} failed to import: {err}") from None


LibBuilder = Callable[[Lib, Scale], "Case | Callable[[], Any]"]


def both(build: LibBuilder) -> dict[str, Builder]:
    """Builders running the same ``build`` code on tensorclass and on tensordict."""

    def for_lib(name: str) -> Builder:
        return lambda scale: build(lib(name), scale)

    return {"tensorclass": for_lib("tensorclass"), "tensordict": for_lib("tensordict")}


def with_plain(build: LibBuilder, plain: Builder) -> Mapping[str, Builder]:
    """:func:`both` plus a plain-PyTorch builder."""
    return {**both(build), "plain": plain}


_SCRATCH: list[Path] = []


def scratch_dir(name: str) -> Path:
    """A fresh directory for files, in ``/dev/shm`` when there is one (a tmpfs: the disk is
    not measured); removed by :func:`remove_scratch`."""
    if not _SCRATCH:
        base = "/dev/shm" if Path("/dev/shm").is_dir() else None
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="tensorclass-bench-", dir=base)))
    path = _SCRATCH[0] / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def remove_scratch() -> None:
    """Delete every file the workloads wrote."""
    while _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)
