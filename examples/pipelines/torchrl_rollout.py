"""torchrl over the native vector env: GymWrapper needs autoreset_mode DISABLED or SAME_STEP.

pip install torch==2.13.0 torchrl   (CPU torch first)
"""

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from torchrl.envs import GymWrapper
from torchrl.envs.utils import check_env_specs

import nsrl  # noqa: F401  (registers Garnet-v0)

for mode in (AutoresetMode.DISABLED, AutoresetMode.SAME_STEP):
    envs = gym.make_vec("Garnet-v0", num_envs=16, n_states=20, n_actions=3, branching=2,
                        max_episode_steps=5, autoreset_mode=mode)
    # Categorical encoding keeps actions and Discrete observations as indices.
    env = GymWrapper(envs, categorical_action_encoding=True)  # batch_size [16]
    check_env_specs(env)
    td = env.rollout(12, break_when_any_done=False)  # random actions, shape [16, 12]
    s, a = td["observation"].numpy(), td["action"].numpy()
    s1 = td["next", "observation"].numpy()  # the final observation where truncated
    r = td["next", "reward"].squeeze(-1).numpy()
    truncated = td["next", "truncated"].squeeze(-1).numpy()
    mdp = envs.unwrapped.mdp
    assert np.all(mdp.P[s, a, s1] > 0) and np.allclose(r, mdp.R[s, a])
    assert np.array_equal(np.flatnonzero(truncated.all(0)), [4, 9]) and truncated.sum() == 32
    # Within an episode the next observation is the following step's observation.
    assert np.array_equal(s1[:, :-1][~truncated[:, :-1]], s[:, 1:][~truncated[:, :-1]])
    print(f"{mode.name:<9} batch {tuple(td.batch_size)}, "
          f"{truncated.sum()} truncations at steps {np.flatnonzero(truncated.all(0)).tolist()}, "
          "every transition possible under P, rewards R[s, a]")
