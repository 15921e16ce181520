"""Tensor classes over torch.distributed: two processes on loopback with gloo."""

import enum
from typing import Any

import pytest
import torch
import torch.distributed as dist

from tensorclass import StructureMismatchError, TensorClass, TensorDict, lazy_stack

from .two_ranks import run_two_ranks

pytestmark = pytest.mark.skipif(
    not dist.is_available(), reason="torch.distributed is not available"
)


class Info(TensorClass):
    step: torch.Tensor
    note: str = ""


class Episode(TensorClass):
    obs: torch.Tensor
    reward: torch.Tensor
    info: Info


class Phase(enum.Enum):
    COLLECT = "collect"
    TRAIN = "train"


class Step(TensorClass):
    x: torch.Tensor
    phase: Phase
    previous: Phase | None = None


def phases(step: Step) -> list[str]:
    """What arrived in the enum fields: ``"Phase.TRAIN"`` for a member, else the repr."""
    return [str(v) if isinstance(v, Phase) else repr(v) for v in (step.phase, step.previous)]


def episode(value: float) -> Episode:
    return Episode(
        obs=torch.full((3, 2), value),
        reward=torch.full((3,), value),
        info=Info(torch.full((3,), int(value)), note=f"v{value}", batch_size=[3]),
        batch_size=[3],
    )


def describe(ep: Any) -> dict[str, Any]:
    return {
        "class": type(ep).__name__,
        "inner": type(ep.info).__name__,
        "obs": ep.obs.tolist(),
        "step": ep.info.step.tolist(),
        "note": ep.info.note,
    }


def _scenarios(rank: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # seed 003: send/recv of a nested structure
    data = TensorDict({"a": torch.zeros(()), ("b", "c"): torch.ones(())}, [])
    if rank == 1:
        data["a"] += 5
        data.send(dst=0)
    else:
        out["recv_src"] = data.recv(src=1)
        out["seed"] = [data["a"].item(), data["b", "c"].item()]
    # typed, nested, with non-tensor values; non-contiguous leaves received in place
    ep = episode(7.0 if rank == 1 else 0.0)
    if rank == 0:
        ep.obs = torch.zeros(2, 3).t()  # not contiguous
        ep.recv(1)
        out["typed_recv"] = describe(ep)
    else:
        ep.send(0)
    # enum fields travel as their values and arrive as members of the declared enum
    step = Step(
        torch.full((2,), float(rank)),
        Phase.TRAIN if rank else Phase.COLLECT,
        previous=Phase.COLLECT,
        batch_size=[2],
    )
    if rank == 1:
        step.send(0)
    else:
        step.recv(1)
        out["enum_recv"] = phases(step)
    mine = Step(torch.zeros(2), Phase(["collect", "train"][rank]), batch_size=[2])
    out["enum_gather"] = [phases(s) for s in mine.all_gather()]
    # isend / irecv
    ep = episode(3.0 if rank == 0 else 0.0)
    if rank == 0:
        ep.isend(1).wait()
    else:
        transfer = ep.irecv(0)
        out["irecv"] = describe(transfer.wait())
    # collectives
    ep = episode(float(rank + 1))
    out["broadcast"] = describe(ep.broadcast(1))
    ep = episode(float(rank + 1))
    ep.all_reduce()
    out["all_reduce"] = describe(ep)
    ep = episode(float(rank + 1))
    ep.all_reduce(dist.ReduceOp.MAX)
    out["all_reduce_max"] = ep.obs[0, 0].item()
    gathered = episode(float(rank + 1)).all_gather()
    out["all_gather"] = [describe(g) for g in gathered]
    # lazy stacks travel member by member
    members = [TensorDict({"x": torch.full((2,), float(rank * 10 + i))}, [2]) for i in range(2)]
    stack = lazy_stack(members, 0)
    if rank == 0:
        stack.send(1)
    else:
        stack.recv(0)
        out["lazy"] = [m["x"].tolist() for m in members]
    # mismatched structures: a clear error on both sides, no deadlock
    odd = TensorDict({"x": torch.zeros(2)}, [2])
    if rank == 1:
        odd["extra"] = torch.zeros(2, 3)
    try:
        odd.send(1) if rank == 0 else odd.recv(0)
    except StructureMismatchError as err:
        out["p2p_mismatch"] = str(err)
    bad = TensorDict({"x": torch.zeros(2, dtype=torch.float64 if rank else torch.float32)}, [2])
    try:
        bad.all_reduce()
    except StructureMismatchError as err:
        out["collective_mismatch"] = str(err)
    # isend / irecv in either order: two ranks swap their data (nothing waits for the peer)
    mine = episode(float(rank + 10))
    theirs = episode(0.0)
    sending = mine.isend(1 - rank)
    receiving = theirs.irecv(1 - rank)
    sending.wait()
    out["swap"] = describe(receiving.wait())
    # isend to a receiver of a different structure: the receiver raises, keeps its data,
    # and the channel stays usable (the sender's messages were drained)
    if rank == 0:
        episode(1.0).isend(1).wait()
    else:
        other = Info(torch.full((3,), 5), note="kept", batch_size=[3])
        try:
            other.irecv(0)
        except StructureMismatchError as err:
            out["isend_mismatch"] = str(err)
        out["isend_mismatch_kept"] = [other.step.tolist(), other.note]
    # a different class or batch size through a blocking send: both sides raise
    wrong: Any = episode(1.0) if rank == 0 else TensorDict({"obs": torch.zeros(3, 2)}, [3])
    try:
        wrong.send(1) if rank == 0 else wrong.recv(0)
    except StructureMismatchError as err:
        out["class_mismatch"] = str(err)
    sized = TensorDict({"x": torch.zeros(2 + rank)}, [2 + rank])
    try:
        sized.send(1) if rank == 0 else sized.recv(0)
    except StructureMismatchError as err:
        out["size_mismatch"] = str(err)
    # point to point still in step after the errors
    ep = episode(4.0 if rank == 0 else 0.0)
    if rank == 0:
        ep.send(1)
    else:
        ep.recv(0)
        out["p2p_after_errors"] = describe(ep)
    # still in step after the errors
    ok = TensorDict({"x": torch.full((2,), float(rank))}, [2])
    ok.all_reduce()
    out["after_errors"] = ok["x"].tolist()
    return out


@pytest.fixture(scope="module")
def results() -> dict[int, dict[str, Any]]:
    return run_two_ranks(_scenarios)


def test_seed_003_send_recv(results: dict[int, dict[str, Any]]) -> None:
    assert results[0]["recv_src"] == 1
    assert results[0]["seed"] == [5.0, 1.0]


def test_typed_nested_classes_arrive_whole(results: dict[int, dict[str, Any]]) -> None:
    expected = {
        "class": "Episode",
        "inner": "Info",
        "obs": [[7.0, 7.0]] * 3,
        "step": [7, 7, 7],
        "note": "v7.0",
    }
    assert results[0]["typed_recv"] == expected
    assert results[1]["irecv"]["obs"] == [[3.0, 3.0]] * 3 and results[1]["irecv"]["note"] == "v3.0"


def test_enum_fields_arrive_as_members(results: dict[int, dict[str, Any]]) -> None:
    assert results[0]["enum_recv"] == ["Phase.TRAIN", "Phase.COLLECT"]
    for rank in (0, 1):
        assert results[rank]["enum_gather"] == [["Phase.COLLECT", "None"], ["Phase.TRAIN", "None"]]


def test_collectives(results: dict[int, dict[str, Any]]) -> None:
    for rank in (0, 1):
        assert results[rank]["broadcast"]["obs"] == [[2.0, 2.0]] * 3
        assert results[rank]["broadcast"]["note"] == "v2.0"
        assert results[rank]["all_reduce"]["obs"] == [[3.0, 3.0]] * 3
        assert results[rank]["all_reduce"]["step"] == [3, 3, 3]
        assert results[rank]["all_reduce_max"] == 2.0
        gathered = results[rank]["all_gather"]
        assert [g["obs"][0][0] for g in gathered] == [1.0, 2.0]
        assert [g["note"] for g in gathered] == ["v1.0", "v2.0"]
        assert {g["class"] for g in gathered} == {"Episode"}


def test_lazy_stacks_are_received_into_the_members(results: dict[int, dict[str, Any]]) -> None:
    assert results[1]["lazy"] == [[0.0, 0.0], [1.0, 1.0]]


def test_isend_and_irecv_in_either_order(results: dict[int, dict[str, Any]]) -> None:
    for rank in (0, 1):
        swapped = results[rank]["swap"]
        other = 1 - rank
        assert swapped["obs"] == [[other + 10.0] * 2] * 3 and swapped["note"] == f"v{other + 10.0}"
        assert swapped["class"] == "Episode" and swapped["inner"] == "Info"


def test_isend_mismatch_raised_by_the_receiver(results: dict[int, dict[str, Any]]) -> None:
    message = results[1]["isend_mismatch"]
    assert "cannot receive a Info from rank 0" in message
    assert "class" in message and "Episode" in message
    assert results[1]["isend_mismatch_kept"] == [[5, 5, 5], "kept"]  # nothing overwritten
    assert "isend_mismatch" not in results[0]  # nothing waits for the receiver's answer
    assert results[1]["p2p_after_errors"]["obs"] == [[4.0, 4.0]] * 3


def test_other_mismatches_raise_on_both_sides(results: dict[int, dict[str, Any]]) -> None:
    assert "cannot send a Episode to rank 1" in results[0]["class_mismatch"]
    assert "cannot receive a TensorDict from rank 0" in results[1]["class_mismatch"]
    for rank in (0, 1):
        assert "keys only" in results[rank]["class_mismatch"]
    assert "batch size [2] here, [3] on the receiver (rank 1)" in results[0]["size_mismatch"]
    assert "batch size [3] here, [2] on the sender (rank 0)" in results[1]["size_mismatch"]


def test_mismatched_structures_are_clear_errors(results: dict[int, dict[str, Any]]) -> None:
    assert "keys only on the receiver (rank 1): ['extra']" in results[0]["p2p_mismatch"]
    assert "keys only here: ['extra']" in results[1]["p2p_mismatch"]
    for rank in (0, 1):
        message = results[rank]["collective_mismatch"]
        assert (
            "cannot all_reduce" in message
            and "float64[2] on rank 1, float32[2] on rank 0" in message
        )
        assert results[rank]["after_errors"] == [1.0, 1.0]
