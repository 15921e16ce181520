"""The example programs run end to end on small sizes and learn something."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import quickstart
import rollout_buffer
import supervised


def test_quickstart_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    quickstart.main()
    assert "Batch(images=float32[8, 3, 16, 16]" in capsys.readouterr().out


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
    returns = rollout_buffer.discounted_returns(buffer)
    assert returns.shape == (3, 5)
    result = rollout_buffer.run(envs=4, steps=16, updates=12)
    assert result["last_reward"] > result["first_reward"]
