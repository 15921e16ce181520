"""to_zarr / from_zarr and PersistentTensorDict over Zarr (zarr 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tensorclass import TensorDict, from_zarr

from . import _persistent_cases as cases
from ._formats_data import plain

zarr = pytest.importorskip("zarr")


def test_round_trip(tmp_path: Path) -> None:
    cases.check_round_trip(tmp_path, "zarr")


def test_lazy_reads(tmp_path: Path) -> None:
    cases.check_lazy_reads(tmp_path, "zarr")


def test_writes(tmp_path: Path) -> None:
    cases.check_writes(tmp_path, "zarr")


def _set_layout(path: Path, layout: Any) -> None:
    group = zarr.open_group(path, mode="r+")
    group.attrs["tensordict"] = json.dumps(layout)


def test_hostile_files(tmp_path: Path) -> None:
    cases.check_hostile(tmp_path, "zarr", _set_layout)
    (tmp_path / "junk").write_bytes(b"not hdf5")
    with pytest.raises(Exception):  # noqa: B017  (zarr's own error for a non-store)
        from_zarr(tmp_path / "junk")


def test_a_file_without_layout(tmp_path: Path) -> None:
    def write(path: Path) -> None:
        group = zarr.open_group(path, mode="w")
        group.create_array("a", data=np.zeros((5, 2), dtype=np.float32))
        group.create_group("g").create_array("b", data=np.arange(5))

    cases.check_foreign_file(tmp_path, "zarr", write)


def test_chunks_reach_zarr(tmp_path: Path) -> None:
    with plain().to_zarr(tmp_path / "f", chunks=(2,)) as ptd:
        assert ptd._root["a"].chunks == (2, 3)


def test_pickle_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="allow_pickle"):
        plain().to_zarr(tmp_path / "f", allow_pickle=True)


def test_tensordict_reads_our_file(tmp_path: Path) -> None:
    tensordict = pytest.importorskip("tensordict")
    plain().select("a", "b").to_zarr(tmp_path / "f").close()
    theirs = tensordict.TensorDict.from_zarr(str(tmp_path / "f"), allow_pickle=False)
    assert theirs["b", "c"].shape == (4, 2)
    assert isinstance(TensorDict.from_zarr(tmp_path / "f").to_tensordict(), TensorDict)


def test_non_tensor_stacks_metadata_and_unbatched_tensors(tmp_path: Path) -> None:
    cases.check_special_leaves(tmp_path, "zarr")
