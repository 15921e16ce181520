"""``load_memmap``: load a memory-mapped save, then check its typed levels.

The engine builds the saved tree (:mod:`tensorclass.tensordict_core.memmap.load`, which also
documents the on-disk class rules); this module adds what the typed layer knows: every level
that comes back as a tensor class with declared fields is validated against its class.
Loading never unpickles anything and never runs code from the save.
"""

from __future__ import annotations

from typing import Any

import torch

from .errors import MemmapFormatError
from .schema import is_typed
from .tensordict_core._core import TensorCore
from .tensordict_core.lazy_stack import LazyStackedTensorDict
from .tensordict_core.memmap.load import ClassPolicy, load_tree, read_checked
from .tensordict_core.memmap.metadata import MemmapInfo
from .tensordict_core.memmap.tensor import PathLike

__all__ = ["load_memmap"]


def load_memmap(
    path: PathLike,
    cls: type[TensorCore] | None = None,
    *,
    classes: ClassPolicy = "imported",
    device: torch.device | str | None = None,
    num_threads: int = 0,
    validate: bool = True,
) -> Any:
    """Load a save made by ``memmap``/``memmap_like`` (or one of its sub-directories).

    Tensors come back as :class:`~tensorclass.MemoryMappedTensor` views of the files
    (nothing is read until used; writes go to the files) and the result is locked. Missing
    or truncated files, and metadata that disagrees with the files, raise
    :class:`~tensorclass.MemmapFormatError` listing every problem. ``device`` moves (copies)
    the result there. ``cls`` and ``classes`` choose the classes that come back (see
    :mod:`tensorclass.tensordict_core.memmap.load`). ``num_threads`` is accepted for
    compatibility: mapping files reads nothing, so loading needs no threads. Typed levels
    are checked against their class unless ``validate`` is false; problems raise
    ``pydantic.ValidationError``.
    """
    del num_threads  # nothing to parallelise: files are mapped, not read
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, TensorCore)):
        raise TypeError(f"cls must be a tensor class; got {cls!r}")
    info = read_checked(path, classes)
    try:
        result = load_tree(info, cls, classes)
    except MemmapFormatError:
        if validate and cls is not None and info.kind != "lazy_stack" and is_typed(cls):
            _report_mismatch(info, cls)  # the save does not fit cls: list every problem
        raise
    if device is not None and torch.device(device).type != "cpu":
        result = result.to(device)  # type: ignore[attr-defined]
    plain = classes == "tensordict" and (cls is None or not is_typed(cls))  # TensorDicts only
    if validate and not plain and _holds_typed(result):
        from .validation.run import check_tree  # pydantic: imported when there is a check

        check_tree(result)
    return result


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
