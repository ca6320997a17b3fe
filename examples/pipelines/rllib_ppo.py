"""Ray RLlib's PPO on a Garnet, then the learnt policy evaluated exactly by nsrl.

pip install torch==2.13.0 "ray[rllib]"   (CPU torch first; Ray pins its own gymnasium, so a
venv of its own). RLlib has no default encoder for Discrete observations: use "onehot".
"""

import gymnasium as gym
import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig

import nsrl

torch.set_num_threads(1)  # small nets: threads only contend
GARNET = dict(n_states=20, n_actions=3, branching=2, gamma=0.9, seed=0, observation="onehot")
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
config = (
    PPOConfig()
    # "nsrl:Garnet-v0" imports nsrl (which registers the id) in every env runner.
    .environment("nsrl:Garnet-v0", env_config=GARNET)
    .env_runners(num_env_runners=0, num_envs_per_env_runner=4)
    .training(gamma=GARNET["gamma"], train_batch_size_per_learner=2000, minibatch_size=250)
    .debugging(seed=0)
)
algo = config.build_algo()
for _ in range(10):
    result = algo.train()

mdp = gym.make("Garnet-v0", **GARNET).unwrapped.mdp
module = algo.get_module()
with torch.no_grad():  # the greedy action of every state, from its one-hot observation
    logits = module.forward_inference({"obs": torch.eye(mdp.n_states)})["action_dist_inputs"]
pi = nsrl.Deterministic(logits.argmax(1).numpy())
uniform = nsrl.Stochastic(np.full((mdp.n_states, mdp.n_actions), 1 / mdp.n_actions))
steps = int(result["num_env_steps_sampled_lifetime"])
print(f"RLlib PPO, {steps} steps: exact loss mu(v* - v_pi) = {nsrl.loss(mdp, pi):.3f} "
      f"(uniform random policy {nsrl.loss(mdp, uniform):.3f})")
algo.stop()
ray.shutdown()
