"""Values of docs/envs.md read from the committed env benchmarks and checks.

Sources (benchmarks/results/): bench_envs_quiet.txt and bench_envs_loaded.txt (two runs of
``benchmarks/bench_envs.py``; their tables are blocks of study.numbers.benchmarks) and
mountain_car_check.txt (the grid's optimal policy run in Gymnasium's MountainCar-v0).
"""

from __future__ import annotations

import re
from pathlib import Path

from study.numbers.bigger import car_worst
from study.numbers.registry import block
from study.numbers.sources import read_text, search

R = "benchmarks/results/"
QUIET = R + "bench_envs_quiet.txt"
LOADED = R + "bench_envs_loaded.txt"
CAR = R + "mountain_car_check.txt"
N_ENVS = 4096


def best(root: Path, rel: str, path: str) -> float:
    """The best rate (M transitions/s) of a timing row, e.g. 'native vector env, numba'."""
    return float(search(root, rel, rf"^{re.escape(path)}[^\n]*?\s([\d.]+)\s+[\d.]+$")[1])


def _targets(root: Path, rel: str) -> str:
    lines = re.findall(r"^native (\w+): ([\d.]+) M/s \(target >= 50: ([^)]*)\), (\d+)x "
                       r"SyncVectorEnv \(target >= 150: ([^)]*)\)", read_text(root, rel),
                       re.MULTILINE)
    if not lines:
        raise ValueError(f"{rel} has no 'native ...: ... (target ...)' lines")
    return "; ".join(f"{b} {rate} M/s ({a.lower()}) and {x}x ({r.lower()})"
                     for b, rate, a, x, r in lines)


@block("envs-targets", sources=[QUIET, LOADED])
def _targets_both(root: Path) -> str:
    return (f"in the quiet run {_targets(root, QUIET)}; in the loaded run of "
            f"[performance.md](performance.md#gymnasium-vector-env) {_targets(root, LOADED)}")


@block("envs-numpy-share", sources=[QUIET, LOADED])
def _numpy_share(root: Path) -> str:
    """The numpy fallback's best rate as a fraction of numba's (native vector env)."""
    def share(rel: str) -> float:
        return (best(root, rel, "native vector env, numpy")
                / best(root, rel, "native vector env, numba"))
    return f"{share(QUIET):.2f} (quiet run) and {share(LOADED):.2f} (loaded run)"


@block("envs-drift", sources=[QUIET, LOADED])
def _drift(root: Path) -> str:
    """The loaded run against the quiet one, path by path."""
    def ratio(path: str) -> tuple[float, float]:
        loaded = best(root, LOADED, path)
        return loaded, loaded / best(root, QUIET, path)
    native, n_ratio = ratio("native vector env, numba")
    sync, s_ratio = ratio("SyncVectorEnv")
    load = search(root, LOADED, r"load ([\d.]+)")[1]
    return (f"the loaded run (`bench_envs_loaded.txt`, load average {load}) gave the native env "
            f"(numba) {native:.1f} M/s at best, {n_ratio:.2f}x the quiet run's, but "
            f"`SyncVectorEnv` {sync:.3f} M/s, {s_ratio:.2f}x")


@block("envs-step-us", sources=[QUIET])
def _step_us(root: Path) -> str:
    """Microseconds per step of 4096 transitions at the quiet run's best rates."""
    kernel = N_ENVS / best(root, QUIET, "kernel alone, numba")
    step = N_ENVS / best(root, QUIET, "native vector env, numba")
    return (f"{kernel:.0f} us for {N_ENVS} transitions, of a whole vector step's {step:.0f} us "
            f"(the quiet run's best rates): the other {step - kernel:.0f} us")


@block("envs-car-return", sources=[CAR])
def _car(root: Path) -> str:
    """The 100 x 100 grid's optimal policy (barycentric) in MountainCar-v0, worst seed set."""
    r = car_worst(root).loc[(100, "barycentric")]
    return (f"{r['mean']:.1f} ± {r['se']:.1f} on the worst of {int(r['n_sets'])} seed sets "
            f"of {r['episodes']} episodes")
