"""The example programs run end to end on small sizes and learn something."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import quickstart
import rollout_buffer
import supervised
import torch


def test_quickstart_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    quickstart.main()
    assert "Batch(batch_size=[8], fields={images: f32[3,16,16]" in capsys.readouterr().out


def test_supervised_loss_goes_down() -> None:
    result = supervised.train(steps=60, n=512)
    assert result["last_loss"] < result["first_loss"] / 2
    assert result["accuracy"] > 0.9


def test_rollout_buffer_collects_and_improves() -> None:
    env = rollout_buffer.PointEnv(envs=3)
    buffer = rollout_buffer.collect(env, rollout_buffer.make_policy(), steps=5)
    assert isinstance(buffer, rollout_buffer.Transition)
    assert buffer.batch_size == (3, 5) and buffer.action.shape == (3, 5, 2)
    assert buffer.sample_log_prob.shape == (3, 5, 2)
    returns = rollout_buffer.discounted_returns(buffer.reward, buffer.done)
    assert returns.shape == (3, 5)
    assert torch.equal(buffer.returns, returns)  # collect stores them with the transitions
    rewards, done = buffer.reward, buffer.done
    last = rewards[:, -1]
    assert torch.equal(returns[:, -1], last)  # the last step's return is its reward
    expected = rewards[:, -2] + 0.99 * last * (~done[:, -2])
    assert torch.allclose(returns[:, -2], expected)  # cut at episode ends
    result = rollout_buffer.run(envs=4, steps=16, updates=12)
    assert result["last_reward"] > result["first_reward"]


def test_command_lines(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # what `python examples/<name>.py ...` runs, on small sizes
    monkeypatch.setattr(sys, "argv", ["supervised.py", "--steps", "20", "--n", "256"])
    supervised.main()
    assert re.fullmatch(
        r"loss \d+\.\d{3} -> \d+\.\d{3}, held-out accuracy \d+\.\d%\n", capsys.readouterr().out
    )
    monkeypatch.setattr(
        sys, "argv", ["rollout_buffer.py", "--envs", "2", "--steps", "4", "--updates", "2"]
    )
    rollout_buffer.main()
    assert capsys.readouterr().out.startswith("8 transitions per rollout; mean reward ")
