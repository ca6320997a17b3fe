"""API with LSTD-Q on CartPole-v1 (continuous observations), RBF features from scikit-learn.

No model and no reset-to-state: LSTD-Q learns from the env's own episodes (uniform actions),
on random Fourier features of the standardised observation (``StandardScaler`` then
``RBFSampler``, fitted once on the first batch). There is no exact loss here: each output
policy is judged by its mean undiscounted return over 20 fresh episodes (500 at most;
the uniform random policy scores about 22).

Run: ``python examples/cartpole_rbf.py`` (about a minute).
"""

import gymnasium as gym
import numpy as np
from sklearn.kernel_approximation import RBFSampler
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import nsrl
from nsrl.greedy import LSTDQ

GAMMA, ITERATIONS, BUDGET = 0.99, 8, 10_000


def mean_return(policy, seed, episodes=20):
    env = gym.make("CartPole-v1")
    total = 0.0
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        done = False
        while not done:
            obs, r, terminated, truncated, _ = env.step(int(policy.act(obs[None])[0]))
            total += r
            done = terminated or truncated
    return total / episodes


def main():
    env = gym.make("CartPole-v1")
    features = make_pipeline(StandardScaler(), RBFSampler(gamma=0.5, n_components=200,
                                                          random_state=0))
    op = LSTDQ(env, budget=BUDGET, gamma=GAMMA, features=features)
    h = nsrl.run(nsrl.API(), op, ITERATIONS, rng=np.random.default_rng(0), keep_outputs=True)
    print(f"API + LSTD-Q on CartPole-v1, {BUDGET} transitions per iteration, RBF features")
    print(f"{'iteration':>9s} {'samples':>9s} {'mean return':>12s}")
    for k, policy in enumerate(h.outputs):
        print(f"{k + 1:9d} {h.samples[k]:9d} {mean_return(policy, seed=1000):12.1f}")


if __name__ == "__main__":
    main()
