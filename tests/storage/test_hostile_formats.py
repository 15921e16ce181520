"""Hostile files for every loader: each is built here, byte by byte where needed, and each must
be refused with the library's error naming the file (a ``FormatError``), never loaded as an
invalid object, never a hang, a raw ``RecursionError`` or a third-party trace.

Memmap metadata, tensordict's saves, safetensors, HDF5, Zarr, consolidated files and
``torch.load`` (``weights_only=True``) of crafted pickles.
"""

from __future__ import annotations

import copyreg
import io
import json
import os
import pickle
import shutil
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tensorclass import (
    FileFormatError,
    FormatError,
    LazyStackedTensorDict,
    MemmapFormatError,
    NonTensorData,
    PersistentTensorDict,
    RecordedClassError,
    TensorClass,
    TensorDict,
    UnsafePathError,
    from_h5,
    from_safetensors,
    from_zarr,
    lazy_stack,
    load_memmap,
)
from tensorclass.engine import ops
from tensorclass.engine.base import TensorDictBase

from ._formats_data import plain, typed

h5py = pytest.importorskip("h5py")
zarr = pytest.importorskip("zarr")
pytest.importorskip("safetensors")


class Named(TensorClass):
    x: torch.Tensor
    name: str


def _returns_quickly(fifo: Path, call: Callable[[], object]) -> BaseException | None:
    """Run ``call`` in a thread; it must end within 20 s (a FIFO opened for reading blocks
    until a writer comes: if it does, the writer opened here releases it)."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as err:  # handed to the test
            outcome.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # release the reader
        os.close(fd)
        thread.join(5)
        pytest.fail(f"the loader blocked on the FIFO {fifo}")
    return outcome[0]


# -- memmap metadata -----------------------------------------------------------------------


def _memmap_with(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    path = tmp_path / "save"
    TensorDict(x=torch.zeros(3, 2), batch_size=[3]).memmap(path)
    meta = json.loads((path / "meta.json").read_text())
    text = edit(meta)
    (path / "meta.json").write_text(text if isinstance(text, str) else json.dumps(meta))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(batch_size=[3, 2], names=["a", "a"]), "name one dim twice"),
        (lambda m: m.update(batch_size=[0, 2**64]), "batch_size"),
        (lambda m: m.update(batch_size=[2**41]), "2\\*\\*40"),
        (lambda m: m["entries"][0].update(dtype=["float32"]), "unknown dtype"),
        (lambda m: m["entries"][0].update(dtype="Tensor"), "unknown dtype"),
        (lambda m: json.dumps(m).replace('"key": "x"', '"key": "\\ud800"'), "lone surrogate"),
        (lambda m: json.dumps(m).replace('"batch_size": [3]', '"batch_size": [' + "9" * 5000 + "]"), "not valid JSON"),
    ],
)  # fmt: skip
def test_memmap_metadata_is_checked(tmp_path: Path, edit: Any, message: str) -> None:
    path = _memmap_with(tmp_path, edit)
    with pytest.raises(MemmapFormatError, match=message) as err:
        load_memmap(path)
    assert str(path) in str(err.value)


def test_memmap_nesting_is_limited(tmp_path: Path) -> None:
    level = {
        "format": "tensorclass-memmap", "version": 1, "kind": "instance",
        "class": "tensorclass:TensorDict", "typed": False, "schema": None, "batch_size": [],
        "device": None, "names": None, "entries": [{"key": "a", "type": "nested", "dir": "a"}],
    }  # fmt: skip
    here = tmp_path / "deep"
    for _ in range(300):
        here.mkdir()
        (here / "meta.json").write_text(json.dumps(level))
        here = here / "a"
    here.mkdir()
    (here / "meta.json").write_text(json.dumps({**level, "entries": []}))
    with pytest.raises(MemmapFormatError, match="nests more than"):
        load_memmap(tmp_path / "deep")


def test_tensordict_save_cannot_name_engine_classes(tmp_path: Path) -> None:
    path = tmp_path / "td"
    (path / "_tensordict").mkdir(parents=True)
    inner = {"_type": "<class 'tensordict._td.TensorDict'>", "shape": [2], "device": None,
             "_format_version": 1, "x": {"dtype": "torch.float32", "shape": [2],
                                         "is_nested": False}}  # fmt: skip
    (path / "_tensordict" / "meta.json").write_text(json.dumps(inner))
    (path / "_tensordict" / "x.memmap").write_bytes(bytes(8))
    for internal in ("TensorDictBase", "TensorOps", "_Blank", "LazyStackedTensorDict"):
        outer = {"_type": f"<class 'tensorclass.engine.base.{internal}'>"}
        (path / "meta.json").write_text(json.dumps(outer))
        with pytest.warns(UserWarning, match="loads as TensorDict"):
            back = load_memmap(path)
        assert type(back) is TensorDict and back["x"].shape == (2,)


def test_tensordict_save_with_a_key_twice(tmp_path: Path) -> None:
    path = tmp_path / "td"
    path.mkdir()
    entry = '{"dtype": "torch.float32", "shape": [2], "is_nested": false}'
    text = (
        '{"_type": "<class \'tensordict._td.TensorDict\'>", "shape": [2], "device": null, '
        f'"x": {entry}, "x": {entry}}}'
    )
    (path / "meta.json").write_text(text)
    (path / "x.memmap").write_bytes(bytes(8))
    with pytest.raises(MemmapFormatError, match="the key 'x' twice"):
        load_memmap(path)


def test_memmap_class_cannot_be_an_engine_part(tmp_path: Path) -> None:
    path = _memmap_with(
        tmp_path, lambda m: m.update({"class": "tensorclass.engine.base:TensorDictBase"})
    )
    with pytest.raises(RecordedClassError, match="not a tensor class a save may build"):
        load_memmap(path)


# -- safetensors ----------------------------------------------------------------------------


def _rewrite_header(path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    text = edit(header)
    data = (text if isinstance(text, str) else json.dumps(header)).encode()
    data += b" " * (-len(data) % 8)
    path.write_bytes(struct.pack("<Q", len(data)) + data + raw[8 + length :])


def _layout(edit: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], None]:
    def change(header: dict[str, Any]) -> None:
        layout = json.loads(header["__metadata__"]["tensordict"])
        edit(layout["root"])
        header["__metadata__"]["tensordict"] = json.dumps(layout)

    return change


def _deep(root: dict[str, Any]) -> None:
    level = root
    for _ in range(200):
        level["keys"]["n"] = {"td": {"batch_size": [4], "names": None, "keys": {}}}
        level = level["keys"]["n"]["td"]


@pytest.mark.parametrize(
    ("make", "edit", "error", "message"),
    [
        (plain, _layout(lambda r: r.update(batch_size=[0, 2**64])), FileFormatError, "batch_size"),
        (plain, _layout(lambda r: r.update(names=["a"], batch_size=[4])), None, None),
        (plain, _layout(lambda r: r["keys"]["b"]["td"].update(batch_size=[4, 2], names=["a", "a"])), FileFormatError, "twice"),
        (typed, _layout(lambda r: r["keys"]["name"].update(non_tensor=5)), FileFormatError, "str field"),
        (plain, _layout(lambda r: r.update({"class": "<class 'tensorclass.engine.base.TensorDictBase'>"})), RecordedClassError, "not a tensor class"),
        (plain, _layout(lambda r: r["keys"].update(memmap={"non_tensor": 1}, **{"\ud800": {"non_tensor": 1}})), FileFormatError, "surrogate"),
        (typed, _layout(lambda r: r["keys"].update(memmap={"non_tensor": 1})), FileFormatError, "not a field"),
        (plain, _layout(_deep), FileFormatError, "nest"),
        (plain, lambda h: json.dumps(h)[:-1] + ', "a": {}}', FileFormatError, "twice"),
        (plain, lambda h: h["a"].update(dtype=["F64"]), FileFormatError, "unknown dtype"),
    ],
)  # fmt: skip
def test_safetensors_metadata_is_checked(
    tmp_path: Path, make: Any, edit: Any, error: type[Exception] | None, message: str | None
) -> None:
    file = tmp_path / "f"
    make().to_safetensors(file)
    _rewrite_header(file, edit)
    if error is None:  # a valid edit: the control
        assert from_safetensors(file).names == ["a"]
        return
    with pytest.raises(error, match=message) as err:
        from_safetensors(file)
    assert str(file) in str(err.value)


def test_safetensors_and_consolidated_refuse_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    err = _returns_quickly(fifo, lambda: from_safetensors(fifo))
    assert isinstance(err, UnsafePathError) and isinstance(err, OSError), err
    assert "FIFO" in str(err) and str(fifo) in str(err)
    err = _returns_quickly(fifo, lambda: TensorDict.from_consolidated(fifo))
    assert isinstance(err, UnsafePathError), err


# -- consolidated files ---------------------------------------------------------------------


def _rewrite_description(path: Path, edit: Callable[[dict[str, Any]], object]) -> None:
    raw = path.read_bytes()
    length = int.from_bytes(raw[-16:-8], "little")
    data_bytes = len(raw) - 16 - length
    description = json.loads(raw[data_bytes:-16])
    edit(description["root"])
    text = json.dumps(description).encode()
    path.write_bytes(raw[:data_bytes] + text + len(text).to_bytes(8, "little") + raw[-8:])


@pytest.mark.parametrize(
    ("make", "edit", "message"),
    [
        (plain, lambda r: r["entries"].append(dict(r["entries"][0])), "appears twice"),
        (plain, lambda r: r.update(batch_size=[4, 2**64]), "batch_size"),
        (plain, lambda r: r["entries"][1]["node"].update(batch_size=[4, 2], names=["a", "a"]), "twice"),
        (typed, lambda r: next(e for e in r["entries"] if e["key"] == "name").update(value=5), "str field"),
        (plain, lambda r: r.update({"class": "tensorclass.engine.base:TensorDictBase"}), "not a tensor class"),
        (plain, lambda r: r["entries"][0].update(dtype=["float64"]), "bad dtype"),
    ],
)  # fmt: skip
def test_consolidated_description_is_checked(
    tmp_path: Path, make: Any, edit: Any, message: str
) -> None:
    file = tmp_path / "c"
    make().consolidate(filename=file)
    _rewrite_description(file, edit)
    with pytest.raises(MemmapFormatError, match=message) as err:
        TensorDict.from_consolidated(file)
    assert str(file) in str(err.value)


# -- HDF5 ----------------------------------------------------------------------------------


def test_h5_external_storage_is_refused_for_reads_and_writes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.bin"
    victim.write_bytes(bytes(48))
    file = tmp_path / "save" / "f.h5"
    file.parent.mkdir()
    TensorDict(a=torch.zeros(3, 4), batch_size=[3]).to_h5(file).close()
    with h5py.File(file, "r+") as raw:
        del raw["a"]
        raw.create_dataset(
            "a", shape=(3, 4), dtype="f4", external=[("../outside/victim.bin", 0, 48)]
        )
    for mode in ("r", "r+", "a"):
        with pytest.raises(UnsafePathError, match="stored outside the file") as err:
            from_h5(file, mode=mode)
        assert str(file) in str(err.value) and isinstance(err.value, FileFormatError)
    assert victim.read_bytes() == bytes(48)


def test_h5_virtual_datasets_and_links_are_refused(tmp_path: Path) -> None:
    with h5py.File(tmp_path / "other.h5", "w") as other:
        other["secret"] = np.arange(4.0)
    layout = h5py.VirtualLayout(shape=(4,), dtype="f8")
    layout[:] = h5py.VirtualSource(str(tmp_path / "other.h5"), "secret", shape=(4,))
    with h5py.File(tmp_path / "v.h5", "w") as file:
        file.create_virtual_dataset("a", layout)
    with pytest.raises(UnsafePathError, match="stored outside the file"):
        from_h5(tmp_path / "v.h5", mode="r+")
    with h5py.File(tmp_path / "s.h5", "w") as file:
        file["real"] = np.arange(3.0)
        file["a"] = h5py.SoftLink("/real")
    with pytest.raises(UnsafePathError, match="SoftLink"):
        from_h5(tmp_path / "s.h5")
    with h5py.File(tmp_path / "s.h5", "r+") as group, pytest.raises(UnsafePathError):
        PersistentTensorDict(group=group, backend="h5")  # the caller's open file: checked too


def test_h5_declared_size_is_checked_before_allocation(tmp_path: Path) -> None:
    file = tmp_path / "big.h5"
    with h5py.File(file, "w") as raw:  # 80 GB declared, nothing written: a few KB on disk
        raw.create_dataset("a", shape=(10_000_000_000, 8), dtype="u1", chunks=(1024, 8))
    assert file.stat().st_size < 100_000
    ptd = from_h5(file, batch_size=[])
    with pytest.raises(FileFormatError, match="declares 80000000000 bytes") as err:
        ptd.to_tensordict()
    assert str(file) in str(err.value)
    ptd.close()


def test_h5_fifo_and_bad_layout(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.h5"
    os.mkfifo(fifo)
    err = _returns_quickly(fifo, lambda: from_h5(fifo))
    assert isinstance(err, UnsafePathError), err
    file = tmp_path / "f.h5"
    plain().to_h5(file).close()
    with h5py.File(file, "r+") as raw:
        layout = json.loads(raw.attrs["tensordict"])
        layout["root"]["batch_size"] = [4, 2**64]
        raw.attrs["tensordict"] = json.dumps(layout)
    with pytest.raises(FileFormatError, match="batch_size"):
        from_h5(file).to_tensordict()
    with h5py.File(file, "r+") as raw:
        raw.attrs["tensordict"] = "[" * 5000 + "]" * 5000
    with pytest.raises(FileFormatError, match="not valid JSON"):
        from_h5(file)


def test_h5_typed_values_are_checked(tmp_path: Path) -> None:
    file = tmp_path / "t.h5"
    typed().to_h5(file).close()
    with h5py.File(file, "r+") as raw:
        layout = json.loads(raw.attrs["tensordict"])
        layout["root"]["keys"]["name"] = {"non_tensor": 5}
        raw.attrs["tensordict"] = json.dumps(layout)
    with pytest.raises(FileFormatError, match="str field"):
        from_h5(file).to_tensordict()


# -- Zarr ----------------------------------------------------------------------------------


def test_zarr_symlinks_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    TensorDict(a=torch.arange(4.0), batch_size=[4]).to_zarr(outside).close()
    store = tmp_path / "store"
    TensorDict(a=torch.zeros(4), batch_size=[4]).to_zarr(store).close()
    shutil.rmtree(store / "a")
    (store / "a").symlink_to(outside / "a", target_is_directory=True)
    for mode in ("r", "r+"):
        with pytest.raises(UnsafePathError, match="symbolic link") as err:
            from_zarr(store, mode=mode)
        assert str(store) in str(err.value)
    (store / "a").unlink()
    shutil.copytree(outside / "a", store / "a")
    chunks = [p for p in (store / "a").rglob("*") if p.is_file() and p.name != "zarr.json"]
    assert chunks
    chunks[0].unlink()
    chunks[0].symlink_to(next(p for p in (outside / "a").rglob("*") if p.name == chunks[0].name))
    with pytest.raises(UnsafePathError, match="symbolic link"):
        from_zarr(store, mode="r+")
    chunks[0].unlink()
    os.mkfifo(chunks[0])
    err = _returns_quickly(chunks[0], lambda: from_zarr(store))
    assert isinstance(err, UnsafePathError), err


def test_zarr_declared_size_is_checked_before_allocation(tmp_path: Path) -> None:
    store = tmp_path / "big"
    group = zarr.open_group(store, mode="w")
    group.create_array("a", shape=(10_000_000_000, 8), dtype="u1", chunks=(1024, 8))
    ptd = from_zarr(store, batch_size=[])
    with pytest.raises(FileFormatError, match="declares 80000000000 bytes"):
        ptd.to_tensordict()


# -- torch.load -----------------------------------------------------------------------------


class _Crafted:
    """Pickles as a call of ``function`` with ``args``, as a crafted file would."""

    def __init__(self, function: object, *args: object) -> None:
        self.function, self.args = function, args

    def __reduce__(self) -> tuple[object, ...]:
        return (self.function, self.args)


def _load(obj: object) -> object:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)  # weights_only=True, torch's default


def _rebuilt(cls: object, data: object, batch: object = None, names: object = None) -> object:
    size = torch.Size([3]) if batch is None else batch
    return _load(_Crafted(ops._rebuild, cls, data, size, None, names, False))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: _rebuilt(TensorDict, {"a": torch.zeros(5)}), "shape \\[5\\] under the batch size \\[3\\]"),
        (lambda: _rebuilt(Named, {"x": torch.zeros(3), "name": 5}), "leaf of type int"),
        (lambda: _rebuilt(Named, {"x": torch.zeros(3), "memmap": torch.zeros(3)}), "not a field"),
        (lambda: _rebuilt(TensorDict, {}, torch.Size([2, 2**50])), "2\\*\\*40"),
        (lambda: _rebuilt(TensorDict, {}, torch.Size([2, 2]), ("a", "a")), "twice"),
        (lambda: _rebuilt(TensorDict, {"\ud800": torch.zeros(3)}), "surrogate"),
    ],
)  # fmt: skip
def test_torch_load_checks_what_it_rebuilds(make: Any, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        make()


def test_torch_load_builds_no_engine_class() -> None:
    with pytest.raises(pickle.UnpicklingError, match="TensorDictBase"):
        _rebuilt(TensorDictBase, {})  # not even on torch's allow-list
    with pytest.raises(FormatError, match="not a tensor class a file may build"):
        ops._rebuild(TensorDictBase, {}, torch.Size([]), None, None, False)
    stack = lazy_stack([TensorDict(a=torch.zeros(2)), TensorDict(a=torch.ones(2))], 0)
    back = _load(stack.lock_())  # a lazy stack's pickle names no class
    assert isinstance(back, LazyStackedTensorDict) and back.is_locked


def test_torch_load_checks_typed_values() -> None:
    with pytest.raises(FormatError, match="str field"):
        _rebuilt(Named, {"x": torch.zeros(3), "name": NonTensorData(5)})
    back = _load(Named(x=torch.zeros(3), name="ok", batch_size=[3]))  # the control
    assert isinstance(back, Named) and back.name == "ok"


def test_torch_load_refuses_attributes_set_directly() -> None:
    class Fake:
        __class__ = property(lambda self: TensorDict)  # pickle checks NEWOBJ's class so

        def __reduce_ex__(self, protocol: object) -> tuple[object, ...]:
            return (copyreg.__newobj__, (TensorDict,), (None, {"_batch_size": "x"}))

    with pytest.raises(FormatError, match="rebuilt by their reduce function only"):
        _load(Fake())


def test_torch_load_checks_non_tensor_state() -> None:
    class Fake:
        __class__ = property(lambda self: NonTensorData)  # pickle checks NEWOBJ's class so

        def __reduce_ex__(self, protocol: object) -> tuple[object, ...]:
            state = {"data": 1, "device": None, "meta": False, "names": None, "shape": "x"}
            return (copyreg.__newobj__, (NonTensorData,), (None, state))

    with pytest.raises(ValueError, match="cannot unpickle NonTensorData"):
        _load(Fake())
    data = TensorDict(a=torch.zeros(2), batch_size=[2])
    data["n"] = "kept"
    assert _load(data)["n"] == "kept"  # the control


def test_h5_without_layout_nesting_is_limited(tmp_path: Path) -> None:
    file = tmp_path / "deep.h5"
    with h5py.File(file, "w") as raw:
        raw.create_group("/".join(["g"] * 400))
    with pytest.raises(FileFormatError, match="nest more than"):
        from_h5(file)


def test_safetensors_without_layout_nesting_is_limited(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    save_file({".".join(["n"] * 2000): torch.zeros(1)}, str(tmp_path / "f"))
    with pytest.raises(FileFormatError, match="nests more than"):
        from_safetensors(tmp_path / "f")
