"""Real TorchRL 0.14.1 on tensorclass (``install_as_tensordict``), offline and on CPU, each
program in a fresh interpreter; skipped when torchrl and gymnasium are not installed (the
``rl`` extra). Where the real tensordict is installed too (the ``bench`` extra), the training
programs run on both and must give the same losses for the same seeds.

Not covered: prioritized replay needs TorchRL's C++ extension (segment trees), which does not
load with torch 2.13, on tensordict or on tensorclass alike.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from .helpers import ROOT, check_output, environment, last_json, needs_tensordict, needs_torchrl

pytestmark = needs_torchrl

PROGRAMS = ROOT / "tests" / "compat" / "programs"


def test_a_gym_rollout() -> None:
    out = check_output(
        """
        import json, tensordict
        from torchrl.envs import GymEnv
        env = GymEnv("CartPole-v1")
        env.set_seed(0)
        rollout = env.rollout(50)
        print(json.dumps({
            "class": type(rollout).__name__,
            "module": type(rollout).__module__,
            "shape": list(rollout.batch_size),
            "obs": list(rollout["next", "observation"].shape),
            "done": bool(rollout["next", "done"][-1]),
        }))
        """
    )
    found = last_json(out)
    assert found["module"].startswith("tensorclass.")
    assert found["class"] == "TensorDict"  # stacked densely, as on tensordict
    assert found["obs"] == [found["shape"][0], 4]
    assert found["shape"][0] == 50 or found["done"]


def test_transforms() -> None:
    out = check_output(
        """
        import json, torch
        from torchrl.envs import (Compose, DoubleToFloat, GymEnv, ObservationNorm, RewardSum,
                                  StepCounter, TransformedEnv)
        env = TransformedEnv(GymEnv("CartPole-v1"), Compose(
            DoubleToFloat(), StepCounter(), RewardSum(),
            ObservationNorm(in_keys=["observation"], loc=1.0, scale=2.0)))
        env.set_seed(0)
        rollout = env.rollout(30, break_when_any_done=False)
        steps = rollout["next", "step_count"].squeeze(-1)
        reward = rollout["next", "episode_reward"].squeeze(-1)
        done = rollout["next", "done"].squeeze(-1)
        first_end = int(done.nonzero()[0]) if done.any() else len(done) - 1
        print(json.dumps({
            "dtype": str(rollout["observation"].dtype),
            "steps": steps[: first_end + 1].tolist(),
            "reward": reward[first_end].item(),
            "spec": str(env.observation_spec["episode_reward"].dtype),
        }))
        """
    )
    found = last_json(out)
    assert found["dtype"] == "torch.float32"  # DoubleToFloat
    assert found["steps"] == list(range(1, len(found["steps"]) + 1))  # StepCounter
    assert found["reward"] == len(found["steps"])  # RewardSum: +1 per CartPole step


def test_a_parallel_env_with_two_workers() -> None:
    out = check_output(
        """
        import json
        from torchrl.envs import GymEnv, ParallelEnv, StepCounter, TransformedEnv

        def make():
            return TransformedEnv(GymEnv("CartPole-v1"), StepCounter())

        if __name__ == "__main__":
            env = ParallelEnv(2, make)
            env.set_seed(0)
            rollout = env.rollout(5, break_when_any_done=False)
            print(json.dumps({
                "shape": list(rollout.batch_size),
                "steps": rollout["next", "step_count"][:, -1].flatten().tolist(),
            }))
            env.close()
        """
    )
    found = last_json(out)
    assert found["shape"] == [2, 5]
    assert found["steps"] == [5, 5]


def test_a_collector() -> None:
    out = check_output(
        """
        import json
        from torchrl.collectors import Collector
        from torchrl.envs import GymEnv
        collector = Collector(GymEnv("CartPole-v1"), None, frames_per_batch=50,
                              total_frames=200)
        sizes = [batch.numel() for batch in collector]
        collector.shutdown()
        print(json.dumps(sizes))
        """
    )
    assert last_json(out) == [50, 50, 50, 50]


@pytest.mark.parametrize("storage", ["LazyTensorStorage", "LazyMemmapStorage"])
@pytest.mark.parametrize("sampler", ["RandomSampler", "SliceSampler"])
def test_replay_buffers_saved_and_loaded(storage: str, sampler: str) -> None:
    out = check_output(
        f"""
        import json, tempfile, torch
        from tensordict import TensorDict
        from torchrl.data import ReplayBuffer, TensorDictReplayBuffer, {storage}
        from torchrl.data.replay_buffers.samplers import {sampler}

        def sampler():
            if "{sampler}" == "SliceSampler":
                return SliceSampler(slice_len=5, traj_key="episode")
            return RandomSampler()

        data = TensorDict({{
            "obs": torch.randn(100, 4),
            "episode": torch.arange(100) // 10,
            ("next", "done"): (torch.arange(100) % 10 == 9).unsqueeze(-1),
        }}, batch_size=[100])
        buffer = TensorDictReplayBuffer(storage={storage}(200), sampler=sampler(), batch_size=20)
        buffer.extend(data)
        sample = buffer.sample()
        episodes = sample["episode"].view(4, 5)
        with tempfile.TemporaryDirectory() as path:
            buffer.dumps(path)
            loaded = TensorDictReplayBuffer(storage={storage}(200), sampler=sampler(),
                                            batch_size=20)
            loaded.loads(path)
            same = torch.equal(loaded[:]["obs"], buffer[:]["obs"])
            n = len(loaded)
        plain = ReplayBuffer(storage={storage}(50), sampler=sampler(), batch_size=5)
        plain.extend(TensorDict(episode=torch.arange(20) // 5, batch_size=[20]))
        print(json.dumps({{
            "shape": list(sample.batch_size),
            "slices": bool((episodes == episodes[:, :1]).all()),
            "loaded": n, "same": same, "plain": list(plain.sample().batch_size),
        }}))
        """
    )
    found = last_json(out)
    assert found["shape"] == [20]
    assert found["loaded"] == 100 and found["same"]
    assert found["plain"] == [5]
    if sampler == "SliceSampler":
        assert found["slices"]  # each slice of 5 stays inside one episode


def _train(program: str, frames: int, tensorclass: bool) -> dict[str, object]:
    path = str(PROGRAMS / program)
    head = (
        [sys.executable, "-m", "tensorclass", "run-as-tensordict"]
        if tensorclass
        else [sys.executable]
    )
    done = subprocess.run(
        [*head, path, "--frames", str(frames)],
        capture_output=True,
        text=True,
        env=environment(),
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, object] = last_json(done.stdout)
    return result


@pytest.mark.parametrize("program", ["dqn_cartpole.py", "ppo_pendulum.py"])
def test_training_gives_finite_losses(program: str) -> None:
    found = _train(program, 2000, tensorclass=True)
    assert str(found["implementation"]).startswith("tensorclass")
    assert found["frames"] == 2000
    losses = found["losses"]
    assert isinstance(losses, list) and len(losses) > 10
    assert all(math.isfinite(value) for value in losses)


@needs_tensordict
@pytest.mark.parametrize("program", ["dqn_cartpole.py", "ppo_pendulum.py"])
def test_training_follows_the_same_curve_as_on_tensordict(program: str) -> None:
    on_tensorclass = _train(program, 600, tensorclass=True)
    on_tensordict = _train(program, 600, tensorclass=False)
    assert on_tensordict["implementation"] == "tensordict"
    assert on_tensorclass["losses"] == pytest.approx(on_tensordict["losses"], rel=1e-4)


@needs_tensordict
def test_the_dqn_benchmark_runs(tmp_path) -> None:
    from benchmarks.torchrl_dqn import main

    out = tmp_path / "dqn.json"
    assert (
        main(["--rounds", "1", "--frames", "100", "--frames-per-batch", "50", "--json", str(out)])
        == 0
    )
    report = json.loads(out.read_text())
    assert set(report["medians"]) == {"tensordict", "tensorclass"}
    assert all(rate > 0 for rate in report["medians"].values())
