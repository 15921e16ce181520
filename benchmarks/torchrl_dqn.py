"""``python -m benchmarks.torchrl_dqn``: TorchRL's DQN loop on tensordict vs on tensorclass.

One row: frames per second of a DQN training loop on CartPole (collect a batch with a
``Collector``, extend a ``TensorDictReplayBuffer``, then per batch 4 x (sample, ``DQNLoss``,
backward, Adam step, ``SoftUpdate``)), TorchRL 0.14.1 unchanged, once on the real tensordict
and once on tensorclass served as ``tensordict`` (``install_as_tensordict``).

The two cannot share a process (TorchRL imports ``tensordict`` once), so each round runs one
child process per side, the sides alternating (interleaved); a child times its loop after one
warm-up batch, imports excluded, on one torch thread. The report gives each side's median
over the rounds and the ratio tensorclass / tensordict (above 1: tensorclass is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["dqn_frames_per_second", "main"]

SIDES = ("tensordict", "tensorclass")


def dqn_frames_per_second(frames: int, frames_per_batch: int, seed: int = 0) -> float:
    """Run the DQN loop for ``frames`` frames (after one warm-up batch) on whatever
    ``tensordict`` resolves to, and return frames per second."""
    import torch
    from tensordict.nn import TensorDictSequential
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
    from torchrl.envs import Compose, DoubleToFloat, GymEnv, StepCounter, TransformedEnv
    from torchrl.modules import MLP, EGreedyModule, QValueActor
    from torchrl.objectives import DQNLoss, SoftUpdate

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    env = TransformedEnv(GymEnv("CartPole-v1"), Compose(DoubleToFloat(), StepCounter()))
    env.set_seed(seed)
    actor = QValueActor(
        MLP(in_features=4, out_features=2, num_cells=[64, 64]),
        in_keys=["observation"],
        spec=env.action_spec,
    )
    explore = EGreedyModule(env.action_spec, eps_init=1.0, eps_end=0.05, annealing_num_steps=frames)
    collector = Collector(
        env,
        TensorDictSequential(actor, explore),
        frames_per_batch=frames_per_batch,
        total_frames=frames + frames_per_batch,
    )
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(10_000), batch_size=64)
    loss = DQNLoss(actor, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=0.99)
    updater = SoftUpdate(loss, eps=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=1e-3)

    start = 0.0
    for index, batch in enumerate(collector):
        if index == 1:  # the first batch warms up (lazy storage, caches)
            start = time.perf_counter()
        buffer.extend(batch.reshape(-1))
        for _ in range(4):
            value = loss(buffer.sample())["loss"]
            optim.zero_grad()
            value.backward()
            optim.step()
            updater.step()
        explore.step(batch.numel())
        collector.update_policy_weights_()
    elapsed = time.perf_counter() - start
    collector.shutdown()
    return frames / elapsed


def _child(side: str, frames: int, frames_per_batch: int) -> None:
    if side == "tensorclass":
        import tensorclass

        tensorclass.install_as_tensordict()
    rate = dqn_frames_per_second(frames, frames_per_batch)
    print(json.dumps({"side": side, "frames_per_s": rate}))


def _run_child(side: str, frames: int, frames_per_batch: int) -> float:
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONWARNINGS"] = "ignore"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.torchrl_dqn",
            "--child",
            side,
            "--frames",
            str(frames),
            "--frames-per-batch",
            str(frames_per_batch),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {side} run failed:\n{done.stderr[-3000:]}")
    rate: float = json.loads(done.stdout.strip().splitlines()[-1])["frames_per_s"]
    return rate


def main(argv: Sequence[str] | None = None) -> int:
    """Run the interleaved rounds and print the row (``--json PATH`` also writes it)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.torchrl_dqn", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--frames-per-batch", type=int, default=100)
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child, args.frames, args.frames_per_batch)
        return 0
    rates: dict[str, list[float]] = {side: [] for side in SIDES}
    for round_index in range(args.rounds):
        order = SIDES if round_index % 2 == 0 else SIDES[::-1]
        for side in order:
            rates[side].append(_run_child(side, args.frames, args.frames_per_batch))
    medians = {side: statistics.median(values) for side, values in rates.items()}
    ratio = medians["tensorclass"] / medians["tensordict"]
    print(f"TorchRL DQN loop (CartPole, {args.frames} frames, {args.rounds} rounds, interleaved)")
    for side in SIDES:
        shown = ", ".join(f"{v:.0f}" for v in rates[side])
        print(f"  {side:<12} {medians[side]:8.0f} frames/s  (rounds: {shown})")
    print(f"  tensorclass / tensordict: {ratio:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rates": rates, "medians": medians, "ratio": ratio}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
