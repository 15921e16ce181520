"""``PersistentTensorDict``: a tensor tree kept in an HDF5 file or a Zarr store, read lazily.

It is a *view of a file*, not an engine instance: it reads what you ask for (a key, or the
rows of an index) and :meth:`~PersistentTensorDict.to_tensordict` reads everything into the
class that was saved. Writes (``ptd["x"] = t``, ``ptd[0:2] = td``) go to the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import Tensor
from typing_extensions import Self

from ....errors import FileFormatError, KeyNotFoundError
from ....json_values import non_tensor_to_json
from ....keys import unravel_key
from ....non_tensor import NonTensorData, NonTensorStack
from ....unbatched import UnbatchedTensor
from ...core.lazy_stacks import is_lazy_stack
from ...core.state import TensorCore
from ...core.untrusted import shown
from ..memmap.load import ClassPolicy
from ..memmap.metadata import DTYPES
from .backends import Backend, numpy_of, torch_dtype_of
from .backends import backend as make_backend
from .layout import VERSION, build, check_tensor
from .tree_io import (
    common_prefix,
    has_stack,
    infer_level,
    plan,
    plan_tensor,
    rebatch,
    tensor_entries,
    write_arrays,
)

__all__ = [
    "PersistentTensorDict",
    "open_persistent",
    "refuse_pickle",
    "write_persistent",
]

_Key = str | tuple[str, ...]


def write_persistent(
    node: TensorCore, filename: object, name: str, options: dict[str, object]
) -> PersistentTensorDict:
    """Write ``node`` to a new file or store (``name``: ``"h5"``/``"zarr"``), opened ``r+``."""
    store = make_backend(name)
    root, arrays = plan(node)  # checks every key and value before the file is touched
    if isinstance(filename, (str, os.PathLike)):
        filename = os.path.abspath(os.fspath(filename))
    handle = store.open(filename, "w")
    try:
        write_arrays(store, handle, arrays, options)
        store.set_layout(handle, {"version": VERSION, "root": root})
    finally:
        store.close(handle)
    return open_persistent(filename, name, mode="r+")


def open_persistent(
    filename: object,
    name: str,
    mode: str = "r",
    batch_size: Any = None,
    auto_batch_size: bool = False,
    batch_dims: int | None = None,
    non_tensor_as_stack: bool = False,
    allow_pickle: bool | None = None,
) -> PersistentTensorDict:
    """Open ``filename`` with the ``name`` backend (see :class:`PersistentTensorDict`): what
    ``from_h5`` and ``from_zarr`` do, the class methods and the functions. Nothing is
    unpickled (``allow_pickle=True`` is refused)."""
    refuse_pickle(allow_pickle, f"from_{name}")
    if auto_batch_size and batch_size is not None:
        raise TypeError("pass auto_batch_size=True or batch_size, not both")
    return PersistentTensorDict(
        filename=filename,
        backend=name,
        mode=mode,
        batch_size=batch_size,
        auto_batch_size=auto_batch_size,
        batch_dims=batch_dims,
        non_tensor_as_stack=non_tensor_as_stack,
    )


def refuse_pickle(allow_pickle: bool | None, where: str) -> None:
    """Raise for ``allow_pickle=True``: tensorclass never pickles or unpickles."""
    if allow_pickle:
        raise ValueError(
            f"{where}(allow_pickle=True): tensorclass never pickles or unpickles (non-tensor "
            f"values are JSON); pass allow_pickle=False or None"
        )


class PersistentTensorDict:
    """A tensor tree in an HDF5 file (``backend="h5"``, needs ``h5py``) or a Zarr store
    (``backend="zarr"``, needs ``zarr``), read lazily by key and by index.

    ``ptd["x"]`` reads the tensor ``x`` from the file (a new tensor each time: in-place
    changes to it do not reach the file); ``ptd["sub"]`` is the nested level, still in the
    file; ``ptd[0:10]`` reads those rows of every tensor (ints and slices read only the rows;
    other indices read the whole leaves first) into the class that was saved.
    ``to_tensordict()`` reads everything. ``ptd["x"] = t`` and ``ptd[0:2] = td`` write to the
    file (opened with ``mode="r+"``, ``"a"`` or ``"w"``). Close it with :meth:`close`, or use
    it as a context manager.

    It is not a tensor class itself: for the rest of the API, read what you need
    (``ptd[idx]`` or ``ptd.to_tensordict()``). Files that tensorclass or tensordict wrote
    keep their batch size, classes and non-tensor values (the layout attribute); for other
    files the batch size is ``batch_size``, or with ``auto_batch_size=True`` (the default
    when none is given) the leading dims every tensor shares, at most ``batch_dims`` of them.

    Keyword Args:
        batch_size: the batch size of the root (checked against every tensor).
        filename: the path of the file or store (or a zarr store object).
        group: an open ``h5py``/``zarr`` group to read instead of ``filename``.
        mode: as in ``h5py.File``: ``"r"``, ``"r+"``, ``"a"``, ``"w"``...
        backend: ``"h5"`` or ``"zarr"``.
        device: where tensors go when read.
        validate_batch_size: accepted for tensordict's signature: the batch size is always
            checked against every tensor.
        non_tensor_as_stack: accepted for tensordict's signature: a string or object
            dataset of a file without layout reads as one value (a list for arrays).
        allow_pickle: nothing is ever unpickled; ``True`` raises ``ValueError``.
        auto_batch_size: for files without layout, the batch size is the leading dims
            every tensor shares (at most ``batch_dims``).
        batch_dims: the most leading dims ``auto_batch_size`` takes.

    >>> import os, tempfile, torch
    >>> from tensorclass import TensorDict
    >>> data = TensorDict(x=torch.arange(6).reshape(3, 2), batch_size=[3])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with data.to_h5(os.path.join(tmp, "data.h5")) as ptd:
    ...         print(ptd.batch_size, ptd["x"][1].tolist(), ptd[1:]["x"].tolist())
    torch.Size([3]) [2, 3] [[2, 3], [4, 5]]
    """

    def __init__(
        self,
        *,
        batch_size: Any = None,
        filename: object = None,
        group: Any = None,
        mode: str = "r",
        backend: str = "h5",
        device: Any = None,
        validate_batch_size: bool = True,
        non_tensor_as_stack: bool = False,
        allow_pickle: bool | None = None,
        auto_batch_size: bool = False,
        batch_dims: int | None = None,
    ) -> None:
        del validate_batch_size, non_tensor_as_stack  # always checked; see the docstring
        if allow_pickle:
            raise ValueError(
                "PersistentTensorDict(allow_pickle=True): tensorclass never unpickles (non-tensor "
                "values are JSON); pass allow_pickle=False or None"
            )
        if (filename is None) == (group is None):
            raise TypeError("PersistentTensorDict needs filename or group (one of them)")
        self._store: Backend = make_backend(backend)
        self._owns = group is None
        if isinstance(filename, (str, os.PathLike)):
            filename = os.path.abspath(os.fspath(filename))
        self.filename = filename if filename is not None else str(getattr(group, "name", group))
        self.mode = mode
        self.device = None if device is None else torch.device(device)
        if group is None:
            self._root = self._store.open(filename, mode)
        else:  # the caller's open group: checked as a file is when opened
            self._store.refuse_outside(group, self.filename)
            self._root = group
        self._path: tuple[str, ...] = ()
        found = self._store.layout(self._root, self.filename)
        if found is None:
            found = {
                "version": VERSION,
                "root": infer_level(self._store, self._root, self.filename),
            }
            auto_batch_size = auto_batch_size or batch_size is None
        if type(found) is not dict or found.get("version") != VERSION or "root" not in found:
            raise FileFormatError(
                f"{self.filename}: the layout attribute is not a version-1 layout"
            )
        self._layout: dict[str, Any] = found
        if auto_batch_size:
            shapes = [list(self._node(e["tensor"]).shape) for e in tensor_entries(found["root"])]
            self._set_batch(common_prefix(shapes, batch_dims))
        elif batch_size is not None:
            self._set_batch(list(torch.Size(batch_size)))

    # -- structure -----------------------------------------------------------------------

    @property
    def _level(self) -> dict[str, Any]:
        level: dict[str, Any] = self._layout["root"]
        for part in self._path:
            level = level["keys"][part]["td"]
        return level

    @property
    def batch_size(self) -> torch.Size:
        """The batch size of this level."""
        return torch.Size(self._level["batch_size"])

    @property
    def batch_dims(self) -> int:
        """The number of batch dims."""
        return len(self._level["batch_size"])

    def __len__(self) -> int:
        return int(self.batch_size[0]) if self.batch_dims else 0

    def _entries(self) -> dict[str, Any]:
        level = self._level
        if "members" in level:
            return dict(level["members"][0].get("keys", {})) if level["members"] else {}
        return level["keys"]  # type: ignore[no-any-return]

    def keys(
        self, include_nested: bool = False, leaves_only: bool = False
    ) -> list[str | tuple[str, ...]]:
        """The keys of this level (``include_nested``: with nested keys, as tuples)."""
        out: list[str | tuple[str, ...]] = []
        for key, entry in self._entries().items():
            nested = "td" in entry
            if not (nested and leaves_only):
                out.append(key)
            if nested and include_nested:
                child = self._child(key)
                out.extend((key, *_tuple(k)) for k in child.keys(True, leaves_only))
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __contains__(self, key: object) -> bool:
        try:
            path = _tuple(unravel_key(key))
        except TypeError:
            return False
        node: PersistentTensorDict = self
        for part in path[:-1]:
            entry = node._entries().get(part)
            if entry is None or "td" not in entry:
                return False
            node = node._child(part)
        return path[-1] in node._entries()

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(key, value)`` of this level, each value read as ``self[key]``."""
        for key in self._entries():
            yield key, self[key]

    def values(self) -> Iterator[Any]:
        """Each value of this level, read as ``self[key]``."""
        for _, value in self.items():
            yield value

    def _child(self, key: str) -> PersistentTensorDict:
        child = object.__new__(PersistentTensorDict)
        child.__dict__.update(self.__dict__)
        child._owns = False
        child._path = (*self._path, key)
        return child

    # -- reading -------------------------------------------------------------------------

    def _read(self, name: str, entry: dict[str, Any], index: tuple[Any, ...] = ()) -> Tensor:
        """The dataset ``name`` (or its rows at ``index``), checked against its entry."""
        node = self._node(name)
        dtype = torch_dtype_of(node.dtype)
        if dtype is None:
            raise FileFormatError(f"{self.filename}: {name!r} is not a numeric dataset")
        self._check_declared(name, node, dtype)
        try:
            array = np.asarray(node[index])  # () reads the whole dataset
        except Exception as err:  # h5py's, zarr's and numpy's errors: ours, naming the file
            raise FileFormatError(
                f"{self.filename}: cannot read {shown(name)}: {type(err).__name__}: "
                f"{shown(err, 200)}"
            ) from None
        checks = entry if not index else {"dtype": entry.get("dtype")}  # rows: no full shape
        tensor = check_tensor(torch.from_numpy(array), checks, self.filename, name, DTYPES)
        return tensor if self.device is None else tensor.to(self.device)

    def _check_declared(self, name: str, node: Any, dtype: torch.dtype) -> None:
        """Refuse a dataset whose declared size the bytes in the file cannot hold, before
        anything is allocated (see :meth:`Backend.declared_problem`)."""
        problem = self._store.declared_problem(node, dtype.itemsize)
        if problem is not None:
            raise FileFormatError(f"{self.filename}: {shown(name)} {problem}; not read")

    def _node(self, name: str) -> Any:
        """The dataset the layout names ``name`` (a path inside the file, never outside)."""
        parts = name.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise FileFormatError(f"{self.filename}: the layout names an invalid path {name!r:.80}")
        node = self._root
        for part in parts:
            try:
                outside = self._store.inside(node, part) if part in node else "missing"
                node = node[part] if outside is None else None
            except (KeyError, ValueError, OSError, TypeError):
                outside = "missing"
            if outside == "missing":
                raise FileFormatError(
                    f"{self.filename}: the layout names {name!r:.80}, which is not in the file"
                )
            if outside is not None:
                raise FileFormatError(f"{self.filename}: {name!r:.80} is {outside}; not read")
        if self._store.is_group(node):
            raise FileFormatError(f"{self.filename}: {name!r:.80} is a group, not a dataset")
        return node

    def _meta(self, name: str, entry: dict[str, Any]) -> Tensor:
        node = self._node(name)
        dtype = torch_dtype_of(node.dtype)
        if dtype is None:
            raise FileFormatError(f"{self.filename}: {name!r} is not a numeric dataset")
        meta = torch.empty(tuple(node.shape), dtype=dtype, device="meta")
        return check_tensor(meta, entry, self.filename, name, DTYPES)

    def _build(self, cls: type[TensorCore] | None, classes: ClassPolicy) -> TensorCore:
        return build(self._level, self._read, self.filename, cls, classes, where=self._path)

    def to_tensordict(
        self, cls: type[TensorCore] | None = None, classes: ClassPolicy = "imported"
    ) -> Any:
        """Everything in this level, read into memory, as the class that was saved (or
        ``cls``; ``classes="tensordict"`` gives plain ``TensorDict`` levels)."""
        return self._build(cls, classes)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str) or (
            isinstance(index, tuple) and index and all(isinstance(i, str) for i in index)
        ):
            return self._get(_tuple(unravel_key(index)))
        level = self._level
        if not _basic(index, self.batch_dims) or has_stack(level):
            return self.to_tensordict()[index]
        index = index if isinstance(index, tuple) else (index,)
        shell = build(level, self._meta, self.filename, where=self._path)
        result = shell[index]  # type: ignore[index]
        self._fill(result, level, index)
        return result

    def _fill(self, node: TensorCore, level: dict[str, Any], index: tuple[Any, ...]) -> None:
        """Replace the meta tensors of an indexed shell by the rows read from the file."""
        for key, entry in level["keys"].items():
            if "td" in entry:
                self._fill(node._data[key], entry["td"], index)
            elif "tensor" in entry and entry.get("unbatched") is True:  # read whole
                node._data[key] = NonTensorData(UnbatchedTensor(self._read(entry["tensor"], entry)))
            elif "tensor" in entry:
                node._data[key] = self._read(entry["tensor"], entry, index)

    def _get(self, path: tuple[str, ...]) -> Any:
        node: PersistentTensorDict = self
        for part in path[:-1]:
            node = node._get((part,))
            if not isinstance(node, PersistentTensorDict):
                raise KeyNotFoundError(f"{path!r}: {part!r} is not a nested level", key=path)
        key = path[-1]
        entries = node._entries()
        if key not in entries:
            raise KeyNotFoundError(
                f"key {path!r} not found in {node.filename}; it has {sorted(entries)}", key=path
            )
        entry = entries[key]
        level = node._level
        if "td" in entry and "members" not in level:
            return node._child(key)
        if "members" in level:
            return node.to_tensordict()[key]
        if "tensor" in entry:
            tensor = node._read(entry["tensor"], entry)
            return UnbatchedTensor(tensor) if entry.get("unbatched") is True else tensor
        built = build(
            {"batch_size": level["batch_size"], "names": None, "keys": {key: entry}},
            node._read,
            node.filename,
        )
        return built[key]  # type: ignore[index]

    # -- writing -------------------------------------------------------------------------

    def __setitem__(self, index: Any, value: Any) -> None:
        if self.mode == "r":
            raise PermissionError(f"{self.filename} is open read-only (mode='r')")
        if isinstance(index, str) or (
            isinstance(index, tuple) and index and all(isinstance(i, str) for i in index)
        ):
            path = _tuple(unravel_key(index))
            node = self
            for part in path[:-1]:
                node = node._get((part,))
                if not isinstance(node, PersistentTensorDict):
                    raise KeyNotFoundError(f"{path!r}: {part!r} is not a nested level", key=path)
            node._set(path[-1], value)
            return
        if has_stack(self._level):
            raise NotImplementedError("index writes into a saved lazy stack are not supported")
        if isinstance(value, PersistentTensorDict):
            value = value.to_tensordict()
        for key, leaf in _leaves(value):
            entry = self._entry(key)
            array, _ = numpy_of(torch.as_tensor(leaf))
            self._node(entry["tensor"])[index] = array  # checked: a dataset inside the file

    def _entry(self, path: tuple[str, ...]) -> dict[str, Any]:
        level = self._level
        for part in path[:-1]:
            level = level["keys"][part]["td"]
        entry = level["keys"].get(path[-1])
        if entry is None or "tensor" not in entry:
            raise KeyNotFoundError(f"{path!r} is not a tensor of {self.filename}", key=path)
        return entry  # type: ignore[no-any-return]

    def _set(self, key: str, value: Any) -> None:
        level = self._level
        if "members" in level:
            raise NotImplementedError("writing keys into a saved lazy stack is not supported")
        batch = tuple(level["batch_size"])
        if isinstance(value, PersistentTensorDict):
            value = value.to_tensordict()
        if isinstance(value, Tensor):
            if tuple(value.shape[: len(batch)]) != batch:
                raise ValueError(
                    f"{self.filename}: the tensor for {key!r} has shape {list(value.shape)}, "
                    f"which does not start with the batch size {list(batch)}"
                )
            entry, arrays = plan_tensor((*self._path, key), value)
            write_arrays(self._store, self._root, arrays, {})
            level["keys"][key] = entry
        elif isinstance(value, TensorCore):
            if tuple(value._batch_size[: len(batch)]) != batch:
                raise ValueError(
                    f"{self.filename}: the batch size of {key!r} does not start with {list(batch)}"
                )
            described, arrays = plan(value, (*self._path, key))
            write_arrays(self._store, self._root, arrays, {})
            level["keys"][key] = {"td": described}
        else:
            leaf = (
                value
                if isinstance(value, (NonTensorData, NonTensorStack))
                else NonTensorData(value)
            )
            kind, payload = non_tensor_to_json(leaf, (*self._path, key))
            level["keys"][key] = {kind: payload}
        self._store.set_layout(self._root, self._layout)

    # -- the file ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file (when this object opened it)."""
        if self._owns:
            self._store.close(self._root)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"PersistentTensorDict(keys={list(self._entries())}, batch_size="
            f"{list(self.batch_size)}, file={self.filename!r}, backend={self._store.name!r})"
        )

    # -- files without a layout ----------------------------------------------------------

    def _set_batch(self, batch: list[int]) -> None:
        root = self._layout["root"]
        for entry in tensor_entries(root):
            shape = list(self._node(entry["tensor"]).shape)
            if entry.get("unbatched") is not True and shape[: len(batch)] != batch:
                raise ValueError(
                    f"{self.filename}: batch_size {batch} does not fit {entry['tensor']!r} "
                    f"of shape {shape}"
                )
        rebatch(root, batch)


def _tuple(key: _Key) -> tuple[str, ...]:
    return (key,) if isinstance(key, str) else tuple(key)


def _basic(index: Any, ndim: int) -> bool:
    """Whether ``index`` is ints and forward slices within the batch dims (read row-wise)."""
    parts = index if isinstance(index, tuple) else (index,)
    if len(parts) > ndim:
        return False
    return all(
        (isinstance(p, int) and not isinstance(p, bool))
        or (isinstance(p, slice) and (p.step is None or p.step > 0))
        for p in parts
    )


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """The tensor leaves of a mapping or tensor class, by key path."""
    items = value._data.items() if isinstance(value, TensorCore) else dict(value).items()
    if is_lazy_stack(value):
        items = value.contiguous()._data.items()
    for key, leaf in items:
        if isinstance(leaf, (TensorCore, dict)):
            yield from _leaves(leaf, (*prefix, key))
        elif isinstance(leaf, Tensor):
            yield (*prefix, key), leaf
