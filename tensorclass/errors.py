"""The errors tensorclass raises.

Every class is also the built-in exception users already catch (``KeyError``,
``ValueError``, ``TypeError``...), so ``except KeyError`` keeps working. Messages say what
was given, what was expected, and where (the key path).
"""

from __future__ import annotations

import dataclasses

__all__ = [
    "BatchSizeError",
    "BatchSizeTypeError",
    "FieldTypeError",
    "FileFormatError",
    "FormatError",
    "FrozenInstanceError",
    "InvalidKeyError",
    "KeyCollisionError",
    "KeyNotFoundError",
    "LockedError",
    "MemmapFormatError",
    "MemmapNotFoundError",
    "ModeError",
    "NotSerializableError",
    "OperandError",
    "RecordedClassError",
    "SaveReplacedError",
    "SchemaError",
    "StructureMismatchError",
    "TableFormatError",
    "TensorClassError",
    "UnsafePathError",
]


class TensorClassError(Exception):
    """Base class of every error raised by tensorclass.

    ``key`` is the key path the error is about, when there is one.
    """

    def __init__(self, message: str = "", *, key: str | tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.key = key

    def under(self, prefix: str) -> TensorClassError:
        """The same error, reported for the key path one level down from ``prefix``."""
        if self.key is None:
            return self
        inner = (self.key,) if isinstance(self.key, str) else self.key
        outer = (prefix, *inner)
        message = str(self).replace(repr(self.key), repr(outer), 1)
        return type(self)(message, key=outer)


class KeyNotFoundError(TensorClassError, KeyError):
    """A key (or a field) is not present.

    >>> from tensorclass import TensorDict
    >>> try:
    ...     TensorDict({})["missing"]
    ... except KeyError as err:
    ...     print(err)
    key 'missing' not found in TensorDict; it has no keys
    """

    def __str__(self) -> str:
        # KeyError quotes its argument with repr(); our messages are sentences.
        return str(self.args[0]) if self.args else ""


class InvalidKeyError(TensorClassError, TypeError):
    """A key is not a string or a (nested) tuple of strings."""


class BatchSizeError(TensorClassError, ValueError, RuntimeError):
    """A value's leading dimensions do not match the batch size.

    Also a ``RuntimeError`` (what tensordict raises here), and a shape mismatch says
    tensordict's words, so ported ``except RuntimeError`` and
    ``match="batch dimension mismatch"`` still catch it.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> try:
    ...     TensorDict({"obs": torch.zeros(4)}, [3])
    ... except RuntimeError as err:
    ...     print(str(err).split(":")[0])
    batch dimension mismatch
    """


class BatchSizeTypeError(BatchSizeError, TypeError):
    """A ``batch_size`` argument that is not a size at all (``batch_size="bad"``): also a
    ``TypeError``, as ``torch.Size("bad")`` is and as tensordict raises."""


class FieldTypeError(TensorClassError, TypeError):
    """A value cannot be stored in a field (a string given for a tensor field, ...)."""


class LockedError(TensorClassError, RuntimeError):
    """A locked instance was asked to add, replace or delete a key."""


class FrozenInstanceError(TensorClassError, dataclasses.FrozenInstanceError):
    """A field of a frozen tensor class was assigned."""


class OperandError(TensorClassError, RuntimeError):
    """An in-place operator cannot write a leaf (shape, dtype, device, or a leaf that
    requires grad); it is raised before any leaf is written."""


class SchemaError(TensorClassError, TypeError):
    """A tensor class definition is invalid (reserved field name, field order...)."""


class StructureMismatchError(TensorClassError, ValueError):
    """Instances combined by stack, cat, apply or arithmetic do not share classes or keys."""


class FormatError(TensorClassError, ValueError):
    """Saved data (a file, a directory, a pickle) that a loader refuses: metadata that is
    malformed, out of limits, or disagrees with the bytes present. The base of every loader's
    error (:class:`MemmapFormatError`, :class:`FileFormatError`, :class:`TableFormatError`);
    the message names the file and the entry."""


class KeyCollisionError(StructureMismatchError, KeyError):
    """Two keys would become one: ``flatten_keys`` joining two paths into the same name,
    ``unflatten_keys`` giving a path that another key already fills. Also a ``KeyError``,
    as in tensordict.

    >>> import torch
    >>> from tensorclass import TensorDict
    >>> td = TensorDict({"a.b": torch.zeros(()), "a": {"b": torch.zeros(())}})
    >>> try:
    ...     td.flatten_keys(".")
    ... except KeyError as err:
    ...     print(err)
    Flattening keys in tensordict causes keys to collide (flatten_keys): two keys become 'a.b'; choose another separator
    """

    def __str__(self) -> str:
        # KeyError quotes its argument with repr(); our messages are sentences.
        return str(self.args[0]) if self.args else ""


class MemmapFormatError(FormatError):
    """Saved data is missing, truncated, or disagrees with its metadata (``load_memmap``)."""


class MemmapNotFoundError(MemmapFormatError, FileNotFoundError):
    """The path given to a loader (``load_memmap``, ``TensorDict.load``...) does not exist;
    also a ``FileNotFoundError``, whose ``filename`` is the path."""

    def __init__(self, path: object, what: str) -> None:
        super().__init__(f"{path}: no such file or directory (expected {what})")
        self.filename = str(path)

    def __str__(self) -> str:
        # OSError formats "[Errno ...] ..." once filename is set; ours is the sentence.
        return str(self.args[0])


class SaveReplacedError(TensorClassError, OSError):
    """A save kept being replaced by another process while it was loaded (each attempt
    saw the directory replaced before it was read in full): nothing of it is returned,
    and no file was changed. Not a damaged save: loading again reads the newest save."""


class RecordedClassError(TensorClassError, LookupError):
    """A class recorded in saved data is not available: not imported, or not a tensor class."""


class NotSerializableError(TensorClassError, TypeError):
    """A non-tensor value cannot be written as JSON (memmap metadata, distributed exchange)."""


class ModeError(TensorClassError, ValueError):
    """A switch (or an option) was given a value it does not take: a switch's mode is
    ``True`` or ``False``, so a typo never switches a behaviour silently.

    >>> from tensorclass import set_lazy_legacy
    >>> try:
    ...     set_lazy_legacy("yes")
    ... except ValueError as err:
    ...     print(err)
    set_lazy_legacy('yes'): the mode must be True or False
    """


class FileFormatError(FormatError):
    """A safetensors, HDF5 or Zarr file that cannot be loaded (malformed structure
    metadata, a shape or dtype that disagrees with it, an unknown class...); the message
    names the file."""


class UnsafePathError(FileFormatError, OSError):
    """A path a loader or writer will not open: not a regular file (a FIFO, a device, a
    socket), a symbolic link inside a save, or data stored outside the file (HDF5 external
    storage, external links, virtual datasets). Also an ``OSError`` whose ``filename`` is
    the path."""

    def __init__(self, path: object, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.filename = str(path)

    def __str__(self) -> str:
        return str(self.args[0])


class TableFormatError(FormatError):
    """Data does not fit a table format (pandas, Arrow, Parquet, CSV, JSON): a leaf the
    format cannot hold, a batch that is not one row per element, or a file that cannot be
    read as that format (the message names the file)."""
