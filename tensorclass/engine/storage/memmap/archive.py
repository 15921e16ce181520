"""Archives: a memory-mapped save packed into one zip file, with CRC-32 checksums.

An archive holds the files of a save directory (:mod:`.metadata`), each under its path
relative to the directory (``"meta.json"``, ``"info/step.memmap"``). Raw tensor files are
stored uncompressed by default, each starting at a multiple of 64 bytes in the archive
(padding goes in the entry's extra field), so that ``load_memmap`` maps the archive once
and makes each such leaf a view into it (:func:`reading_archive`); compressed leaves are
decompressed into memory. ``memmap("x.tdz")`` saves an archive directly
(:func:`save_archive`). Any zip tool (``unzip``, :mod:`zipfile`) reads the archive.

Safety: packing reads only regular files inside the directory (a symbolic link or a special
file in it is refused); unpacking writes only inside the target directory (entry names
that are absolute, hold ``..`` or a backslash, or are links are refused before anything is
written, and no existing symbolic link is followed). Nothing is unpickled: the archive
holds JSON and raw bytes.

>>> import tempfile, os, torch
>>> from tensorclass import TensorDict, pack_memmap, unpack_memmap, is_memmap_archive
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = TensorDict(a=torch.arange(3)).memmap(os.path.join(tmp, "saved"))
...     archive = pack_memmap(os.path.join(tmp, "saved"), os.path.join(tmp, "saved.tdz"))
...     back = unpack_memmap(archive, os.path.join(tmp, "again"))
...     is_memmap_archive(archive), TensorDict.load_memmap(back)["a"].tolist()
(True, [0, 1, 2])
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat
import struct
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import torch

from ....errors import MemmapFormatError
from ...core.state import TensorCore
from .load import OPENER, load_tree, read_checked
from .metadata import META_NAME, SOURCE
from .save import memmap
from .tensor import MemoryMappedTensor, PathLike, contiguous_strides

__all__ = [
    "is_memmap_archive",
    "pack_memmap",
    "reading_archive",
    "refresh_archive_checksums",
    "save_archive",
    "unpack_memmap",
]

ALIGN = 64
_PAD_ID = 0xA11E  # the extra-field id of the alignment padding
_LOCAL_HEADER = 30  # bytes of a local file header before its name
_ZIP64_EXTRA = 20  # what zipfile adds to a local header for a large entry
_COMPRESSIONS = {
    "stored": zipfile.ZIP_STORED,
    "deflate": zipfile.ZIP_DEFLATED,
    "bzip2": zipfile.ZIP_BZIP2,
    "lzma": zipfile.ZIP_LZMA,
}
_CHUNK = 1 << 22
# The compression level a ZipInfo gives its entry's compressor: a public attribute from
# Python 3.13, a private one before (which ZipFile.writestr sets); the class has slots, so
# the wrong name raises instead of being ignored.
_LEVEL_ATTRIBUTE = "compress_level" if sys.version_info >= (3, 13) else "_compresslevel"


def is_memmap_archive(path: PathLike) -> bool:
    """Whether ``path`` is an archive of a save: a zip file with a top-level ``meta.json``.

    A directory, a missing path or any other file gives ``False``.

    >>> import tempfile
    >>> from tensorclass import is_memmap_archive
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     is_memmap_archive(tmp)
    False
    """
    name = os.fspath(path)
    if not os.path.isfile(name):
        return False
    try:
        with zipfile.ZipFile(name) as archive:
            return META_NAME in archive.NameToInfo
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def _compression(compression: str | int | None) -> int:
    if compression is None:
        return zipfile.ZIP_STORED
    if isinstance(compression, str) and compression in _COMPRESSIONS:
        return _COMPRESSIONS[compression]
    if isinstance(compression, int) and compression in _COMPRESSIONS.values():
        return compression
    raise ValueError(
        f"pack_memmap: compression must be one of {sorted(_COMPRESSIONS)} or a zipfile "
        f"constant; got {compression!r}"
    )


def _files(root: str) -> list[tuple[str, str]]:
    """``(path, name in the archive)`` of every file of the save, in a stable order."""
    out: list[tuple[str, str]] = []
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(subdirs + files):
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            if stat.S_ISLNK(mode):
                raise ValueError(
                    f"pack_memmap: {path} is a symbolic link; an archive holds only the files "
                    f"inside the save (copy the data in, or save again)"
                )
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise ValueError(f"pack_memmap: {path} is not a regular file")
            out.append((path, relative))
    return out


def pack_memmap(
    prefix: PathLike,
    archive_path: PathLike,
    *,
    compression: str | int | None = None,
    compresslevel: int | None = None,
) -> Path:
    """Pack the save in directory ``prefix`` into the one zip file ``archive_path``.

    Raw tensor files are stored uncompressed and aligned to 64 bytes unless
    ``compression`` (``"stored"``, ``"deflate"``, ``"bzip2"``, ``"lzma"`` or a
    :mod:`zipfile` constant, with ``compresslevel``) asks otherwise. The archive is written
    aside and renamed into place, replacing an existing file (through a symbolic link, its
    target). ``load_memmap(archive_path)`` reads it in place, :func:`unpack_memmap` gives
    the directory back. Returns the archive's path.

    Raises ``ValueError`` when ``prefix`` holds no ``meta.json``, when ``archive_path`` is
    inside ``prefix``, or when the directory holds a symbolic link or a special file.

    >>> import tempfile, os, zipfile, torch
    >>> from tensorclass import TensorDict, pack_memmap
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = TensorDict(a=torch.zeros(3), b={"c": torch.ones(2)}).memmap(f"{tmp}/td")
    ...     archive = pack_memmap(f"{tmp}/td", f"{tmp}/td.tdz")
    ...     sorted(zipfile.ZipFile(archive).namelist())
    ['a.memmap', 'b/c.memmap', 'b/meta.json', 'meta.json']
    """
    method = _compression(compression)
    root = os.path.abspath(os.fspath(prefix))
    if not os.path.isfile(os.path.join(root, META_NAME)):
        raise ValueError(f"pack_memmap: {root} holds no {META_NAME}: it is not a save")
    target = os.path.realpath(os.path.abspath(os.fspath(archive_path)))
    real_root = os.path.realpath(root)
    if os.path.commonpath([target, real_root]) == real_root:
        raise ValueError(
            f"pack_memmap: the archive {target} would be inside the save {root}; write it elsewhere"
        )
    files = _files(root)
    directory = os.path.dirname(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.tmp-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w") as archive:
            for path, name in files:
                _add(archive, raw, path, name, method, compresslevel)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return Path(target)


def _add(
    archive: zipfile.ZipFile,
    raw: IO[bytes],
    path: str,
    name: str,
    method: int,
    level: int | None,
) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    size = os.path.getsize(path)
    info.file_size = size
    payload = not name.endswith(".json")
    info.compress_type = method if payload else zipfile.ZIP_STORED
    if level is not None and payload:
        setattr(info, _LEVEL_ATTRIBUTE, level)
    if info.compress_type == zipfile.ZIP_STORED:  # pad the header: the data starts aligned
        start = archive.fp.tell()  # type: ignore[union-attr]
        zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
        header = _LOCAL_HEADER + len(name.encode()) + 4 + (_ZIP64_EXTRA if zip64 else 0)
        pad = -(start + header) % ALIGN
        info.extra = struct.pack("<HH", _PAD_ID, pad) + bytes(pad)
    with open(path, "rb") as source, archive.open(info, "w") as out:
        while chunk := source.read(_CHUNK):
            out.write(chunk)


def _entry_target(root: str, name: str, info: zipfile.ZipInfo) -> str:
    parts = name.split("/")
    if (
        name.startswith("/")
        or "\\" in name
        or ".." in parts
        or parts[0].endswith(":")  # a drive
        or stat.S_ISLNK(info.external_attr >> 16)
    ):
        raise ValueError(
            f"unpack_memmap: the archive entry {name!r} would be written outside the "
            f"directory (or is a link); nothing was extracted"
        )
    return os.path.join(root, *[p for p in parts if p])


def _no_links_between(root: str, target: str) -> None:
    """Raise if a directory between ``root`` and ``target`` is a symbolic link."""
    relative = os.path.relpath(os.path.dirname(target), root)
    current = root
    for part in [] if relative == "." else relative.split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.exists(current) and not os.path.isdir(current)):
            raise ValueError(
                f"unpack_memmap: {current} is a symbolic link or a file; extracting through "
                f"it could write outside {root}"
            )


def unpack_memmap(archive_path: PathLike, prefix: PathLike) -> Path:
    """Extract the archive ``archive_path`` into directory ``prefix`` (created if needed;
    files already there are overwritten) and return the directory's path.

    Every entry's checksum is checked as it is read (a damaged archive raises
    ``zipfile.BadZipFile``). Entries that would land outside ``prefix`` are refused
    before anything is written. Raises ``ValueError`` if ``archive_path`` is not an
    archive (:func:`is_memmap_archive`).
    """
    source = os.fspath(archive_path)
    if not is_memmap_archive(source):
        raise ValueError(f"unpack_memmap: {source} is not an archive of a save")
    root = os.path.abspath(os.fspath(prefix))
    if os.path.islink(root):
        raise ValueError(f"unpack_memmap: {root} is a symbolic link; pass the directory itself")
    with zipfile.ZipFile(source) as archive:
        entries = [
            (info, _entry_target(root, info.filename, info))
            for info in archive.infolist()
            if not info.is_dir()
        ]
        os.makedirs(root, exist_ok=True)
        for info, target in entries:
            _no_links_between(root, target)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.islink(target):
                os.unlink(target)  # replace the link, never write through it
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
            with archive.open(info) as data, os.fdopen(os.open(target, flags, 0o644), "wb") as out:
                while chunk := data.read(_CHUNK):
                    out.write(chunk)
    return Path(root)


def _data_offset(raw: IO[bytes], info: zipfile.ZipInfo) -> int:
    raw.seek(info.header_offset)
    header = raw.read(_LOCAL_HEADER)
    if header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return int(info.header_offset) + _LOCAL_HEADER + int(name_length) + int(extra_length)


def _crc(raw: IO[bytes], start: int, size: int) -> int:
    raw.seek(start)
    crc = 0
    while size > 0:
        chunk = raw.read(min(size, _CHUNK))
        if not chunk:
            raise zipfile.BadZipFile("the archive is truncated")
        crc = zlib.crc32(chunk, crc)
        size -= len(chunk)
    return crc


def refresh_archive_checksums(archive_path: PathLike) -> Path:
    """Recompute the CRC-32 checksum of every uncompressed entry of an archive whose data
    was written in place, so that zip tools (and :func:`unpack_memmap`) accept it again.

    The archive is changed in place (its local and central headers); nothing else is
    read or written. Raises ``ValueError`` if ``archive_path`` is not an archive.
    """
    path = os.fspath(archive_path)
    if not is_memmap_archive(path):
        raise ValueError(f"refresh_archive_checksums: {path} is not an archive of a save")
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        central: int = archive.start_dir
    with open(path, "r+b") as raw:
        crcs = []
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED:
                crcs.append(info.CRC)  # compressed data cannot be written in place
                continue
            crcs.append(_crc(raw, _data_offset(raw, info), info.file_size))
        position = central
        for info, crc in zip(infos, crcs):
            raw.seek(position)
            record = raw.read(46)
            if record[:4] != b"PK\x01\x02":
                raise zipfile.BadZipFile(f"{path}: bad central directory record")
            name_length, extra_length, comment_length = struct.unpack("<HHH", record[28:34])
            if crc != info.CRC:
                raw.seek(position + 16)
                raw.write(struct.pack("<I", crc))
                if info.flag_bits & 0x08:  # the checksum is in a data descriptor
                    end = _data_offset(raw, info) + info.compress_size
                    raw.seek(end)
                    signed = raw.read(4) == b"PK\x07\x08"
                    raw.seek(end + (4 if signed else 0))
                else:
                    raw.seek(info.header_offset + 14)
                raw.write(struct.pack("<I", crc))
            position += 46 + name_length + extra_length + comment_length
    return Path(path)


class _ArchiveSource:
    """Reads a save from an archive: metadata through :mod:`zipfile` (checksums checked),
    stored tensor files as views of one mapping of the archive (copy-on-write unless the
    mode says shared), compressed ones decompressed into memory."""

    def __init__(self, path: str, archive: zipfile.ZipFile) -> None:
        self.path = path
        self.root = Path(path)
        self.archive = archive
        self.offsets: dict[str, int] = {}
        self.storages: dict[bool, torch.UntypedStorage] = {}
        with open(path, "rb") as raw:
            for info in archive.infolist():
                if info.compress_type == zipfile.ZIP_STORED and not info.is_dir():
                    self.offsets[info.filename] = _data_offset(raw, info)

    def _name(self, path: Path) -> str:
        relative = path.relative_to(self.root).as_posix()
        return "" if relative == "." else relative

    def read_meta(self, path: Path) -> bytes:
        level = self._name(path)
        name = f"{level}/{META_NAME}" if level else META_NAME
        if name not in self.archive.NameToInfo:
            raise MemmapFormatError(f"{self.path}: the archive holds no {name}")
        return self.archive.read(name)

    def size(self, file: Path) -> int | None:
        info = self.archive.NameToInfo.get(self._name(file))
        return None if info is None else int(info.file_size)

    def open(
        self, filename: str, dtype: torch.dtype, shape: tuple[int, ...], mode: str | None
    ) -> MemoryMappedTensor:
        name = self._name(Path(filename))
        offset = self.offsets.get(name)
        if offset is None or offset % dtype.itemsize:  # compressed (or unaligned): read it
            data = bytearray(self.archive.read(name))
            flat = torch.frombuffer(data, dtype=torch.uint8) if data else torch.empty(0)
            plain = flat.view(dtype).reshape(shape) if data else torch.empty(shape, dtype=dtype)
            return MemoryMappedTensor._wrap(plain, self.path)
        shared = mode == "r+" or (mode is None and os.access(self.path, os.W_OK))
        if shared not in self.storages:
            nbytes = os.path.getsize(self.path)
            self.storages[shared] = torch.UntypedStorage.from_file(  # type: ignore[assignment]
                self.path, shared=shared, nbytes=nbytes
            )
        storage = self.storages[shared]
        if math.prod(shape) == 0:
            return MemoryMappedTensor._wrap(torch.empty(shape, dtype=dtype), self.path)
        plain = torch.empty((0,), dtype=dtype).set_(
            storage, offset // dtype.itemsize, shape, contiguous_strides(shape)
        )
        return MemoryMappedTensor._wrap(plain, self.path)


@contextlib.contextmanager
def reading_archive(prefix: PathLike) -> Iterator[Path]:
    """While open, loading reads the save from ``prefix`` if it is an archive (a path
    inside it, ``"x.tdz/info"``, reads that level); otherwise nothing changes. Yields the
    path to load."""
    path = os.path.abspath(os.fspath(prefix))
    archive_path = path
    while not os.path.exists(archive_path) and os.path.dirname(archive_path) != archive_path:
        archive_path = os.path.dirname(archive_path)  # "x.tdz/info": a level inside
    if not is_memmap_archive(archive_path):
        yield Path(path)
        return
    with zipfile.ZipFile(archive_path) as archive:
        source = _ArchiveSource(archive_path, archive)
        source_token = SOURCE.set(source)
        opener_token = OPENER.set(source.open)
        try:
            yield Path(path)
        finally:
            OPENER.reset(opener_token)
            SOURCE.reset(source_token)


def save_archive(
    node: TensorCore,
    archive_path: PathLike,
    *,
    existsok: bool,
    num_threads: int,
    like: bool,
    compression: str | int | None,
) -> TensorCore:
    """``memmap(path.tdz)`` / ``memmap(..., archive=True)``: save ``node`` as an archive
    (a directory written aside, packed, then removed) and return it loaded from the
    archive (stored leaves map it in place: with ``like=True``, writes reach it)."""
    _compression(compression)  # a bad value raises before anything is written
    target = os.path.abspath(os.fspath(archive_path))
    if os.path.isdir(target):
        raise FileExistsError(f"memmap: {target} is a directory; an archive is one file")
    if os.path.exists(target) and not existsok:
        raise FileExistsError(f"memmap: {target} exists; pass existsok=True to replace it")
    scratch = tempfile.mkdtemp(
        prefix=f".{os.path.basename(target)}.dir-", dir=os.path.dirname(target)
    )
    try:
        saved = os.path.join(scratch, "save")
        memmap(node, saved, num_threads=num_threads, like=like)
        pack_memmap(saved, target, compression=compression)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    with reading_archive(target):
        return load_tree(read_checked(target, "imported"), None, "imported")
