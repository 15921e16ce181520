"""``Inlined.hoisting``: a rule inlined into a loop computes its parts that read only the
loop-invariant arguments once, before the loop, and gives the same results as the rule
run per item (``engine.core.inline``)."""

from typing import Any

import pytest

from tensorclass.engine.core.inline import Inlined


class Node:
    """Counts the reads of its attributes (each read of the rule's node part)."""

    def __init__(self, dims: tuple[int, ...], open_: bool = True) -> None:
        self.reads = 0
        self._dims = dims
        self._open = open_

    @property
    def dims(self) -> tuple[int, ...]:
        self.reads += 1
        return self._dims

    @property
    def open(self) -> bool:
        self.reads += 1
        return self._open


def accepts(node: Node, key: str, value: Any) -> bool:
    # the one- and two-dim cases read node.dims[1] only where there are two dims
    return (
        value.__class__ is tuple
        and node.open
        and (
            value[0] == dims[0]
            if (n := len(dims := node.dims)) == 1
            else value[0] == dims[0] and value[1] == dims[1]
            if n == 2
            else value[:n] == dims
        )
    )


ACCEPTS = Inlined(accepts)


@ACCEPTS.hoisting("self")
def hoisted(self: Node, items: list[tuple[str, Any]]) -> list[str]:
    out = []
    for key, value in items:
        if accepts(self, key, value):
            out.append(key)
    return out


@ACCEPTS
def per_item(self: Node, items: list[tuple[str, Any]]) -> list[str]:
    out = []
    for key, value in items:
        if accepts(self, key, value):
            out.append(key)
    return out


ITEMS = [("a", (3,)), ("b", (3, 2)), ("c", (4, 2)), ("d", 1.0), ("e", (3, 2, 5)), ("f", ())]


@pytest.mark.parametrize("dims", [(3,), (3, 2), (3, 2, 5), ()])
@pytest.mark.parametrize("open_", [True, False])
def test_same_results_as_the_rule_per_item(dims: tuple[int, ...], open_: bool) -> None:
    try:
        expected: Any = per_item(Node(dims, open_), ITEMS)
    except IndexError as err:  # the rule raises on a value with too few dims: so does the loop
        expected = type(err)
    try:
        got: Any = hoisted(Node(dims, open_), ITEMS)
    except IndexError as err:
        got = type(err)
    assert got == expected


def test_the_node_part_is_read_once_per_loop() -> None:
    node = Node((3, 2))
    items = [("a", (3, 2))] * 10
    assert hoisted(node, items) == ["a"] * 10
    assert node.reads == 2  # node.open and node.dims, once each
    node = Node((3, 2))
    per_item(node, items)
    assert node.reads == 20


def test_a_part_that_raises_before_the_loop_leaves_the_rule_as_written() -> None:
    class Broken(Node):
        @property
        def dims(self) -> tuple[int, ...]:
            raise RuntimeError("no dims")

    # no value is a tuple: the rule never reads dims, and neither does the loop
    assert hoisted(Broken((3,)), [("d", 1.0), ("e", 2.0)]) == []
    # a tuple: the rule reads dims and raises, at that item
    with pytest.raises(RuntimeError, match="no dims"):
        hoisted(Broken((3,)), [("d", 1.0), ("a", (3,))])


def test_a_replaced_rule_is_hoisted_too() -> None:
    def closed(node: Node, key: str, value: Any) -> bool:
        return not node.open and key != "b"

    node = Node((3,), open_=False)
    with ACCEPTS.replaced(closed):
        assert hoisted(node, ITEMS) == ["a", "c", "d", "e", "f"]
        assert node.reads == 1
    assert hoisted(Node((3,)), ITEMS[:-1]) == ["a", "b", "e"]


def test_invariant_names_are_parameters_left_as_they_are() -> None:
    with pytest.raises(TypeError, match="'other'"):

        @ACCEPTS.hoisting("other")
        def fill(self: Node, items: list[tuple[str, Any]]) -> None:
            for key, value in items:
                accepts(self, key, value)

    with pytest.raises(TypeError, match="'self'"):

        @ACCEPTS.hoisting("self")
        def refill(self: Node, items: list[tuple[str, Any]]) -> None:
            for key, value in items:
                accepts(self, key, value)
                self = Node(())


@ACCEPTS.hoisting("self", when="len(items) > 2")
def hoisted_when_long(self: Node, items: Any) -> list[str]:
    out = []
    for key, value in items:
        if accepts(self, key, value):
            out.append(key)
    return out


def test_hoisted_only_where_the_condition_holds() -> None:
    node = Node((3,))
    assert hoisted_when_long(node, [("a", (3,))] * 5) == ["a"] * 5
    assert node.reads == 2
    node = Node((3,))
    assert hoisted_when_long(node, [("a", (3,))] * 2) == ["a"] * 2
    assert node.reads == 4  # read per item
    node = Node((3,))  # a condition that raises (no len): the rule as written
    assert hoisted_when_long(node, iter([("a", (3,))] * 3)) == ["a"] * 3
    assert node.reads == 6
