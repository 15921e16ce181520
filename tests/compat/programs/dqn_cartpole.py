"""A DQN on CartPole with TorchRL, written for tensordict (run it as it is, or on tensorclass
with ``python -m tensorclass run-as-tensordict``): collect, store, sample, loss, update.

Prints one JSON line: frames, the losses (one per update), the episode returns seen, and
``tensordict.__version__`` / the implementation it ran on.
"""

from __future__ import annotations

import argparse
import json

import tensordict
import torch
from tensordict.nn import TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, TensorDictReplayBuffer
from torchrl.envs import Compose, DoubleToFloat, GymEnv, RewardSum, StepCounter, TransformedEnv
from torchrl.modules import MLP, EGreedyModule, QValueActor
from torchrl.objectives import DQNLoss, SoftUpdate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--frames-per-batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = TransformedEnv(
        GymEnv("CartPole-v1"), Compose(DoubleToFloat(), StepCounter(), RewardSum())
    )
    env.set_seed(args.seed)
    value_net = MLP(in_features=4, out_features=2, num_cells=[64, 64])
    actor = QValueActor(value_net, in_keys=["observation"], spec=env.action_spec)
    explore = EGreedyModule(
        env.action_spec, eps_init=1.0, eps_end=0.05, annealing_num_steps=args.frames
    )
    policy = TensorDictSequential(actor, explore)
    collector = Collector(
        env,
        policy,
        frames_per_batch=args.frames_per_batch,
        total_frames=args.frames,
        init_random_frames=args.frames_per_batch,
    )
    buffer = TensorDictReplayBuffer(storage=LazyTensorStorage(10_000), batch_size=64)
    loss = DQNLoss(actor, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=0.99)
    updater = SoftUpdate(loss, eps=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=1e-3)

    losses: list[float] = []
    returns: list[float] = []
    frames = 0
    for batch in collector:
        frames += batch.numel()
        buffer.extend(batch.reshape(-1))
        done = batch["next", "done"].squeeze(-1)
        returns += batch["next", "episode_reward"][done].flatten().tolist()
        for _ in range(4):
            sample = buffer.sample()
            value = loss(sample)["loss"]
            optim.zero_grad()
            value.backward()
            nn.utils.clip_grad_norm_(loss.parameters(), 10.0)
            optim.step()
            updater.step()
            losses.append(value.item())
        explore.step(batch.numel())
        collector.update_policy_weights_()
    collector.shutdown()
    print(
        json.dumps(
            {
                "frames": frames,
                "losses": losses,
                "returns": returns,
                "version": tensordict.__version__,
                "implementation": getattr(tensordict, "__implementation__", "tensordict"),
            }
        )
    )


if __name__ == "__main__":
    main()
