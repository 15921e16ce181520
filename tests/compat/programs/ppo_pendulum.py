"""A PPO on Pendulum with TorchRL, written for tensordict (run it as it is, or on tensorclass
with ``python -m tensorclass run-as-tensordict``): a ``ProbabilisticActor`` with a
``TanhNormal``, a ``ValueOperator``, ``GAE`` and ``ClipPPOLoss``.

Prints one JSON line: frames, the losses (one per update), and the implementation it ran on.
"""

from __future__ import annotations

import argparse
import json

import tensordict
import torch
from tensordict.nn import NormalParamExtractor, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs import Compose, DoubleToFloat, GymEnv, StepCounter, TransformedEnv
from torchrl.modules import MLP, ProbabilisticActor, TanhNormal, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--frames-per-batch", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = TransformedEnv(GymEnv("Pendulum-v1"), Compose(DoubleToFloat(), StepCounter()))
    env.set_seed(args.seed)
    n_obs = env.observation_spec["observation"].shape[-1]
    n_act = env.action_spec.shape[-1]
    actor_net = nn.Sequential(
        MLP(in_features=n_obs, out_features=2 * n_act, num_cells=[32, 32]), NormalParamExtractor()
    )
    policy = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=["observation"], out_keys=["loc", "scale"]),
        spec=env.action_spec,
        in_keys=["loc", "scale"],
        distribution_class=TanhNormal,
        distribution_kwargs={"low": env.action_spec.space.low, "high": env.action_spec.space.high},
        return_log_prob=True,
    )
    value = ValueOperator(
        MLP(in_features=n_obs, out_features=1, num_cells=[32, 32]), in_keys=["observation"]
    )
    collector = Collector(
        env, policy, frames_per_batch=args.frames_per_batch, total_frames=args.frames
    )
    buffer = ReplayBuffer(
        storage=LazyTensorStorage(args.frames_per_batch),
        sampler=SamplerWithoutReplacement(),
        batch_size=50,
    )
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=value, average_gae=True)
    loss = ClipPPOLoss(policy, value, clip_epsilon=0.2, entropy_coeff=1e-3)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)

    losses: list[float] = []
    rewards: list[float] = []
    frames = 0
    for batch in collector:
        frames += batch.numel()
        rewards.append(batch["next", "reward"].mean().item())
        for _ in range(2):
            with torch.no_grad():
                advantage(batch)
            buffer.extend(batch.reshape(-1))
            for _ in range(args.frames_per_batch // 50):
                sample = buffer.sample()
                out = loss(sample)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                optim.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optim.step()
                losses.append(total.item())
        collector.update_policy_weights_()
    collector.shutdown()
    print(
        json.dumps(
            {
                "frames": frames,
                "losses": losses,
                "rewards": rewards,
                "implementation": getattr(tensordict, "__implementation__", "tensordict"),
            }
        )
    )


if __name__ == "__main__":
    main()
