"""``load_memmap``: load a memory-mapped save, then check its typed levels.

The engine builds the saved tree (:mod:`tensorclass.engine.storage.memmap.load`, which also
documents the on-disk class rules); this module adds what the typed layer knows: every level
that comes back as a tensor class with declared fields is validated against its class.
Loading never unpickles anything and never runs code from the save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, overload

import torch
from typing_extensions import Unpack

from .engine.core.state import TensorCore
from .engine.lazy.stack import LazyStackedTensorDict
from .engine.storage.memmap.archive import reading_archive
from .engine.storage.memmap.load import (
    ClassPolicy,
    load_tree,
    read_checked,
    read_one_save,
    subtree,
)
from .engine.storage.memmap.load_into import load_into
from .engine.storage.memmap.metadata import MemmapInfo
from .engine.storage.memmap.tensor import PathLike
from .errors import MemmapFormatError, MemmapNotFoundError
from .schema import is_typed

if TYPE_CHECKING:  # annotations only: the typed layer is above this one
    from .typed import TensorClass

__all__ = ["load", "load_memmap"]

T = TypeVar("T", bound=TensorCore)
_Device = torch.device | str | int


class _LoadOptions(TypedDict, total=False):
    """The keywords of :func:`load_memmap` that do not choose the type of the result."""

    classes: ClassPolicy
    device: _Device | None
    robust_key: bool | None
    subpath: str | tuple[str, ...] | None
    mode: str | None
    num_threads: int
    allow_pickle: bool | None
    validate: bool


@overload
def load_memmap(
    prefix: PathLike,
    cls: _Device | None = ...,
    non_blocking: bool = ...,
    *,
    out: T,
    **options: Unpack[_LoadOptions],
) -> T: ...


@overload
def load_memmap(
    prefix: PathLike,
    cls: type[T],
    non_blocking: bool = ...,
    *,
    out: T | None = ...,
    **options: Unpack[_LoadOptions],
) -> T: ...


@overload
def load_memmap(
    prefix: PathLike,
    cls: _Device | None = ...,
    non_blocking: bool = ...,
    *,
    out: None = ...,
    **options: Unpack[_LoadOptions],
) -> TensorClass | LazyStackedTensorDict: ...


def load_memmap(
    prefix: PathLike,
    cls: type[TensorCore] | _Device | None = None,
    non_blocking: bool = False,
    *,
    classes: ClassPolicy = "imported",
    device: _Device | None = None,
    out: Any = None,
    robust_key: bool | None = None,
    subpath: str | tuple[str, ...] | None = None,
    mode: str | None = None,
    num_threads: int = 0,
    allow_pickle: bool | None = None,
    validate: bool = True,
) -> Any:
    """Load a save made by ``memmap``/``memmap_like`` (or one of its sub-directories).

    Tensors come back as :class:`~tensorclass.MemoryMappedTensor` views of the files
    (nothing is read until used) and the result is locked. Missing or truncated files, and
    metadata that disagrees with the files, raise :class:`~tensorclass.MemmapFormatError`
    listing every problem. ``cls`` and ``classes`` choose the classes that come back (see
    :mod:`tensorclass.engine.storage.memmap.load`); as in ``tensordict``, a device given
    as the second argument is taken as ``device``. Typed levels are checked against their
    class unless ``validate`` is false; problems raise ``pydantic.ValidationError``.
    A directory written by tensordict's ``memmap`` loads too (see
    :mod:`tensorclass.engine.storage.memmap.foreign`); values it pickled are refused.

    The keywords of ``tensordict.load_memmap``:

    - ``device`` moves (copies) the result there (``non_blocking`` for that copy).
    - ``subpath`` loads one nested level: a nested key (``("a", "b")``) or ``"a/b"``
      (a member index inside a lazy stack); ``cls`` then applies to that level.
    - ``mode``: ``"r+"`` maps the files shared (writes reach them), ``"r"`` copy-on-write
      (writes stay in memory), ``None`` (default) shared where the file is writable.
    - ``out`` receives the loaded leaves (its nested levels are reused, its keys that the
      save lacks are removed) and is returned; it keeps its lock state.
    - ``allow_pickle``: loading never unpickles (a save is data, not code), so ``None`` and
      ``False`` are accepted and ``True`` raises ``ValueError``.
    - ``robust_key`` has no effect: file names are recorded in ``meta.json``.
    - ``num_threads`` has no effect: mapping files reads nothing.
    """
    del num_threads, robust_key  # files are mapped, not read; their names are recorded
    if allow_pickle:
        raise ValueError(
            "load_memmap(allow_pickle=True): tensorclass never unpickles on load (a save "
            "is data, not code; non-tensor values are JSON); pass allow_pickle=False or None"
        )
    if cls is not None and not isinstance(cls, type) and isinstance(cls, str | int | torch.device):
        cls, device = None, cls  # tensordict's order: load_memmap(prefix, device)
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, TensorCore)):
        raise TypeError(f"cls must be a tensor class; got {cls!r}")

    def read() -> TensorCore:
        info = read_checked(prefix, classes)
        if subpath is not None:
            info = subtree(info, subpath)
        try:
            return load_tree(info, cls, classes, mode)
        except MemmapFormatError:
            if validate and cls is not None and info.kind != "lazy_stack" and is_typed(cls):
                _report_mismatch(info, cls)  # the save does not fit cls: list every problem
            raise

    with reading_archive(prefix):  # an archive (pack_memmap) is read in place
        try:
            result = read_one_save(prefix, read)  # one save, even while others replace it
        except MemmapNotFoundError as err:
            # the path is the user's: the error drops the reader's frames
            raise err.with_traceback(None) from None
    if out is not None:
        device = _out_device(out, device)
    if device is not None and torch.device(device).type != "cpu":
        result = result.to(device, non_blocking=non_blocking)  # type: ignore[attr-defined]
    plain = classes == "tensordict" and (cls is None or not is_typed(cls))  # TensorDicts only
    if validate and not plain and _holds_typed(result):
        from .validation.run import check_tree  # pydantic: imported when there is a check

        check_tree(result)
    if out is not None:
        return load_into(out, result)
    return result


def load(
    prefix: PathLike,
    device: torch.device | str | int | None = None,
    non_blocking: bool = False,
    *,
    out: Any = None,
    robust_key: bool | None = None,
    subpath: str | tuple[str, ...] | None = None,
    mode: str | None = None,
    num_threads: int = 0,
    allow_pickle: bool | None = None,
) -> Any:
    """Load a save made by :func:`tensorclass.save` (or ``memmap``): the same as
    :func:`load_memmap` with the recorded classes (see it for every argument).
    Nothing is unpickled and no code from the save runs.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict, load
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = TensorDict(a=torch.arange(2), batch_size=[2]).save(path)
    ...     load(path, device="cpu")["a"].tolist()
    [0, 1]
    """
    return load_memmap(
        prefix,
        None,
        non_blocking,
        device=device,
        out=out,
        robust_key=robust_key,
        subpath=subpath,
        mode=mode,
        num_threads=num_threads,
        allow_pickle=allow_pickle,
    )


def _out_device(out: object, device: _Device | None) -> _Device | None:
    own = getattr(out, "device", None)
    if own is None:
        return device
    assert isinstance(own, torch.device)  # the device of an instance
    if device is not None and torch.device(device) != own:
        raise ValueError(f"load_memmap: out is on {own}, but device={device!r} was given")
    return own


def _holds_typed(root: TensorCore) -> bool:
    """Whether a loaded tree has a level of a tensor class with declared fields."""
    if isinstance(root, LazyStackedTensorDict):
        return any(_holds_typed(member) for member in root.members)
    if is_typed(type(root)):
        return True
    return any(isinstance(leaf, TensorCore) and _holds_typed(leaf) for leaf in root._data.values())


def _report_mismatch(info: MemmapInfo, cls: type[TensorCore]) -> None:
    """Validate the save, loaded as plain data, against ``cls``: raises a
    ``ValidationError`` listing every problem (returns if it finds none)."""
    from pydantic import ValidationError  # imported when there is a check

    from .validation.run import validate

    try:
        validate(load_tree(info, None, "tensordict"), cls)
    except ValidationError as err:
        raise err from None
