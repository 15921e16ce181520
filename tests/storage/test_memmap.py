"""memmap / memmap_ / memmap_like / load_memmap for TensorDict and typed classes."""

import enum
import json
import os
from pathlib import Path
from typing import Any

import pydantic
import pytest
import torch
from pydantic import ValidationError
from torch import nn

from tensorclass import (
    LazyStackedTensorDict,
    MemmapFormatError,
    MemoryMappedTensor,
    NonTensorData,
    NotSerializableError,
    RecordedClassError,
    TensorClass,
    TensorDict,
    lazy_stack,
    load_memmap,
    read_metadata,
)


class Info(TensorClass):
    step: torch.Tensor
    note: str = "none"


class Episode(TensorClass):
    obs: torch.Tensor
    reward: torch.Tensor
    info: Info
    extra: TensorDict | None = None
    tags: dict | None = None


def make_episode() -> Episode:
    return Episode(
        obs=torch.randn(4, 3),
        reward=torch.arange(4.0),
        info=Info(torch.arange(4), note="first", batch_size=[4]),
        extra=TensorDict({"mask": torch.ones(4, 2, dtype=torch.bool)}, [4]),
        tags={"run": 1, "names": ["a", "b"]},
        batch_size=[4],
    )


def assert_same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a.batch_size == b.batch_size
    assert list(a.keys(True, True)) == list(b.keys(True, True))
    for key in a.keys(True, True):
        left, right = a[key], b[key]
        if isinstance(left, torch.Tensor):
            assert torch.equal(left, right), key
        else:
            assert left == right, key


# -- round trips ------------------------------------------------------------------------------


def test_tensordict_round_trip_layout(tmp_path: Path) -> None:
    td = TensorDict({"a": torch.randn(3, 2), "nested": {"b": torch.arange(3)}, "name": "x"}, [3])
    saved = td.memmap(tmp_path / "td")
    assert saved.is_memmap() and saved.is_locked and not td.is_memmap()
    assert isinstance(saved["a"], MemoryMappedTensor)
    assert sorted(os.listdir(tmp_path / "td")) == ["a.memmap", "meta.json", "nested"]
    assert sorted(os.listdir(tmp_path / "td" / "nested")) == ["b.memmap", "meta.json"]
    loaded = TensorDict.load_memmap(tmp_path / "td")
    assert_same(loaded, td)
    assert loaded.is_memmap() and loaded.is_locked


def test_typed_class_comes_back(tmp_path: Path) -> None:
    episode = make_episode()
    episode.memmap(tmp_path / "ep")
    loaded = load_memmap(tmp_path / "ep")
    assert_same(loaded, episode)
    assert type(loaded.info) is Info and loaded.info.note == "first"
    assert type(loaded.extra) is TensorDict
    assert loaded.tags == {"run": 1, "names": ["a", "b"]}
    assert_same(Episode.load_memmap(tmp_path / "ep"), episode)
    plain = TensorDict.load_memmap(tmp_path / "ep", classes="tensordict")  # data only
    assert type(plain) is TensorDict and type(plain["info"]) is TensorDict
    assert torch.equal(plain["info", "step"], episode.info.step)


def test_loading_a_sub_folder_loads_that_branch(tmp_path: Path) -> None:
    # seed 003: save a model's parameters, load them onto a slice of the model
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 3))
    params = TensorDict(dict(model.state_dict()), []).unflatten_keys(".")
    params.memmap(tmp_path / "params", num_threads=4)
    params0 = TensorDict.load_memmap(tmp_path / "params" / "0", num_threads=16)
    assert torch.equal(params0["weight"], model[0].weight.detach())
    assert type(load_memmap(tmp_path / "params" / "1")) is TensorDict
    episode = make_episode()
    episode.memmap(tmp_path / "ep")
    info = load_memmap(tmp_path / "ep" / "info")
    assert type(info) is Info and torch.equal(info.step, episode.info.step)


def test_seed_003_parameter_serialization(tmp_path: Path) -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 3))
    expected = model(torch.ones(2, 3))
    params = TensorDict.from_module(model)
    params.memmap(tmp_path / "folder", num_threads=16)
    params = TensorDict.load_memmap(tmp_path / "folder", num_threads=16)
    params.to_module(model)  # load onto model
    params["0"].to_module(model[0])  # load on a slice of the model
    params0 = TensorDict.load_memmap(tmp_path / "folder" / "0", num_threads=16)
    params0.to_module(model[0])
    assert torch.allclose(model(torch.ones(2, 3)), expected)


def test_memmap_in_place(tmp_path: Path) -> None:
    episode = make_episode()
    obs = episode.obs.clone()
    assert episode.memmap_(tmp_path / "ep") is episode
    assert episode.is_memmap() and episode.is_locked
    assert isinstance(episode.info.step, MemoryMappedTensor)
    episode.obs[0] = 100.0  # writes reach the files
    again = Episode.load_memmap(tmp_path / "ep")
    assert again.obs[0].tolist() == [100.0] * 3
    assert torch.equal(again.obs[1:], obs[1:])


def test_non_tensor_values(tmp_path: Path) -> None:
    meta = {"k": [1, 2.5, None, True, "s"]}
    a = TensorDict(x=torch.zeros(2), name="a", meta=NonTensorData(meta), batch_size=[2])
    b = TensorDict(x=torch.zeros(2), name="b", meta=NonTensorData(dict(meta)), batch_size=[2])
    stacked = torch.stack([a, b])
    stacked.memmap(tmp_path / "s")
    loaded = TensorDict.load_memmap(tmp_path / "s")
    assert loaded["name"] == [["a", "a"], ["b", "b"]]
    assert loaded["meta"] == [[meta] * 2] * 2  # equal values stacked: one per element
    assert loaded[1, 0]["name"] == "b" and loaded[1, 0]["meta"] == meta


@pytest.mark.parametrize("value", [(1, 2), object(), {1: "a"}, torch.float32], ids=str)
def test_non_json_values_fail_before_writing(tmp_path: Path, value: object) -> None:
    td = TensorDict({"x": torch.zeros(2), "sub": {"bad": NonTensorData(value)}}, [2])
    with pytest.raises(NotSerializableError, match=r"\('sub', 'bad'\)"):
        td.memmap(tmp_path / "bad")
    assert not os.path.exists(tmp_path / "bad") and os.listdir(tmp_path) == []


@pytest.mark.parametrize("key", ["a/b", "..", ".hidden", "", "meta.json", "x.memmap", "é ü", "%41"])
def test_any_key_round_trips(tmp_path: Path, key: str) -> None:
    td = TensorDict({key: torch.arange(3), "n": {key: {"leaf": torch.ones(3)}}}, [3])
    td.memmap(tmp_path / "k")
    loaded = TensorDict.load_memmap(tmp_path / "k")
    assert torch.equal(loaded[key], td[key])
    assert torch.equal(loaded["n", key, "leaf"], td["n", key, "leaf"])
    for root, dirs, files in os.walk(tmp_path / "k"):  # nothing escapes the save directory
        assert Path(root).resolve().is_relative_to((tmp_path / "k").resolve())
        assert all("/" not in name for name in dirs + files)


def test_names_and_zero_sized_batches(tmp_path: Path) -> None:
    td = TensorDict({"x": torch.zeros(0, 2, 3)}, [0, 2], names=["time", None])
    td.memmap(tmp_path / "z")
    loaded = TensorDict.load_memmap(tmp_path / "z")
    assert loaded.batch_size == (0, 2) and loaded.names == ["time", None]


def test_lazy_stack_round_trip(tmp_path: Path) -> None:
    members = [TensorDict({"a": torch.full((2,), float(i))}, [2]) for i in range(3)]
    members[1]["only1"] = torch.ones(2, 5)
    stack = lazy_stack(members, 1)
    saved = stack.memmap(tmp_path / "lazy")
    assert isinstance(saved, LazyStackedTensorDict) and saved.is_memmap()
    loaded = load_memmap(tmp_path / "lazy")
    assert isinstance(loaded, LazyStackedTensorDict) and loaded.stack_dim == 1
    assert torch.equal(loaded["a"], stack["a"])
    assert torch.equal(loaded.members[1]["only1"], torch.ones(2, 5))
    typed = lazy_stack([make_episode(), make_episode()], 0)
    typed.memmap(tmp_path / "typed")
    back = load_memmap(tmp_path / "typed")
    assert isinstance(back, Episode) and isinstance(back, LazyStackedTensorDict)
    assert torch.equal(back.obs, typed.obs)


# -- memmap_like and the 1M-row dataset (seed 003) -----------------------------------------


def test_memmap_like_never_materialises_the_template(tmp_path: Path) -> None:
    template = TensorDict({"images": torch.zeros(256, dtype=torch.uint8)}, [])
    data = template.expand(1_000_000).memmap_like(tmp_path / "big")
    file = tmp_path / "big" / "images.memmap"
    assert os.path.getsize(file) == 256_000_000
    assert os.stat(file).st_blocks * 512 < 1_000_000  # sparse: nothing written
    assert data["images"].shape == (1_000_000, 256) and data[123_456]["images"].sum() == 0


def _resident_bytes(files: list[Path]) -> int:
    """How much of ``files`` is mapped into this process's memory (Linux: /proc/self/smaps)."""
    names = {str(file.resolve()) for file in files}
    total, current = 0, None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            parts = line.split()
            if parts and "-" in parts[0] and ":" not in parts[0]:
                current = parts[5] if len(parts) > 5 else None  # a mapping's first line
            elif parts and parts[0] == "Rss:" and current in names:
                total += int(parts[1]) * 1024
    return total


def test_dataset_of_a_million_rows(tmp_path: Path) -> None:
    # seed 003: allocate on disk from a one-row template, fill in chunks, read a few rows
    data = TensorDict(
        {
            "images": torch.zeros((8, 8), dtype=torch.uint8),
            "labels": torch.zeros((), dtype=torch.int),
        },
        batch_size=[],
    )
    data = data.expand(1_000_000)
    data = data.memmap_like(tmp_path / "dataset")
    chunk = 250_000
    for start in range(0, 1_000_000, chunk):  # fill the dataset in chunks
        rows = torch.arange(start, start + chunk)
        data[start : start + chunk] = TensorDict(
            {
                "images": (rows % 251).to(torch.uint8)[:, None, None].expand(chunk, 8, 8),
                "labels": rows.int(),
            },
            [chunk],
        )
    picked = data[torch.tensor([1, 10000, 500000])]
    assert picked.batch_size == (3,) and picked["images"].shape == (3, 8, 8)
    assert picked["labels"].tolist() == [1, 10000, 500000]
    assert picked["images"][:, 0, 0].tolist() == [1, 10000 % 251, 500000 % 251]
    del data, picked
    reloaded = TensorDict.load_memmap(tmp_path / "dataset")
    assert reloaded[torch.tensor([999_999])]["labels"].item() == 999_999
    del reloaded
    if os.path.exists("/proc/self/smaps"):  # Linux: check what is mapped into memory
        assert_reads_only_the_rows(tmp_path / "dataset")


def assert_reads_only_the_rows(path: Path) -> None:
    files = [path / "images.memmap", path / "labels.memmap"]
    size = sum(os.path.getsize(file) for file in files)  # 68 MB
    data = TensorDict.load_memmap(path)
    assert _resident_bytes(files) == 0  # loading maps the files, reads nothing
    picked = data[torch.tensor([1, 10000, 500000])]
    assert picked["labels"].tolist() == [1, 10000, 500000]
    # a few pages around each row (the kernel maps up to a 2 MB huge page at a time)
    assert 0 < _resident_bytes(files) < size // 4
    assert data["images"].sum().item() > 0 and data["labels"].sum().item() > 0
    assert _resident_bytes(files) >= size - 4 * 4096  # reading everything maps everything


# -- overwriting and crash safety ---------------------------------------------------------


def test_a_save_replaces_the_previous_one(tmp_path: Path) -> None:
    first = TensorDict({"x": torch.zeros(3)}, [3]).memmap(tmp_path / "s")
    with pytest.raises(FileExistsError, match="existsok=True"):
        TensorDict({"x": torch.ones(3)}, [3]).memmap(tmp_path / "s", existsok=False)
    TensorDict({"y": torch.ones(2)}, [2]).memmap(tmp_path / "s")  # existsok=True: tensordict's
    loaded = TensorDict.load_memmap(tmp_path / "s")
    assert list(loaded.keys()) == ["y"]
    assert first["x"].tolist() == [0.0] * 3  # an instance of the old save keeps its data
    assert os.listdir(tmp_path) == ["s"]  # no temporary directory left behind


def test_refuses_to_replace_a_directory_that_is_not_a_save(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "precious.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="does not hold a tensorclass save"):
        TensorDict({"x": torch.zeros(1)}, [1]).memmap(tmp_path / "home", existsok=True)
    assert (tmp_path / "home" / "precious.txt").read_text() == "keep me"
    (tmp_path / "empty").mkdir()
    TensorDict({"x": torch.zeros(1)}, [1]).memmap(tmp_path / "empty", existsok=True)


def test_an_empty_directory_takes_a_save_without_existsok(tmp_path: Path) -> None:
    (tmp_path / "fresh").mkdir()  # as tempfile.mkdtemp() leaves it: nothing to lose
    TensorDict({"x": torch.arange(3)}, [3]).memmap(tmp_path / "fresh")
    assert TensorDict.load_memmap(tmp_path / "fresh")["x"].tolist() == [0, 1, 2]
    with pytest.raises(FileExistsError, match="existsok=True"):  # now it holds a save
        TensorDict({"x": torch.zeros(3)}, [3]).memmap(tmp_path / "fresh", existsok=False)


def test_failure_mid_save_leaves_the_previous_save_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorclass.engine.storage.memmap import save

    old = TensorDict({"a": torch.arange(5), "b": torch.ones(5)}, [5])
    old.memmap(tmp_path / "ckpt")
    written = []

    def failing_write(tensor: torch.Tensor, path: str, **kwargs: Any) -> None:
        if written:
            raise OSError("disk full")
        written.append(path)
        real_write(tensor, path, **kwargs)

    real_write = save.write_tensor_file
    monkeypatch.setattr(save, "write_tensor_file", failing_write)
    new = TensorDict({"a": torch.zeros(5), "b": torch.zeros(5), "c": torch.zeros(5)}, [5])
    with pytest.raises(OSError, match="disk full"):
        new.memmap(tmp_path / "ckpt", existsok=True)
    assert written  # the failure came after a file was written
    assert os.listdir(tmp_path) == ["ckpt"]
    assert_same(TensorDict.load_memmap(tmp_path / "ckpt"), old)


def test_failure_in_a_writer_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorclass.engine.storage.memmap import save

    old = TensorDict({f"k{i}": torch.full((5,), float(i)) for i in range(8)}, [5])
    old.memmap(tmp_path / "ckpt")
    real_write = save.write_tensor_file

    def failing_write(tensor: torch.Tensor, path: str, **kwargs: Any) -> None:
        if path.endswith("k5.memmap"):
            raise OSError("disk full")
        real_write(tensor, path, **kwargs)

    monkeypatch.setattr(save, "write_tensor_file", failing_write)
    with pytest.raises(OSError, match="disk full"):
        old.apply(lambda x: x + 1).memmap(tmp_path / "ckpt", existsok=True, num_threads=4)
    assert os.listdir(tmp_path) == ["ckpt"]
    assert_same(TensorDict.load_memmap(tmp_path / "ckpt"), old)


def test_replacing_without_an_atomic_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where renameat2(RENAME_EXCHANGE) is missing (other systems, some file systems), the
    # old save is renamed aside, the new one renamed in, then the old one removed.
    from tensorclass.engine.storage.memmap import save

    monkeypatch.setattr(save, "_exchange", lambda first, second: False)
    TensorDict({"x": torch.zeros(3)}, [3]).memmap(tmp_path / "s")
    TensorDict({"y": torch.ones(2)}, [2]).memmap(tmp_path / "s", existsok=True)
    assert list(TensorDict.load_memmap(tmp_path / "s").keys()) == ["y"]
    assert os.listdir(tmp_path) == ["s"]


def test_saving_a_loaded_save_onto_itself(tmp_path: Path) -> None:
    episode = make_episode()
    episode.memmap(tmp_path / "ep")
    loaded = Episode.load_memmap(tmp_path / "ep")  # its tensors map the files being replaced
    again = loaded.memmap(tmp_path / "ep", existsok=True)
    assert_same(again, episode)
    assert_same(Episode.load_memmap(tmp_path / "ep"), episode)
    assert_same(loaded, episode)  # the old mapping still reads the old data
    assert os.listdir(tmp_path) == ["ep"]


def test_crash_mid_save_leaves_the_previous_save_intact(tmp_path: Path) -> None:
    import subprocess
    import sys

    old = TensorDict({"a": torch.arange(5)}, [5])
    old.memmap(tmp_path / "ckpt")
    script = f"""
import os, torch
from tensorclass import TensorDict
from tensorclass.engine.storage.memmap import save
real = save.write_tensor_file
def crash(tensor, path, **kwargs):
    real(tensor, path, **kwargs)
    os._exit(9)  # the process dies half way: no cleanup runs
save.write_tensor_file = crash
TensorDict({{"a": torch.zeros(5), "b": torch.zeros(5)}}, [5]).memmap({str(tmp_path / "ckpt")!r}, existsok=True)
"""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-c", script], env=env, cwd=root)
    assert result.returncode == 9
    assert_same(TensorDict.load_memmap(tmp_path / "ckpt"), old)
    leftovers = [n for n in os.listdir(tmp_path) if n != "ckpt"]
    assert all(n.startswith(".ckpt.tmp-") for n in leftovers)  # hidden, next to the target


# -- corrupted saves ---------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    make_episode().memmap(tmp_path / "ep")
    return tmp_path / "ep"


def edit_meta(path: Path, change: Any) -> None:
    meta = json.loads((path / "meta.json").read_text())
    change(meta)
    (path / "meta.json").write_text(json.dumps(meta))


def test_truncated_file(saved: Path) -> None:
    with open(saved / "info" / "step.memmap", "r+b") as f:
        f.truncate(8)
    with pytest.raises(MemmapFormatError, match=r"'info', 'step'.*holds 8 bytes.*32.*truncated"):
        load_memmap(saved)
    problems = read_metadata(saved).problems()
    assert len(problems) == 1 and "truncated" in problems[0]


def test_missing_and_oversized_files_reported_together(saved: Path) -> None:
    os.remove(saved / "obs.memmap")
    with open(saved / "reward.memmap", "ab") as f:
        f.write(b"\0" * 4)
    with pytest.raises(MemmapFormatError, match=r"'obs'.*missing.*'reward'.*too long"):
        load_memmap(saved)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(format="other"), "not a 'tensorclass-memmap'"),
        (lambda m: m.update(version=99), "version 99"),
        (lambda m: m["entries"][0].update(dtype="float99"), "unknown dtype"),
        (lambda m: m["entries"][0].update(shape=[5, 3]), "does not start with the batch size"),
        (lambda m: m["entries"][0].update(nbytes=1), "nbytes"),
        (lambda m: m["entries"][0].update(file="../../etc/passwd"), "file must be 'obs.memmap'"),
        (lambda m: m["entries"][2].update(dir=".."), "dir must be 'info'"),
        (lambda m: m.update(batch_size=[-1]), "non-negative"),
        (lambda m: m["entries"].append(m["entries"][0]), "appears twice"),
        (lambda m: m["entries"][0].update(type="pickle"), "unknown type"),
    ],
)
def test_metadata_that_disagrees_is_refused(saved: Path, change: Any, message: str) -> None:
    edit_meta(saved, change)
    with pytest.raises(MemmapFormatError, match=message):
        load_memmap(saved)


def test_not_json_and_not_a_save(saved: Path, tmp_path: Path) -> None:
    (saved / "info" / "meta.json").write_bytes(b"\x80not json")
    with pytest.raises(MemmapFormatError, match="not valid JSON"):
        load_memmap(saved)
    (tmp_path / "plain").mkdir()
    with pytest.raises(MemmapFormatError, match="not a tensorclass save"):
        load_memmap(tmp_path / "plain")


def test_symbolic_links_are_refused(saved: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"\0" * 48)
    os.remove(saved / "obs.memmap")
    os.symlink(target, saved / "obs.memmap")
    with pytest.raises(MemmapFormatError, match="not a regular file"):
        load_memmap(saved)


# -- what loading may run ----------------------------------------------------------------


def test_loading_never_unpickles(saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("loading must not unpickle")

    for name in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, name, forbidden)
    monkeypatch.setattr(torch, "load", forbidden)
    loaded = load_memmap(saved)
    assert type(loaded) is Episode and loaded.obs.shape == (4, 3)


def test_class_not_imported(saved: Path) -> None:
    edit_meta(saved, lambda m: m.update({"class": "tensorclass_no_such_module:Episode"}))
    with pytest.raises(RecordedClassError, match="not imported.*classes='import'"):
        load_memmap(saved)
    with pytest.raises(RecordedClassError, match="cannot import"):
        load_memmap(saved, classes="import")
    plain = load_memmap(saved, classes="tensordict")
    assert type(plain) is TensorDict and type(plain["info"]) is TensorDict
    assert type(load_memmap(saved, Episode)) is Episode


def test_recorded_name_must_be_a_tensor_class(saved: Path) -> None:
    edit_meta(saved, lambda m: m.update({"class": "os:getcwd"}))
    with pytest.raises(RecordedClassError, match="not a tensor class"):
        load_memmap(saved)
    edit_meta(saved, lambda m: m.update({"class": "os:no_such_name"}))
    with pytest.raises(RecordedClassError, match="has no class"):
        load_memmap(saved)


def test_import_only_when_asked(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "recorded_cls_mod.py").write_text(
        "import torch\nfrom tensorclass import TensorClass\n"
        "class Point(TensorClass):\n    xy: torch.Tensor\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{tmp_path}"}

    def run(code: str) -> str:
        result = subprocess.run(
            [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    import importlib

    sys.path.insert(0, str(tmp_path))
    try:  # saved here; loaded below by a fresh process that never imported the module
        module = importlib.import_module("recorded_cls_mod")
        module.Point(torch.zeros(2, 2), batch_size=[2]).memmap(tmp_path / "pt")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("recorded_cls_mod", None)
    # nothing is imported by default
    out = run(
        "import sys\nfrom tensorclass import load_memmap, RecordedClassError\n"
        "try:\n    load_memmap('pt')\nexcept RecordedClassError as err:\n    print('refused:', err)\n"
        "print('imported:', 'recorded_cls_mod' in sys.modules)\n"
        "print('asked:', type(load_memmap('pt', classes='import')).__name__)\n"
    )
    assert "refused:" in out and "not imported" in out
    assert "imported: False" in out and "asked: Point" in out


def test_classes_defined_outside_a_module_are_found(tmp_path: Path) -> None:
    class Local(TensorClass):  # defined in a function: not reachable by name
        v: torch.Tensor

    Local(torch.arange(3), batch_size=[3]).memmap(tmp_path / "local")
    assert type(load_memmap(tmp_path / "local")) is Local


def test_given_class_must_declare_the_saved_keys(saved: Path) -> None:
    # checked on loading: every key that does not fit is reported, with its location
    with pytest.raises(ValidationError) as info:
        Info.load_memmap(saved)
    found = [(e["loc"], e["type"]) for e in info.value.errors()]
    assert found == [(("step",), "missing")] + [
        ((key,), "extra_forbidden") for key in ("obs", "reward", "info", "extra", "tags")
    ]
    with pytest.raises(MemmapFormatError, match="'obs' is not a field of Info"):
        Info.load_memmap(saved, validate=False)

    class Wrong(TensorClass):
        obs: str
        reward: torch.Tensor
        info: Info

    with pytest.raises(ValidationError) as info:
        load_memmap(saved, Wrong)
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("obs",), "string_type"),
        (("extra",), "extra_forbidden"),
        (("tags",), "extra_forbidden"),
    ]
    with pytest.raises(
        MemmapFormatError, match="holds a tensor value, but Wrong.obs is a non_tensor"
    ):
        load_memmap(saved, Wrong, validate=False)


def test_read_metadata(saved: Path) -> None:
    info = read_metadata(saved)
    assert info.class_path.endswith(":Episode") and info.typed and info.batch_size == (4,)
    assert [e.key for e in info.entries] == ["obs", "reward", "info", "extra", "tags"]
    obs = info.entries[0]
    assert (obs.dtype, obs.shape, obs.nbytes, obs.bytes_on_disk) == ("float32", (4, 3), 48, 48)
    assert info.entries[2].child is not None and info.entries[2].child.class_path.endswith(":Info")
    assert info.total_bytes == 48 + 16 + 32 + 8
    described = info.to_dict()
    json.dumps(described)  # ready for a JSON report
    assert described["entries"][4] == {
        "key": "tags",
        "type": "non_tensor",
        "value": {"run": 1, "names": ["a", "b"]},
    }
    assert [f["name"] for f in info.schema or ()] == ["obs", "reward", "info", "extra", "tags"]
    assert info.problems() == []


def test_device_argument_copies(saved: Path) -> None:
    loaded = load_memmap(saved, device="cpu")
    assert loaded.is_memmap()  # cpu: nothing to move


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Run(TensorClass):
    x: torch.Tensor
    mode: Mode
    level: Level | None = None
    note: Any = None


def test_enum_fields_round_trip_as_members(tmp_path: Path) -> None:
    run = Run(torch.zeros(2), Mode.EVAL, level=Level.HIGH, note=Mode.TRAIN, batch_size=[2])
    run.memmap(tmp_path / "r")
    loaded = Run.load_memmap(tmp_path / "r")
    assert loaded.mode is Mode.EVAL and loaded.level is Level.HIGH
    # nothing in the save names a class: where no field declares the enum, the value
    assert loaded.note == "train"
    assert TensorDict.load_memmap(tmp_path / "r", classes="tensordict")["mode"] == "eval"
    assert Run.load_memmap(tmp_path / "r", validate=False).mode is Mode.EVAL


def test_enum_members_per_element_round_trip(tmp_path: Path) -> None:
    runs = torch.stack([Run(torch.zeros(()), m, batch_size=[]) for m in (Mode.TRAIN, Mode.EVAL)])
    runs.memmap(tmp_path / "s")
    loaded = Run.load_memmap(tmp_path / "s")
    assert loaded.mode == [Mode.TRAIN, Mode.EVAL] and loaded[1].mode is Mode.EVAL


def test_a_value_that_is_not_a_member_is_reported_on_load(tmp_path: Path) -> None:
    TensorDict(x=torch.zeros(2), mode="test", batch_size=[2]).memmap(tmp_path / "bad")
    with pytest.raises(ValidationError, match=r"mode[\s\S]*'train' or 'eval'"):
        Run.load_memmap(tmp_path / "bad")
    assert Run.load_memmap(tmp_path / "bad", validate=False).mode == "test"


def test_an_enum_whose_value_json_cannot_store_is_refused(tmp_path: Path) -> None:
    class Shape(enum.Enum):
        SQUARE = (2, 2)

    td = TensorDict(x=torch.zeros(2), shape=NonTensorData(Shape.SQUARE), batch_size=[2])
    with pytest.raises(NotSerializableError, match=r"'shape'.*enum Shape whose value is a tuple"):
        td.memmap(tmp_path / "t")
    assert os.listdir(tmp_path) == []


class Optimizer(pydantic.BaseModel):
    name: str
    lr: float
    betas: tuple[float, float] = (0.9, 0.999)


class Trial(TensorClass):
    x: torch.Tensor
    optimizer: Optimizer
    previous: Optimizer | None = None


def test_pydantic_model_fields_round_trip_as_models(tmp_path: Path) -> None:
    adam = Optimizer(name="adam", lr=1e-3)
    trial = Trial(torch.zeros(2), adam, previous=Optimizer(name="sgd", lr=0.1), batch_size=[2])
    trial.memmap(tmp_path / "t")
    for validate in (True, False):
        loaded = Trial.load_memmap(tmp_path / "t", validate=validate)
        assert loaded.optimizer == adam and loaded.previous == Optimizer(name="sgd", lr=0.1)
    # the JSON form (the tuple became a list) where no field declares the model
    plain = TensorDict.load_memmap(tmp_path / "t", classes="tensordict")["optimizer"]
    assert plain == {"name": "adam", "lr": 1e-3, "betas": [0.9, 0.999]}


def test_a_model_that_does_not_fit_is_reported_on_load(tmp_path: Path) -> None:
    bad = NonTensorData({"name": "adam", "lr": "fast"})
    TensorDict(x=torch.zeros(2), optimizer=bad, batch_size=[2]).memmap(tmp_path / "bad")
    with pytest.raises(ValidationError, match=r"optimizer\.lr"):
        Trial.load_memmap(tmp_path / "bad")
    assert Trial.load_memmap(tmp_path / "bad", validate=False).optimizer == bad.data
