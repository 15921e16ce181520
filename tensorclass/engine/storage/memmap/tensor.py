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

import errno
import inspect
import os
import stat
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor
from torch._C import DisableTorchFunctionSubclass

__all__ = [
    "MemoryMappedTensor",
    "PathLike",
    "contiguous_strides",
    "map_file",
    "write_tensor_file",
]

PathLike = str | os.PathLike[str]
_CHUNK = 1 << 30  # bytes per write() call (Linux writes at most ~2 GiB at once)


def _view_functions() -> frozenset[Callable[..., object]]:
    """Functions whose results may share the storage of their first argument."""
    names = (
        "__getitem__ view view_as reshape reshape_as unbind split chunk narrow select "
        "expand expand_as permute transpose t squeeze unsqueeze flatten unflatten movedim "
        "moveaxis as_strided diagonal contiguous detach to cpu unfold swapaxes swapdims"
    ).split()
    found: set[Callable[..., object]] = set()
    for name in names:
        for owner in (Tensor, torch):
            function = getattr(owner, name, None)
            if function is not None:
                found.add(function)
    # the properties' getters (``Tensor.T`` on the class is the descriptor itself)
    found.add(inspect.getattr_static(Tensor, "T").__get__)
    found.add(inspect.getattr_static(Tensor, "mT").__get__)
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


def map_file(filename: str, shared: bool, nbytes: int) -> torch.UntypedStorage:
    """The first ``nbytes`` of a file mapped into memory (``shared=False``: copy-on-write).

    Only for a file this process made (or checked) itself: torch's own mapping *extends* a
    shorter file when ``shared``. Files someone else may replace meanwhile are mapped with
    :func:`map_checked`.
    """
    storage = torch.UntypedStorage.from_file(filename, shared=shared, nbytes=nbytes)
    assert isinstance(storage, torch.UntypedStorage)  # torch's stubs say a base class
    return storage


class FileSizeError(ValueError):
    """The file :func:`map_checked` opened does not hold the bytes the caller expects."""

    def __init__(self, filename: str, actual: int | None, expected: int) -> None:
        what = "is not a regular file" if actual is None else f"holds {actual} bytes"
        super().__init__(f"file {filename} {what}, expected {expected}")
        self.filename = filename
        self.actual = actual
        self.expected = expected


#: where an open file descriptor can be opened again by path (Linux): torch maps files
#: by path only, so the file checked through the descriptor is the file torch maps
_FD_DIR = "/proc/self/fd/" if os.path.isdir("/proc/self/fd") else None
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def map_checked(
    filename: str, shared: bool | None, nbytes: int, *, at_least: bool = False
) -> tuple[torch.UntypedStorage, bool]:
    """Map the first ``nbytes`` of ``filename``, a file that another process may replace
    (a save being read), never changing it: the file is opened once (a symbolic link is
    refused), its size is checked on that open file (exactly ``nbytes``, or at least with
    ``at_least``), and that same file is what gets mapped, so a file swapped in meanwhile
    is neither mapped unchecked nor extended. ``shared=None`` maps shared when this
    process may write the file, copy-on-write otherwise; ``True`` needs a writable file.

    Returns the storage and whether it is shared. A wrong size raises
    :class:`FileSizeError`; a missing file, ``FileNotFoundError``.
    """
    fd = -1
    if shared is not False:
        try:
            fd = os.open(filename, os.O_RDWR | _NOFOLLOW)
        except PermissionError:
            if shared:
                raise PermissionError(
                    f"mode='r+' needs a writable file; {filename!r} is read-only"
                ) from None
        except OSError as err:  # a read-only file system
            if shared or err.errno != errno.EROFS:
                raise
    writable = fd >= 0
    if not writable:
        fd = os.open(filename, os.O_RDONLY | _NOFOLLOW)
    try:
        info = os.fstat(fd)
        actual = info.st_size if stat.S_ISREG(info.st_mode) else None
        if actual is None or (actual < nbytes if at_least else actual != nbytes):
            raise FileSizeError(filename, actual, nbytes)
        if nbytes == 0:
            return torch.empty(0, dtype=torch.uint8).untyped_storage(), writable
        source = filename if _FD_DIR is None else f"{_FD_DIR}{fd}"
        return map_file(source, writable, nbytes), writable
    finally:
        os.close(fd)


def _map(filename: str, dtype: torch.dtype, shape: tuple[int, ...], shared: bool = True) -> Tensor:
    """Map an existing file of exactly the right size as a plain tensor of ``shape``
    (``shared=False``: copy-on-write, writes stay in memory)."""
    nbytes = _nbytes(shape, dtype)
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    storage = map_file(filename, shared, nbytes)
    plain: Tensor = torch.empty((0,), dtype=dtype).set_(
        storage, 0, shape, contiguous_strides(shape)
    )
    return plain


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a contiguous tensor of ``shape`` (a size 0 counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def _map_existing(
    filename: str, dtype: torch.dtype, shape: tuple[int, ...], mode: str | None
) -> Tensor:
    """Map a file that must hold exactly a tensor of ``shape`` (checked on the file that
    is mapped, see :func:`map_checked`) as a plain tensor; ``mode`` as in
    :meth:`MemoryMappedTensor.from_filename`."""
    nbytes = _nbytes(shape, dtype)
    shared = None if mode is None else mode == "r+"
    try:
        storage, _ = map_checked(filename, shared, nbytes)
    except FileNotFoundError:
        raise FileNotFoundError(f"memory-mapped file {filename!r} does not exist") from None
    except FileSizeError as err:
        raise ValueError(
            f"memory-mapped file {filename!r} holds {err.actual} bytes, but a {dtype} tensor "
            f"of shape {list(shape)} needs {nbytes} (the file is truncated or the shape and "
            f"dtype are wrong)"
        ) from None
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    plain: Tensor = torch.empty((0,), dtype=dtype).set_(
        storage, 0, shape, contiguous_strides(shape)
    )
    return plain


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


def _sizes(size: tuple[Any, ...], shape: Sequence[int] | None = None) -> tuple[int, ...]:
    """The shape given as ints (``2, 3``), one sequence (``(2, 3)``) or ``shape=``."""
    if shape is not None:
        if size:
            raise TypeError(
                f"give the size either positionally or as shape=, not both; got {size} and "
                f"shape={shape}"
            )
        size = (shape,)
    if not size:
        raise TypeError("a size is required: give it as ints, as one sequence or as shape=")
    dims = tuple(
        int(s) for s in (size[0] if len(size) == 1 and not isinstance(size[0], int) else size)
    )
    if any(s < 0 for s in dims):
        raise ValueError(f"a tensor size cannot be negative; got {list(dims)}")
    return dims


def _check_cpu(device: object) -> None:
    if device is None:
        return
    if not isinstance(device, str | int | torch.device):
        raise TypeError(f"device must be a torch.device, a str or an int; got {device!r}")
    if torch.device(device).type != "cpu":
        raise ValueError(
            f"a MemoryMappedTensor lives in host memory: device must be None or 'cpu'; got "
            f"{device!r}"
        )


def _anonymous(shape: tuple[int, ...], dtype: torch.dtype) -> MemoryMappedTensor:
    """A new tensor of zeros in anonymous shared memory (no file)."""
    memory = torch.zeros(shape, dtype=dtype).share_memory_()  # type: ignore[no-untyped-call]
    return MemoryMappedTensor._wrap(memory, None)


def _rebuild_anonymous(tensor: Tensor) -> MemoryMappedTensor:
    """Unpickle a tensor without a file (multiprocessing shares its memory)."""
    return MemoryMappedTensor._wrap(tensor, None)


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
        return MemoryMappedTensor._wrap(torch.zeros(shape, dtype=dtype), filename)
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
    try:
        storage, _ = map_checked(filename, None, nbytes, at_least=True)
    except FileSizeError as err:  # replaced by a shorter file meanwhile
        raise ValueError(
            f"cannot map {filename!r}: it holds {err.actual} bytes, the tensor needs {nbytes}"
        ) from None
    plain: Tensor = torch.empty((0,), dtype=dtype).set_(storage, offset, shape, stride)
    return MemoryMappedTensor._wrap(plain, filename)


_run_plain = torch._C._disabled_torch_function_impl


class MemoryMappedTensor(Tensor):
    """A tensor stored in a file mapped into memory (see the module documentation).

    Build one with :meth:`from_tensor`, :meth:`empty`, :meth:`zeros`, :meth:`ones`,
    :meth:`full` and the ``*_like`` functions, :meth:`from_filename` for an existing file,
    :meth:`from_storage` for an existing storage. Given a ``filename``, the data lives in
    that file (the raw elements in C order, nothing else); without one, in anonymous shared
    memory (what ``share_memory_()`` gives: worker processes see the same memory). New
    tensors read as zeros.
    """

    _filename: str | None
    _parent_shape: torch.Size

    @classmethod
    def _wrap(
        cls, tensor: Tensor, filename: str | None, parent_shape: torch.Size | None = None
    ) -> MemoryMappedTensor:
        with DisableTorchFunctionSubclass():
            out = tensor.as_subclass(cls)
            out._parent_shape = tensor.shape if parent_shape is None else parent_shape
        out._filename = filename
        return out

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., object],
        types: tuple[type, ...],
        args: Sequence[object] = (),
        kwargs: dict[str, object] | None = None,
    ) -> object:
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
        return MemoryMappedTensor._wrap(out, self._filename, self._parent_shape) if same else out

    @classmethod
    def _open(
        cls, filename: str, dtype: torch.dtype, shape: tuple[int, ...], name: str | None = None
    ) -> MemoryMappedTensor:
        """Map a file whose size is known to be right (no checks; a file this process
        wrote), recorded as ``name`` (default: ``filename``)."""
        return cls._wrap(_map(filename, dtype, shape), filename if name is None else name)

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def from_filename(
        cls,
        filename: PathLike,
        dtype: torch.dtype,
        shape: Sequence[int],
        index: Any = None,
        mode: str | None = None,
    ) -> MemoryMappedTensor:
        """Map an existing file holding a tensor of ``dtype`` and ``shape``.

        The file size must be exactly what the shape and dtype need (a clear error
        otherwise: the file is never extended or read past its end). ``index`` is applied
        to the result (``tensor[index]``). ``mode="r+"`` maps the file shared (writes reach
        it; a ``PermissionError`` if it is read-only), ``mode="r"`` copy-on-write (writes
        stay in memory); ``None`` maps it shared when it is writable.
        """
        if mode not in (None, "r", "r+"):
            raise ValueError(f"mode must be None, 'r' or 'r+'; got {mode!r}")
        name = os.path.abspath(os.fspath(filename))
        size = tuple(int(s) for s in shape)
        out = cls._wrap(_map_existing(name, dtype, size, mode), name)
        return out if index is None else out[index]

    @classmethod
    def from_tensor(
        cls,
        input: Tensor,
        *,
        filename: PathLike | None = None,
        existsok: bool = False,
        copy_existing: bool = False,
        copy_data: bool = True,
        shape: Sequence[int] | None = None,
    ) -> MemoryMappedTensor:
        """Copy ``input`` into a file (``filename``) or anonymous shared memory (no filename).

        ``shape`` gives the result another shape that ``input`` broadcasts to;
        ``copy_data=False`` only allocates (the result reads as zeros). A memory-mapped
        ``input`` is returned as it is when ``filename`` is its own file (or both have
        none); copying it to another file needs ``copy_existing=True``, so data is not
        duplicated on disk by mistake. An existing ``filename`` needs ``existsok=True``.

        >>> import torch
        >>> from tensorclass import MemoryMappedTensor
        >>> shared = MemoryMappedTensor.from_tensor(torch.arange(3))
        >>> shared, shared.is_shared()
        (MemoryMappedTensor([0, 1, 2]), True)
        """
        if input.requires_grad:
            raise RuntimeError(
                "MemoryMappedTensor.from_tensor: the input requires grad; pass "
                "input.detach() (a memory-mapped tensor holds data, not a graph)"
            )
        if isinstance(input, MemoryMappedTensor):
            own = input._filename
            target = None if filename is None else os.path.abspath(os.fspath(filename))
            if own == target and shape is None:
                return input
            if own is not None and target is not None and not copy_existing:
                raise RuntimeError(
                    f"MemoryMappedTensor.from_tensor: the input is already mapped from "
                    f"{own!r}; pass copy_existing=True to copy it to {target!r}"
                )
            source = input.as_tensor()
        else:
            source = input
        size = tuple(source.shape) if shape is None else tuple(int(s) for s in shape)
        if shape is not None:
            source = source.expand(size)
        if filename is None:
            out = _anonymous(size, source.dtype)
            if copy_data:
                out.as_tensor().copy_(source.detach())
            return out
        if not copy_data:
            return cls.empty(size, dtype=source.dtype, filename=filename, existsok=existsok)

        def write(path: str) -> None:
            write_tensor_file(source, path)

        _replace_file(filename, existsok, write)
        return cls.from_filename(filename, source.dtype, size)

    @classmethod
    def from_storage(
        cls,
        storage: torch.UntypedStorage | torch.TypedStorage,
        *,
        shape: Sequence[int] | None = None,
        dtype: torch.dtype | None = None,
        device: object = None,
        index: Any = None,
        filename: PathLike | None = None,
    ) -> MemoryMappedTensor:
        """View an existing storage as a memory-mapped tensor (no copy: writes reach it).

        An untyped storage is read as ``dtype`` (``int64`` if not given, as tensordict
        does); a typed storage keeps its dtype unless ``dtype`` is given. ``shape``
        defaults to 1-D; ``index`` is applied to the result. A storage mapped from a file
        (``torch.UntypedStorage.from_file``) keeps its file name; ``filename`` names it
        when the storage does not record one.
        """
        _check_cpu(device)
        if isinstance(storage, torch.TypedStorage):
            dtype = dtype or storage.dtype
            untyped = storage.untyped()  # type: ignore[no-untyped-call]
        else:
            dtype = dtype or torch.int64
            untyped = storage
        own = getattr(untyped, "filename", None)
        given = None if filename is None else os.path.abspath(os.fspath(filename))
        if own is not None and given is not None and os.path.abspath(own) != given:
            raise RuntimeError(
                f"MemoryMappedTensor.from_storage: the storage is mapped from {own!r}, not "
                f"{given!r}"
            )
        numel = untyped.nbytes() // dtype.itemsize
        size = (numel,) if shape is None else tuple(int(s) for s in shape)
        plain = torch.empty((0,), dtype=dtype).set_(untyped, 0, size, contiguous_strides(size))
        name = os.path.abspath(own) if own is not None else given
        out = cls._wrap(plain, name)
        return out if index is None else out[index]

    @classmethod
    def empty(
        cls,
        *size: Any,
        shape: Sequence[int] | None = None,
        dtype: torch.dtype | None = None,
        device: object = None,
        filename: PathLike | None = None,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new tensor of ``size`` (ints, one sequence or ``shape=``) that reads as zeros:
        a sparse new file, or anonymous shared memory without ``filename``."""
        dims = _sizes(size, shape)
        dtype = dtype or torch.get_default_dtype()
        _check_cpu(device)
        if filename is None:
            return _anonymous(dims, dtype)

        def write(path: str) -> None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.ftruncate(fd, _nbytes(dims, dtype))  # sparse: no memory, no disk yet
            finally:
                os.close(fd)

        _replace_file(filename, existsok, write)
        return cls.from_filename(filename, dtype, dims)

    @classmethod
    def zeros(
        cls,
        *size: Any,
        shape: Sequence[int] | None = None,
        dtype: torch.dtype | None = None,
        device: object = None,
        filename: PathLike | None = None,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor of zeros (see :meth:`empty`).

        >>> import torch
        >>> from tensorclass import MemoryMappedTensor
        >>> MemoryMappedTensor.zeros(2, 3, dtype=torch.int64).sum().item()
        0
        """
        return cls.empty(
            *size, shape=shape, dtype=dtype, device=device, filename=filename, existsok=existsok
        )

    @classmethod
    def ones(
        cls,
        *size: Any,
        shape: Sequence[int] | None = None,
        dtype: torch.dtype | None = None,
        device: object = None,
        filename: PathLike | None = None,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor of ones (see :meth:`empty`)."""
        return cls.full(
            _sizes(size, shape),
            fill_value=1,
            dtype=dtype,
            device=device,
            filename=filename,
            existsok=existsok,
        )

    @classmethod
    def full(
        cls,
        *size: Any,
        fill_value: float | bool | None = None,
        shape: Sequence[int] | None = None,
        dtype: torch.dtype | None = None,
        device: object = None,
        filename: PathLike | None = None,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor filled with ``fill_value`` (see :meth:`empty`).

        ``full(size, fill_value)`` with the size as one sequence works too.

        >>> from tensorclass import MemoryMappedTensor
        >>> MemoryMappedTensor.full(3, fill_value=2.5).tolist()
        [2.5, 2.5, 2.5]
        """
        if fill_value is None:
            if len(size) == 2 and not isinstance(size[0], int):
                fill_value = size[-1]
                size = size[:1]
            else:
                raise TypeError("MemoryMappedTensor.full needs a fill_value")
        out = cls.empty(
            *size, shape=shape, dtype=dtype, device=device, filename=filename, existsok=existsok
        )
        with DisableTorchFunctionSubclass():
            out.fill_(fill_value)
        return out

    @classmethod
    def empty_like(
        cls, input: Tensor, *, filename: PathLike | None = None, existsok: bool = False
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor with the shape and dtype of ``input`` (zeros)."""
        return cls.empty(input.shape, dtype=input.dtype, filename=filename, existsok=existsok)

    @classmethod
    def zeros_like(
        cls, input: Tensor, *, filename: PathLike | None = None, existsok: bool = False
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor of zeros with the shape and dtype of ``input``."""
        return cls.empty(input.shape, dtype=input.dtype, filename=filename, existsok=existsok)

    @classmethod
    def ones_like(
        cls, input: Tensor, *, filename: PathLike | None = None, existsok: bool = False
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor of ones with the shape and dtype of ``input``."""
        return cls.full_like(input, 1, filename=filename, existsok=existsok)

    @classmethod
    def full_like(
        cls,
        input: Tensor,
        fill_value: float | bool,
        *,
        filename: PathLike | None = None,
        existsok: bool = False,
    ) -> MemoryMappedTensor:
        """A new memory-mapped tensor filled with ``fill_value``, shaped like ``input``.

        >>> import torch
        >>> from tensorclass import MemoryMappedTensor
        >>> MemoryMappedTensor.full_like(torch.zeros(3, dtype=torch.int64), 7)
        MemoryMappedTensor([7, 7, 7])
        """
        return cls.full(
            input.shape,
            fill_value=fill_value,
            dtype=input.dtype,
            filename=filename,
            existsok=existsok,
        )

    # -- the file ----------------------------------------------------------------------------

    @property
    def filename(self) -> str:
        """The absolute path of the backing file (a ``RuntimeError`` if it has none)."""
        if self._filename is None:
            raise RuntimeError(
                "this MemoryMappedTensor has no file: it was built without filename= and "
                "lives in anonymous shared memory"
            )
        return self._filename

    @property
    def parent_shape(self) -> torch.Size:
        """The shape of the tensor this one was mapped as (a view keeps its source's)."""
        return self._parent_shape

    def __reduce_ex__(self, protocol: object) -> tuple[object, ...]:
        if self._filename is None:
            return (_rebuild_anonymous, (self.as_tensor(),))
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

    def __deepcopy__(self, memo: dict[int, object]) -> Tensor:
        with DisableTorchFunctionSubclass():
            return self.clone()

    def mark_parameter(self) -> MemoryMappedTensor:
        """Mark this tensor as the memory-mapped copy of an ``nn.Parameter`` (returns it).

        Torch's own rule: a tensor whose ``_is_param`` is true passes
        ``isinstance(x, nn.Parameter)``, so ``torch.testing.assert_close`` compares it with
        the parameter. ``memmap`` and loading mark the tensors saved from parameters; the
        mark is not inherited by views.
        """
        self._is_param = True
        return self

    def as_tensor(self) -> Tensor:
        """The same data as a plain ``torch.Tensor`` (still backed by the file; no copy)."""
        with DisableTorchFunctionSubclass():
            return self.as_subclass(Tensor)


_GETITEM = Tensor.__getitem__


def _views_of(out: object, source: MemoryMappedTensor) -> object:
    """Mark results that share the file's storage as memory-mapped tensors."""
    if isinstance(out, Tensor):
        if isinstance(out, MemoryMappedTensor):
            return out
        with DisableTorchFunctionSubclass():
            same = out.untyped_storage().data_ptr() == source.untyped_storage().data_ptr()
        return (
            MemoryMappedTensor._wrap(out, source._filename, source._parent_shape) if same else out
        )
    if isinstance(out, (tuple, list)):
        return type(out)(_views_of(item, source) for item in out)
    return out
