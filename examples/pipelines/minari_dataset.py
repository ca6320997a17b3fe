"""A minari dataset recorded with the native vector env, and its environment recovered.

pip install minari   (no jax needed: the episodes are written with create_dataset_from_buffers)
"""

import os
import tempfile

import gymnasium as gym
import minari
import numpy as np
from gymnasium.vector import AutoresetMode
from minari.data_collector import EpisodeBuffer

import nsrl

workdir = tempfile.mkdtemp()
os.environ.setdefault("MINARI_DATASETS_PATH", os.path.join(workdir, "datasets"))
mdp = nsrl.garnet(30, 3, 2, seed=0)
path = os.path.join(workdir, "garnet.npz")
mdp.save(path)  # FiniteMDP-v0 gets a path (a JSON-serialisable spec), not the object

# 20 episodes of 50 steps at once: one per copy, no autoreset.
n_episodes, horizon = 20, 50
envs = gym.make_vec("FiniteMDP-v0", n_episodes, mdp=path, max_episode_steps=horizon,
                    autoreset_mode=AutoresetMode.DISABLED)
rng = np.random.default_rng(0)
states = [envs.reset(seed=0)[0]]
actions, rewards, truncations = [], [], []
for _ in range(horizon):
    actions.append(rng.integers(0, mdp.n_actions, n_episodes))
    obs, r, _, truncated, _ = envs.step(actions[-1])
    states.append(obs), rewards.append(r), truncations.append(truncated)
# Column i of each (time, copy) array is episode i.
states, actions, rewards, truncations = map(np.array, (states, actions, rewards, truncations))
buffers = [
    EpisodeBuffer(id=i, observations=list(states[:, i]), actions=list(actions[:, i]),
                  rewards=list(rewards[:, i]), terminations=[False] * horizon,
                  truncations=list(truncations[:, i]))
    for i in range(n_episodes)
]
env = gym.make("FiniteMDP-v0", mdp=path, max_episode_steps=horizon)
minari.create_dataset_from_buffers(
    "nsrl/garnet30-uniform-v0", buffers, env=env, eval_env=env,
    algorithm_name="uniform random", author="nsrl", author_email="-", code_permalink="-",
    description="Garnet(30, 3, 2), uniformly random actions", data_format="arrow",
)

dataset = minari.load_dataset("nsrl/garnet30-uniform-v0")
recovered = dataset.recover_environment()  # gym.make(the stored spec): reads garnet.npz
assert recovered.unwrapped.mdp == mdp
n = 0
for ep in dataset.iterate_episodes():
    s, a, s1 = ep.observations[:-1], ep.actions, ep.observations[1:]
    assert np.all(mdp.P[s, a, s1] > 0) and np.array_equal(ep.rewards, mdp.R[s, a])
    assert ep.truncations[-1] and not ep.truncations[:-1].any()
    n += len(a)
print(f"{dataset.total_episodes} episodes, {n} transitions, every one possible under P")
print(f"recovered: {recovered.spec.id} {recovered.spec.kwargs}, same MDP: True")
