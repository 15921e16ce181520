"""The helpers of ``tensorclass.utils`` (tensordict's ``tensordict.utils``) do what tensordict
0.15.3's do: each expectation below was read from tensordict 0.15.3, and the last test checks
them side by side when tensordict is installed."""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import TensorDict
from tensorclass.base import NO_DEFAULT
from tensorclass.utils import (
    TensorDictFuture,
    expand_as_right,
    expand_right,
    isin,
    print_directory_tree,
    remove_duplicates,
    timeit,
)


def test_expand_right_adds_dims_on_the_right() -> None:
    value = torch.arange(3.0)
    out = expand_right(value, (3, 4, 2))
    assert out.shape == (3, 4, 2)
    assert out.data_ptr() == value.data_ptr()  # a view
    assert out[:, 1, 1].tolist() == [0.0, 1.0, 2.0]


def test_expand_as_right_to_a_tensor_or_an_instance() -> None:
    assert expand_as_right(torch.arange(3), torch.zeros(3, 4, 5)).shape == (3, 4, 5)
    assert expand_as_right(torch.zeros(1, 2), torch.zeros(3, 2, 5)).shape == (3, 2, 5)
    # an instance as destination gives its batch size
    assert expand_as_right(torch.arange(3), TensorDict(batch_size=[3, 2])).shape == (3, 2)


def test_expand_as_right_of_an_instance_expands_its_batch_dims() -> None:
    data = TensorDict(a=torch.zeros(3), batch_size=[3])
    out = expand_as_right(data, torch.zeros(3, 4))
    assert type(out) is TensorDict
    assert out.batch_size == (3, 4) and out["a"].shape == (3, 4)


@pytest.mark.parametrize(
    ("value", "dest"),
    [(torch.arange(3), torch.zeros(4, 3)), (torch.zeros(3, 4), torch.zeros(3))],
)
def test_expand_as_right_refuses_shapes_that_do_not_line_up(value: Any, dest: Any) -> None:
    with pytest.raises(RuntimeError):
        expand_as_right(value, dest)


def test_expand_right_refuses_fewer_dims() -> None:
    with pytest.raises(RuntimeError):
        expand_right(torch.zeros(3, 4), (3,))
    with pytest.raises(RuntimeError):
        expand_right(torch.zeros(3), (4, 2))


def test_no_default_asks_get_for_the_error() -> None:
    data = TensorDict(a=torch.zeros(3), batch_size=[3])
    with pytest.raises(KeyError, match="b"):
        data.get("b", NO_DEFAULT)
    assert data.get("a", NO_DEFAULT).shape == (3,)


def _rows() -> TensorDict:
    return TensorDict(
        a=torch.tensor([[1, 2], [3, 4], [1, 2], [0, 0]]), b=torch.arange(4), batch_size=[4]
    )


def test_isin_compares_whole_slices() -> None:
    reference = TensorDict(a=torch.tensor([[3, 4], [1, 2]]), batch_size=[2])
    assert isin(_rows(), reference, "a").tolist() == [True, True, True, False]


def test_remove_duplicates_keeps_the_first_in_value_order() -> None:
    out, indices = remove_duplicates(_rows(), "a", return_indices=True)
    assert out["a"].tolist() == [[0, 0], [1, 2], [3, 4]]
    assert out["b"].tolist() == [3, 0, 1]
    assert indices.tolist() == [1, 2, 1, 0]
    assert remove_duplicates(_rows(), "a")["b"].tolist() == [3, 0, 1]


def test_bad_keys_and_dims_are_refused() -> None:
    other = TensorDict(a=torch.zeros(2, 2), batch_size=[2])
    with pytest.raises(KeyError):
        isin(_rows(), other, "b")  # not in the reference
    with pytest.raises(KeyError):
        remove_duplicates(_rows(), "zz")
    with pytest.raises(ValueError):
        remove_duplicates(_rows(), "a", dim=1)
    with pytest.raises(ValueError):
        isin(_rows(), TensorDict(a=torch.zeros(2, 2), batch_size=[2, 2]), "a")


def test_timeit_counts_calls_by_name(caplog: pytest.LogCaptureFixture) -> None:
    @timeit("test-step")
    def step() -> int:
        return 7

    assert step() == 7 and step.__name__ == "step"
    with timeit("test-block"):
        step()
    assert timeit._REG["test-step"][2] == 2 and timeit._REG["test-block"][2] == 1
    mean, total, count = timeit._REG["test-step"]
    assert mean == pytest.approx(total / count)
    with caplog.at_level(logging.INFO, logger="tensorclass"):
        timeit.print(prefix="run")
    assert any(r.getMessage().startswith("run -- test-block took") for r in caplog.records)
    timeit.erase()
    assert timeit._REG["test-step"] == [0.0, 0.0, 0]


def test_print_directory_tree(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f.bin").write_bytes(b"x" * 10)
    (tmp_path / "g").write_text("hi")
    root = os.path.basename(tmp_path)
    expected = f"{root}/\n    g\n    sub/\n        f.bin"
    assert print_directory_tree(tmp_path) == "Directory size: 12.00 B\n" + expected
    assert print_directory_tree(str(tmp_path), display_metadata=False) == expected


def test_tensordict_future_waits_for_every_write() -> None:
    data = TensorDict(a=torch.zeros(2), batch_size=[2])
    with ThreadPoolExecutor(2) as pool:
        writes = [pool.submit(data["a"].fill_, 1.0) for _ in range(2)]
        future = TensorDictFuture(writes, data)
        assert future.result() is data
    assert future.done() and data["a"].tolist() == [1.0, 1.0]


def test_side_by_side_with_tensordict(tmp_path: Path) -> None:
    td_utils = pytest.importorskip("tensordict.utils")
    import tensordict

    peer = tensordict.TensorDict(
        a=torch.tensor([[1, 2], [3, 4], [1, 2], [0, 0]]), b=torch.arange(4), batch_size=[4]
    )
    ref = tensordict.TensorDict(a=torch.tensor([[3, 4], [1, 2]]), batch_size=[2])
    assert td_utils.isin(peer, ref, "a").tolist() == [True, True, True, False]
    out, indices = td_utils.remove_duplicates(peer, "a", return_indices=True)
    assert out["b"].tolist() == [3, 0, 1] and indices.tolist() == [1, 2, 1, 0]
    assert td_utils.expand_as_right(torch.arange(3), torch.zeros(3, 4, 5)).shape == (3, 4, 5)
    with pytest.raises(RuntimeError):
        td_utils.expand_as_right(torch.arange(3), torch.zeros(4, 3))
    (tmp_path / "g").write_text("hi")
    assert td_utils.print_directory_tree(tmp_path, display_metadata=False) == (
        print_directory_tree(tmp_path, display_metadata=False)
    )
