"""``set_lazy_legacy(True)``: lazy shape views that write through, as tensordict 0.15.3's
legacy lazy mode.

What tensordict 0.15.3 does under the switch (made with a ``DeprecationWarning``), stated
here as literal expectations and checked side by side when it is installed:

- ``view(shape)``, ``permute``, ``transpose``, ``unsqueeze`` and ``squeeze`` return lazy
  views (its ``_ViewedTensorDict``, ``_PermutedTensorDict``, ``_TransposedTensorDict``,
  ``_UnsqueezedTensorDict``, ``_SqueezedTensorDict``); a nested level read from a view is a
  view too;
- a view's writes land in the source, in the source's shape: a new key, ``set_``, a replaced
  leaf, ``apply_``, deletions and renames;
- the inverse operation gives the source itself (``td.unsqueeze(0).squeeze(0) is td``,
  ``view`` back, the inverse permutation), and an operation that changes nothing
  (``view`` to the same shape, ``transpose(0, 0)``, ``squeeze`` of no size-1 dim) gives the
  instance itself;
- ``view(dtype)``, ``reshape`` and ``flatten`` stay dense; results that build a new instance
  (indexing, ``clone``, ``contiguous``, ``to_tensordict``, ``apply``) are dense;
- ``torch.stack`` gives a lazy stack; a tensorclass's view is still an instance of it.

Where tensordict 0.15.3 fails (an indexed write of a nested value through a view, a write
under a nested key: "Converting a tensordict to boolean value is not permitted", a reshape
error), tensorclass writes through as it does for every other write. Without the switch
(the default) these operations return dense instances, as before.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch

from tensorclass import (
    LazyStackedTensorDict,
    TensorClass,
    TensorDict,
    lazy_stack,
    load_memmap,
    set_lazy_legacy,
)
from tensorclass.engine.lazy.views import LazyViewTensorDict


@contextmanager
def legacy(lib: Any = None) -> Iterator[None]:
    """``set_lazy_legacy(True)`` of ``lib`` (tensorclass by default), without its warning."""
    switch = set_lazy_legacy if lib is None else lib.set_lazy_legacy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with switch(True):
            yield


def _td(lib: Any = None) -> Any:
    cls = TensorDict if lib is None else lib.TensorDict
    nested = cls(c=torch.zeros(3, 4, 2), batch_size=[3, 4])
    return cls(a=torch.zeros(3, 4), b=nested, batch_size=[3, 4])


class Pair(TensorClass):
    a: torch.Tensor
    label: str = "x"


def test_the_switch_warns_as_tensordict() -> None:
    with pytest.warns(DeprecationWarning, match="0.17"):
        set_lazy_legacy(True)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.view(12),
        lambda t: t.view(-1),
        lambda t: t.permute(1, 0),
        lambda t: t.transpose(0, 1),
        lambda t: t.unsqueeze(0),
        lambda t: t.unsqueeze(-1),
    ],
)
def test_shape_operations_are_lazy_views(call: Any) -> None:
    td = _td()
    with legacy():
        view = call(td)
    assert isinstance(view, LazyViewTensorDict) and isinstance(view, TensorDict)
    assert view.source is td
    assert isinstance(view["b"], LazyViewTensorDict)  # a nested level: a view too
    assert type(call(td)) is TensorDict  # outside the switch: dense, as before


def test_squeeze_is_a_lazy_view() -> None:
    td = TensorDict(a=torch.zeros(3, 1), batch_size=[3, 1])
    with legacy():
        squeezed = td.squeeze(1)
        assert isinstance(squeezed, LazyViewTensorDict) and squeezed.batch_size == (3,)
        assert isinstance(td.squeeze(), LazyViewTensorDict)
        assert td.squeeze(0) is td  # no size-1 dim there: nothing changes
    squeezed["a"] = torch.ones(3)
    assert td["a"].tolist() == [[1.0], [1.0], [1.0]]


def test_writes_land_in_the_source() -> None:
    td = _td()
    with legacy():
        view = td.view(12)
    view["a"] = torch.arange(12.0)  # a replaced leaf
    assert td["a"].shape == (3, 4) and td["a"][1, 0] == 4.0
    view["new"] = torch.ones(12, 5)  # a new key, in the source's shape
    assert td["new"].shape == (3, 4, 5)
    view.set_("a", torch.full((12,), 2.0))
    assert td["a"].sum() == 24.0
    view["b"]["c"] = torch.full((12, 2), 4.0)  # through a nested view
    assert td["b", "c"].sum() == 96.0
    view.apply_(lambda x: x + 1)
    assert td["a"].sum() == 36.0
    view.rename_key_("new", "renamed")
    view.del_("renamed")
    assert set(td.keys()) == {"a", "b"}


def test_indexed_writes_land_in_the_source() -> None:
    td = _td()
    with legacy():
        view = td.view(12)
        permuted = td.permute(1, 0)
    view[2:5] = TensorDict(a=torch.full((3,), 7.0), batch_size=[3])
    assert td["a"].tolist()[0] == [0.0, 0.0, 7.0, 7.0] and td["a"][1, 0] == 7.0
    # tensordict 0.15.3 raises here (a nested value written through a view); torch writes
    view[0] = TensorDict(a=torch.tensor(5.0), b=TensorDict(c=torch.ones(2)))
    assert td["a"][0, 0] == 5.0 and td["b", "c"][0, 0].tolist() == [1.0, 1.0]
    view["b", "c"] = torch.full((12, 2), 3.0)  # a nested key (tensordict: a reshape error)
    assert td["b", "c"].sum() == 72.0
    permuted[0] = TensorDict(a=torch.full((3,), 9.0), batch_size=[3])
    assert td["a"][:, 0].tolist() == [9.0, 9.0, 9.0]


def test_permute_and_transpose_write_in_the_source_layout() -> None:
    td = _td()
    with legacy():
        permuted = td.permute(1, 0)
        transposed = td.transpose(0, 1)
    values = torch.arange(12.0).view(4, 3)
    permuted["a"] = values
    assert torch.equal(td["a"], values.T)
    transposed["a"] = values + 1
    assert torch.equal(td["a"], (values + 1).T)


def test_inverse_operations_give_the_source_back() -> None:
    td = _td()
    with legacy():
        assert td.unsqueeze(0).squeeze(0) is td
        assert td.view(12).view(3, 4) is td
        assert td.permute(1, 0).permute(1, 0) is td
        assert td.transpose(0, 1).transpose(1, 0) is td
        assert td.view(3, 4) is td and td.transpose(0, 0) is td
        chained = td.view(12).view(2, 6)
        assert isinstance(chained, LazyViewTensorDict) and chained.batch_size == (2, 6)
    chained["a"] = torch.ones(2, 6)
    assert td["a"].sum() == 12.0


def test_dense_operations_and_results() -> None:
    td = _td()
    with legacy():
        view = td.view(12)
        assert type(td.reshape(12)) is TensorDict and type(td.flatten(0, 1)) is TensorDict
        assert type(td.view(torch.int32)) is TensorDict
        assert isinstance(torch.stack([td, td]), LazyStackedTensorDict)
    for result in (view[0], view[1:3], view.clone(), view.contiguous(), view.to_tensordict()):
        assert type(result) is TensorDict and type(result["b"]) is TensorDict
    assert type(view.apply(lambda x: x + 1)) is TensorDict
    assert type(pickle.loads(pickle.dumps(view))) is TensorDict
    assert view.clone()["a"].data_ptr() != td["a"].data_ptr()


def test_locking_goes_to_the_source() -> None:
    td = _td()
    with legacy():
        view = td.view(12)
    view.lock_()
    assert td.is_locked
    with pytest.raises(RuntimeError, match="locked"):
        view["new"] = torch.ones(12)
    view.unlock_()
    assert not td.is_locked


def test_a_tensor_class_view_is_still_of_its_class() -> None:
    pair = Pair(a=torch.zeros(3, 4), batch_size=[3, 4])
    with legacy():
        view = pair.view(12)
    assert isinstance(view, Pair) and view.label == "x"
    view.a = torch.ones(12)
    view.label = "y"
    assert pair.a.sum() == 12.0 and pair.label == "y"


def test_a_lazy_stack_viewed_across_its_stack_dim() -> None:
    stack = lazy_stack([_td(), _td()])
    with legacy():
        flat = stack.view(-1)
    assert isinstance(flat, LazyViewTensorDict) and flat.batch_size == (24,)
    flat["z"] = torch.ones(24)
    assert stack["z"].shape == (2, 3, 4) and stack.members[1]["z"].shape == (3, 4)


def test_bad_writes_are_refused_and_write_nothing() -> None:
    td = _td()
    with legacy():
        view = td.view(12)
    with pytest.raises(ValueError, match="batch size"):
        view["a"] = torch.ones(5)
    with pytest.raises(ValueError, match="in place"):
        view.set_("a", torch.ones(5))
    assert td["a"].sum() == 0.0 and set(td.keys()) == {"a", "b"}


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    for lib in (None, tensordict):
        td = _td(lib)
        with legacy(lib):
            view = td.view(12)
            permuted = td.permute(1, 0)
            unsqueezed = td.unsqueeze(0)
            assert type(view).__name__ != "TensorDict"
            assert type(view["b"]).__name__ != "TensorDict"
            assert td.unsqueeze(0).squeeze(0) is td and td.view(3, 4) is td
            assert type(td.reshape(12)).__name__ == "TensorDict"
        view["a"] = torch.arange(12.0)
        view["new"] = torch.ones(12, 5)
        permuted.set_("a", torch.arange(12.0).view(4, 3))
        unsqueezed["u"] = torch.ones(1, 3, 4)
        assert td["new"].shape == (3, 4, 5) and td["u"].shape == (3, 4)
        assert torch.equal(td["a"], torch.arange(12.0).view(4, 3).T)
        assert type(view[0]).__name__ == type(view.clone()).__name__ == "TensorDict"


def test_a_view_saves_as_the_dense_instance_it_shows(tmp_path: Path) -> None:
    # tensordict 0.15.3 saves its view classes with their operation (custom_op metadata);
    # here a view is saved as what it shows, in the viewed class (loadable anywhere)
    pair = Pair(a=torch.arange(12.0).view(3, 4), batch_size=[3, 4])
    with legacy():
        view = pair.permute(1, 0)
    view.memmap(tmp_path / "view")
    loaded = load_memmap(tmp_path / "view")
    assert type(loaded) is Pair and loaded.batch_size == (4, 3)
    assert torch.equal(loaded.a, pair.a.T)
