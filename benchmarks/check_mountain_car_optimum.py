"""The fewest steps to the goal from the continuous Mountain Car study's 100 evaluation starts.

benchmarks/study_mountain_car_continuous.py scores each policy by its mean number of steps
to the goal from 100 fixed starts, uniform over the box [-1.2, 0.5) x [-0.07, 0.07] (its
``evaluation(100)``: episode i reset with seed 10**6 + i, then the position and velocity
drawn by ``UniformStart``). Issue 44 asks for <= 50 steps on average there. This script
measures what is possible: for each start, the minimum number of steps to the goal over all
action sequences, under Gymnasium's ``MountainCar-v0`` dynamics as its ``step`` computes them
(float64 state, the same operations in the same order: ``v += (a - 1) 0.001 + cos(3 p) (-0.0025)``,
v clipped to [-0.07, 0.07], ``p += v`` clipped to [-1.2, 0.6], v = 0 at the left wall, the
goal at p >= 0.5 with v >= 0; the float32 cast touches only the observation, which no action
sequence reads). The dynamics are deterministic with 3 actions, so the minimum is a search:

* **Upper bound (achievable).** Breadth-first search over the states reached from the start,
  keeping the first state to enter each cell of an n x n grid over [-1.2, 0.5) x [-0.07,
  0.07] and dropping later ones (state merging): every kept state is an exact float64 state
  with its action sequence, so the depth at which the goal is first reached is a number of
  steps that some action sequence achieves. Each sequence found is replayed in Gymnasium's
  own env from the start and must reach the goal in exactly that many steps (checked).
  Merging can only lose shorter paths, so the figure can only fall as the grid is refined;
  it is given for each n.
* **Lower bound (proof).** The same breadth-first search on cells instead of states: the
  states reachable in t steps are covered by a set of cells of an n_p x n_v grid, and one step
  maps a cell to the cells of a box that holds its image under the action (the position' is
  increasing in both p and v, so its range is exact at two corners; the velocity' range
  bounds cos(3 p) over the cell; the left wall sends the car to the point (-1.2, 0)), with
  1e-12 of margin on every bound for rounding. The first ``EXACT_STEPS`` steps follow the
  3^t exact states instead of cells. No trajectory reaches the goal before the covering
  does, so the depth at which a cell's box first touches the goal is a lower bound. Boxes
  overlap neighbouring cells, so the bound is loose where the car is slow; it is refined
  (finer grids, in ``--lower-grids`` order) only on the starts where it is still below
  the upper bound. The default grids take a few CPU minutes; a finer last grid (e.g.
  ``--lower-grids 1000x1000 4000x8000 8000x16000``, about 5 more CPU minutes) closes more
  starts.

Where both bounds meet, the start's minimum is exact. The table gives, per grid, the mean
over the starts of each bound; then the distribution of the per-start minima and the study's
figures beside them: the best scheme (API = CBMPI on the 3 x 3 grid) and LSPI, read from
benchmarks/results/study_mountain_car_continuous.txt, and the bang-bang policy "push in the
direction of the velocity" (right if the observed velocity is >= 0, else left), measured here
with the study's own ``evaluation``. A policy's steps from a start are at least the start's
minimum, so no policy's mean over these starts is below the mean of the lower bounds.

Writes benchmarks/results/check_mountain_car_optimum.txt (``--out``).

    nice python benchmarks/check_mountain_car_optimum.py       # a few minutes, one core
    python benchmarks/check_mountain_car_optimum.py --games 3 --grids 100 200 \\
        --lower-grids 200x200 --out /tmp/optimum.txt            # the smallest size (tests)
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from pathlib import Path

import gymnasium as gym
import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_mountain_car_continuous import CAP, evaluation  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "check_mountain_car_optimum.txt"
FORCE, GRAVITY, MAX_SPEED = 0.001, 0.0025, 0.07  # gymnasium's MountainCarEnv
MIN_POSITION, MAX_POSITION, GOAL = -1.2, 0.6, 0.5
EPS = 1e-12  # margin on every bound of the covering (rounding is ~1e-17 here)
EXACT_STEPS = 10  # the lower bound's first steps on the 3^t exact states
STUDY = ROOT / "benchmarks" / "results" / "study_mountain_car_continuous.txt"
STUDY_ROWS = {"API = CBMPI (3x3, best scheme)": r"^3x3\s+api \(CBMPI m=2\)\s+\d+\s+([\d.]+)",
              "LSPI (3x3)": r"^3x3\s+LSPI \(LSTDQ\)\s+\d+\s+([\d.]+)"}


def study_figures(path: Path = STUDY) -> dict[str, float]:
    """The study's mean steps of its best scheme and of LSPI, read from its committed table."""
    text = path.read_text() if path.exists() else ""
    found = {k: re.search(p, text, re.MULTILINE) for k, p in STUDY_ROWS.items()}
    return {k: float(m[1]) for k, m in found.items() if m}


def starts(games: int = 100) -> np.ndarray:
    """The (position, velocity) of the study's evaluation starts, as its episodes begin."""
    mc = evaluation(games)
    out = np.empty((games, 2))
    for i in range(games):
        mc.env.reset(seed=mc.seed + i)
        out[i] = np.asarray(mc.env.unwrapped.state, dtype=np.float64)
    return out


# No cache=True: run as a script or through runpy (the tests), the module has no importable
# name, and numba's cached code would fail to load on the next run ('<dynamic>').
@numba.njit
def _step(p: float, v: float, a: int) -> tuple[float, float, bool]:
    """One step of gymnasium's MountainCarEnv.step on a float64 state (same operations)."""
    v = v + ((a - 1) * FORCE + math.cos(3 * p) * (-GRAVITY))
    v = min(max(v, -MAX_SPEED), MAX_SPEED)
    p = min(max(p + v, MIN_POSITION), MAX_POSITION)
    if p == MIN_POSITION and v < 0:
        v = 0.0
    return p, v, p >= GOAL and v >= 0


@numba.njit
def _grow(x: np.ndarray) -> np.ndarray:
    return np.concatenate((x, np.empty_like(x)))


@numba.njit
def _search(p0: float, v0: float, n: int, cap: int) -> tuple[int, np.ndarray]:
    """Breadth-first search with state merging on an n x n grid: (steps, actions) or (-1, [])."""
    dp, dv = (GOAL - MIN_POSITION) / n, 2 * MAX_SPEED / n
    seen = np.zeros(n * n, dtype=np.uint8)
    size = 1024
    P, V = np.empty(size), np.empty(size)
    parent, action = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int8)
    P[0], V[0], parent[0], action[0] = p0, v0, -1, -1
    seen[min(int((p0 - MIN_POSITION) / dp), n - 1) * n + min(int((v0 + MAX_SPEED) / dv), n - 1)] = 1
    lo, hi, m = 0, 1, 1
    for t in range(1, cap + 1):
        for q in range(lo, hi):
            for a in range(3):
                p, v, goal = _step(P[q], V[q], a)
                if goal:
                    seq = np.empty(t, dtype=np.int8)
                    seq[t - 1] = a
                    r = q
                    for k in range(t - 2, -1, -1):
                        seq[k] = action[r]
                        r = parent[r]
                    return t, seq
                c = min(int((p - MIN_POSITION) / dp), n - 1) * n + \
                    min(int((v + MAX_SPEED) / dv), n - 1)
                if seen[c]:
                    continue
                seen[c] = 1
                if m == len(P):
                    P, V, parent, action = _grow(P), _grow(V), _grow(parent), _grow(action)
                P[m], V[m], parent[m], action[m] = p, v, q, a
                m += 1
        if m == hi:
            break
        lo, hi = hi, m
    return -1, np.empty(0, dtype=np.int8)


def shortest_path(start: np.ndarray, n: int, cap: int = CAP) -> tuple[int, np.ndarray]:
    """An action sequence to the goal from ``start`` found by the merged search on an n x n
    grid, and its length (-1 and no action if none within ``cap`` steps). An upper bound on
    the minimum: the sequence reaches the goal in exactly that many steps."""
    return _search(float(start[0]), float(start[1]), int(n), int(cap))


@numba.njit
def _lower(p_s: float, v_s: float, n_p: int, n_v: int, cap: int, exact: int) -> int:
    """The depth at which the covering by cells first touches the goal (see the docstring)."""
    P, V = np.array([p_s]), np.array([v_s])
    for t in range(1, exact + 1):  # the exact states first (3^t of them)
        P2, V2 = np.empty(3 * len(P)), np.empty(3 * len(P))
        for a in range(3):
            for q in range(len(P)):
                p, v, goal = _step(P[q], V[q], a)
                if goal:
                    return t
                P2[a * len(P) + q], V2[a * len(P) + q] = p, v
        P, V = P2, V2
    dp, dv = (GOAL - MIN_POSITION) / n_p, 2 * MAX_SPEED / n_v
    seen = np.zeros(n_p * n_v, dtype=np.uint8)
    front = np.empty(len(P), dtype=np.int64)
    m = 0
    for q in range(len(P)):
        c = min(int((P[q] - MIN_POSITION) / dp), n_p - 1) * n_v + \
            min(int((V[q] + MAX_SPEED) / dv), n_v - 1)
        if not seen[c]:
            seen[c] = 1
            front[m] = c
            m += 1
    front = front[:m]
    wall = min(int(MAX_SPEED / dv), n_v - 1)  # the cell of (-1.2, 0): position index 0
    for t in range(exact + 1, cap + 1):
        new = np.empty(4 * len(front) + 16, dtype=np.int64)
        m = 0
        for q in range(len(front)):
            i, j = front[q] // n_v, front[q] % n_v
            p0, p1 = MIN_POSITION + i * dp - EPS, MIN_POSITION + (i + 1) * dp + EPS
            v0, v1 = -MAX_SPEED + j * dv - EPS, -MAX_SPEED + (j + 1) * dv + EPS
            c0, c1 = math.cos(3 * p0), math.cos(3 * p1)
            cmin, cmax = min(c0, c1), max(c0, c1)
            if 3 * p0 <= 0.0 <= 3 * p1:
                cmax = 1.0
            if 3 * p0 <= -math.pi <= 3 * p1:
                cmin = -1.0
            for a in range(3):
                f = (a - 1) * FORCE
                vlo = min(max(v0 + f - GRAVITY * cmax - EPS, -MAX_SPEED), MAX_SPEED)
                vhi = min(max(v1 + f - GRAVITY * cmin + EPS, -MAX_SPEED), MAX_SPEED)
                plo = p0 + min(max(v0 + f - GRAVITY * c0 - EPS, -MAX_SPEED), MAX_SPEED) - EPS
                phi = p1 + min(max(v1 + f - GRAVITY * c1 + EPS, -MAX_SPEED), MAX_SPEED) + EPS
                if phi >= GOAL and vhi >= 0:
                    return t
                if plo <= MIN_POSITION:  # some states hit the wall: they are at (-1.2, 0)
                    plo = MIN_POSITION
                    if not seen[wall]:
                        seen[wall] = 1
                        if m == len(new):
                            new = _grow(new)
                        new[m] = wall
                        m += 1
                ilo = int((plo - MIN_POSITION) / dp)
                ihi = min(int((phi - MIN_POSITION) / dp), n_p - 1)
                jlo = max(int(math.floor((vlo + MAX_SPEED) / dv)), 0)
                jhi = min(int(math.floor((vhi + MAX_SPEED) / dv)), n_v - 1)
                for ii in range(ilo, ihi + 1):
                    for jj in range(jlo, jhi + 1):
                        c = ii * n_v + jj
                        if not seen[c]:
                            seen[c] = 1
                            if m == len(new):
                                new = _grow(new)
                            new[m] = c
                            m += 1
        if m == 0:
            return -1
        front = new[:m]
    return -1


def lower_bound(start: np.ndarray, n_p: int, n_v: int, cap: int = CAP,
                exact: int = EXACT_STEPS) -> int:
    """A number of steps no action sequence from ``start`` beats (the covering by cells of an
    n_p x n_v grid after ``exact`` exact steps); -1 if the covering misses the goal up to
    ``cap``."""
    return _lower(float(start[0]), float(start[1]), int(n_p), int(n_v), int(cap), int(exact))


def replay(start: np.ndarray, actions: np.ndarray) -> int:
    """Steps until Gymnasium's own MountainCar-v0, set to ``start``, terminates along
    ``actions`` (-1 if it does not)."""
    env = gym.make("MountainCar-v0", max_episode_steps=len(actions) + 1)
    env.reset(seed=0)
    env.unwrapped.state = np.array(start, dtype=np.float64)
    for t, a in enumerate(actions, start=1):
        if env.step(int(a))[2]:
            return t
    return -1


class BangBang:
    """Push in the direction of the observed velocity (right at velocity 0)."""

    memory, stochastic = 1, False

    def act(self, obs: np.ndarray, phase: int = 0, rng: object = None) -> np.ndarray:
        return np.where(np.asarray(obs)[:, 1] >= 0, 2, 0)


def bang_bang(games: int) -> tuple[float, np.ndarray]:
    """The bang-bang policy's mean steps in the study's evaluation, and its steps per start."""
    mc = evaluation(games)
    steps = np.array([-mc.episode(BangBang(), i) for i in range(games)])
    return float(-mc(BangBang()).mean), steps


def grid_pair(text: str) -> tuple[int, int]:
    """``"NPxNV"`` as (n_p, n_v)."""
    a, b = text.lower().split("x")
    return int(a), int(b)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--grids", type=int, nargs="+", default=[250, 500, 1000, 2000],
                        help="n of the merged search's n x n grids (upper bound)")
    parser.add_argument("--lower-grids", type=grid_pair, nargs="+",
                        default=[(1000, 1000), (4000, 8000)],
                        help="n_p x n_v grids of the covering (lower bound), coarse to fine")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    s = starts(args.games)
    lines = [f"Minimum steps to the goal of MountainCar-v0 from the {args.games} evaluation "
             f"starts of benchmarks/study_mountain_car_continuous.py (evaluation({args.games}))",
             "", "Upper bound: merged breadth-first search, n x n grid (each sequence replayed "
             "in gymnasium's env)",
             f"{'n':>6} {'mean':>7} {'min':>4} {'median':>6} {'max':>4} {'starts lowered':>14} "
             f"{'replay ok':>9} {'CPU s':>6}"]
    print("\n".join(lines), flush=True)
    upper = None
    for n in args.grids:
        c0 = time.process_time()
        found = [shortest_path(x, n) for x in s]
        steps = np.array([t for t, _ in found])
        ok = sum(replay(x, seq) == t for x, (t, seq) in zip(s, found, strict=True) if t > 0)
        lowered = "-" if upper is None else str(int((steps < upper).sum()))
        raised = 0 if upper is None else int((steps > upper).sum())
        upper = steps if upper is None else np.minimum(upper, steps)
        line = (f"{n:6d} {steps.mean():7.2f} {steps.min():4d} {np.median(steps):6.1f} "
                f"{steps.max():4d} {lowered:>14} {ok:>5d}/{len(s):<3d} "
                f"{time.process_time() - c0:6.1f}")
        if raised:
            line += f"  ({raised} starts above a coarser grid's; the best of all grids is kept)"
        lines.append(line)
        print(line, flush=True)
    assert upper is not None and (upper > 0).all(), "a start without a path within the cap"
    lines += ["", f"Lower bound: covering by cells, n_p x n_v grid after {EXACT_STEPS} exact "
              "steps; refined only on the starts still below the upper bound",
              f"{'grid':>12} {'starts run':>10} {'mean':>7} {'exact starts':>12} "
              f"{'mean gap':>8} {'max gap':>7} {'CPU s':>6}"]
    print("\n".join(lines[-3:]), flush=True)
    lower = np.zeros(len(s), dtype=np.int64)
    for n_p, n_v in args.lower_grids:
        todo = np.flatnonzero(lower < upper)
        if len(todo) == 0:
            break
        c0 = time.process_time()
        for k in todo:
            lower[k] = max(lower[k], lower_bound(s[k], n_p, n_v))
        assert (lower <= upper).all(), "a lower bound above an achieved number of steps"
        gap = upper - lower
        line = (f"{f'{n_p}x{n_v}':>12} {len(todo):10d} {lower.mean():7.2f} "
                f"{int((gap == 0).sum()):9d}/{len(s):<3d}"
                f"{gap.mean():8.2f} {gap.max():7d} {time.process_time() - c0:6.1f}")
        lines.append(line)
        print(line, flush=True)
    bb_mean, bb = bang_bang(args.games)
    exact = upper == lower
    tail = len(lines)
    q = np.percentile(upper, [0, 10, 25, 50, 75, 90, 100])
    hist = np.histogram(upper, bins=[0, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120, 300])
    lines += [
        "",
        f"Optimum (per start, mean over the {args.games} starts): between {lower.mean():.2f} "
        f"and {upper.mean():.2f} steps; exact on {int(exact.sum())} of {len(s)} starts "
        f"(lower = upper).",
        "Per-start minimum (the upper bound, achieved): percentiles 0/10/25/50/75/90/100 = "
        + " / ".join(f"{x:.0f}" for x in q),
        "  histogram: " + ", ".join(f"[{a},{b}) {c}" for a, b, c in
                                    zip(hist[1][:-1], hist[1][1:], hist[0], strict=True)),
        f"  starts with a minimum <= 50: {int((upper <= 50).sum())} of {len(s)}; "
        f"proved above 50 (lower bound > 50): {int((lower > 50).sum())}",
        "",
        "Beside the study (mean steps to the goal on the same starts, cut at "
        f"{CAP}):",
        f"  optimum                            {lower.mean():6.2f} to {upper.mean():.2f}",
        *[f"  {k:34} {v:6.1f}  ({STUDY.name})" for k, v in study_figures().items()],
        f"  bang-bang (push with the velocity) {bb_mean:6.2f}  (measured here; above the "
        f"optimum on {int((bb > upper).sum())} starts, by {np.mean(bb - upper):.2f} on average, "
        f"{int((bb - upper).max())} at most)",
        f"  target of issue 44                 {50:6.1f}",
        "",
        f"CPU time {time.process_time() - cpu0:.0f} s, wall {time.perf_counter() - wall0:.0f} s"
        f", load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} cores, one process), {time.strftime('%Y-%m-%d')}.",
        "Command: python benchmarks/check_mountain_car_optimum.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
    ]
    print("\n".join(lines[tail:]))
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return text


if __name__ == "__main__":
    main()
