"""LSTD-Q: speed of one greedy call, consistency, and the learners' results, new vs baseline.

Parts (``--part speed|consistency|targets|cpi|curve|all``, default all):

* **speed**: one greedy call with 10^6 transitions, one-hot features of Garnet(100, 4, 2),
  stationary target (target: <= 0.5 s on one core). The new operator (counts N(x, a, x')
  accumulated with ``np.bincount``, a sparse solve) beside the baseline: the previous
  implementation, copied below (dense (n, d) feature products, ridge on the normalised
  system), measured in the same run. Also: the new operator on NSPI(5)'s loop and PSDP's
  20-policy sequence, and a 15 000-transition call solving from a full store of 10^6.
* **consistency**: max |Q_hat - Q_pi| against the number of transitions on Garnet(50, 4, 2),
  one-hot, pi = action 0: the new ridge (1e-3 transitions) and the baseline's (1e-6 on the
  normalised system), on the same batches (mean over 3 per size).
* **targets**: final exact loss after 20 iterations, 15 000 transitions per call (300 000),
  Garnet(50, 4, 2), one-hot, MDP seeds 0, 1, 2 (run seed = MDP seed), LSTD-Q with its
  defaults beside the exact operator.
* **cpi**: CPI(0.1) + LSTD-Q with parts of the new operator switched off (what made the
  baseline stall at 24.8 on `nsrl compare`'s Garnet(50, 4, 2)).
* **curve**: API, NSPI(10), PSDP + LSTD-Q on Garnet(100, 4, 2) (instance seed = run seed, 5
  seeds): loss at 10^4, 10^5, 10^6 transitions (SB3 DQN, docs/sb3.md: 0.27 at 10^5, 0.39 at
  10^6). LSTD-Q learns from the env's own walks (no reset-to-state).

BLAS runs single-threaded (threadpoolctl), as "one core" asks.

Run: ``python benchmarks/bench_lstdq.py [--part speed]``.
"""

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import LSTDQ, EstimatorPolicy, ExactGreedy
from nsrl.greedy.lstdq import LinearQ
from nsrl.greedy.sampling import action_probs
from nsrl.policies import NonStationary

# --- the baseline: the previous LSTD-Q (nsrl/greedy/lstdq.py before sample reuse) -----------


def sa_features(phi, probs):
    return (probs[:, :, None] * phi[:, None, :]).reshape(len(phi), -1)


class Design:
    def __init__(self, phi, actions, n_actions, weights):
        w = weights / weights.sum()
        self.p, self.n_actions = phi.shape[1], n_actions
        self.blocks = [(np.flatnonzero(actions == a), a) for a in range(n_actions)]
        self.wphi, self.phi = w[:, None] * phi, phi

    def cross(self, y):
        out = np.zeros((self.n_actions * self.p,) + np.shape(y)[1:])
        for idx, a in self.blocks:
            out[a * self.p:(a + 1) * self.p] = self.wphi[idx].T @ y[idx]
        return out

    def gram(self):
        d = self.n_actions * self.p
        out = np.zeros((d, d))
        for idx, a in self.blocks:
            sl = slice(a * self.p, (a + 1) * self.p)
            out[sl, sl] = self.wphi[idx].T @ self.phi[idx]
        return out


def baseline_lstdq_loop(design, psi_next, rewards, gamma, ridge):
    m, d = len(psi_next), design.n_actions * design.p
    C, b = design.gram(), design.cross(rewards)
    system = ridge * np.eye(m * d)
    for j, nxt in enumerate(psi_next):
        k = (j + 1) % m
        system[j * d:(j + 1) * d, j * d:(j + 1) * d] += C
        system[j * d:(j + 1) * d, k * d:(k + 1) * d] -= gamma * design.cross(nxt)
    return np.linalg.solve(system, np.tile(b, m)).reshape(m, d)


def baseline_solve(op, target, data, rng, ridge=1e-6):
    """The baseline's solve for stationary and loop targets (normalised ridge)."""
    phi, phi_next = op.features(data.obs), op.features(data.next_obs)
    design = Design(phi, np.asarray(data.actions), op.n_actions, np.ones(len(data.rewards)))
    pols = target.policies if isinstance(target, NonStationary) else [target]
    nxt = []
    for p in pols:
        probs = action_probs(op.sampler, p, data.next_states, data.next_obs, rng)
        nxt.append(sa_features(phi_next, probs) * (~data.done)[:, None])
    theta = baseline_lstdq_loop(design, nxt, data.rewards, op.gamma, ridge)[0]
    return theta.reshape(op.n_actions, -1)


def baseline_greedy(op, target, budget, rng):
    """The baseline's greedy call: fresh transitions, dense solve, dense advantage."""
    data = op.sampler.transitions(budget, rng)
    theta = baseline_solve(op, target, data, rng)
    policy = EstimatorPolicy(op.features, regressors=[LinearQ(t) for t in theta])
    q = op.features(data.obs) @ theta.T
    probs = action_probs(op.sampler, target, data.states, data.obs, rng)
    chosen = q[np.arange(len(q)), policy.act(data.obs)]
    return policy, float(np.mean(chosen - (probs * q).sum(axis=1)))


# --- parts -------------------------------------------------------------------------------


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


class Replay:
    """A sampler stand-in that returns one pre-drawn batch: times a call without its draw."""

    def __init__(self, sampler, data):
        self.sampler, self.data = sampler, data

    def __getattr__(self, name):
        return getattr(self.sampler, name)

    def transitions(self, n, rng, behaviour=None, explore=1.0):
        return self.data


def speed(n=10**6, repeats=5):
    mdp = nsrl.garnet(100, 4, 2, seed=0)
    env = FiniteMDPVectorEnv(mdp, num_envs=1)
    pi = nsrl.Deterministic(np.random.default_rng(0).integers(0, 4, 100))
    loop = NonStationary([pi] * 5, loop=True)
    sequence = NonStationary([pi] * 20, loop=False)
    rng = np.random.default_rng(0)
    new = LSTDQ(env, budget=n, features="onehot")
    new.greedy(pi, nsrl.Nu(), rng)  # warm-up (numba compilation), fills the store
    rows = [("new: one call (draw 10^6, update counts, solve)",
             timed(lambda: new.greedy(pi, nsrl.Nu(), rng), repeats))]
    rows.append(("new: drawing 10^6 transitions alone (sampler)",
                 timed(lambda: new.sampler.transitions(n, rng), repeats)))
    rows.append(("new: NSPI(5) loop target", timed(lambda: new.greedy(loop, nsrl.Nu(), rng),
                                                     repeats)))
    rows.append(("new: PSDP 20-policy sequence", timed(
        lambda: new.greedy(sequence, nsrl.Nu(), rng), repeats)))
    data = new.sampler.transitions(n, rng)
    new.sampler = Replay(new.sampler, data)
    rows.append(("new: one call without the draw (counts in and out, solve, policy)",
                 timed(lambda: new.greedy(pi, nsrl.Nu(), rng), repeats)))
    small = LSTDQ(env, budget=15_000, features="onehot", store=n)
    small.store.add(data)  # a full store of 10^6
    small.greedy(pi, nsrl.Nu(), rng)
    rows.append(("new: 15 000 new + 10^6 stored (reuse)",
                 timed(lambda: small.greedy(pi, nsrl.Nu(), rng), repeats)))
    old = LSTDQ(env, budget=n, features="onehot", reuse=False)
    baseline_greedy(old, pi, 1000, rng)
    t_old = timed(lambda: baseline_greedy(old, pi, n, rng), 1)
    old.sampler = Replay(old.sampler, data)
    rows.append(("baseline: one call without the draw (dense solve)",
                 timed(lambda: baseline_greedy(old, pi, n, rng), 1)))
    rows.append(("baseline: one call (draw 10^6, dense solve)", t_old))
    print(f"\n### Speed: one greedy call, {n:,} transitions, Garnet(100, 4, 2), one-hot "
          f"(d = 400), one core\n\n| what | seconds |\n|---|---:|")
    for name, t in rows:
        print(f"| {name} | {t:.3f} |")
    print(f"\nspeed-up of one call: {t_old / rows[0][1]:.0f}x; without the draw: "
          f"{rows[-2][1] / rows[4][1]:.0f}x (target: new <= 0.5 s)")


def consistency(sizes=(10**4, 10**5, 10**6), batches=3):
    mdp = nsrl.garnet(50, 4, 2, seed=0)
    pi = nsrl.constant(0)
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, pi))
    op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=1, features="onehot", reuse=False)
    print(f"\n### max |Q_hat - Q_pi|, Garnet(50, 4, 2), one-hot, pi = action 0 (|Q| ~ 50), "
          f"mean over {batches} batches per size\n\n| transitions | new (ridge 1e-3 "
          f"transitions) | baseline (normalised ridge 1e-6) |\n|---:|---:|---:|")
    for n in sizes:
        new, old = [], []
        for b in range(batches):
            rng = np.random.default_rng([n, b])
            data = op.sampler.transitions(n, rng)
            new.append(np.abs(op.solve(pi, data, rng).T - q).max())
            old.append(np.abs(baseline_solve(op, pi, data, rng).T - q).max())
        print(f"| {n:,} | {np.mean(new):.3f} | {np.mean(old):.3f} |", flush=True)


SCHEMES = ("api", "api(0.1)", "cpi(0.1)", "cpi+", "nspi(5)", "psdp")


def targets(schemes=SCHEMES, budget=15_000, iterations=20):
    print(f"\n### Final exact loss, Garnet(50, 4, 2), one-hot, {iterations} iterations x "
          f"{budget:,} transitions, MDP seeds 0, 1, 2\n\n| scheme | LSTD-Q (defaults) | "
          f"exact operator | gap | transitions used | seconds |\n|---|---|---|---:|---:|---:|")
    for name in schemes:
        losses, exact, used, t0 = [], [], [], time.perf_counter()
        for seed in (0, 1, 2):
            mdp = nsrl.garnet(50, 4, 2, seed=seed)
            op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=budget, features="onehot")
            h = nsrl.run(nsrl.make_scheme(name), op, iterations, rng=np.random.default_rng(seed))
            losses.append(h.losses[-1])
            used.append(h.samples[-1])
            e = nsrl.run(nsrl.make_scheme(name), ExactGreedy(mdp), iterations,
                         rng=np.random.default_rng(seed))
            exact.append(e.losses[-1])
        print(f"| {name} | {np.mean(losses):.3f} ({', '.join(f'{x:.3f}' for x in losses)}) | "
              f"{np.mean(exact):.3f} ({', '.join(f'{x:.3f}' for x in exact)}) | "
              f"{np.mean(losses) - np.mean(exact):+.3f} | {np.mean(used):,.0f} | "
              f"{time.perf_counter() - t0:.0f} |", flush=True)


ABLATION = [
    ("defaults (reuse, ridge 1e-3 transitions, explore 0.3)", {}),
    ("no reuse", dict(reuse=False)),
    ("no reuse, ridge 1.5 transitions (the baseline's normalised 1e-4 at n = 15 000)",
     dict(reuse=False, ridge=1.5)),
    ("reuse, ridge 1.5 transitions", dict(ridge=1.5)),
    ("defaults but explore 0 (data follow pi only)", dict(explore=0.0)),
]


def cpi(budget=15_000, iterations=20):
    mdp = nsrl.garnet(50, 4, 2, seed=0)
    exact = np.mean([nsrl.run(nsrl.CPIAlpha(0.1), ExactGreedy(mdp), iterations,
                              rng=np.random.default_rng(s)).losses[-1] for s in range(3)])
    print(f"\n### CPI(0.1) + LSTD-Q, what moves it: Garnet(50, 4, 2) MDP seed 0 (`nsrl "
          f"compare` protocol), run seeds 0, 1, 2, {iterations} x {budget:,}; exact operator "
          f"{exact:.3f}\n\n| LSTD-Q setting | final loss (runs) |\n|---|---|")
    for label, kw in ABLATION:
        out = []
        for seed in range(3):
            op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=budget, features="onehot",
                       **kw)
            h = nsrl.run(nsrl.CPIAlpha(0.1), op, iterations, rng=np.random.default_rng(seed))
            out.append(h.losses[-1])
        print(f"| {label} | {np.mean(out):.3f} ({', '.join(f'{x:.3f}' for x in out)}) |",
              flush=True)


CURVES = (("api", 5_000), ("api", 25_000), ("nspi(10)", 5_000), ("psdp", 5_000))


def curve(learners=CURVES, total=10**6, seeds=5):
    marks = (10**4, 10**5, 10**6)
    print(f"\n### Exact loss against transitions, Garnet(100, 4, 2), one-hot, LSTD-Q defaults, "
          f"{seeds} seeds (instance seed = run seed)\n\n| learner | transitions per call | "
          f"loss @1e4 | @1e5 | @1e6 | seconds |\n|---|---:|---|---|---|---:|")
    for scheme, budget in learners:
        losses, t0 = {m: [] for m in marks}, time.perf_counter()
        for seed in range(seeds):
            mdp = nsrl.garnet(100, 4, 2, seed=seed)
            op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=budget, features="onehot")
            h = nsrl.run(nsrl.make_scheme(scheme), op, total // budget,
                         rng=np.random.default_rng(seed))
            for m in marks:
                k = int(np.searchsorted(h.samples, m, side="right")) - 1
                losses[m].append(h.losses[k] if k >= 0 else np.nan)
        cells = " | ".join("-" if np.isnan(v).any() else f"{np.mean(v):.3f} ± {np.std(v):.3f}"
                           for v in losses.values())
        print(f"| {scheme}/lstdq | {budget:,} | {cells} | {time.perf_counter() - t0:.0f} |",
              flush=True)
    print("| SB3 DQN (docs/sb3.md) | | 19.885 ± 8.102 | 0.266 ± 0.284 | 0.386 ± 0.430 | |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all",
                        choices=["speed", "consistency", "targets", "cpi", "curve", "all"])
    args = parser.parse_args()
    with threadpool_limits(1):
        for part in ("speed", "consistency", "targets", "cpi", "curve"):
            if args.part in (part, "all"):
                globals()[part]()


if __name__ == "__main__":
    main()
