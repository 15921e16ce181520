"""Archives (``pack_memmap`` and friends) and ``append_memmap``."""

import os
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    TensorClass,
    TensorDict,
    append_memmap,
    is_memmap_archive,
    lazy_stack,
    load_memmap,
    pack_memmap,
    refresh_archive_checksums,
    unpack_memmap,
)


class Inner(TensorClass):
    step: torch.Tensor


class Episode(TensorClass):
    obs: torch.Tensor
    inner: Inner
    note: str = ""


def plain(n: int, value: float = 0.0) -> TensorDict:
    return TensorDict(
        {
            "a": torch.arange(n * 3, dtype=torch.float32).reshape(n, 3) + value,
            "n": {"b": torch.full((n, 2), int(value), dtype=torch.int16)},
        },
        [n],
    )


def typed(n: int, value: float = 0.0) -> Episode:
    return Episode(
        obs=torch.full((n, 2), value),
        inner=Inner(torch.arange(n) + int(value), batch_size=[n]),
        note="run",
        batch_size=[n],
    )


def stacked(n: int, value: float = 0.0) -> Any:
    return lazy_stack([plain(n, value), plain(n, value + 1)])


MAKERS = {"tensordict": plain, "typed": typed, "lazy_stack": stacked}


def same(first: Any, second: Any) -> bool:
    a = dict(first.items(include_nested=True, leaves_only=True))
    b = dict(second.items(include_nested=True, leaves_only=True))
    if a.keys() != b.keys():
        return False
    return all(
        torch.equal(a[k], b[k]) if isinstance(a[k], torch.Tensor) else a[k] == b[k] for k in a
    )


def _data_offsets(archive: Path) -> dict[str, int]:
    out = {}
    with zipfile.ZipFile(archive) as zf, open(archive, "rb") as raw:
        for info in zf.infolist():
            raw.seek(info.header_offset)
            header = raw.read(30)
            name_length, extra_length = struct.unpack("<HH", header[26:30])
            out[info.filename] = info.header_offset + 30 + name_length + extra_length
    return out


@pytest.mark.parametrize("kind", list(MAKERS))
def test_pack_unpack_round_trip(tmp_path: Path, kind: str) -> None:
    data = MAKERS[kind](4, 1.0)
    data.memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    assert archive == tmp_path / "saved.tdz" and is_memmap_archive(archive)
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() is None
        saved_files = sorted(
            str(p.relative_to(tmp_path / "saved"))
            for p in (tmp_path / "saved").rglob("*")
            if p.is_file()
        )
        assert sorted(zf.namelist()) == saved_files
    back = unpack_memmap(archive, tmp_path / "back")
    assert back == tmp_path / "back"
    loaded = load_memmap(back)
    assert type(loaded) is type(load_memmap(tmp_path / "saved"))
    assert same(loaded, data)


def test_stored_payloads_are_aligned_and_raw(tmp_path: Path) -> None:
    data = plain(5, 2.0)
    data.memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    offsets = _data_offsets(archive)
    raw = archive.read_bytes()
    for name in ("a.memmap", "n/b.memmap"):
        assert offsets[name] % 64 == 0
        size = (tmp_path / "saved" / name).stat().st_size
        assert raw[offsets[name] : offsets[name] + size] == (tmp_path / "saved" / name).read_bytes()
    # the bytes mapped in place are the tensor
    start = offsets["a.memmap"]
    mapped = torch.frombuffer(bytearray(raw[start : start + 60]), dtype=torch.float32)
    assert torch.equal(mapped.reshape(5, 3), data["a"])


@pytest.mark.parametrize("compression", ["deflate", "bzip2", "lzma", zipfile.ZIP_DEFLATED])
def test_compressed_archives(tmp_path: Path, compression: Any) -> None:
    data = plain(64)
    data.memmap(tmp_path / "saved")
    archive = pack_memmap(
        tmp_path / "saved", tmp_path / "c.tdz", compression=compression, compresslevel=None
    )
    with zipfile.ZipFile(archive) as zf:
        methods = {info.filename: info.compress_type for info in zf.infolist()}
    assert methods["a.memmap"] != zipfile.ZIP_STORED
    assert same(load_memmap(unpack_memmap(archive, tmp_path / "c")), data)


@pytest.mark.parametrize("compression", ["deflate", "bzip2"])
def test_compresslevel_is_honoured(tmp_path: Path, compression: str) -> None:
    # compressible but not trivial data: the levels give different sizes on every Python
    generator = torch.Generator().manual_seed(0)
    data = TensorDict(a=torch.randint(0, 4, (200_000,), generator=generator))
    data.memmap(tmp_path / "saved")
    sizes = {}
    for level in (1, 9):
        archive = pack_memmap(
            tmp_path / "saved",
            tmp_path / f"l{level}.tdz",
            compression=compression,
            compresslevel=level,
        )
        with zipfile.ZipFile(archive) as zf:
            sizes[level] = zf.getinfo("a.memmap").compress_size
        assert torch.equal(
            load_memmap(unpack_memmap(archive, tmp_path / f"l{level}"))["a"], data["a"]
        )
    assert sizes[9] < sizes[1]


def test_pack_refuses_bad_input(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"meta\.json"):
        pack_memmap(tmp_path / "empty", tmp_path / "x.tdz")
    plain(2).memmap(tmp_path / "saved")
    with pytest.raises(ValueError, match="inside"):
        pack_memmap(tmp_path / "saved", tmp_path / "saved" / "x.tdz")
    with pytest.raises(ValueError, match="compression"):
        pack_memmap(tmp_path / "saved", tmp_path / "x.tdz", compression="zstd-ish")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, tmp_path / "saved" / "link.memmap")
    with pytest.raises(ValueError, match="symbolic link"):
        pack_memmap(tmp_path / "saved", tmp_path / "x.tdz")
    assert not (tmp_path / "x.tdz").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_pack_replaces_an_existing_archive(tmp_path: Path) -> None:
    plain(2).memmap(tmp_path / "one")
    plain(3, 5.0).memmap(tmp_path / "two")
    pack_memmap(tmp_path / "one", tmp_path / "x.tdz")
    pack_memmap(tmp_path / "two", tmp_path / "x.tdz")
    assert same(load_memmap(unpack_memmap(tmp_path / "x.tdz", tmp_path / "u")), plain(3, 5.0))


def test_is_memmap_archive(tmp_path: Path) -> None:
    plain(2).memmap(tmp_path / "saved")
    assert not is_memmap_archive(tmp_path / "saved")
    assert not is_memmap_archive(tmp_path / "missing.tdz")
    (tmp_path / "junk.tdz").write_bytes(b"not a zip")
    assert not is_memmap_archive(tmp_path / "junk.tdz")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.txt", "hi")
    assert not is_memmap_archive(tmp_path / "other.zip")
    with pytest.raises(ValueError, match="not an archive"):
        unpack_memmap(tmp_path / "other.zip", tmp_path / "u")
    with pytest.raises(ValueError, match="not an archive"):
        refresh_archive_checksums(tmp_path / "junk.tdz")


@pytest.mark.parametrize("name", ["../escape.memmap", "/abs.memmap", "a/../../x.memmap", "a\\b"])
def test_unpack_refuses_entries_outside_the_directory(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "evil.tdz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("meta.json", "{}")
        zf.writestr(name, b"x")
    with pytest.raises(ValueError, match="outside"):
        unpack_memmap(archive, tmp_path / "out" / "inner")
    assert not (tmp_path / "out" / "inner").exists()
    assert not (tmp_path / "escape.memmap").exists()


def test_unpack_never_writes_through_links(tmp_path: Path) -> None:
    plain(2).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"keep")
    target = tmp_path / "out"
    target.mkdir()
    os.symlink(victim, target / "a.memmap")  # a file link is replaced, not followed
    unpack_memmap(archive, target)
    assert victim.read_bytes() == b"keep"
    assert not (target / "a.memmap").is_symlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = tmp_path / "out2"
    other.mkdir()
    os.symlink(elsewhere, other / "n")  # a directory link is refused
    with pytest.raises(ValueError, match="symbolic link"):
        unpack_memmap(archive, other)
    assert list(elsewhere.iterdir()) == []


def test_unpack_overwrites_existing_files(tmp_path: Path) -> None:
    plain(2, 3.0).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    plain(2).memmap(tmp_path / "out")
    unpack_memmap(archive, tmp_path / "out")
    assert same(load_memmap(tmp_path / "out"), plain(2, 3.0))


def test_refresh_archive_checksums_after_in_place_writes(tmp_path: Path) -> None:
    plain(3).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    offset = _data_offsets(archive)["n/b.memmap"]
    with open(archive, "r+b") as raw:  # what a mapped leaf's write does
        raw.seek(offset)
        raw.write(torch.tensor([7, 7], dtype=torch.int16).numpy().tobytes())
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() == "n/b.memmap"
    with pytest.raises(zipfile.BadZipFile):
        unpack_memmap(archive, tmp_path / "bad")
    assert refresh_archive_checksums(archive) == archive
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() is None
    back = load_memmap(unpack_memmap(archive, tmp_path / "good"))
    assert back["n", "b"][0].tolist() == [7, 7]


def test_tensordict_reads_our_archive_as_a_zip(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    plain(2).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    assert tensordict.is_memmap_archive(archive)


# -- append_memmap ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tensordict", "typed"])
def test_append_rows(tmp_path: Path, kind: str) -> None:
    make = MAKERS[kind]
    first, rows = make(3, 1.0), make(2, 5.0)
    first.memmap(tmp_path / "saved")
    before = load_memmap(tmp_path / "saved")
    append_memmap(tmp_path / "saved", rows)
    after = load_memmap(tmp_path / "saved")
    assert after.batch_size == torch.Size([5])
    assert same(after, torch.cat([first, rows]))
    assert before.batch_size == torch.Size([3])  # an earlier reader keeps its rows
    assert not list((tmp_path / "saved").rglob(".meta.json.append.tmp"))


def test_append_twice_and_the_archive_of_the_result(tmp_path: Path) -> None:
    plain(1).memmap(tmp_path / "saved")
    append_memmap(tmp_path / "saved", plain(2, 1.0))
    append_memmap(str(tmp_path / "saved"), plain(1, 2.0))
    expected = torch.cat([plain(1), plain(2, 1.0), plain(1, 2.0)])
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    assert same(load_memmap(unpack_memmap(archive, tmp_path / "u")), expected)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        (TensorDict({"a": torch.zeros(2, 3)}, [2]), "keys"),
        (
            TensorDict(
                {"a": torch.zeros(2, 4), "n": {"b": torch.zeros(2, 2, dtype=torch.int16)}}, [2]
            ),
            "'a'",
        ),
        (
            TensorDict(
                {
                    "a": torch.zeros(2, 3, dtype=torch.float64),
                    "n": {"b": torch.zeros(2, 2, dtype=torch.int16)},
                },
                [2],
            ),
            "float64",
        ),
        (TensorDict({"a": torch.zeros(2, 3), "n": {"b": torch.zeros(2, 2)}}, [2]), r"\('n', 'b'\)"),
        (
            TensorDict(
                {"a": torch.zeros(2, 3), "n": {"b": torch.zeros(2, 2, dtype=torch.int16)}},
                [2, 3][:0],
            ),
            "batch size",
        ),
        (typed(2), "class|saved as"),
    ],
)
def test_append_refuses_rows_that_do_not_fit(tmp_path: Path, rows: Any, match: str) -> None:
    plain(3).memmap(tmp_path / "saved")
    files = _files(tmp_path / "saved")
    with pytest.raises(ValueError, match=match):
        append_memmap(tmp_path / "saved", rows)
    assert _files(tmp_path / "saved") == files  # nothing was written


def test_append_non_tensor_values_must_match(tmp_path: Path) -> None:
    typed(2).memmap(tmp_path / "saved")
    other = typed(1)
    other.note = "other"
    with pytest.raises(ValueError, match="note"):
        append_memmap(tmp_path / "saved", other)
    append_memmap(tmp_path / "saved", typed(1))
    assert load_memmap(tmp_path / "saved").note == "run"


def test_append_refuses_lazy_stacks_and_other_input(tmp_path: Path) -> None:
    stacked(2).memmap(tmp_path / "stack")
    with pytest.raises(ValueError, match="lazy stack"):
        append_memmap(tmp_path / "stack", stacked(2))
    with pytest.raises(ValueError, match="not a directory"):
        append_memmap(tmp_path / "missing", plain(1))
    plain(2).memmap(tmp_path / "saved")
    with pytest.raises(ValueError, match="allow_pickle"):
        append_memmap(tmp_path / "saved", plain(1), allow_pickle=True)
    TensorDict(a=torch.zeros(3)).memmap(tmp_path / "scalar")
    with pytest.raises(ValueError, match="batch"):
        append_memmap(tmp_path / "scalar", TensorDict(a=torch.zeros(3)))


def test_append_failure_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain(3).memmap(tmp_path / "saved")
    files = _files(tmp_path / "saved")
    original = Path.write_text

    def failing(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name == ".meta.json.append.tmp" and self.parent.name == "n":
            raise OSError("disk full")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(OSError, match="disk full"):
        append_memmap(tmp_path / "saved", plain(2, 1.0))
    monkeypatch.undo()
    assert _files(tmp_path / "saved") == files
    assert same(load_memmap(tmp_path / "saved"), plain(3))


# -- loading archives and saving to them -------------------------------------------------


@pytest.mark.parametrize("kind", list(MAKERS))
def test_load_memmap_reads_an_archive_in_place(tmp_path: Path, kind: str) -> None:
    data = MAKERS[kind](3, 2.0)
    data.memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    loaded = load_memmap(archive)
    assert type(loaded) is type(load_memmap(tmp_path / "saved")) and loaded.is_locked
    assert same(loaded, data)
    assert type(TensorDict.load_memmap(archive)) is type(loaded)


def test_archive_leaves_are_views_of_the_archive(tmp_path: Path) -> None:
    plain(3).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    scratch = load_memmap(archive, mode="r")
    scratch["a"].add_(100)  # copy-on-write: the archive does not change
    assert same(load_memmap(archive), plain(3))
    shared = load_memmap(archive, mode="r+")
    shared["n", "b"].fill_(9)
    offset = _data_offsets(archive)["n/b.memmap"]
    raw = archive.read_bytes()[offset : offset + 12]
    assert torch.frombuffer(bytearray(raw), dtype=torch.int16).tolist() == [9] * 6
    assert (load_memmap(archive)["n", "b"] == 9).all()


def test_archive_subpath_and_compressed_archive(tmp_path: Path) -> None:
    typed(3, 1.0).memmap(tmp_path / "saved")
    archive = pack_memmap(tmp_path / "saved", tmp_path / "saved.tdz")
    inner = load_memmap(archive, subpath="inner")
    assert type(inner) is Inner and inner.step.tolist() == [1, 2, 3]
    assert type(load_memmap(archive / "inner")) is Inner
    packed = pack_memmap(tmp_path / "saved", tmp_path / "small.tdz", compression="lzma")
    assert same(load_memmap(packed), typed(3, 1.0))


def test_damaged_archive_metadata_is_a_clear_error(tmp_path: Path) -> None:
    from tensorclass import MemmapFormatError

    archive = tmp_path / "bad.tdz"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("meta.json", "not json")
    with pytest.raises(MemmapFormatError, match="JSON"):
        load_memmap(archive)


@pytest.mark.parametrize("kind", list(MAKERS))
def test_memmap_to_an_archive(tmp_path: Path, kind: str) -> None:
    data = MAKERS[kind](2, 4.0)
    saved = data.memmap(tmp_path / "x.tdz")
    assert is_memmap_archive(tmp_path / "x.tdz") and saved.is_locked
    assert same(saved, data)
    assert [p.name for p in tmp_path.iterdir()] == ["x.tdz"]  # the scratch directory is gone
    with pytest.raises(FileExistsError):
        data.memmap(tmp_path / "x.tdz", existsok=False)
    again = data.memmap(tmp_path / "x.tdz", existsok=True, compression="bzip2")
    assert same(again, data)
