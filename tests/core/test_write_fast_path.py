"""The write fast path is one rule (``engine.core.state.fast_write``), inlined into every
write path: changing it in that one place changes every write."""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from tensorclass import TensorClass, TensorDict
from tensorclass.engine.core.state import FAST_WRITE, TensorCore, fast_write


class Item(TensorClass):
    x: torch.Tensor
    y: torch.Tensor


def refuse(node: Any, key: Any, value: Any) -> bool:
    return False


def _writes() -> dict[str, Callable[[], Any]]:
    """Each write path, writing a plain tensor that fits the batch."""
    t = torch.ones(3)

    def nested_write() -> None:
        td = TensorDict({"n": {"a": torch.zeros(3)}}, [3])
        td["n", "a"] = t

    def typed_setattr() -> None:
        item = Item(x=torch.zeros(3), y=torch.zeros(3), batch_size=[3])
        item.x = t

    return {
        "td[key] = t": lambda: TensorDict({}, [3]).__setitem__("k", t),
        "td.set(key, t)": lambda: TensorDict({}, [3]).set("k", t),
        "td[a, b] = t": nested_write,
        "item.x = t": typed_setattr,
        "TensorDict({...})": lambda: TensorDict({"k": t}, [3]),
        "TensorDict(k=...)": lambda: TensorDict(batch_size=[3], k=t),
        "TensorDict 2 dims": lambda: TensorDict({"k": torch.ones(3, 2, 4)}, [3, 2]),
        "td.update({...})": lambda: TensorDict({}, [3]).update({"k": t}),
    }


@pytest.fixture
def converted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The keys that went through the checked path (``_convert``)."""
    seen: list[str] = []
    checked = TensorCore._convert

    def spy(self: TensorCore, key: str, value: Any, where: object = None) -> Any:
        seen.append(key)
        return checked(self, key, value, where)

    monkeypatch.setattr(TensorCore, "_convert", spy)
    yield seen


@pytest.mark.parametrize("path", list(_writes()))
def test_every_write_path_takes_the_fast_path(path: str, converted: list[str]) -> None:
    _writes()[path]()
    assert converted == []


@pytest.mark.parametrize("path", list(_writes()))
def test_every_write_path_follows_the_one_rule(path: str, converted: list[str]) -> None:
    write = _writes()[path]
    with FAST_WRITE.replaced(refuse):
        write()
        assert "k" in converted or "a" in converted or "x" in converted
    converted.clear()
    write()  # the rule is back
    assert converted == []


def test_the_rule_is_inlined_not_called() -> None:
    from tensorclass.engine.keys import access
    from tensorclass.engine.shape import indexing

    for func in (access.set, indexing.__setitem__, TensorCore._set_str, TensorDict._fill):
        assert "fast_write" not in func.__code__.co_names


def test_the_constructor_reads_the_instance_part_once() -> None:
    # the constructor's loop runs the rule with its instance part hoisted out of the loop
    hoisted = [name for name in TensorDict._fill.__code__.co_varnames if "_hoisted_" in name]
    assert hoisted
    with FAST_WRITE.replaced(refuse):  # a rule without an instance part: nothing to hoist
        assert not any("_hoisted_" in name for name in TensorDict._fill.__code__.co_varnames)
    assert hoisted[0] in TensorDict._fill.__code__.co_varnames  # the rule is back


def test_the_rule() -> None:
    td = TensorDict({}, [3, 2])
    assert fast_write(td, "k", torch.ones(3, 2, 5))
    assert not fast_write(td, "k", torch.ones(3, 3))
    assert not fast_write(td, "k", torch.ones(3))
    assert not fast_write(td, "k", 1.0)
    assert not fast_write(td.lock_(), "k", torch.ones(3, 2))
    item = Item(x=torch.zeros(3), y=torch.zeros(3), batch_size=[3])
    assert fast_write(item, "x", torch.ones(3))
    assert not fast_write(item, "z", torch.ones(3))
