"""``return_early=True`` gives a :class:`tensorclass.utils.TensorDictFuture`, as tensordict
0.15.3's ``memmap``/``memmap_``/``memmap_like``/``save`` do with ``num_threads > 0``
(checked side by side: ``type(td.memmap(p, num_threads=2, return_early=True))`` is
``tensordict.utils.TensorDictFuture``, and ``.result()`` is the memory-mapped instance)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from tensorclass import TensorDict
from tensorclass.utils import TensorDictFuture


def _td() -> TensorDict:
    return TensorDict(a=torch.arange(3.0), b={"c": torch.ones(3, 2)}, batch_size=[3])


@pytest.mark.parametrize("method", ["memmap", "memmap_", "memmap_like", "save"])
def test_each_saving_method_returns_a_tensordict_future(method: str, tmp_path: Path) -> None:
    data = _td()
    future = getattr(data, method)(tmp_path / "x", num_threads=2, return_early=True)
    assert type(future) is TensorDictFuture
    result = future.result()
    assert future.done()
    assert result.is_memmap()
    expected = torch.zeros(3) if method == "memmap_like" else torch.arange(3.0)
    assert torch.equal(result["a"], expected)
    assert future.resulting_td is result
    assert torch.equal(TensorDict.load_memmap(tmp_path / "x")["b", "c"], result["b", "c"])


def test_future_without_prefix(tmp_path: Path) -> None:
    future = _td().memmap(return_early=True)
    assert isinstance(future, TensorDictFuture)
    assert future.result().is_memmap()


def test_error_of_the_save_is_raised_by_result(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "meta.json").write_text("{}")
    future = _td().memmap(tmp_path / "x", existsok=False, return_early=True)
    with pytest.raises(FileExistsError, match="existsok"):
        future.result()


def test_future_of_several_writes_waits_for_each() -> None:
    with ThreadPoolExecutor(2) as pool:
        writes = [pool.submit(lambda: 1), pool.submit(lambda: 2)]
        future = TensorDictFuture(writes, "done")
        assert future.result(timeout=30) == "done"
        assert future.done()
