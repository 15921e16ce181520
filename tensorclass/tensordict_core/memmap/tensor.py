"""``MemoryMappedTensor``: a tensor whose storage is a file mapped into memory.

Reading touches only the pages it needs, writes go to the file (the mapping is shared), and
pickling sends the file name, never the data: a worker process maps the same file again.

Views (indexing with ints and slices, ``view``, ``unbind``, ``split``, ``permute``...) of a
memory-mapped tensor are memory-mapped tensors of the same file; results that own new
memory (``x + 1``, ``x.clone()``, indexing with a tensor) are plain tensors in RAM.

>>> import tempfile, os, torch
>>> from tensorclass import MemoryMappedTensor
>>> path = os.path.join(tempfile.mkdtemp(), "x.memmap")
>>> x = MemoryMappedTensor.from_tensor(torch.arange(6.0).reshape(2, 3), filename=path)
>>> x[1]
MemoryMappedTensor([3., 4., 5.])
>>> type(x + 1).__name__
'Tensor'
>>> MemoryMappedTensor.from_filename(path, torch.float32, (2, 3)).sum().item()
15.0
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch._C import DisableTorchFunctionSubclass

__all__ = ["MemoryMappedTensor", "PathLike", "write_tensor_file"]

PathLike = str | os.PathLike[str]
_CHUNK = 1 << 30  # bytes per write() call (Linux writes at most ~2 GiB at once)


def _view_functions() -> frozenset[Callable[..., Any]]:
    """Functions whose results may share the storage of their first argument."""
    names = (
        "__getitem__ view view_as reshape reshape_as unbind split chunk narrow select "
        "expand expand_as permute transpose t squeeze unsqueeze flatten unflatten movedim "
        "moveaxis as_strided diagonal contiguous detach to cpu unfold swapaxes swapdims"
    ).split()
    found: set[Callable[..., Any]] = set()
    for name in names:
        for owner in (Tensor, torch):
            function = getattr(owner, name, None)
            if function is not None:
                found.add(function)
    found.add(Tensor.T.__get__)  # type: ignore[attr-defined]
    found.add(Tensor.mT.__get__)  # type: ignore[attr-defined]
    return frozenset(found)


_VIEWS = _view_functions()


def _nbytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    numel = 1
    for size in shape:
        numel *= int(size)
    return numel * dtype.itemsize


def _byte_view(tensor: Tensor) -> memoryview:
    """The bytes of a contiguous CPU tensor, without a copy."""
    flat = tensor.detach().reshape(-1)
    if flat.is_conj():
        flat = flat.resolve_conj()
    if flat.is_neg():
        flat = flat.resolve_neg()
    return memoryview(flat.view(torch.uint8).numpy())  # type: ignore[arg-type]


def write_tensor_file(tensor: Tensor, filename: PathLike, *, exclusive: bool = True) -> None:
    """Write the raw bytes of ``tensor`` (C order) to a new file: one ``write`` per GiB.

    Contiguous CPU tensors are written straight from their memory; other tensors are copied
    once, into the mapped file. ``exclusive`` refuses to replace an existing file.
    """
    if tensor.layout is not torch.strided:
        raise TypeError(f"only dense tensors can be memory-mapped; got layout {tensor.layout}")
    if tensor.device.type != "cpu":
        tensor = tensor.cpu()
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(filename, flags, 0o644)
    try:
        if not tensor.is_contiguous():
            os.ftruncate(fd, _nbytes(tensor.shape, tensor.dtype))
        else:
            data = _byte_view(tensor)
            offset, total = 0, len(data)
            while offset < total:
                offset += os.write(fd, data[offset : offset + _CHUNK])
            return
    finally:
        os.close(fd)
    # A strided or expanded tensor: copy it once, straight into the mapping.
    target = _map(os.fspath(filename), tensor.dtype, tuple(tensor.shape))
    with DisableTorchFunctionSubclass():
        target.copy_(tensor.detach())


def _map(filename: str, dtype: torch.dtype, shape: tuple[int, ...]) -> Tensor:
    """Map an existing file of exactly the right size as a plain tensor of ``shape``."""
    nbytes = _nbytes(shape, dtype)
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    storage: Any = torch.UntypedStorage.from_file(filename, shared=True, nbytes=nbytes)
    plain: Tensor = torch.empty((0,), dtype=dtype).set_(
        storage, 0, shape, _contiguous_strides(shape)
    )
    return plain


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _check_size(filename: str, dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    expected = _nbytes(shape, dtype)
    try:
        actual = os.stat(filename).st_size
    except FileNotFoundError:
        raise FileNotFoundError(f"memory-mapped file {filename!r} does not exist") from None
    if actual != expected:
        raise ValueError(
            f"memory-mapped file {filename!r} holds {actual} bytes, but a {dtype} tensor of "
            f"shape {list(shape)} needs {expected} (the file is truncated or the shape and "
            f"dtype are wrong)"
        )


def _replace_file(filename: PathLike, existsok: bool, write: Callable[[str], None]) -> None:
    """Create ``filename`` with ``write``; with ``existsok``, replace it atomically."""
    target = os.fspath(filename)
    if not existsok:
        if os.path.lexists(target):
            raise FileExistsError(
                f"{target!r} exists; pass existsok=True to replace it (mappings of the old "
                f"file stay valid)"
            )
        try:
            write(target)
        except BaseException:
            if os.path.lexists(target):
                os.unlink(target)  # nothing half-written is left behind
            raise
        return
    temporary = f"{target}.tmp-{uuid.uuid4().hex[:12]}"
    try:
        write(temporary)
        os.replace(temporary, target)  # mappings of the old file keep the old data
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def _sizes(size: tuple[Any, ...]) -> tuple[int, ...]:
    shape = tuple(
        int(s) for s in (size[0] if len(size) == 1 and not isinstance(size[0], int) else size)
    )
    if any(s < 0 for s in shape):
        raise ValueError(f"a tensor size cannot be negative; got {list(shape)}")
    return shape


def _rebuild(
    filename: str,
    dtype: torch.dtype,
    nbytes: int,
    offset: int,
    shape: tuple[int, ...],
    stride: tuple[int, ...],
) -> MemoryMappedTensor:
    """Unpickle: map the file again and take the same view of it."""
    if nbytes == 0:
        return MemoryMappedTensor._wrap(torch.empty(shape, dtype=dtype), filename)
    try:
        actual = os.stat(filename).st_size
    except FileNotFoundError:
        raise FileNotFoundError(
            f"cannot map {filename!r} again (unpickling a MemoryMappedTensor): the file no "
            f"longer exists"
        ) from None
    if actual < nbytes:
        raise ValueError(
            f"cannot map {filename!r}: it holds {actual} bytes, the tensor needs {nbytes}"
        )
    storage: Any = torch.UntypedStorage.from_file(filename, shared=True, nbytes=nbytes)
    plain: Tensor = torch.empty((0,), dtype=dtype).set_(storage, offset, shape, stride)
    return MemoryMappedTensor._wrap(plain, filename)


_run_plain = torch._C._disabled_torch_function_impl


class MemoryMappedTensor(Tensor):
    """A tensor stored in a file mapped into memory (see the module documentation).

    Build one with :meth:`from_tensor`, :meth:`empty`, :meth:`zeros`, :meth:`ones`,
    :meth:`full` (each given a ``filename``) or :meth:`from_filename` for an existing file.
    New files read as zeros. The file holds the raw elements in C order, nothing else.
    """

    _filename: str

    @classmethod
    def _wrap(cls, tensor: Tensor, filename: str) -> MemoryMappedTensor:
        with DisableTorchFunctionSubclass():
            out = tensor.as_subclass(cls)
        out._filename = filename
        return out

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: tuple[type, ...],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        # The C implementation runs ``func`` with subclass dispatch off, without the cost
        # of a Python context manager on every call (attribute reads such as .shape too).
        out = _run_plain(func, types, args, kwargs or {})  # type: ignore[arg-type]
        if func in _VIEWS and args and isinstance(args[0], MemoryMappedTensor):
            return _views_of(out, args[0])
        return out

    def __getitem__(self, index: Any) -> Any:
        # Reading rows is the hot path of a dataset on disk: a method of the class is called
        # directly, which skips the generic ``__torch_function__`` round trip (about half
        # the cost of picking a few rows). Same results: views stay memory-mapped.
        with DisableTorchFunctionSubclass():
            out = _GETITEM(self, index)
            if index.__class__ is Tensor and index.ndim:
                return out  # advanced indexing always copies
            same = out.untyped_storage().data_ptr() == self.untyped_storage().data_ptr()
        return MemoryMappedTensor._wrap(out, self._filename) if same else out

    @classmethod
    def _open(cls, filename: str, dtype: torch.dtype, shape: tuple[int, ...]) -> MemoryMappedTensor:
        """Map a file whose size is known to be right (no checks)."""
        return cls._wrap(_map(filename, dtype, shape), filename)

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def from_filename(
        cls, filename: PathLike, dtype: torch.dtype, shape: Sequence[int]
    ) -> MemoryMappedTensor:
        """Map an existing file holding a tensor of ``dtype`` and ``shape``.

        The file size must be exactly what the shape and dtype need (a clear error
        otherwise: the file is never extended or read past its end).
        """
        name = os.path.abspath(os.fspath(filename))
        size = tuple(int(s) for s in shape)
        _check_size(name, dtype, size)
        return cls._wrap(_map(name, dtype, size), name)

    @classmethod
    def from_tensor(
        cls, tensor: Tensor, *, filename: PathLike, existsok: bool = False
    ) -> MemoryMappedTensor:
        """Write ``tensor`` to ``filename`` and map it (its bytes, C order, nothing else)."""
        source = tensor.as_subclass(Tensor) if isinstance(tensor, MemoryMappedTensor) else tensor

        def write(path: str) -> None:
            write_tensor_file(source, path)

        _replace_file(filename, existsok, write)
        return cls.from_filename(filename, tensor.dtype, tuple(tensor.shape))

    @classmethod
    def empty(
        cls,
        *size: Any,
        dtype: torch.dtype | None = None,
        filename: PathLike,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new file-backed tensor of ``size`` (a new file: it reads as zeros)."""
        shape = _sizes(size)
        dtype = dtype or torch.get_default_dtype()

        def write(path: str) -> None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.ftruncate(fd, _nbytes(shape, dtype))  # sparse: no memory, no disk yet
            finally:
                os.close(fd)

        _replace_file(filename, existsok, write)
        return cls.from_filename(filename, dtype, shape)

    @classmethod
    def zeros(
        cls,
        *size: Any,
        dtype: torch.dtype | None = None,
        filename: PathLike,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new file-backed tensor of zeros."""
        return cls.empty(*size, dtype=dtype, filename=filename, existsok=existsok)

    @classmethod
    def ones(
        cls,
        *size: Any,
        dtype: torch.dtype | None = None,
        filename: PathLike,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new file-backed tensor of ones."""
        return cls.full(_sizes(size), 1, dtype=dtype, filename=filename, existsok=existsok)

    @classmethod
    def full(
        cls,
        size: Sequence[int],
        fill_value: float | bool,
        *,
        dtype: torch.dtype | None = None,
        filename: PathLike,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new file-backed tensor filled with ``fill_value``."""
        out = cls.empty(size, dtype=dtype, filename=filename, existsok=existsok)
        with DisableTorchFunctionSubclass():
            out.fill_(fill_value)
        return out

    @classmethod
    def empty_like(
        cls, tensor: Tensor, *, filename: PathLike, existsok: bool = False
    ) -> MemoryMappedTensor:
        """A new file-backed tensor with the shape and dtype of ``tensor`` (zeros)."""
        return cls.empty(tensor.shape, dtype=tensor.dtype, filename=filename, existsok=existsok)

    # -- the file ----------------------------------------------------------------------------

    @property
    def filename(self) -> str:
        """The absolute path of the backing file."""
        return self._filename

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # Pickle the file name and the view, never the data.
        with DisableTorchFunctionSubclass():
            nbytes = self.untyped_storage().nbytes()
            return (
                _rebuild,
                (
                    self._filename,
                    self.dtype,
                    nbytes,
                    self.storage_offset(),
                    tuple(self.shape),
                    tuple(self.stride()),
                ),
            )

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        with DisableTorchFunctionSubclass():
            return self.clone()

    def as_tensor(self) -> Tensor:
        """The same data as a plain ``torch.Tensor`` (still backed by the file; no copy)."""
        with DisableTorchFunctionSubclass():
            return self.as_subclass(Tensor)


_GETITEM = Tensor.__getitem__


def _views_of(out: Any, source: MemoryMappedTensor) -> Any:
    """Mark results that share the file's storage as memory-mapped tensors."""
    if isinstance(out, Tensor):
        if isinstance(out, MemoryMappedTensor):
            return out
        with DisableTorchFunctionSubclass():
            same = out.untyped_storage().data_ptr() == source.untyped_storage().data_ptr()
        return MemoryMappedTensor._wrap(out, source._filename) if same else out
    if isinstance(out, (tuple, list)):
        return type(out)(_views_of(item, source) for item in out)
    return out
