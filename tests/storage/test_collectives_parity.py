"""reduce / gather_and_stack / scatter over two gloo ranks, and asend / arecv with a pipe."""

import asyncio
import pickle
from typing import Any

import pytest
import torch
import torch.distributed as dist

from tensorclass import (
    LazyStackedTensorDict,
    StructureMismatchError,
    TensorClass,
    TensorDict,
    lazy_stack,
)

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


def episode(value: float, batch: tuple[int, ...] = (3,)) -> Episode:
    return Episode(
        obs=torch.full((*batch, 2), value),
        reward=torch.full(batch, value),
        info=Info(torch.full(batch, int(value)), note=f"v{value}", batch_size=list(batch)),
        batch_size=list(batch),
    )


def plain(value: float) -> TensorDict:
    return TensorDict(
        {
            "a": torch.arange(4.0).reshape(2, 2) + value,
            ("b", "c"): torch.full((2, 3), value, dtype=torch.int64),
        },
        [2],
    )


def stacked(value: float) -> LazyStackedTensorDict:
    members = [TensorDict({"x": torch.full((2,), value + i)}, [2]) for i in range(2)]
    members[1]["only_here"] = torch.full((2, 5), value)
    return lazy_stack(members, 0)


def leaves(node: Any) -> dict[str, list[Any]]:
    """Every tensor leaf as a list (lazy stacks member by member), by path."""
    out: dict[str, list[Any]] = {}
    if isinstance(node, LazyStackedTensorDict):
        for i, member in enumerate(node.members):
            out.update({f"<{i}>/{k}": v for k, v in leaves(member).items()})
        return out
    for key in node.keys(include_nested=True, leaves_only=True):
        value = node.get(key)
        if isinstance(value, torch.Tensor):
            out["/".join(key) if isinstance(key, tuple) else key] = value.tolist()
    return out


def torch_reduce(make: Any, rank: int, op: Any) -> dict[str, list[Any]]:
    """The reference: torch.distributed.reduce applied to each leaf on its own."""
    node = make(float(rank + 1))
    found: dict[str, list[Any]] = {}
    for key, value in leaves(node).items():
        tensor = torch.tensor(value)
        dist.reduce(tensor, 0, dist.ReduceOp.SUM if op is None else op)
        found[key] = tensor.tolist()
    return found


def _no_unpickling(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a tensor class exchange unpickled data")


def _scenarios(rank: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # nothing may be unpickled (torch's *_object collectives unpickle through _unpickler)
    pickle.loads = _no_unpickling  # type: ignore[assignment]
    pickle.Unpickler = _no_unpickling  # type: ignore[assignment,misc]
    dist.distributed_c10d._unpickler = _no_unpickling  # type: ignore[attr-defined]
    # reduce: each kind of instance, compared with torch's reduce leaf by leaf
    for name, make in (("plain", plain), ("typed", episode), ("lazy", stacked)):
        node = make(float(rank + 1))
        returned = node.reduce(0)
        out[f"reduce_{name}"] = (returned, leaves(node), torch_reduce(make, rank, None))
    node = episode(float(rank + 1))
    node.reduce(1, dist.ReduceOp.MAX)
    out["reduce_max"] = (leaves(node), torch_reduce(episode, rank, dist.ReduceOp.MAX))
    node = plain(float(rank + 1))
    handle = node.reduce(0, async_op=True, return_premature=True, bucket_bytes=8)
    works = list(handle)
    works[0].wait()
    out["reduce_async"] = (type(handle).__name__, len(works), leaves(node))
    odd = TensorDict({"x": torch.zeros(2, dtype=torch.float64 if rank else torch.float32)}, [2])
    try:
        odd.reduce(0)
    except StructureMismatchError as err:
        out["reduce_mismatch"] = (str(err), odd["x"].tolist())
    # gather_and_stack into rank 0 (dense, typed with nested and non-tensor, empty, lazy)
    if rank == 0:
        dense = TensorDict(
            {"a": torch.zeros(1, 2, 2), ("b", "c"): torch.zeros(1, 2, 3, dtype=torch.int64)},
            [1, 2],
        )
        out["gather_plain"] = (dense.gather_and_stack(0) is dense, leaves(dense))
        typed = episode(0.0, (1, 3))
        out["gather_typed"] = (typed.gather_and_stack(0) is typed, leaves(typed), typed.info.note)
        empty = TensorDict(batch_size=[1])
        empty.gather_and_stack(0)
        out["gather_empty"] = (empty.batch_size, leaves(empty))
        target = lazy_stack([stacked(0.0)], 0)
        target.gather_and_stack(0)
        out["gather_lazy"] = leaves(target)
    else:
        out["gather_plain"] = plain(5.0).gather_and_stack(0)
        episode(6.0).gather_and_stack(0)
        plain(7.0).gather_and_stack(0)
        stacked(8.0).gather_and_stack(0)
    # into rank 1, with a wrong batch size there: every rank raises
    try:
        (plain(0.0) if rank == 1 else plain(1.0)).gather_and_stack(1)
    except (ValueError, RuntimeError) as err:
        out["gather_bad_size"] = f"{type(err).__name__}: {err}"
    # scatter: rank 1 receives an instance it has no template for
    items = [plain(10.0), episode(11.0)] if rank == 0 else None
    got = TensorDict().scatter(0, items)
    out["scatter"] = (type(got).__name__, leaves(got), getattr(got.get("info", None), "note", None))
    items = [stacked(20.0), stacked(30.0)] if rank == 0 else None
    got = TensorDict().scatter(0, items)
    out["scatter_lazy"] = (isinstance(got, LazyStackedTensorDict), got.stack_dim, leaves(got))
    # a wrong list or a value JSON cannot hold: every rank raises, then still in step
    wrong: list[Any] | None = [plain(1.0)] if rank == 0 else None
    try:
        TensorDict().scatter(0, wrong)
    except (ValueError, RuntimeError) as err:
        out["scatter_bad_list"] = f"{type(err).__name__}: {err}"
    odd_value = TensorDict({"x": torch.zeros(1), "v": object()}, [])
    try:
        TensorDict().scatter(0, [odd_value, odd_value] if rank == 0 else None)
    except Exception as err:
        out["scatter_not_json"] = f"{type(err).__name__}: {err}"
    got = TensorDict().scatter(1, [plain(40.0), plain(41.0)] if rank == 1 else None, device="cpu")
    out["scatter_after_errors"] = leaves(got)
    out["scatter_device"] = str(got.device)
    return out


@pytest.fixture(scope="module")
def results() -> dict[int, dict[str, Any]]:
    return run_two_ranks(_scenarios)


@pytest.mark.parametrize("name", ["plain", "typed", "lazy"])
def test_reduce_matches_torch_leaf_by_leaf(results: dict[int, dict[str, Any]], name: str) -> None:
    returned, mine, reference = results[0][f"reduce_{name}"]
    assert returned is None and mine == reference
    returned, theirs, _ = results[1][f"reduce_{name}"]
    expected_rank1 = {"plain": plain, "typed": episode, "lazy": stacked}[name](2.0)
    assert theirs == leaves(expected_rank1)  # the other ranks keep their values


def test_reduce_op_and_destination(results: dict[int, dict[str, Any]]) -> None:
    mine, _ = results[1]["reduce_max"]
    assert mine == leaves(episode(2.0))
    mine, _ = results[0]["reduce_max"]
    assert mine == leaves(episode(1.0))


def test_reduce_async_handle(results: dict[int, dict[str, Any]]) -> None:
    kind, count, after = results[0]["reduce_async"]
    assert kind == "Transfer" and count == 1
    assert after == leaves(plain(1.0) + plain(2.0))
    assert results[1]["reduce_async"][2] == leaves(plain(2.0))


def test_reduce_mismatch_raises_on_every_rank(results: dict[int, dict[str, Any]]) -> None:
    for rank in (0, 1):
        message, kept = results[rank]["reduce_mismatch"]
        assert "cannot reduce" in message and "float64[2] on rank 1" in message
        assert kept == [0.0, 0.0]


def test_gather_and_stack(results: dict[int, dict[str, Any]]) -> None:
    assert results[1]["gather_plain"] is None
    same, found = results[0]["gather_plain"]
    assert same and found == leaves(torch.stack([plain(5.0)]))
    same, found, note = results[0]["gather_typed"]
    # one member gathered: its shared note becomes one value per element (a stack)
    assert same and found == leaves(torch.stack([episode(6.0)]))
    assert note == torch.stack([episode(6.0)]).info.note
    size, found = results[0]["gather_empty"]
    # update(inplace=True) keeps the batch size, as in tensordict
    assert size == torch.Size([1]) and found == leaves(torch.stack([plain(7.0)]))
    expected = stacked(8.0)
    assert results[0]["gather_lazy"] == {f"<0>/{k}": v for k, v in leaves(expected).items()}


def test_gather_and_stack_checks_the_destination_size(results: dict[int, dict[str, Any]]) -> None:
    assert "first batch dim must be 1; got batch size [2]" in results[1]["gather_bad_size"]
    assert "rank(s) [1] could not take part" in results[0]["gather_bad_size"]


def test_scatter_builds_what_the_receiver_did_not_know(results: dict[int, dict[str, Any]]) -> None:
    assert results[0]["scatter"] == ("TensorDict", leaves(plain(10.0)), None)
    assert results[1]["scatter"] == ("Episode", leaves(episode(11.0)), "v11.0")
    for rank, value in ((0, 20.0), (1, 30.0)):
        assert results[rank]["scatter_lazy"] == (True, 0, leaves(stacked(value)))


def test_scatter_errors_reach_every_rank(results: dict[int, dict[str, Any]]) -> None:
    assert "one instance per rank (2); got 1" in results[0]["scatter_bad_list"]
    assert "rank 0 could not scatter" in results[1]["scatter_bad_list"]
    assert "NotSerializableError" in results[0]["scatter_not_json"]
    assert "rank 0 could not scatter" in results[1]["scatter_not_json"]
    for rank in (0, 1):
        assert results[rank]["scatter_after_errors"] == leaves(plain(40.0 + rank))
        assert results[rank]["scatter_device"] == "cpu"  # device= moves what arrives


# -- asend / arecv through any pipe --------------------------------------------------------------


class QueuePipe:
    """An in-process pipe: what one side sends, the other receives (as a copy)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    async def asend(self, data: Any) -> None:
        await self.queue.put(data.clone())

    async def arecv(self, data: Any, *, device: Any = None) -> Any:
        sent = await self.queue.get()
        if device is not None:
            sent = sent.to(device)
        try:
            return data.update_(sent)  # same structure: written in place
        except Exception:
            return sent


@pytest.mark.parametrize(
    "make", [plain, episode, stacked], ids=["TensorDict", "typed", "lazy_stack"]
)
def test_asend_arecv_through_a_pipe(make: Any) -> None:
    async def exchange() -> tuple[Any, Any]:
        pipe = QueuePipe()
        into = make(0.0)
        receiving = asyncio.ensure_future(into.arecv(pipe, device="cpu"))
        await make(3.0).asend(pipe)
        return into, await receiving

    into, got = asyncio.run(exchange())
    assert got is into and leaves(into) == leaves(make(3.0))


def test_arecv_returns_what_the_pipe_returns() -> None:
    async def exchange() -> Any:
        pipe = QueuePipe()
        await episode(2.0).asend(pipe)
        return await TensorDict().arecv(pipe)

    got = asyncio.run(exchange())
    assert type(got) is Episode and leaves(got) == leaves(episode(2.0))
