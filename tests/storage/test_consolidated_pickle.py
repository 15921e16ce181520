"""The one-buffer pickle of a consolidated instance: every protocol, out-of-band buffers,
torch.save, multiprocessing's pickler, and malformed descriptions."""

import io
import pickle
from multiprocessing.reduction import ForkingPickler
from typing import Any

import pytest
import torch

from tensorclass import LazyStackedTensorDict, TensorClass, TensorDict, lazy_stack
from tensorclass.engine.storage.consolidate import (
    PickledBuffer,
    buffer_from_bytes,
    rebuild_consolidated,
)
from tensorclass.engine.storage.consolidated_buffer import LEVEL, TENSOR_ENTRY, layout_of


class Step(TensorClass):
    obs: torch.Tensor
    reward: torch.Tensor
    tag: str = "t"


class Episode(TensorClass):
    step: Step
    extra: TensorDict
    name: str = "ep"


def _nested_typed() -> Episode:
    g = torch.Generator().manual_seed(1)
    return Episode(
        step=Step(
            obs=torch.randn(4, 3, generator=g),
            reward=torch.arange(4, dtype=torch.float64),
            tag="s",
            batch_size=[4],
        ),
        extra=TensorDict(
            mask=torch.tensor([True, False, True, True]),
            empty=torch.zeros(4, 0),
            deep={"i": torch.arange(8, dtype=torch.int16).reshape(4, 2)},
            text="note",
            batch_size=[4],
        ),
        name="first",
        batch_size=[4],
    )


def _lazy() -> LazyStackedTensorDict:
    return lazy_stack(
        [TensorDict(a=torch.zeros(2, 3)), TensorDict(a=torch.ones(5, 3), b=torch.arange(3))]
    )


def _leaves(x: Any) -> list[tuple[Any, torch.Tensor]]:
    if isinstance(x, LazyStackedTensorDict):
        return [pair for m in x.members for pair in _leaves(m)]
    return [
        (k, v)
        for k, v in x.items(include_nested=True, leaves_only=True)
        if isinstance(v, torch.Tensor)
    ]


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b) and a.batch_size == b.batch_size
    mine, theirs = _leaves(a), _leaves(b)
    assert [k for k, _ in mine] == [k for k, _ in theirs]
    for (_, x), (_, y) in zip(mine, theirs, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)


MAKERS = [_nested_typed, _lazy]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_protocol_round_trips(make, protocol: int) -> None:
    source = make().consolidate()
    back = pickle.loads(pickle.dumps(source, protocol=protocol))
    _same(back, source)
    assert back.is_consolidated() and back.is_locked
    if isinstance(back, Episode):
        assert back.name == "first" and back.step.tag == "s" and back.extra["text"] == "note"
    # the copy owns its memory: writing it leaves the source alone
    key, leaf = _leaves(back)[0]
    leaf.add_(1)
    assert not torch.equal(leaf, dict(_leaves(source))[key])


def test_locks_and_names_are_kept_per_level() -> None:
    td = TensorDict(a=torch.zeros(3, 2), sub={"b": torch.ones(3)}, batch_size=[3], names=["t"])
    result = td.consolidate(inplace=True)
    result["sub"].lock_()
    back = pickle.loads(pickle.dumps(result))
    assert not back.is_locked and back["sub"].is_locked
    assert back.names == ["t"] and back.is_consolidated()


def test_plain_pickle_holds_the_bytes_not_a_tensor_storage() -> None:
    source = _nested_typed().consolidate()
    data = pickle.dumps(source, protocol=4)
    assert b"buffer_from_bytes" in data and b"_rebuild_tensor" not in data
    # torch.save (protocol 2) records the buffer as one tensor storage
    saved = pickle.dumps(source, protocol=2)
    assert b"same_buffer" in saved and b"buffer_from_bytes" not in saved


def test_out_of_band_buffers_are_used_in_place() -> None:
    source = _nested_typed().consolidate()
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(source, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1
    storage = bytearray(buffers[0].raw())
    back = pickle.loads(data, buffers=[storage])
    _same(back, source)
    back["step"].obs.zero_()  # the leaves view the given memory
    assert not any(storage[:16])
    # read-only buffers are copied once (the result is writable)
    back = pickle.loads(data, buffers=[bytes(storage)])
    back["step"].obs.fill_(2.0)


@pytest.mark.parametrize("make", MAKERS)
def test_torch_save_any_protocol(make) -> None:
    source = make().consolidate()
    # torch's weights_only reader reads protocol 2 only (its default)
    for protocol, weights_only in ((2, True), (4, False)):
        file = io.BytesIO()
        torch.save(source, file, pickle_protocol=protocol)
        file.seek(0)
        back = torch.load(file, weights_only=weights_only)
        _same(back, source)
        assert back.is_consolidated()


def test_multiprocessing_pickler_sends_the_tensor() -> None:
    # ForkingPickler hands the buffer over as a tensor (torch.multiprocessing shares it)
    packed = PickledBuffer(torch.arange(16, dtype=torch.uint8))
    function, args = ForkingPickler(io.BytesIO()).dispatch_table[PickledBuffer](packed)
    assert args[0] is packed.tensor and function(*args) is packed.tensor


def test_to_device_keeps_the_tree() -> None:
    source = _nested_typed().consolidate()
    moved = source.to("meta")
    assert type(moved) is Episode and moved.step.tag == "s"
    assert {t.device.type for _, t in _leaves(moved)} == {"meta"}
    assert [t.shape for _, t in _leaves(moved)] == [t.shape for _, t in _leaves(source)]


def test_buffer_from_bytes() -> None:
    assert buffer_from_bytes(b"").numel() == 0
    writable = bytearray(b"\x01\x02")
    tensor = buffer_from_bytes(writable)
    tensor[0] = 7
    assert writable[0] == 7  # used in place
    assert buffer_from_bytes(b"\x01\x02").tolist() == [1, 2]


def test_description_is_plain_values() -> None:
    layout = layout_of(TensorDict(a=torch.zeros(2)).consolidate())
    assert layout is not None
    buffer, description = layout
    assert description[0] == LEVEL and description[1] is TensorDict
    assert description[-1] == (("a", TENSOR_ENTRY, torch.float32, (2,)),)
    assert layout_of(TensorDict(a=torch.zeros(2))) is None


def _level(entries: tuple[Any, ...], cls: Any = TensorDict) -> tuple[Any, ...]:
    return (LEVEL, cls, (), None, None, False, entries)


@pytest.mark.parametrize(
    ("description", "message"),
    [
        (_level((("a", TENSOR_ENTRY, torch.float32, (5,)),)), "outside the buffer"),
        (_level(()), "do not fill"),
        (_level((("a", TENSOR_ENTRY, "float32", (4,)),)), "malformed|not a dtype"),
        (_level((("a", TENSOR_ENTRY, torch.float32, (-4,)),)), "bad shape"),
        (_level((("a", TENSOR_ENTRY, torch.float32, ("x",)),)), "bad shape"),
        (_level((), cls=dict), "not a tensor class"),
        ((7,), "unknown level kind"),
        ((), "malformed"),
    ],
)
def test_malformed_descriptions_raise(description: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rebuild_consolidated(torch.zeros(16, dtype=torch.uint8), description)


def test_rebuild_needs_a_byte_buffer() -> None:
    with pytest.raises(ValueError, match="uint8"):
        rebuild_consolidated(torch.zeros(4), _level(()))
