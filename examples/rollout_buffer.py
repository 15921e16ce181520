"""An RL-style rollout buffer: collect transitions, compute returns, sample minibatches.

The buffer is pre-allocated lazily: writing the first transition at step ``t`` allocates
every key for the whole rollout. A probabilistic policy samples actions and records their
log-probabilities; returns are computed backwards in time on the whole batch of
environments at once.

Run: ``python examples/rollout_buffer.py --envs 8 --steps 64``
"""

from __future__ import annotations

import argparse

import torch
from torch import nn
from torch.distributions import Normal

from tensorclass import TensorClass, TensorDict
from tensorclass.nn import (
    InteractionType,
    NormalParamExtractor,
    ProbabilisticTensorDictModule,
    ProbabilisticTensorDictSequential,
    TensorDictModule,
    set_interaction_type,
)


class Transition(TensorClass):
    """One step of every environment, once collected: every field is there (no ``None``
    checks when reading them), and ``Transition.from_tensordict`` checks that it is."""

    obs: torch.Tensor
    action: torch.Tensor
    sample_log_prob: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    returns: torch.Tensor
    loc: torch.Tensor
    scale: torch.Tensor
    params: torch.Tensor


class PointEnv:
    """Batched 2-D point masses rewarded for moving towards the origin."""

    def __init__(self, envs: int, seed: int = 0) -> None:
        self.generator = torch.Generator().manual_seed(seed)
        self.envs = envs
        self.position = torch.randn(envs, 2, generator=self.generator)

    def observe(self) -> TensorDict:
        return TensorDict(obs=self.position.clone(), batch_size=[self.envs])

    def step(self, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.position = self.position + 0.1 * action.clamp(-1, 1)
        reward = -self.position.norm(dim=-1)
        done = reward > -0.05
        reset = torch.randn(self.envs, 2, generator=self.generator)
        self.position = torch.where(done.unsqueeze(-1), reset, self.position)
        return reward, done


def make_policy() -> ProbabilisticTensorDictSequential:
    return ProbabilisticTensorDictSequential(
        TensorDictModule(nn.Linear(2, 4), in_keys=["obs"], out_keys=["params"]),
        TensorDictModule(NormalParamExtractor(), in_keys=["params"], out_keys=["loc", "scale"]),
        ProbabilisticTensorDictModule(
            in_keys=["loc", "scale"],
            out_keys=["action"],
            distribution_class=Normal,
            return_log_prob=True,
        ),
    )


def collect(
    env: PointEnv, policy: ProbabilisticTensorDictSequential, steps: int, gamma: float = 0.99
) -> Transition:
    """A rollout of ``steps`` transitions with their returns: batch size [envs, steps].

    Collected into a ``TensorDict`` (keys appear as the policy writes them), then checked
    once into the typed ``Transition``.
    """
    buffer = TensorDict(batch_size=[env.envs, steps])
    with torch.no_grad(), set_interaction_type(InteractionType.RANDOM):  # explore: sample
        for t in range(steps):
            step = policy(env.observe())
            step["reward"], step["done"] = env.step(step["action"])
            buffer[:, t] = step  # keys seen for the first time are allocated for all steps
    buffer["returns"] = discounted_returns(buffer["reward"], buffer["done"], gamma)
    return Transition.from_tensordict(buffer)  # a missing field would be an error here


def discounted_returns(
    reward: torch.Tensor, done: torch.Tensor, gamma: float = 0.99
) -> torch.Tensor:
    """Returns computed backwards in time, cut at episode ends, for every env at once."""
    returns = torch.zeros_like(reward)
    running = torch.zeros(reward.shape[0])
    for t in reversed(range(reward.shape[1])):
        running = reward[:, t] + gamma * running * (~done[:, t])
        returns[:, t] = running
    return returns


def run(envs: int = 8, steps: int = 64, updates: int = 20, seed: int = 0) -> dict[str, float]:
    """Collect, compute returns, take policy-gradient steps; report the mean reward."""
    torch.manual_seed(seed)
    env = PointEnv(envs, seed)
    policy = make_policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-2)
    rewards = []
    for _ in range(updates):
        buffer = collect(env, policy, steps)
        returns = buffer.returns
        flat = buffer.reshape(-1)  # one batch dim: envs * steps transitions
        shuffled = flat[torch.randperm(flat.batch_size[0])]  # every key, the same order
        for minibatch in shuffled.split(steps):
            adv = (minibatch.returns - returns.mean()) / (returns.std() + 1e-6)
            # re-run the network on the stored observations; score the stored actions
            log_prob = policy.log_prob(minibatch)
            loss = -(log_prob.sum(-1) * adv).mean()
            optimizer.zero_grad()
            torch.autograd.backward(loss)  # typed (torch leaves Tensor.backward unannotated)
            optimizer.step()
        rewards.append(buffer.reward.mean().item())
    return {"first_reward": rewards[0], "last_reward": rewards[-1], "transitions": envs * steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args()
    result = run(args.envs, args.steps, args.updates)
    print(
        f"{result['transitions']} transitions per rollout; mean reward "
        f"{result['first_reward']:.3f} -> {result['last_reward']:.3f}"
    )


if __name__ == "__main__":
    main()
