"""tensordict's other spellings of saving: ``save``/``load``/``load_``, ``load_memmap_``,
``memmap_refresh_``, ``saved_path`` and ``make_memmap*``.

Each one forwards to the memmap machinery (``memmap`` and ``load_memmap``, whose loading
entry point lives in the typed layer and is reached through the instance's class). The
directory of a memory-mapped instance is not stored: :attr:`saved_path` derives it from the
files its tensors map, and checks that they all sit where a save puts them. New entries
(``make_memmap*``) are written as files of that directory and recorded in its ``meta.json``,
so that loading the directory again finds them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ..core.lazy_stacks import is_lazy_stack
from ..core.self_types import B
from ..core.state import TensorCore
from .memmap.future import TensorDictFuture
from .memmap.metadata import META_NAME, dir_name, leaf_file_name
from .memmap.methods import write_memmap
from .memmap.save import _Plan, _plan
from .memmap.tensor import MemoryMappedTensor, PathLike, write_tensor_file

__all__ = [
    "load",
    "load_",
    "load_memmap_",
    "make_memmap",
    "make_memmap_from_storage",
    "make_memmap_from_tensor",
    "memmap_refresh_",
    "save",
    "save_to",
    "saved_path",
    "saved_root",
]

Key = str | tuple[str, ...]


def _relative_files(node: TensorCore, rel: str) -> list[tuple[str, Tensor]]:
    """Every tensor of ``node`` with the file a save of ``node`` gives it (relative)."""
    if is_lazy_stack(node):
        return [
            item
            for index, member in enumerate(node.members)
            for item in _relative_files(member, f"{rel}{index}/")
        ]
    out: list[tuple[str, Tensor]] = []
    for key, leaf in node._data.items():
        if isinstance(leaf, Tensor):
            out.append((rel + leaf_file_name(key), leaf))
        elif isinstance(leaf, TensorCore):
            out.extend(_relative_files(leaf, f"{rel}{dir_name(key)}/"))
    return out


def saved_root(node: TensorCore) -> Path | None:
    """The directory ``node`` is memory-mapped in, or ``None`` if its tensors are not all
    mapped from the files a save of ``node`` in one directory would have."""
    files = _relative_files(node, "")
    if not files:
        return None
    root: str | None = None
    for rel, tensor in files:
        if not isinstance(tensor, MemoryMappedTensor):
            return None
        try:
            name = tensor.filename
        except (RuntimeError, AttributeError):
            return None
        if root is None:
            if not name.endswith("/" + rel):
                return None
            root = name[: -len(rel)]
        elif name != root + rel:
            return None
    assert root is not None
    if not os.path.isfile(root + META_NAME):
        return None
    return Path(root)


def _split(key: Key) -> tuple[str, ...]:
    return (key,) if isinstance(key, str) else tuple(key)


def save(
    self: B,
    prefix: PathLike | None = None,
    copy_existing: bool = False,
    *,
    num_threads: int = 0,
    return_early: bool = False,
    share_non_tensor: bool = False,
    robust_key: bool | None = None,
    archive: bool | None = None,
    compression: str | int | None = None,
    atomic: bool = False,
) -> B | TensorDictFuture[B]:
    """Save to the directory ``prefix`` (replacing a save there) and return the
    memory-mapped copy: :meth:`memmap` with ``existsok=True``; this instance is not
    changed. ``prefix=None`` saves again into :attr:`saved_path`. Read it back with
    :meth:`load`. ``return_early=True`` saves in a background thread and returns a
    :class:`~tensorclass.utils.TensorDictFuture` of the result; ``atomic`` has no effect (every
    save is atomic).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict(a=torch.zeros(3), nested={"b": torch.ones(3)}, batch_size=[3])
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = td.save(path)
    ...     bool((TensorDict.load(path) == td).all())
    True
    """
    del atomic
    return save_to(
        self,
        prefix,
        copy_existing,
        num_threads,
        return_early,
        share_non_tensor,
        robust_key,
        archive,
        compression,
    )


def save_to(
    self: B,
    prefix: PathLike | None,
    copy_existing: bool,
    num_threads: int,
    return_early: bool,
    share_non_tensor: bool,
    robust_key: bool | None,
    archive: bool | None,
    compression: str | int | None,
) -> B | TensorDictFuture[B]:
    """What :func:`save` does, the method and ``tensorclass.save`` alike: :meth:`memmap`
    with ``existsok=True`` (and, for ``prefix=None``, into :attr:`saved_path`)."""
    if prefix is None:
        prefix = _saved_or_raise(self, "save(prefix=None)")
        copy_existing = True
    return write_memmap(
        self,
        prefix,
        copy_existing or None,
        num_threads,
        return_early,
        share_non_tensor,
        True,
        robust_key,
        archive,
        compression,
        like=False,
        inplace=False,
    )


def load(cls: type[B], /, prefix: PathLike, *args: object, **kwargs: object) -> B:
    """Load a save made by :meth:`save` or :meth:`memmap`: ``cls.load_memmap(prefix,
    *args, **kwargs)`` (see :func:`tensorclass.load_memmap` for the arguments).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = TensorDict(a=torch.arange(3), batch_size=[3]).save(path)
    ...     TensorDict.load(path)["a"].tolist()
    [0, 1, 2]
    """
    loader: Callable[..., B] = getattr(cls, "load_memmap")  # noqa: B009  (the typed layer's)
    result: B = loader(prefix, *args, **kwargs)
    return result


def load_memmap_(
    self: B,
    prefix: PathLike,
    robust_key: bool | None = None,
    *,
    allow_pickle: bool | None = None,
    mode: str | None = None,
) -> B:
    """Load a save into this instance and return it: its nested levels are reused, each
    leaf is replaced by the loaded (memory-mapped) tensor, keys the save lacks are
    removed. The instance keeps its lock state. Loading never unpickles
    (``allow_pickle=True`` raises).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = TensorDict(a=torch.ones(3)).save(path)
    ...     td = TensorDict(a=torch.zeros(3), b=torch.zeros(3))
    ...     out = td.load_memmap_(path)
    ...     out is td, list(td.keys()), td["a"].tolist()
    (True, ['a'], [1.0, 1.0, 1.0])
    """
    loader: Callable[..., B] = getattr(type(self), "load_memmap")  # noqa: B009  (typed layer)
    result: B = loader(
        prefix,
        out=self,
        robust_key=robust_key,
        allow_pickle=allow_pickle,
        mode=mode,
        device=self._device,
    )
    return result


def load_(self: B, prefix: PathLike, *args: Any, **kwargs: Any) -> B:
    """The same as :meth:`load_memmap_` (tensordict's older name)."""
    return self.load_memmap_(prefix, *args, **kwargs)


def memmap_refresh_(self: B, *, allow_pickle: bool | None = None) -> B:
    """Load this instance again from :attr:`saved_path`, and return it: entries another
    process added to (or removed from) the directory appear (or disappear). Raises
    ``RuntimeError`` if the instance is not memory-mapped in a directory.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     td = TensorDict(a=torch.zeros(3)).memmap(path)
    ...     _ = TensorDict(a=torch.ones(3), b=torch.ones(3)).save(path)
    ...     _ = td.memmap_refresh_()
    ...     sorted(td.keys()), td["a"].tolist()
    (['a', 'b'], [1.0, 1.0, 1.0])
    """
    return self.load_memmap_(_saved_or_raise(self, "memmap_refresh_"), allow_pickle=allow_pickle)


def saved_path(self: B) -> Path | None:
    """The directory this instance is memory-mapped in (every tensor maps the file a
    save there gives it); ``None`` when it is memory-mapped without one
    (``memmap_like()`` with no prefix), ``AttributeError`` when it is not memory-mapped.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     td = TensorDict(a=torch.zeros(3)).memmap(path)
    ...     str(td.saved_path) == path
    True
    """
    root = saved_root(self)
    if root is None and self.is_memmap():
        return None
    if root is None:
        raise AttributeError(
            f"this {type(self).__name__} is not memory-mapped in a directory (save it "
            f"with memmap(prefix) or save(prefix), or load it with load_memmap)"
        )
    return root


def _saved_or_raise(self: B, what: str) -> Path:
    root = saved_root(self)
    if root is None:
        raise RuntimeError(
            f"{what}: this {type(self).__name__} is not memory-mapped in a directory "
            f"(call memmap(prefix) or save(prefix) first)"
        )
    return root


# -- adding memory-mapped entries --------------------------------------------------------


def make_memmap(
    self: B,
    key: Key,
    shape: torch.Size | tuple[int, ...] | list[int],
    *,
    dtype: torch.dtype | None = None,
    robust_key: bool | None = None,
) -> MemoryMappedTensor:
    """Add a memory-mapped tensor of ``shape`` (zeros) at ``key`` and return it; the
    instance must be memory-mapped in a directory (:attr:`saved_path`), where the new
    file goes (and its ``meta.json`` records it), even though the instance is locked.
    A tuple key creates missing nested levels. ``dtype`` defaults to torch's default.

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     td = TensorDict(a=torch.zeros(3), batch_size=[3]).memmap(path)
    ...     x = td.make_memmap(("nested", "b"), (3, 4))
    ...     td["nested", "b"].shape, TensorDict.load(path)["nested", "b"].shape
    (torch.Size([3, 4]), torch.Size([3, 4]))
    """
    del robust_key  # file names are always percent-encoded keys
    dtype = torch.get_default_dtype() if dtype is None else dtype
    return _add_memmap(self, _split(key), torch.zeros(tuple(shape), dtype=dtype), True)


def make_memmap_from_tensor(
    self: B,
    key: Key,
    tensor: Tensor,
    *,
    copy_data: bool = True,
    existsok: bool = True,
    robust_key: bool | None = None,
) -> MemoryMappedTensor:
    """Add a memory-mapped copy of ``tensor`` at ``key`` and return it (see
    :meth:`make_memmap`); ``copy_data=False`` gives zeros of its shape and dtype.
    The key must be new (``existsok`` has no effect).

    >>> import tempfile, torch
    >>> from tensorclass import TensorDict
    >>> with tempfile.TemporaryDirectory() as path:
    ...     td = TensorDict(a=torch.zeros(3), batch_size=[3]).memmap(path)
    ...     _ = td.make_memmap_from_tensor("b", torch.ones(3, 2))
    ...     float(td["b"].sum())
    6.0
    """
    del existsok, robust_key
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_memmap_from_tensor: expected a tensor; got {type(tensor)}")
    return _add_memmap(self, _split(key), tensor.detach(), copy_data)


def make_memmap_from_storage(
    self: B,
    key: Key,
    storage: torch.UntypedStorage,
    shape: torch.Size | tuple[int, ...] | list[int],
    *,
    dtype: torch.dtype | None = None,
    robust_key: bool | None = None,
) -> MemoryMappedTensor:
    """Add at ``key`` a memory-mapped tensor reading ``storage``, which must map the
    file the new entry has in the directory (:attr:`saved_path`); a storage without
    that file raises ``ValueError`` (use :meth:`make_memmap_from_tensor` to copy data
    into the directory).
    """
    del robust_key
    dtype = torch.get_default_dtype() if dtype is None else dtype
    parts = _split(key)
    root = _saved_or_raise(self, "make_memmap_from_storage")
    wanted = os.path.join(root, *(dir_name(p) for p in parts[:-1]), leaf_file_name(parts[-1]))
    filename = getattr(storage, "filename", None)
    if filename is None or os.path.abspath(filename) != wanted:
        raise ValueError(
            f"make_memmap_from_storage: the storage for {key!r} must map the file "
            f"{wanted}; got {filename!r} (use make_memmap_from_tensor to copy data)"
        )
    plain = torch.empty((0,), dtype=dtype).set_(storage).view(-1)[: _numel(shape)]
    return _add_memmap(self, parts, plain.view(tuple(shape)), True, existing=wanted)


def _add_memmap(
    self: B,
    parts: tuple[str, ...],
    tensor: Tensor,
    copy_data: bool,
    existing: str | None = None,
) -> MemoryMappedTensor:
    if is_lazy_stack(self):
        raise NotImplementedError(
            f"make_memmap on a lazy stack: add {parts!r} to each member "
            f"(stack.members[i].make_memmap_from_tensor(...)) instead"
        )
    root = _saved_or_raise(self, "make_memmap")
    if parts in {_split(k) for k in self.keys(include_nested=True)}:
        raise KeyError(f"make_memmap: the key {parts!r} exists already")
    rel = "".join(dir_name(p) + "/" for p in parts[:-1]) + leaf_file_name(parts[-1])
    filename = os.path.join(root, rel)
    for depth in range(1, len(parts)):
        level = os.path.join(root, *(dir_name(p) for p in parts[:depth]))
        if os.path.islink(level) or (os.path.lexists(level) and not os.path.isdir(level)):
            raise ValueError(
                f"make_memmap: {level} is not a directory of the save (a symbolic link "
                f"or a file): refusing to write {parts!r} there"
            )
    if os.path.lexists(filename) and existing is None:
        raise FileExistsError(f"make_memmap: {filename} exists already")
    if existing is None:
        for depth in range(1, len(parts)):
            os.makedirs(os.path.join(root, *(dir_name(p) for p in parts[:depth])), exist_ok=True)
        source = tensor if copy_data else torch.zeros_like(tensor)
        write_tensor_file(source, filename)
    mapped = MemoryMappedTensor._open(filename, tensor.dtype, tuple(tensor.shape))
    locked = self._locked
    try:
        if locked:
            self.unlock_()
        self.set(parts, mapped)
    except BaseException:
        if existing is None:
            os.unlink(filename)
        raise
    finally:
        if locked:
            self.lock_()
    _rewrite_metas(self, root)
    return mapped


def _numel(shape: Iterable[int]) -> int:
    count = 1
    for size in shape:
        count *= int(size)
    return count


def _rewrite_metas(node: TensorCore, root: Path) -> None:
    """Write every ``meta.json`` of the save of ``node`` at ``root`` again (new entries)."""
    plan = _Plan()
    _plan(node, "", (), plan)
    for rel, meta in plan.metas:
        directory = root / rel if rel else root
        directory.mkdir(exist_ok=True)
        temporary = directory / f".{META_NAME}.tmp-{os.getpid()}"
        temporary.write_text(json.dumps(meta, allow_nan=True), encoding="utf-8")
        os.replace(temporary, directory / META_NAME)
