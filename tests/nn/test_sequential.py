"""TensorDictSequential: seed 001 and 002 examples, selection, sub-sequences, tolerance."""

import re

import pytest
import torch
from torch import nn

from tensorclass import TensorDict, lazy_stack
from tensorclass.nn import TensorDictModule, TensorDictSequential
from tensorclass.nn import TensorDictModule as Mod
from tensorclass.nn import TensorDictSequential as Seq


def idn(x: torch.Tensor) -> torch.Tensor:
    return x


def keys_of(module: TensorDictSequential) -> list[tuple[list, list]]:
    """(in_keys, out_keys) of each module, nested sequentials as nested lists."""
    out = []
    for sub in module.module:
        if isinstance(sub, TensorDictSequential):
            out.append(keys_of(sub))
        else:
            out.append((sub.in_keys, sub.out_keys))
    return out


def test_seed_chain_with_tensordict_and_tensor_inputs() -> None:
    torch.manual_seed(0)
    module = TensorDictSequential(
        TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["x+1"]),
        TensorDictModule(nn.Linear(3, 4), in_keys=["x+1"], out_keys=["w*(x+1)+b"]),
    )
    td = module(TensorDict({"x": torch.zeros(3)}, []))
    assert sorted(td.keys()) == ["w*(x+1)+b", "x", "x+1"]
    assert td["w*(x+1)+b"].shape == (4,)
    by_name = module(x=torch.zeros(3))
    positional = module(torch.zeros(3))
    assert isinstance(by_name, tuple) and len(by_name) == 2
    assert by_name[0].tolist() == [1.0, 1.0, 1.0]
    torch.testing.assert_close(by_name[1], positional[1])
    torch.testing.assert_close(by_name[1], td["w*(x+1)+b"])


def test_seed_select_out_keys_on_sequential() -> None:
    seq = TensorDictSequential(
        TensorDictModule(lambda x: x + 1, in_keys=["x"], out_keys=["y"]),
        TensorDictModule(lambda x: x + 1, in_keys=["y"], out_keys=["z"]),
    )
    assert sorted(seq(TensorDict({"x": torch.zeros(())}, [])).keys()) == ["x", "y", "z"]
    assert seq.select_out_keys("z") is seq
    td = seq(TensorDict({"x": torch.zeros(())}, []))
    assert sorted(td.keys()) == ["x", "z"] and td["z"].item() == 2
    assert seq.out_keys == ["z"] and seq.out_keys_source == ["y", "z"]
    assert seq(torch.zeros(())).item() == 2
    seq.reset_out_keys()
    assert sorted(seq(TensorDict({"x": torch.zeros(())}, [])).keys()) == ["x", "y", "z"]


def test_selected_out_keys_keep_existing_keys_and_nested_levels() -> None:
    seq = Seq(
        Mod(lambda x: x + 1, ["x"], [("n", "y")]),
        Mod(lambda y: y + 1, [("n", "y")], ["z"]),
        selected_out_keys=["z"],
    )
    td = TensorDict({"x": torch.zeros(()), "n": {"keep": torch.ones(())}}, [])
    nested = td["n"]
    seq(td)
    assert list(td.keys(include_nested=True)) == ["x", "n", ("n", "keep"), "z"]
    assert td["n"] is nested and "y" not in nested


def test_tensordict_out_leaves_the_input_alone() -> None:
    seq = Seq(Mod(lambda x: x + 1, ["x"], ["y"]), Mod(lambda y: y * 3, ["y"], ["z"]))
    td = TensorDict({"x": torch.ones(2)}, [2])
    out = TensorDict({}, [2])
    assert seq(td, tensordict_out=out) is out
    assert sorted(out.keys()) == ["y", "z"] and list(td.keys()) == ["x"]


def test_in_keys_and_out_keys_follow_the_chain() -> None:
    seq = Seq(
        Mod(idn, ["a"], ["b"]),
        Mod(lambda b, c: b + c, ["b", "c"], ["d"]),
        Mod(lambda d, a: d, ["d", "a"], ["b"]),
    )
    assert seq.in_keys == ["a", "c"]
    assert seq.out_keys == ["d", "b"]  # in the order of the last write, as tensordict


def test_missing_input_is_an_error_unless_partial_tolerant() -> None:
    modules = [Mod(lambda x: x + 1, ["x"], ["y"]), Mod(lambda w: w + 1, ["w"], ["v"])]
    with pytest.raises(KeyError, match="reads 'w'"):
        Seq(*modules)(TensorDict({"x": torch.zeros(())}, []))
    tolerant = Seq(*modules, partial_tolerant=True)
    td = tolerant(TensorDict({"x": torch.zeros(())}, []))
    assert sorted(td.keys()) == ["x", "y"]
    td = tolerant(TensorDict({"w": torch.zeros(())}, []))
    assert sorted(td.keys()) == ["v", "w"]


def test_modules_must_read_by_key() -> None:
    with pytest.raises(TypeError, match="wrap it as TensorDictModule"):
        Seq(nn.Linear(2, 2))  # type: ignore[arg-type]


def test_indexing_slicing_and_len() -> None:
    first, second, third = Mod(idn, ["a"], ["b"]), Mod(idn, ["b"], ["c"]), Mod(idn, ["c"], ["d"])
    seq = Seq(first, second, third, partial_tolerant=True)
    assert len(seq) == 3
    assert seq[0] is first and seq[-1] is third
    tail = seq[1:]
    assert isinstance(tail, TensorDictSequential) and len(tail) == 2
    assert tail[0] is second and tail.partial_tolerant
    assert tail.in_keys == ["b"] and tail.out_keys == ["c", "d"]


SUB_SEQ = Seq(
    Mod(idn, in_keys=["a"], out_keys=["b"]),
    Mod(idn, in_keys=["b"], out_keys=["c"]),
    Mod(idn, in_keys=["c"], out_keys=["d"]),
    Mod(idn, in_keys=["a"], out_keys=["e"]),
)


@pytest.mark.parametrize(
    ("kwargs", "expected", "in_keys", "out_keys"),
    [
        (
            {"in_keys": ["a"]},
            [(["a"], ["b"]), (["b"], ["c"]), (["c"], ["d"]), (["a"], ["e"])],
            ["a"],
            ["b", "c", "d", "e"],
        ),
        ({"in_keys": ["c"]}, [(["c"], ["d"])], ["c"], ["d"]),
        ({"out_keys": ["c"]}, [(["a"], ["b"]), (["b"], ["c"])], ["a"], ["b", "c"]),
        ({"out_keys": ["e"]}, [(["a"], ["e"])], ["a"], ["e"]),
    ],
)
def test_seed_select_subsequence(
    kwargs: dict, expected: list, in_keys: list, out_keys: list
) -> None:
    sub = SUB_SEQ.select_subsequence(**kwargs)
    assert keys_of(sub) == expected
    assert sub.in_keys == in_keys and sub.out_keys == out_keys
    for mod in sub.module:  # the modules are shared, not copied
        assert any(mod is original for original in SUB_SEQ.module)


def test_seed_select_subsequence_in_nested_sequentials() -> None:
    module = Seq(
        Seq(Mod(idn, in_keys=["a"], out_keys=["b"]), Mod(idn, in_keys=["b"], out_keys=["c"])),
        Seq(Mod(idn, in_keys=["b"], out_keys=["d"]), Mod(idn, in_keys=["d"], out_keys=["e"])),
    )
    sub = module.select_subsequence(in_keys=["b", "d"], out_keys=["e"])
    assert keys_of(sub) == [[(["b"], ["d"]), (["d"], ["e"])]]
    assert sub.in_keys == ["b"] and sub.out_keys == ["d", "e"]
    td = sub(TensorDict({"b": torch.ones(())}, []))
    assert sorted(td.keys()) == ["b", "d", "e"]


def test_seed_repr_shape() -> None:
    text = repr(SUB_SEQ.select_subsequence(in_keys=["c"]))
    text = re.sub(r"<function idn at 0x[0-9a-f]+>", "<function idn>", text)
    assert text == (
        "TensorDictSequential(\n"
        "    module=ModuleList(\n"
        "      (0): TensorDictModule(\n"
        "          module=<function idn>,\n"
        "          in_keys=['c'],\n"
        "          out_keys=['d'])\n"
        "    ),\n"
        "    in_keys=['c'],\n"
        "    out_keys=['d'])"
    )


class Net(nn.Module):
    def __init__(self, input_size: int = 100, hidden_size: int = 50, output_size: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Masker(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * mask, dim=1)


def test_seed_overview_net_and_masker() -> None:
    net = TensorDictModule(Net(), in_keys=[("input", "x")], out_keys=[("intermediate", "x")])
    masker = TensorDictModule(
        Masker(),
        in_keys=[("intermediate", "x"), ("input", "mask")],
        out_keys=[("output", "probabilities")],
    )
    module = TensorDictSequential(net, masker)
    tensordict = TensorDict(
        {
            "input": TensorDict(
                {"x": torch.rand(32, 100), "mask": torch.randint(2, size=(32, 10))},
                batch_size=[32],
            )
        },
        batch_size=[32],
    )
    tensordict = module(tensordict)
    assert tensordict["intermediate", "x"].shape == (32, 10)
    assert tensordict["output", "probabilities"].shape == (32, 10)
    assert module.in_keys == [("input", "x"), ("input", "mask")]


def test_seed_overview_lazy_linear_with_nested_outputs() -> None:
    class LazyNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.LazyLinear(1)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            logits = self.linear(x)
            return logits, torch.sigmoid(logits)

    module = TensorDictModule(
        LazyNet(), in_keys=["input"], out_keys=[("outputs", "logits"), ("outputs", "probabilities")]
    )
    tensordict = module(TensorDict({"input": torch.randn(32, 100)}, [32]))
    assert tensordict["outputs", "logits"].shape == (32, 1)
    assert tensordict.get(("outputs", "probabilities")).shape == (32, 1)
    logits, probabilities = module(input=torch.randn(32, 100))
    assert logits.shape == probabilities.shape == (32, 1)


def test_training_step_through_a_sequential() -> None:
    torch.manual_seed(0)
    encoder = TensorDictModule(nn.Sequential(nn.Linear(4, 16), nn.Tanh()), ["obs"], ["hidden"])
    head = TensorDictModule(nn.Linear(16, 1), ["hidden"], ["pred"])
    model = TensorDictSequential(encoder, head)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDict({"obs": torch.randn(64, 4)}, [64])
    data["target"] = data["obs"].sum(-1, keepdim=True)
    losses = []
    for _ in range(30):
        batch = model(data.clone(recurse=False))
        loss = (batch["pred"] - batch["target"]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] / 2
    assert all(p.grad is not None for p in model.parameters())


def test_seed_partial_tolerant_scans_the_members_of_a_lazy_stack() -> None:
    seq = Seq(
        Mod(lambda x: x + 1, ["x"], ["y"]),
        Mod(lambda y: y * 5, ["y"], ["z"]),
        Mod(lambda w: w * 10, ["w"], ["v"]),
        partial_tolerant=True,
    )
    members = [
        TensorDict({"x": torch.ones(3)}, [3]),
        TensorDict({"w": torch.ones(3)}, [3]),
        TensorDict({"x": torch.zeros(3), "w": torch.zeros(3)}, [3]),
    ]
    stack = lazy_stack(members, 0)
    assert seq(stack) is stack
    assert sorted(members[0].keys()) == ["x", "y", "z"]
    assert members[0]["z"].tolist() == [10.0] * 3
    assert sorted(members[1].keys()) == ["v", "w"]
    assert sorted(members[2].keys()) == ["v", "w", "x", "y", "z"]
    # keys every member holds are computed on the whole stack at once
    common = lazy_stack([TensorDict({"x": torch.ones(2)}, [2]) for _ in range(2)], 0)
    seq(common)
    assert common["z"].shape == (2, 2)
    # members of nested stacks are scanned too
    inner = [TensorDict({"x": torch.ones(())}, []), TensorDict({"w": torch.ones(())}, [])]
    other = [TensorDict({"w": torch.ones(())}, []) for _ in range(2)]
    outer = lazy_stack([lazy_stack(inner, 0), lazy_stack(other, 0)], 0)
    seq(outer)
    assert "z" in inner[0] and "v" in inner[1] and "y" not in inner[1]
    assert all("v" in member and "y" not in member for member in other)


def test_lazy_stack_input_without_tolerance_is_a_key_error() -> None:
    members = [TensorDict({"x": torch.ones(3)}, [3]), TensorDict({"w": torch.ones(3)}, [3])]
    with pytest.raises(KeyError):
        Seq(Mod(lambda x: x + 1, ["x"], ["y"]))(lazy_stack(members, 0))
    assert "y" not in members[0]
