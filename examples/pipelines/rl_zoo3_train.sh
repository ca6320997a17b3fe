#!/usr/bin/env bash
# rl-zoo3 trains PPO on Garnet-v0; nsrl then evaluates the saved agent exactly.
# pip install torch==2.13.0 rl-zoo3   (CPU torch first)
# --gym-packages nsrl imports nsrl, which registers the ids: use --env Garnet-v0
# (rl-zoo3 rejects the module-prefixed id nsrl:Garnet-v0).
set -euo pipefail
cd "$(mktemp -d)"
python -m rl_zoo3.train --algo ppo --env Garnet-v0 --gym-packages nsrl --seed 0 \
    -n 20000 --eval-freq -1 --log-folder logs --verbose 0 --num-threads 1 \
    --env-kwargs n_states:20 n_actions:3 branching:2 gamma:0.9 "observation:'onehot'"
python - <<'PY'
import gymnasium as gym
from stable_baselines3 import PPO

import nsrl

env = gym.make("Garnet-v0", n_states=20, n_actions=3, branching=2, gamma=0.9,
               observation="onehot")
mdp = env.unwrapped.mdp
model = PPO.load("logs/ppo/Garnet-v0_1/Garnet-v0.zip")
pi = nsrl.from_sb3(model, mdp)  # pi[s, a] = the agent's action probabilities
uniform = nsrl.Stochastic([[1 / 3] * 3] * 20)
print(f"rl-zoo3 PPO, 20k steps: exact loss mu(v* - v_pi) = {nsrl.loss(mdp, pi):.3f} "
      f"(uniform random policy {nsrl.loss(mdp, uniform):.3f})")
PY
