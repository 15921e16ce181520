"""A consolidated instance over ``send``/``recv``: its one buffer is the one data message.

Two processes on loopback with gloo, as in ``test_distributed.py``.
"""

from typing import Any

import pytest
import torch
import torch.distributed as dist

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack

from .two_ranks import run_two_ranks

pytestmark = pytest.mark.skipif(
    not dist.is_available(), reason="torch.distributed is not available"
)


class Inner(TensorClass):
    b: torch.Tensor
    note: str = ""


class Outer(TensorClass):
    a: torch.Tensor
    inner: Inner


def plain(value: float) -> TensorDict:
    return TensorDict(
        {"a": torch.full((3, 4), value), "n": {"b": torch.full((3,), int(value))}}, [3]
    )


def typed(value: float) -> Outer:
    inner = Inner(torch.full((2, 5), value, dtype=torch.float64), note=f"v{value}", batch_size=[2])
    return Outer(a=torch.full((2,), int(value), dtype=torch.int16), inner=inner, batch_size=[2])


def stacked(value: float) -> Any:
    return lazy_stack([plain(value)[0], plain(value + 1)[0]])


class Recorder:
    """Wraps ``dist.isend``/``dist.irecv`` to list the tensors each posts."""

    def __init__(self) -> None:
        self.sent: list[torch.Tensor] = []
        self.received: list[torch.Tensor] = []
        self._isend, self._irecv = dist.isend, dist.irecv

    def __enter__(self) -> "Recorder":
        def isend(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            self.sent.append(tensor)
            return self._isend(tensor, *args, **kwargs)

        def irecv(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            self.received.append(tensor)
            return self._irecv(tensor, *args, **kwargs)

        dist.isend, dist.irecv = isend, irecv
        return self

    def __exit__(self, *exc: object) -> None:
        dist.isend, dist.irecv = self._isend, self._irecv


def _buffer_ptr(node: Any) -> int:
    members = node.members if isinstance(node, LazyStackedTensorDict) else [node]
    leaves = [v for m in members for _, v in m.items(include_nested=True, leaves_only=True)]
    return min(t.untyped_storage().data_ptr() for t in leaves if isinstance(t, torch.Tensor))


def _values(node: Any) -> dict[str, Any]:
    return {
        ".".join(k) if isinstance(k, tuple) else k: v.tolist()
        for k, v in node.items(include_nested=True, leaves_only=True)
        if isinstance(v, torch.Tensor)
    }


def _scenarios(rank: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, make in (("plain", plain), ("typed", typed), ("stacked", stacked)):
        # consolidated on both sides: one data message, received into the buffer
        if rank == 1:
            data = make(7.0).consolidate()
            with Recorder() as rec:
                data.send(dst=0)
            data_messages = rec.sent[2:]  # after the header and the description
            if name == "typed":
                data_messages = data_messages[1:]  # the non-tensor payload
            out[f"{name}_sent"] = [
                (m.numel(), m.untyped_storage().data_ptr() == _buffer_ptr(data))
                for m in data_messages
            ]
            out[f"{name}_nbytes"] = data_messages[0].untyped_storage().nbytes()
        else:
            data = make(0.0).consolidate()
            before = _buffer_ptr(data)
            with Recorder() as rec:
                data.recv(src=1)
            out[f"{name}_received"] = [
                m.untyped_storage().data_ptr() == before for m in rec.received
            ]
            out[f"{name}_still"] = data.is_consolidated() and _buffer_ptr(data) == before
            out[f"{name}_values"] = _values(data) == _values(make(7.0))
            if name == "typed":
                out["typed_note"] = data.inner.note
        # consolidated sender, plain receiver; plain sender, consolidated receiver
        if rank == 1:
            make(3.0).consolidate().send(dst=0)
            make(4.0).send(dst=0)
        else:
            loose = make(0.0)
            loose.recv(src=1)
            out[f"{name}_into_plain"] = _values(loose) == _values(make(3.0))
            packed = make(0.0).consolidate()
            packed.recv(src=1)
            out[f"{name}_from_plain"] = _values(packed) == _values(make(4.0))
            out[f"{name}_from_plain_still"] = packed.is_consolidated()
    return out


@pytest.fixture(scope="module")
def results() -> dict[int, dict[str, Any]]:
    return run_two_ranks(_scenarios)


NAMES = ["plain", "typed", "stacked"]


@pytest.mark.parametrize("name", NAMES)
def test_sender_posts_its_buffer_once(results: dict[int, dict[str, Any]], name: str) -> None:
    sent = results[1][f"{name}_sent"]
    assert len(sent) == 1  # one torch.distributed call for the data
    numel, is_own_buffer = sent[0]
    assert is_own_buffer  # no copy: the consolidated buffer itself
    assert numel == results[1][f"{name}_nbytes"]


@pytest.mark.parametrize("name", NAMES)
def test_receiver_receives_into_its_buffer(results: dict[int, dict[str, Any]], name: str) -> None:
    assert results[0][f"{name}_received"] == [True]  # one irecv, into its own buffer
    assert results[0][f"{name}_still"]
    assert results[0][f"{name}_values"]


def test_non_tensor_values_arrive(results: dict[int, dict[str, Any]]) -> None:
    assert results[0]["typed_note"] == "v7.0"


@pytest.mark.parametrize("name", NAMES)
def test_mixed_consolidation(results: dict[int, dict[str, Any]], name: str) -> None:
    assert results[0][f"{name}_into_plain"]
    assert results[0][f"{name}_from_plain"]
    assert results[0][f"{name}_from_plain_still"]
