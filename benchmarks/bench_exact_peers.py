"""Certified v* beside the peers: nsrl's modified policy iteration, QuantEcon, mdptoolbox.

One run, one core (BLAS and numba threads set to 1 before numpy loads; ``taskset -c 0``
too if you like), the same models for every solver, in CPU seconds of the process by
default (``--clock wall`` for elapsed time):

* nsrl before: policy iteration with certified BiCGSTAB evaluations (the method v* used
  before modified policy iteration; kept as the path without numba), best of ``--repeat``;
* nsrl: ``ExactBackend(mdp).optimal_value()`` and its certified bound;
* QuantEcon: ``DiscreteDP(R, Q, beta, s_indices, a_indices).solve("modified_policy_iteration",
  epsilon=...)``, Q a CSR matrix of shape (S A, S); its numba kernels compiled before timing.
  Equal accuracy: its epsilon is the largest of 32, 8 and 2 times nsrl's bound whose result
  is within nsrl's bound of a reference v* (nsrl's MPI to 1/20 of the bound, certified)
  (QuantEcon's own guarantee is epsilon / 2). nsrl and QuantEcon are timed in alternating
  pairs, ``--repeat`` pairs or more: this machine's memory speed drifts over minutes, and a
  pair taken seconds apart compares like with like; the table gives each one's fastest and
  the ratio of the two, and in brackets the median of the pairs' ratios;
* mdptoolbox (hiive): ``PolicyIterationModified`` with epsilon twice nsrl's bound (its
  guarantee, as QuantEcon's, is epsilon / 2), once, up to 3 000 states (20 s at 10^3 on a
  loaded machine already).

QuantEcon and mdptoolbox are optional: in an environment without them their columns say
"not installed". Install them in a side environment (they pin what nsrl does not):
``python -m venv /tmp/qe && /tmp/qe/bin/pip install quantecon mdptoolbox-hiive gymnasium``
``&& /tmp/qe/bin/pip install --no-deps -e .``.

    python benchmarks/bench_exact_peers.py [--repeat 2] [--only garnet_1e3,car] [--clock wall]
    python benchmarks/bench_exact_peers.py --rev ec3e9e9   # and an earlier revision, same run
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from revisions import export  # noqa: E402 (a sibling script: benchmarks/ is on the path)

import nsrl  # noqa: E402
from nsrl.exact import ExactBackend, NotCertifiedError, optimal  # noqa: E402
from nsrl.exact.mpi import optimal_mpi  # noqa: E402

MODEL_SOURCES = {  # the source is run by --rev's child process too
    "garnet_1e3": ("Garnet(10^3, 10, 2)", "nsrl.garnet(1000, 10, 2, seed=0)"),
    "garnet_3e3": ("Garnet(3x10^3, 10, 2)", "nsrl.garnet(3000, 10, 2, seed=0)"),
    "garnet_1e4": ("Garnet(10^4, 10, 2)", "nsrl.garnet(10**4, 10, 2, seed=0)"),
    "garnet_1e5": ("Garnet(10^5, 10, 2)", "nsrl.garnet(10**5, 10, 2, seed=0)"),
    "garnet_1e6": ("Garnet(10^6, 10, 2)", "nsrl.garnet(10**6, 10, 2, seed=0)"),
    "grid": ("gridworld(316, seed=0)", "nsrl.gridworld(316, seed=0)"),
    "car": ("mountain_car(316, 316)", "nsrl.mountain_car(316, 316)"),
}
MODELS = {key: (name, eval(f"lambda: {source}"))  # noqa: S307 (our own literals)
          for key, (name, source) in MODEL_SOURCES.items()}

TOOLBOX_MAX_STATES = 3000


# ``--rev``: the same solve by an earlier revision's package, in a child process on one thread
_REV_CHILD = """
import sys, time, warnings
warnings.simplefilter("ignore")
import nsrl
from nsrl.exact import ExactBackend
from nsrl.exact.mpi import optimal_mpi
optimal_mpi(nsrl.garnet(50, 3, 2, seed=0), 1e-6)  # compiled before timing
mdp = {source}
best = float("inf")
for _ in range({repeat}):
    t = time.process_time()
    b = ExactBackend(mdp)
    result = b.optimal_value()
    best = min(best, time.process_time() - t)
bound = getattr(result, "bound", None)
print(best, bound if bound is not None else b.v_star_bound)
"""


def at_revision(package: str, key: str, repeat: int) -> tuple[float, float]:
    """(fastest CPU s, certified bound) of ``optimal_value`` by the package under ``package``."""
    import subprocess
    import sys

    code = _REV_CHILD.format(source=MODEL_SOURCES[key][1], repeat=repeat)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": package}, check=False)
    if done.returncode:
        raise SystemExit(f"the --rev child failed on {key}:\n{done.stderr[-2000:]}")
    best, bound = done.stdout.split()
    return float(best), float(bound)


CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCK["cpu"]


def best_of(fn, repeat: int, budget: float = 1.0):
    """(seconds of the fastest call, the last call's result): at least ``repeat`` calls, more
    (up to 25) while they add up to less than ``budget`` seconds (short solves on a loaded
    machine are mostly scheduling noise)."""
    times, out = [], None
    while len(times) < repeat or (sum(times) < budget and len(times) < 25):
        t = clock()
        out = fn()
        times.append(clock() - t)
    return min(times), out


def quantecon(mdp):
    """A callable epsilon -> (v, seconds-free solve) on QuantEcon, or None if missing."""
    try:
        from quantecon.markov import DiscreteDP
    except ImportError:
        return None

    def build(m):
        nxt, probs = m.successors
        S, A, b = nxt.shape
        Q = sp.csr_matrix((probs.ravel(), nxt.ravel(), np.arange(0, S * A * b + 1, b)),
                          shape=(S * A, S))
        return DiscreteDP(m.R.ravel(), Q, m.gamma, np.repeat(np.arange(S), A),
                          np.tile(np.arange(A), S))

    build(nsrl.garnet(30, 10, 2, seed=1)).solve("modified_policy_iteration", epsilon=1e-3)
    ddp = build(mdp)
    return lambda eps: ddp.solve("modified_policy_iteration", epsilon=eps).v


def toolbox(mdp):
    """A callable epsilon -> v on mdptoolbox's modified PI, or a reason it is not run."""
    try:
        from hiive.mdptoolbox.mdp import PolicyIterationModified
    except ImportError:
        return "not installed"
    if mdp.n_states > TOOLBOX_MAX_STATES:
        return "skipped"
    nxt, probs = mdp.successors
    S, A, b = nxt.shape
    rows = np.repeat(np.arange(S), b)
    P = [sp.csr_matrix((probs[:, a].ravel(), (rows, nxt[:, a].ravel())), shape=(S, S))
         for a in range(A)]

    def solve(eps):
        pi = PolicyIterationModified(P, mdp.R, mdp.gamma, epsilon=eps)  # 10 sweeps per step
        pi.run()
        return np.asarray(pi.V, dtype=float)

    return solve


def peer_at_equal_accuracy(solve, bound, ref):
    """(epsilon, max diff to ref): the largest epsilon whose result is within nsrl's bound."""
    for eps in (32 * bound, 8 * bound, 2 * bound):
        diff = float(np.abs(solve(eps) - ref).max())
        if diff <= bound:
            break
    return eps, diff


def paired(ours, theirs, repeat: int, budget: float = 1.0):
    """(our fastest, their fastest, median of their/our time over the pairs).

    The two solvers alternate (ours first in even pairs, theirs in odd ones): on a machine
    whose memory speed drifts over minutes, pairs taken seconds apart compare like with
    like where blocks of repeats taken one after the other need not. At least ``repeat``
    pairs, more (up to 25) while they add up to less than ``budget`` seconds.
    """
    a, b = [], []
    while len(a) < repeat or (sum(a) + sum(b) < budget and len(a) < 25):
        for fn, out in ((ours, a), (theirs, b)) if len(a) % 2 == 0 else ((theirs, b),
                                                                          (ours, a)):
            t = clock()
            fn()
            out.append(clock() - t)
    return min(a), min(b), float(np.median(np.array(b) / np.array(a)))


def row(key: str, repeat: int, package: str | None = None) -> str:
    name, make = MODELS[key]
    if package:  # before the pairs here, after them below: a drift falls on both
        then = [at_revision(package, key, repeat)]
    mdp = make()
    tol = ExactBackend(mdp).value_tol
    optimal_mpi(nsrl.garnet(50, 3, 2, seed=0), 1e-6)  # compiled before timing
    before, _ = best_of(  # a fresh backend each time: nothing cached between the repeats
        lambda: optimal.optimal_pi(mdp, tol, _krylov_only(mdp)._evaluate_actions), repeat)
    bound = nsrl.optimal_value(mdp).bound
    try:
        ref, ref_bound, _ = optimal_mpi(mdp, bound / 20)
    except NotCertifiedError:
        ref, ref_bound, _ = optimal_mpi(mdp, bound / 4)
    ref_note = f"ref within {ref_bound:.1e}"
    qe = quantecon(mdp)
    if qe is None:
        ours, _ = best_of(lambda: _solved(mdp), repeat)
        peer = [f"{'not installed':>32s}"]
    else:
        eps, diff = peer_at_equal_accuracy(qe, bound, ref)
        ours, sec, ratio = paired(lambda: _solved(mdp), lambda: qe(eps), repeat)
        peer = [f"{sec:8.3f} (eps {eps:.1e}, diff {diff:.1e})",
                f"{sec / ours:6.1f}x ({ratio:.1f}x)"]
    cells = [f"{name:24s}", f"{mdp.n_states:>9d}", f"{before:8.3f}", f"{ours:8.3f}",
             f"{before / ours:6.1f}x", f"{bound:8.1e}", *peer]
    tb = toolbox(mdp)
    if isinstance(tb, str):
        cells += [f"{tb:>14s}"]
    else:
        sec, v = best_of(lambda: tb(2 * bound), 1, 0.0)
        diff = float(np.abs(v - ref).max())
        cells += [f"{sec:8.3f} (diff {diff:.1e})", f"{sec / ours:6.1f}x"]
    if package:
        then.append(at_revision(package, key, repeat))
        sec_then = min(t for t, _ in then)
        cells += [f"{sec_then:8.3f} (bound {then[0][1]:.1e})", f"{sec_then / ours:6.2f}"]
        if qe is not None:
            cells += [f"{sec / sec_then:6.1f}x"]
    return "  ".join(cells) + f"  [{ref_note}]"


def _krylov_only(mdp):
    """A backend whose policy values are certified Krylov solves (the method of before)."""
    b = ExactBackend(mdp)
    b._sweeps_win = False
    return b


def _solved(mdp):
    b = ExactBackend(mdp)
    b.optimal_value()
    return b


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                    help="cpu: the process's CPU seconds (every solver here is one thread; "
                    "steadier on a shared machine), wall: elapsed seconds")
    ap.add_argument("--rev", default=None,
                    help="also time optimal_value of this revision's package (git archive), "
                    "in a child process, for nothing-slower checks")
    args = ap.parse_args()
    global clock
    clock = CLOCK[args.clock]
    print(f"certified v* on one core; load average at start {os.getloadavg()[0]:.1f}; "
          f"times in {args.clock} s, best of {args.repeat} or more (nsrl and QuantEcon "
          f"alternating, in pairs; mdptoolbox once)")
    print("model | states | nsrl before | nsrl MPI | speed-up | nsrl bound | QuantEcon MPI "
          "(its epsilon, max diff to ref v*) | QuantEcon / nsrl (median over the pairs) | "
          "mdptoolbox | toolbox / nsrl")
    if args.rev:
        print(f"last columns: nsrl at {args.rev} (optimal_value in a child process, best of "
              f"{args.repeat} twice, before and after the pairs; its bound), {args.rev} / today "
              f"(CPU), QuantEcon / nsrl at {args.rev}")
    with tempfile.TemporaryDirectory() as tmp:
        package = export(args.rev, tmp) if args.rev else None
        for key in args.only.split(","):
            print(row(key, args.repeat, package), flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
