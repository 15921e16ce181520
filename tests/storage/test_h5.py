"""to_h5 / from_h5 and PersistentTensorDict over HDF5 (h5py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tensorclass import FileFormatError, TensorDict, from_h5

from . import _persistent_cases as cases
from ._formats_data import plain

h5py = pytest.importorskip("h5py")


def test_round_trip(tmp_path: Path) -> None:
    cases.check_round_trip(tmp_path, "h5")


def test_lazy_reads(tmp_path: Path) -> None:
    cases.check_lazy_reads(tmp_path, "h5")


def test_writes(tmp_path: Path) -> None:
    cases.check_writes(tmp_path, "h5")


def _set_layout(path: Path, layout: Any) -> None:
    with h5py.File(path, "r+") as file:
        file.attrs["tensordict"] = json.dumps(layout)


def test_hostile_files(tmp_path: Path) -> None:
    cases.check_hostile(tmp_path, "h5", _set_layout)
    (tmp_path / "junk").write_bytes(b"not hdf5")
    with pytest.raises(Exception, match="junk"):
        from_h5(tmp_path / "junk")


def test_a_file_without_layout(tmp_path: Path) -> None:
    def write(path: Path) -> None:
        with h5py.File(path, "w") as file:
            file["a"] = np.zeros((5, 2), dtype=np.float32)
            file.create_group("g")["b"] = np.arange(5)

    cases.check_foreign_file(tmp_path, "h5", write)


def test_compression_keywords_reach_h5py(tmp_path: Path) -> None:
    with plain().to_h5(tmp_path / "f", compression="gzip") as ptd:
        assert ptd._root["a"].compression == "gzip"


def test_tensordict_reads_our_file(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    plain().select("a", "b").to_h5(tmp_path / "f").close()
    theirs = tensordict.TensorDict.from_h5(str(tmp_path / "f"))
    assert theirs["b", "c"].shape == (4, 2)
    theirs.close()
    assert isinstance(TensorDict.from_h5(tmp_path / "f").to_tensordict(), TensorDict)


def test_non_tensor_stacks_metadata_and_unbatched_tensors(tmp_path: Path) -> None:
    cases.check_special_leaves(tmp_path, "h5")


def test_links_out_of_the_file_are_not_followed(tmp_path: Path) -> None:
    with h5py.File(tmp_path / "other.h5", "w") as other:
        other["secret"] = np.arange(3)
    plain().to_h5(tmp_path / "f").close()
    with h5py.File(tmp_path / "f", "r+") as file:
        del file["a"]
        file["a"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/secret")
    with pytest.raises(FileFormatError, match="ExternalLink; the file is not opened"):
        from_h5(tmp_path / "f")
    with h5py.File(tmp_path / "g", "w") as file:
        file["a"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/secret")
    with pytest.raises(FileFormatError, match=f"{tmp_path / 'g'}.*ExternalLink"):
        from_h5(tmp_path / "g")
