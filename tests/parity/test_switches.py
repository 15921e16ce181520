"""tensordict 0.15.3's behaviour switches, with both of their values.

Every switch class tensordict exports is here: ``set_list_to_stack``,
``set_capture_non_tensor_stack``, ``set_get_defaults_to_none``, ``set_lazy_legacy``,
``set_printoptions`` (top level) and ``set_composite_lp_aggregate``, ``set_interaction_type``,
``set_skip_existing`` (``nn``). The first tests state tensordict's behaviour as literal
expectations (they run without tensordict); the last ones run the same code on both
libraries side by side when tensordict is installed.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

import tensorclass
import tensorclass.nn
from tensorclass import (
    KeyNotFoundError,
    LazyStackedTensorDict,
    ModeError,
    NonTensorStack,
    TensorDict,
    capture_non_tensor_stack,
    get_defaults_to_none,
    lazy_legacy,
    list_to_stack,
    set_capture_non_tensor_stack,
    set_get_defaults_to_none,
    set_lazy_legacy,
    set_list_to_stack,
)
from tensorclass.nn import composite_lp_aggregate, set_composite_lp_aggregate
from tensorclass.switches import _Modes

#: (switch, getter, default, the value that tensordict deprecates: it warns)
SWITCHES: list[tuple[type, Callable[..., Any], bool, bool]] = [
    (set_list_to_stack, list_to_stack, True, False),
    (set_capture_non_tensor_stack, capture_non_tensor_stack, False, True),
    (set_lazy_legacy, lazy_legacy, False, True),
]
IDS = [switch.__name__ for switch, *_ in SWITCHES]


@pytest.fixture(autouse=True)
def _restore_modes() -> Iterator[None]:
    """Each test starts from the defaults and leaves them (the switches are process-wide)."""
    saved = {name: getattr(_Modes, name) for name in vars(_Modes) if not name.startswith("_")}
    for name in saved:
        setattr(_Modes, name, None)
    yield
    for name, value in saved.items():
        setattr(_Modes, name, value)


def quiet(switch: type, mode: bool) -> Any:
    """The switch made without its deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return switch(mode)


def test_the_switch_classes_tensordict_exports() -> None:
    top = {name for name in dir(tensorclass) if name.startswith("set_")}
    assert top >= {
        "set_capture_non_tensor_stack",
        "set_get_defaults_to_none",
        "set_lazy_legacy",
        "set_list_to_stack",
        "set_printoptions",
    }
    nn = {name for name in dir(tensorclass.nn) if name.startswith("set_")}
    assert nn >= {"set_composite_lp_aggregate", "set_interaction_type", "set_skip_existing"}


def test_the_defaults() -> None:
    assert list_to_stack() is True and list_to_stack(allow_none=True) is None
    assert capture_non_tensor_stack() is False and capture_non_tensor_stack(True) is None
    assert lazy_legacy() is False and lazy_legacy(allow_none=True) is None
    assert get_defaults_to_none() is True
    assert composite_lp_aggregate() is False


@pytest.mark.parametrize(("switch", "getter", "default", "deprecated"), SWITCHES, ids=IDS)
def test_both_values_as_a_context_manager(
    switch: type, getter: Callable[..., Any], default: bool, deprecated: bool
) -> None:
    for mode in (True, False):
        with quiet(switch, mode):
            assert getter() is mode
            with quiet(switch, not mode):
                assert getter() is (not mode)
            assert getter() is mode
        assert getter() is default and getter(allow_none=True) is None
    with pytest.raises(RuntimeError), quiet(switch, not default):
        raise RuntimeError("the block ends with an error: the value comes back")
    assert getter() is default


@pytest.mark.parametrize(("switch", "getter", "default", "deprecated"), SWITCHES, ids=IDS)
def test_a_decorator_changes_nothing_until_called(
    switch: type, getter: Callable[..., Any], default: bool, deprecated: bool
) -> None:
    with pytest.warns(DeprecationWarning):

        @switch(deprecated)
        def inside(depth: int) -> Any:
            return inside(depth - 1) if depth else getter()

    assert getter() is default  # decorating a function at import time changes nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a call does not warn again: the decorator did
        assert inside(2) is deprecated
    assert getter() is default


@pytest.mark.parametrize(("switch", "getter", "default", "deprecated"), SWITCHES, ids=IDS)
def test_set_and_unset_apply_for_the_rest_of_the_program(
    switch: type, getter: Callable[..., Any], default: bool, deprecated: bool
) -> None:
    made = quiet(switch, not default)
    made.set()
    assert getter() is (not default)
    seen: list[Any] = []
    thread = threading.Thread(target=lambda: seen.append(getter()))
    thread.start()
    thread.join()
    assert seen == [not default]  # process-wide, as in tensordict: other threads see it
    made.unset()
    assert getter() is default and getter(allow_none=True) is None
    with pytest.raises(RuntimeError, match=r"unset\(\) without a set\(\)"):
        made.unset()


@pytest.mark.parametrize(("switch", "getter", "default", "deprecated"), SWITCHES, ids=IDS)
def test_only_the_deprecated_value_warns(
    switch: type, getter: Callable[..., Any], default: bool, deprecated: bool
) -> None:
    with pytest.warns(DeprecationWarning, match=f"{switch.__name__}\\({deprecated}\\)"):
        switch(deprecated)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        switch(not deprecated)


@pytest.mark.parametrize(("switch", "getter", "default", "deprecated"), SWITCHES, ids=IDS)
@pytest.mark.parametrize("bad", ["yes", None, 2, 0.5, [True]])
def test_a_bad_value_is_refused(
    switch: type, getter: Callable[..., Any], default: bool, deprecated: bool, bad: object
) -> None:
    with pytest.raises(ModeError, match="the mode must be True or False") as info:
        switch(bad)
    assert isinstance(info.value, ValueError) and getter(allow_none=True) is None
    assert quiet(switch, 1).mode is True and quiet(switch, 0).mode is False  # 0/1: bools


def test_set_get_defaults_to_none_applies_when_called_as_tensordicts_function() -> None:
    td = TensorDict(a=torch.zeros(2), batch_size=[2])
    assert td.get("missing") is None
    with pytest.warns(DeprecationWarning, match="set_get_defaults_to_none"):
        made = set_get_defaults_to_none(False)  # applies at once, for the whole program
    assert get_defaults_to_none() is False
    with pytest.raises(KeyNotFoundError, match="missing"):
        td.get("missing")
    with pytest.raises(KeyNotFoundError, match="missing"):
        td.get_at("missing", 0)
    assert td.get("missing", 5) == 5  # a default wins
    made.unset()
    assert td.get("missing") is None
    with pytest.warns(DeprecationWarning):
        set_get_defaults_to_none()  # the default argument is True
    assert get_defaults_to_none() is True
    with pytest.raises(ModeError):
        set_get_defaults_to_none("no")


def test_set_get_defaults_to_none_as_a_block_and_a_decorator() -> None:
    td = TensorDict()
    with pytest.warns(DeprecationWarning), set_get_defaults_to_none(False):
        with pytest.raises(KeyError):
            td.get("missing")
    assert td.get("missing") is None  # the value from before the call is back
    with pytest.warns(DeprecationWarning):

        @set_get_defaults_to_none(False)
        def strict() -> Any:
            return td.get("missing")

    assert get_defaults_to_none() is True  # decorating changed nothing
    with pytest.raises(KeyError):
        strict()
    assert td.get("missing") is None


def test_list_to_stack_values() -> None:
    td = TensorDict(batch_size=[3])
    td["tags"] = ["a", "b", "c"]
    assert type(td.get("tags")) is NonTensorStack and td[1]["tags"] == "b"
    with quiet(set_list_to_stack, False):
        td["shared"] = ["a", "b"]  # any length: one value
    assert td["shared"] == ["a", "b"] and td[2]["shared"] == ["a", "b"]
    with pytest.raises(ValueError, match="does not start with the batch size"):
        td["wrong"] = ["a", "b"]
    assert "wrong" not in td.keys()
    td.set_non_tensor("one", ["a", "b"])  # one value in either mode
    assert td[0]["one"] == ["a", "b"]


def test_capture_non_tensor_stack_values() -> None:
    members = [TensorDict(name="run"), TensorDict(name="run")]
    stacked = torch.stack(members)
    assert type(stacked.get("name")) is NonTensorStack
    assert stacked.get("name").tolist() == ["run", "run"] and stacked[0]["name"] == "run"
    with quiet(set_capture_non_tensor_stack, True):
        assert torch.stack(members)["name"] == "run"  # one shared value
        different = torch.stack([TensorDict(name="a"), TensorDict(name="b")])
        assert different["name"] == ["a", "b"]  # different values still make a stack


def test_lazy_legacy_values() -> None:
    members = [TensorDict(a=torch.zeros(2), batch_size=[2]) for _ in range(2)]
    assert type(torch.stack(members)) is TensorDict
    with quiet(set_lazy_legacy, True):
        stacked = torch.stack(members)
        assert isinstance(stacked, LazyStackedTensorDict) and stacked.batch_size == (2, 2)
        stacked[1]["a"] = torch.ones(2)  # a lazy stack writes through to its members
        assert members[1]["a"].tolist() == [1.0, 1.0]
    assert type(torch.stack(members)) is TensorDict


def test_composite_lp_aggregate_set_unset_and_threads() -> None:
    made = set_composite_lp_aggregate(True)
    made.set()
    seen: list[bool] = []
    thread = threading.Thread(target=lambda: seen.append(composite_lp_aggregate()))
    thread.start()
    thread.join()
    assert composite_lp_aggregate() is True and seen == [True]  # process-wide
    made.unset()
    assert composite_lp_aggregate() is False
    with set_composite_lp_aggregate(True, thread_local=True):
        thread = threading.Thread(target=lambda: seen.append(composite_lp_aggregate()))
        thread.start()
        thread.join()
        assert composite_lp_aggregate() is True and seen[-1] is False  # this thread only
    with pytest.raises(ModeError):
        set_composite_lp_aggregate("yes")  # type: ignore[arg-type]


# -- side by side with tensordict ------------------------------------------------------------


def both() -> list[Any]:
    """tensordict and tensorclass, to run one check on each."""
    return [pytest.importorskip("tensordict"), tensorclass]


def test_side_by_side_defaults_and_switch_values() -> None:
    for lib in both():
        assert lib.list_to_stack() is True and lib.capture_non_tensor_stack() is False
        assert lib.lazy_legacy() is False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            with lib.set_list_to_stack(False):
                td = lib.TensorDict(batch_size=[2])
                td["x"] = ["a", "b"]
                assert list(td[1]["x"]) == ["a", "b"]  # shared (tensordict: an array)
            with lib.set_capture_non_tensor_stack(True):
                stacked = lib.TensorDict.maybe_dense_stack(
                    [lib.TensorDict(s="v"), lib.TensorDict(s="v")]
                )
                assert stacked["s"] == "v"
            with lib.set_lazy_legacy(True):
                stacked = torch.stack([lib.TensorDict(), lib.TensorDict()])
                assert type(stacked).__name__.startswith("LazyStackedTensorDict")
        td = lib.TensorDict(batch_size=[2])
        td["x"] = ["a", "b"]
        assert td[1]["x"] == "b" and td.get("x").tolist() == ["a", "b"]


def test_side_by_side_decorators_and_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LAZY_LEGACY_OP", "COMPOSITE_LP_AGGREGATE"):  # tensordict writes them
        monkeypatch.delenv(name, raising=False)
    for lib in both():
        with pytest.warns(DeprecationWarning):

            @lib.set_lazy_legacy(True)
            def inside(lib: Any = lib) -> Any:
                return lib.lazy_legacy()

        assert lib.lazy_legacy() is False and inside() is True
        made = lib.nn.set_composite_lp_aggregate(True)
        made.set()
        assert lib.nn.composite_lp_aggregate() is True
        made.unset()
        assert lib.nn.composite_lp_aggregate() is False
