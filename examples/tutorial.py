"""Tutorial: from ``gym.make("Garnet-v0")`` to sample-based and exact greedy operators compared.

One Garnet MDP, four greedy operators, three schemes, exact losses:

1. make the environment and look at it as any Gymnasium env;
2. take its exact model (``env.unwrapped.mdp``) and compute v* and the loss of a policy;
3. run API, CPI(0.1) and PSDP with the exact greedy operator, the paper's noisy projection
   (``projected``), and two operators that learn each greedy step from transitions of the env
   (LSTD-Q, rollouts + cost-sensitive classification), a few seeds each;
4. compare the exact losses ``mu (v* - v_pi)`` of what each run outputs, and save a figure.

Run: ``python examples/tutorial.py [--out tutorial.png]`` (about 10 s of CPU).
"""

import argparse

import gymnasium as gym
import matplotlib
import numpy as np

import nsrl

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the non-interactive backend)

SCHEMES = ("api", "cpi(0.1)", "psdp")
ITERATIONS, SEEDS, SAMPLES = 12, 2, 2000  # SAMPLES: new transitions per greedy call


def operators():
    """The four operators, by registered name: exact, noisy projection, and two from samples."""
    return {
        "exact": nsrl.OperatorSpec("exact"),
        "projected (noise 0.1)": nsrl.OperatorSpec("projected", noise=0.1),
        "LSTD-Q": nsrl.OperatorSpec("lstdq", budget=SAMPLES, features="onehot"),
        "rollouts + CSC": nsrl.OperatorSpec("rollout-csc", budget=SAMPLES, features="onehot"),
    }


def look_at(env):
    """Step the env as any Gymnasium env, then return its exact model."""
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(0)  # action 0
    print(f"observation {obs}, reward {reward:.3f}, {env.action_space}")
    mdp = env.unwrapped.mdp  # the env's exact model: a nsrl.FiniteMDP
    v_star = nsrl.optimal_value(mdp)
    print(f"{mdp!r}: mean v* = {v_star.mean():.2f}, "
          f"loss of 'always action 0' = {nsrl.loss(mdp, nsrl.Constant(0)):.2f}")
    return mdp


def compare(mdp):
    """Exact losses, shape (SEEDS, ITERATIONS), of every (scheme, operator) pair."""
    losses = {}
    for scheme in SCHEMES:
        for label, spec in operators().items():
            rngs = [np.random.default_rng(seed) for seed in range(SEEDS)]
            hist = nsrl.run(scheme, spec, ITERATIONS, mdp=mdp, rng=rngs)
            losses[scheme, label] = hist.losses
            print(f"{scheme:9s} {label:22s} final loss {hist.losses[:, -1].mean():7.3f}  "
                  f"({hist.engine} engine)")
    return losses


def plot(losses, out):
    """One panel per scheme: mean loss (and its range over seeds) against the iteration."""
    fig, axes = plt.subplots(1, len(SCHEMES), figsize=(4 * len(SCHEMES), 3.4), sharey=True)
    k = np.arange(1, ITERATIONS + 1)
    for ax, scheme in zip(axes, SCHEMES, strict=True):
        for label in operators():
            runs = losses[scheme, label]
            line, = ax.plot(k, runs.mean(axis=0), label=label)
            ax.fill_between(k, runs.min(axis=0), runs.max(axis=0), color=line.get_color(),
                            alpha=0.15)
        ax.set(title=scheme.upper(), xlabel="iteration k")
        ax.set_yscale("symlog", linthresh=0.1)  # linear below 0.1: exact zeros show
    axes[0].set_ylabel("exact loss mu (v* - v_pi)")
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(f"figure: {out}")


def main(argv=None):
    """Run the tutorial; return the losses by (scheme, operator)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tutorial.png", help="where to save the figure")
    args = parser.parse_args(argv)
    env = gym.make("Garnet-v0", n_states=50, n_actions=4, branching=2, seed=0)
    losses = compare(look_at(env))
    plot(losses, args.out)
    return losses


if __name__ == "__main__":
    main()
