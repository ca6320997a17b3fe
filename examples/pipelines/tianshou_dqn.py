"""tianshou's DQN on a Garnet, through its own vector env over the single env; the learnt
greedy policy is then evaluated exactly by nsrl.

pip install torch==2.13.0 tianshou   (CPU torch first)
"""

import gymnasium as gym
import numpy as np
import tianshou as ts
import torch
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import CollectStats
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import nsrl

torch.manual_seed(0)
np.random.seed(0)  # noqa: NPY002 - tianshou explores and samples replay from this RNG
torch.set_num_threads(1)  # small nets: threads only contend
GARNET = dict(n_states=20, n_actions=3, branching=2, gamma=0.9, seed=0, observation="onehot")
make = lambda: gym.make("Garnet-v0", max_episode_steps=50, **GARNET)  # noqa: E731
train_envs = ts.env.DummyVectorEnv([make for _ in range(8)])
test_envs = ts.env.DummyVectorEnv([make for _ in range(8)])
train_envs.seed(0), test_envs.seed(100)
env = make()
mdp = env.unwrapped.mdp

net = Net(state_shape=mdp.n_states, action_shape=mdp.n_actions, hidden_sizes=[64])
policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                 eps_training=0.2, eps_inference=0.0)
algorithm = ts.algorithm.DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3),
                             gamma=mdp.gamma, n_step_return_horizon=1, target_update_freq=200)
train_collector = ts.data.Collector[CollectStats](
    algorithm, train_envs, ts.data.VectorReplayBuffer(20_000, 8), exploration_noise=True)
test_collector = ts.data.Collector[CollectStats](algorithm, test_envs)
result = algorithm.run_training(OffPolicyTrainerParams(
    training_collector=train_collector, test_collector=test_collector, max_epochs=3,
    epoch_num_steps=2000, collection_step_num_env_steps=8, test_step_num_episodes=8,
    batch_size=64, update_step_num_gradient_steps_per_sample=0.25, show_progress=False))

with torch.no_grad():  # the greedy action of every state, from its one-hot observation
    q, _ = net(torch.eye(mdp.n_states))
pi = nsrl.Deterministic(q.argmax(1).numpy())
uniform = nsrl.Stochastic(np.full((mdp.n_states, mdp.n_actions), 1 / mdp.n_actions))
print(f"tianshou DQN, {result.timing.total_time:.0f} s: exact loss mu(v* - v_pi) = "
      f"{nsrl.loss(mdp, pi):.3f}; uniform random policy: {nsrl.loss(mdp, uniform):.3f}; "
      f"v* averages {nsrl.optimal_value(mdp).mean():.3f}")
