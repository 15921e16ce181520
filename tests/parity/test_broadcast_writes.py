"""Writes at a batch index broadcast as torch's indexed writes do (tensordict 0.15.3 too).

``x[0] = torch.ones(1, 28, 28)`` works on a tensor of shape ``[5, 28, 28]``: torch drops
leading dims of size 1 that the selected part lacks, then broadcasts dims of size 1. The same
holds for ``td[index] = value``, ``set_at_`` and ``update_at_`` of tensor dicts, tensor
classes and lazy stacks. A value that does not broadcast is refused, naming the key and both
shapes, and nothing is written (tensordict writes the keys before the bad one).
"""

from collections.abc import Callable

import pytest
import torch

from tensorclass import TensorClass, TensorDict, lazy_stack
from tensorclass.errors import BatchSizeError


class Images(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


def images() -> TensorDict:
    return TensorDict(x=torch.zeros(5, 28, 28), y=torch.zeros(5, 3), batch_size=[5])


def test_a_leading_one_is_dropped_at_an_int_index() -> None:
    td = images()
    td[0] = TensorDict({"x": torch.ones(1, 28, 28)}, [])
    assert td["x"][0].sum().item() == 784 and td["x"][1:].sum().item() == 0
    td[1] = {"x": torch.ones(1, 1, 28, 28)}  # several leading ones, from a dict
    assert td["x"][1].sum().item() == 784


def test_a_value_of_batch_size_one_fills_an_int_index() -> None:
    td = images()
    td[2] = TensorDict({"x": torch.ones(1, 28, 28)}, [1])
    assert td["x"][2].sum().item() == 784 and td["x"].sum().item() == 784


def test_trailing_ones_and_missing_dims_broadcast() -> None:
    td = images()
    td[0] = TensorDict({"x": torch.ones(28)}, [])
    td[1:3] = TensorDict({"x": torch.ones(1, 28, 28)}, [1])
    assert td["x"].sum().item() == 3 * 784


def test_one_tensor_written_into_every_leaf() -> None:
    td = images()
    td[0] = torch.ones(1, 1)  # [1, 1] -> [1] fits both [28, 28] and [3]
    assert td["x"].sum().item() == 784 and td["y"].sum().item() == 3


def test_set_at_and_update_at_broadcast() -> None:
    td = images()
    td.set_at_("x", torch.ones(1, 28, 28), 0)
    td.set_at_("x", torch.ones(28), 1)
    td.update_at_({"x": torch.ones(1, 28, 28), "y": torch.ones(1, 3)}, 2)
    td.update_at_({"x": torch.ones(28), "y": torch.ones(1)}, 3)
    assert td["x"].sum().item() == 4 * 784 and td["y"].sum().item() == 6


def test_tensor_classes_broadcast() -> None:
    data = Images(x=torch.zeros(5, 28, 28), y=torch.zeros(5, 3), batch_size=[5])
    data[0] = Images(x=torch.ones(1, 28, 28), y=torch.ones(1, 3), batch_size=[])
    data.set_at_("x", torch.ones(1, 28, 28), 1)
    assert data.x.sum().item() == 2 * 784 and data.y.sum().item() == 3


def test_lazy_stacks_broadcast_into_their_members() -> None:
    members = [TensorDict(x=torch.zeros(28, 28)) for _ in range(5)]
    stack = lazy_stack(members)
    stack[0] = TensorDict({"x": torch.ones(1, 28, 28)}, [])
    stack[1:3] = TensorDict({"x": torch.ones(1, 28, 28)}, [1])
    stack.set_at_("x", torch.ones(1, 28, 28), 3)
    stack.update_at_({"x": torch.ones(1, 28, 28)}, 4)  # tensordict refuses this one
    assert [m["x"].sum().item() for m in members] == [784] * 5


@pytest.mark.parametrize(
    "write",
    [
        lambda td: td.__setitem__(0, TensorDict({"y": torch.ones(3), "x": torch.ones(2, 28, 28)})),
        lambda td: td.update_at_({"y": torch.ones(3), "x": torch.ones(2, 28, 28)}, 0),
        lambda td: td.__setitem__(0, {"y": torch.ones(3), "x": torch.ones(2, 28, 28)}),
    ],
)
def test_a_shape_that_does_not_broadcast_writes_nothing(
    write: Callable[[TensorDict], object],
) -> None:
    td = images()
    with pytest.raises(BatchSizeError, match=r"'x'.*\[2, 28, 28\].*\[28, 28\]"):
        write(td)
    assert td["y"].sum().item() == 0 and td["x"].sum().item() == 0


def test_set_at_names_the_key_and_the_shapes() -> None:
    td = images()
    with pytest.raises(BatchSizeError, match=r"'x'.*\[2, 28\].*\[28, 28\]"):
        td.set_at_("x", torch.ones(2, 28), 0)
    with pytest.raises(BatchSizeError, match=r"'x'"):
        td[0] = TensorDict({"x": torch.ones(2, 1, 28, 28)}, [])  # extra leading dim is 2
    assert td["x"].sum().item() == 0


def test_same_as_tensordict() -> None:
    tensordict = pytest.importorskip("tensordict")
    ours, theirs = (
        images(),
        tensordict.TensorDict(x=torch.zeros(5, 28, 28), y=torch.zeros(5, 3), batch_size=[5]),
    )
    for td, cls in ((ours, TensorDict), (theirs, tensordict.TensorDict)):
        td[0] = cls({"x": torch.ones(1, 28, 28)}, [])
        td.set_at_("y", torch.ones(1, 3), 1)
        td[2] = torch.ones(1, 1)
    assert torch.equal(ours["x"], theirs["x"]) and torch.equal(ours["y"], theirs["y"])


def test_update_at_casts_to_each_leaf_dtype_at_an_advanced_index() -> None:
    td = TensorDict(i=torch.zeros(4, dtype=torch.long), x=torch.zeros(4, 2), batch_size=[4])
    td.update_at_({"i": torch.tensor([2.0, 3.0]), "x": torch.ones(2, 2)}, torch.tensor([0, 3]))
    assert td["i"].tolist() == [2, 0, 0, 3] and td["i"].dtype == torch.long
    assert td["x"].sum().item() == 4
    with pytest.raises(BatchSizeError, match=r"'x'.*\[3, 2\].*\[2, 2\]"):  # one key alone
        td.update_at_({"x": torch.ones(3, 2)}, torch.tensor([0, 3]))
