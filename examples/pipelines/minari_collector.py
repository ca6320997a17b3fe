"""minari's DataCollector on FiniteMDP-v0 built from a path, and the env recovered.

pip install "minari[create]"   (DataCollector needs jax, ~380 MB installed)
"""

import os
import tempfile

import gymnasium as gym
import minari
import numpy as np

import nsrl

workdir = tempfile.mkdtemp()
os.environ.setdefault("MINARI_DATASETS_PATH", os.path.join(workdir, "datasets"))
mdp = nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.95)
path = os.path.join(workdir, "frozenlake.npz")
mdp.save(path)  # FiniteMDP-v0 gets a path (a JSON-serialisable spec), not the object

make = lambda: gym.make("FiniteMDP-v0", mdp=path, max_episode_steps=100)  # noqa: E731
env = minari.DataCollector(make(), record_infos=True, data_format="arrow")
env.action_space.seed(0)
for episode in range(10):
    env.reset(seed=episode)
    truncated = False
    while not truncated:  # a continuing task: episodes end by truncation only
        _, _, _, truncated, _ = env.step(env.action_space.sample())
env.create_dataset("nsrl/frozenlake-uniform-v0", eval_env=make(), algorithm_name="uniform random",
                   author="nsrl", author_email="-", code_permalink="-",
                   description="FrozenLake 4x4 as a FiniteMDP, uniformly random actions",
                   ref_min_score=0.0, ref_max_score=1.0)

dataset = minari.load_dataset("nsrl/frozenlake-uniform-v0")
recovered = dataset.recover_environment()  # gym.make(the stored spec): reads frozenlake.npz
assert recovered.unwrapped.mdp == mdp
for ep in dataset.iterate_episodes():
    s, a, s1 = ep.observations[:-1], ep.actions, ep.observations[1:]
    assert np.all(mdp.P[s, a, s1] > 0) and np.array_equal(ep.rewards, mdp.R[s, a])
    assert np.array_equal(ep.infos["state"], ep.observations)
print(f"{dataset.total_episodes} episodes, {dataset.total_steps} steps recorded by DataCollector")
print(f"recovered: {recovered.spec.id} {recovered.spec.kwargs}, same MDP: True")
