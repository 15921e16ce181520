"""TensorDictModule: seed 000 examples, output handling, keyword calls, key errors."""

import pytest
import torch
from torch import nn

from tensorclass import KeyNotFoundError, StructureMismatchError, TensorClass, TensorDict
from tensorclass.nn import TensorDictModule


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_seed_wraps_a_module_and_accepts_tensors() -> None:
    net = nn.Transformer(
        16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8, dropout=0.0
    )
    module = TensorDictModule(net, in_keys=["input", "tgt"], out_keys=["out"])
    input, tgt = torch.ones(2, 3, 16), torch.zeros(2, 3, 16)
    data = TensorDict({"input": input, "tgt": tgt}, batch_size=[2, 3])
    result = module(data)
    assert result is data
    assert list(data.keys()) == ["input", "tgt", "out"]
    assert data["out"].shape == (2, 3, 16)
    out = module(input, tgt)
    assert isinstance(out, torch.Tensor) and out.shape == input.shape
    torch.testing.assert_close(out, data["out"])


def test_seed_function_with_nested_keys() -> None:
    module = TensorDictModule(
        lambda x: (x - 1, x + 1),
        in_keys=[("input", "x")],
        out_keys=[("output", "x-1"), ("output", "x+1")],
    )
    td = module(TensorDict({("input", "x"): torch.zeros(())}, batch_size=[]))
    assert isinstance(td["output"], TensorDict)
    assert td["output", "x-1"].item() == -1 and td["output", "x+1"].item() == 1
    assert td["output"].batch_size == torch.Size([])


def test_seed_factory_without_inputs() -> None:
    module = TensorDictModule(lambda: torch.randn(3), in_keys=[], out_keys=["x"])
    td = module(TensorDict({}, batch_size=[]))
    assert td["x"].shape == (3,)


def test_seed_dict_in_keys_map_keys_to_keyword_names() -> None:
    module = TensorDictModule(lambda x, *, y: x + y, in_keys={"1": "x", "2": "y"}, out_keys=["z"])
    td = module(TensorDict({"1": torch.ones(()), "2": torch.ones(()) * 2}, []))
    assert td["z"].item() == 3
    assert module.in_keys == ["1", "2"]
    # the direction matters: a function that subtracts tells the keys apart
    sub = TensorDictModule(lambda a, b: a - b, in_keys={"x": "b", "y": "a"}, out_keys=["d"])
    assert sub(TensorDict({"x": torch.tensor(1.0), "y": torch.tensor(5.0)}))["d"].item() == 4
    # keyword calls accept the keys and the argument names
    assert sub(x=torch.tensor(1.0), y=torch.tensor(5.0)).item() == 4
    assert sub(b=torch.tensor(1.0), a=torch.tensor(5.0)).item() == 4


def test_seed_functional_call_and_stateful_call_agree() -> None:
    td = TensorDict({"input": torch.randn(3, 4), "hidden": torch.randn(3, 8)}, [3])
    module = nn.GRUCell(4, 8)
    td_module = TensorDictModule(module=module, in_keys=["input", "hidden"], out_keys=["output"])
    params = TensorDict.from_module(td_module)
    with params.to_module(td_module):
        td_functional = td_module(td.clone())
    td_stateful = td_module(td.clone())
    assert td_functional.batch_size == td_stateful.batch_size == (3,)
    assert sorted(td_functional.keys()) == ["hidden", "input", "output"]
    torch.testing.assert_close(td_functional["output"], td_stateful["output"])


def test_outputs_as_tuple_dict_and_dropped() -> None:
    both = TensorDictModule(lambda x: (x + 1, x + 2), ["x"], ["_", "b"])
    td = both(TensorDict({"x": torch.zeros(2)}, [2]))
    assert list(td.keys()) == ["x", "b"]
    assert both.out_keys == ["b"]
    as_dict = TensorDictModule(lambda x: {"a": x + 1, "b": x + 2, "c": x}, ["x"], ["b", "a"])
    td = as_dict(TensorDict({"x": torch.zeros(2)}, [2]))
    assert td["a"].tolist() == [1, 1] and td["b"].tolist() == [2, 2] and "c" not in td


def test_output_count_mismatch_is_an_error() -> None:
    module = TensorDictModule(lambda x: (x, x, x), ["x"], ["a", "b"])
    with pytest.raises(StructureMismatchError, match="expects 2 output"):
        module(TensorDict({"x": torch.zeros(1)}, [1]))
    single = TensorDictModule(lambda x: x, ["x"], ["a", "b"])
    with pytest.raises(StructureMismatchError, match="returned one Tensor"):
        single(TensorDict({"x": torch.zeros(1)}, [1]))
    missing = TensorDictModule(lambda x: {"a": x}, ["x"], ["a", "b"])
    with pytest.raises(StructureMismatchError, match="without the out key 'b'"):
        missing(TensorDict({"x": torch.zeros(1)}, [1]))


def test_missing_input_key_is_a_clear_key_error() -> None:
    module = TensorDictModule(lambda x, y: x + y, ["x", ("nested", "y")], ["z"])
    td = TensorDict({"x": torch.zeros(2), "nested": {"w": torch.zeros(2)}}, [2])
    with pytest.raises(KeyError) as info:
        module(td)
    message = str(info.value)
    assert "('nested', 'y')" in message and "TensorDictModule" in message
    assert "('nested', 'w')" in message  # what the input holds
    assert isinstance(info.value, KeyNotFoundError)


def test_output_with_wrong_batch_size_names_the_key() -> None:
    module = TensorDictModule(lambda x: x.sum(0), ["x"], ["s"])
    with pytest.raises(ValueError, match="'s'"):
        module(TensorDict({"x": torch.zeros(4, 3)}, [4]))


def test_tensordict_out_and_not_inplace() -> None:
    module = TensorDictModule(lambda x: x * 2, ["x"], ["y"])
    td = TensorDict({"x": torch.ones(3)}, [3])
    out = TensorDict({}, [3])
    assert module(td, tensordict_out=out) is out
    assert "y" in out and "y" not in td
    fresh = TensorDictModule(lambda x: x * 2, ["x"], ["y"], inplace=False)
    result = fresh(td)
    assert result is not td and list(result.keys()) == ["y"] and "y" not in td


def test_typed_input_is_written_and_returned() -> None:
    class Obs(TensorClass):
        x: torch.Tensor
        y: torch.Tensor | None = None

    module = TensorDictModule(nn.Linear(3, 2), ["x"], ["y"])
    obs = Obs(torch.zeros(5, 3), batch_size=[5])
    result = module(obs)
    assert result is obs and isinstance(result, Obs)
    assert obs.y is not None and obs.y.shape == (5, 2)


def test_keyword_and_positional_tensor_calls() -> None:
    module = TensorDictModule(lambda x, y: (x + y, x - y), ["x", ("in", "y")], ["s", "d"])
    s, d = module(torch.tensor(3.0), torch.tensor(1.0))
    assert (s.item(), d.item()) == (4.0, 2.0)
    s, d = module(x=torch.tensor(3.0), in_y=torch.tensor(1.0))
    assert (s.item(), d.item()) == (4.0, 2.0)
    with pytest.raises(TypeError, match="unexpected keyword 'z'"):
        module(z=torch.zeros(()))
    with pytest.raises(TypeError, match="takes 2 input"):
        module(torch.zeros(()), torch.zeros(()), torch.zeros(()))


def test_select_and_reset_out_keys_seed() -> None:
    mod = TensorDictModule(lambda x, y: (x + 2, y + 2), in_keys=["a", "b"], out_keys=["c", "d"])
    assert mod.select_out_keys("d") is mod
    td = TensorDict({"a": torch.zeros(()), "b": torch.ones(())}, [])
    assert sorted(mod(td).keys()) == ["a", "b", "d"]
    assert mod(torch.zeros(()), torch.ones(())).item() == 3
    assert mod.out_keys == ["d"] and mod.out_keys_source == ["c", "d"]
    assert mod.reset_out_keys() is mod
    td = mod(TensorDict({"a": torch.zeros(()), "b": torch.ones(())}, []))
    assert sorted(td.keys()) == ["a", "b", "c", "d"]
    with pytest.raises(KeyError, match="'e' is not one of its out keys"):
        mod.select_out_keys("e")


def test_key_arguments_are_normalised_and_checked() -> None:
    module = TensorDictModule(lambda x: x, "x", ("out", ("y",)))
    assert module.in_keys == ["x"] and module.out_keys == [("out", "y")]
    with pytest.raises(TypeError):
        TensorDictModule(lambda x: x, [1], ["y"])
    with pytest.raises(ValueError, match="twice"):
        TensorDictModule(lambda x: (x, x), ["x"], ["y", "y"])
    with pytest.raises(TypeError, match="callable"):
        TensorDictModule(3, ["x"], ["y"])  # type: ignore[arg-type]


def test_repr_lists_module_and_keys() -> None:
    module = TensorDictModule(nn.Linear(3, 4), in_keys=["a"], out_keys=[("b", "c")])
    assert repr(module) == (
        "TensorDictModule(\n"
        "    module=Linear(in_features=3, out_features=4, bias=True),\n"
        "    in_keys=['a'],\n"
        "    out_keys=[('b', 'c')])"
    )


def test_parameters_and_state_dict_come_from_the_wrapped_module() -> None:
    linear = nn.Linear(3, 4)
    module = TensorDictModule(linear, ["x"], ["y"])
    assert list(module.parameters()) == list(linear.parameters())
    assert sorted(module.state_dict()) == ["module.bias", "module.weight"]
    replacement = nn.Linear(3, 2)
    module.module = replacement
    assert module(torch.zeros(3)).shape == (2,)


def test_a_callable_without_outputs_writes_nothing() -> None:
    seen: list[torch.Tensor] = []
    module = TensorDictModule(lambda x: seen.append(x), ["x"], [])
    td = TensorDict({"x": torch.ones(2)}, [2])
    assert module(td) is td and list(td.keys()) == ["x"] and len(seen) == 1
    with pytest.raises(StructureMismatchError, match="expects 0 output"):
        TensorDictModule(lambda x: x, ["x"], [])(td)


def test_dict_in_keys_with_nested_keys_and_a_dict_output() -> None:
    module = TensorDictModule(
        lambda *, obs, goal: {"dist": (obs - goal).norm(dim=-1), "unused": obs},
        in_keys={("env", "obs"): "obs", ("env", "goal"): "goal"},
        out_keys=[("metrics", "dist")],
    )
    assert module.in_keys == [("env", "obs"), ("env", "goal")]
    td = TensorDict({"env": {"obs": torch.ones(4, 2), "goal": torch.zeros(4, 2)}}, [4])
    with pytest.raises(StructureMismatchError, match=r"without the out key \('metrics', 'dist'\)"):
        module(td)
    module = TensorDictModule(
        lambda *, obs, goal: {("metrics", "dist"): (obs - goal).norm(dim=-1)},
        in_keys={("env", "obs"): "obs", ("env", "goal"): "goal"},
        out_keys=[("metrics", "dist")],
    )
    td = module(td)
    assert isinstance(td["metrics"], TensorDict) and td["metrics"].batch_size == (4,)
    torch.testing.assert_close(td["metrics", "dist"], torch.full((4,), 2.0).sqrt())


def test_tensor_call_with_tensordict_out_writes_there_too() -> None:
    module = TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"])
    out = TensorDict({}, [])
    result = module(x=torch.zeros(()), tensordict_out=out)
    assert isinstance(result, torch.Tensor) and result.item() == 1
    assert list(out.keys()) == ["y"] and out["y"] is result
    td = TensorDict({"x": torch.zeros(())})
    assert module(tensordict=td) is td and "y" in td
