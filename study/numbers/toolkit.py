"""Outputs of the toolkit step's measurements, quoted whole.

The exact backend beside its peers on the idle machine (docs/scale.md), and the timings
before and after the toolkit step (docs/performance.md).

Sources (benchmarks/results/): bench_exact_peers_idle.txt (``bench_exact_peers.py`` on one
core of the idle machine), bench_mpi_kernels_idle.txt (``bench_mpi_kernels.py``, likewise)
and bench_level.txt (``bench_level.sh``: the quick preset at the revision before the
toolkit step and after it, interleaved; then bench_sweep's pair, rerun alone and
interleaved); bench_before_after.txt, bench_before_after_suite.txt and
bench_exact_peers_rev.txt (``bench_before_after.py`` and ``bench_exact_peers.py --rev``: main
before architecture round 3, the operators at full speed and reliability round 5, and after).
The continuous Mountain Car study's table (study_mountain_car_continuous.txt) and the
optimum on its starts (check_mountain_car_optimum.txt), in docs/guide/simulators.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import cells, quoted, search

R = "benchmarks/results/"
PEERS_IDLE = R + "bench_exact_peers_idle.txt"
VALUES_IDLE = R + "bench_exact_values_idle.txt"
KERNELS_IDLE = R + "bench_mpi_kernels_idle.txt"
LEVEL = R + "bench_level.txt"


@block("scale-exact-peers-idle", sources=[PEERS_IDLE])
def peers_idle(root: Path) -> str:
    """The idle run's table (the peers' warnings left out)."""
    return quoted(root, PEERS_IDLE, lambda line: not line.startswith((" ", "/")))


@block("scale-mpi-kernels-idle", sources=[KERNELS_IDLE])
def kernels_idle(root: Path) -> str:
    """MPI's kernels at 10^6 states, each pair of variants interleaved, as printed."""
    return quoted(root, KERNELS_IDLE)


@block("scale-exact-values-idle", sources=[VALUES_IDLE])
def values_idle(root: Path) -> str:
    """The values of a converging sequence of policies, before and now, as printed."""
    return quoted(root, VALUES_IDLE)


def _peer_cell(root: Path, model: str, column: int) -> str:
    """A column of the idle peers table's row for ``model`` (split on 2+ spaces)."""
    row = search(root, PEERS_IDLE, r"^" + re.escape(model) + r"\s.*$")[0]
    return re.split(r"\s{2,}", row.strip())[column]


block("scale.1e6.vstar.mpi.cpu", sources=[PEERS_IDLE])(
    lambda root: _peer_cell(root, "Garnet(10^6, 10, 2)", 3) + " CPU s")
block("scale.1e6.vstar.mpi.qe-ratio", sources=[PEERS_IDLE])(
    lambda root: _peer_cell(root, "Garnet(10^6, 10, 2)", 7))
block("scale.1e6.vstar.mpi.qe-cpu", sources=[PEERS_IDLE])(
    lambda root: _peer_cell(root, "Garnet(10^6, 10, 2)", 6).split()[0] + " CPU s")


@block("perf-toolkit-level", sources=[LEVEL])
def level(root: Path) -> str:
    """The before/after timings as printed."""
    return quoted(root, LEVEL)


ROUND3 = R + "bench_before_after.txt"
ROUND3_SUITE = R + "bench_before_after_suite.txt"
ROUND3_PEERS = R + "bench_exact_peers_rev.txt"


@block("perf-round3-level", sources=[ROUND3])
def round3(root: Path) -> str:
    """bench_before_after.py's tables (the sweep's fast path, the quick preset, the walk)."""
    return quoted(root, ROUND3)


@block("perf-round3-suite", sources=[ROUND3_SUITE])
def round3_suite(root: Path) -> str:
    """The two test suites, as printed."""
    return quoted(root, ROUND3_SUITE)


SUITE_TIME = R + "suite_time.txt"


@block("perf-suite-time", sources=[SUITE_TIME])
def suite_time(root: Path) -> str:
    """pytest's summary line and the command's wall time, as recorded."""
    summary = search(root, SUITE_TIME, r"^=* ?(\d+ passed.*?) ?=*$")[1]
    wall = search(root, SUITE_TIME, r"^wall: (\d+) s$")[1]
    return f"{summary}, {int(wall) // 60} min {int(wall) % 60} s of wall time"


@block("perf-round3-peers", sources=[ROUND3_PEERS])
def round3_peers(root: Path) -> str:
    """bench_exact_peers.py --rev: today, the revision before and QuantEcon in one run."""
    return quoted(root, ROUND3_PEERS, lambda line: not line.startswith((" ", "/")))


MCAR = R + "study_mountain_car_continuous.txt"


@block("simulators-mcar-table", sources=[MCAR])
def mcar_table(root: Path) -> str:
    """The continuous Mountain Car study's table and notes, as printed."""
    return quoted(root, MCAR)


MCAR_OPT = R + "check_mountain_car_optimum.txt"
_OPT_LINE = r"^Optimum .*: between ([\d.]+) and ([\d.]+) steps; exact on (\d+ of \d+) starts"


def _mcar_bounds(root: Path) -> tuple[float, float]:
    m = search(root, MCAR_OPT, _OPT_LINE)
    return float(m[1]), float(m[2])


def _mcar_best(root: Path) -> float:
    return float(search(root, MCAR_OPT, r"^  API = CBMPI \(3x3, best scheme\)\s+([\d.]+)")[1])


def _mcar_spread(root: Path) -> str:
    pattern = r"^Per-start minimum .* = (\d+) / \d+ / \d+ / (\d+) / \d+ / \d+ / (\d+)$"
    low, median, high = search(root, MCAR_OPT, pattern).groups()
    return f"median {median}, from {low} to {high}"


def _mcar_best_gap(root: Path) -> str:
    """The best scheme's mean minus the optimum's, for the optimum's two bounds."""
    (low, high), best = _mcar_bounds(root), _mcar_best(root)
    return f"{best - high:.1f} to {best - low:.1f}"


def _mcar_settled(root: Path) -> str:
    """The coarsest grid of the upper bound's table from which its mean no longer changes."""
    text = search(root, MCAR_OPT, r"^\s+n\s+mean .*\n((?:\s+\d+\s+[\d.]+ .*\n)+)")[1]
    rows = [line.split()[:2] for line in text.splitlines()]
    settled = rows[-1][0]
    for n, mean in reversed(rows):
        if mean != rows[-1][1]:
            break
        settled = n
    return settled


_MCAR_OPT_VALUES = {  # name -> renderer of a value of check_mountain_car_optimum.txt
    "lower": lambda root: f"{_mcar_bounds(root)[0]:.2f}",
    "upper": lambda root: f"{_mcar_bounds(root)[1]:.2f}",
    "exact": lambda root: search(root, MCAR_OPT, _OPT_LINE)[3],
    "spread": _mcar_spread,
    "under-50": lambda root: search(root, MCAR_OPT, r"a minimum <= 50: (\d+ of \d+)")[1],
    "bang-bang": lambda root: search(root, MCAR_OPT, r"^  bang-bang .*?\s([\d.]+)  \(")[1],
    "best": lambda root: f"{_mcar_best(root):.1f}",
    "best-gap": _mcar_best_gap,
    "settled": _mcar_settled,
}


for _name, _fn in _MCAR_OPT_VALUES.items():
    block(f"simulators-mcar-optimum.{_name}", sources=[MCAR_OPT])(_fn)


PROFILE = R + "profile_bigger_grid-lstdq_100000.txt"
PROFILE_BEFORE = R + "profile_bigger_grid-lstdq_100000_before.txt"
_PROFILE_VALUES = {  # name -> (file, pattern of the value)
    "perf.shard-profile.before.cpu": (PROFILE_BEFORE, r"^shard: ([\d.]+) CPU s"),
    "perf.shard-profile.after.cpu": (PROFILE, r"^shard: ([\d.]+) CPU s"),
    "perf.shard-profile.after.exact-loss": (PROFILE, r"^\| exact loss of each .*\| (\d+%) \|$"),
    "perf.shard-profile.after.greedy-error": (PROFILE, r"^\| greedy error of each .*\| (\d+%) \|$"),
}


def _profile_value(rel: str, pattern: str):
    return lambda root: search(root, rel, pattern)[1]


for _name, (_rel, _pattern) in _PROFILE_VALUES.items():
    block(_name, sources=[_rel])(_profile_value(_rel, _pattern))


LSTDQ_CALL_IDLE = R + "bench_lstdq_call_idle.txt"


def _call_cell(target: str, column: int):
    """A cell of the idle run's before/today table: column 1 before, 2 today (seconds)."""
    def render(root: Path) -> str:
        row = search(root, LSTDQ_CALL_IDLE, r"^\| " + target + r" \|.*$")[0]
        return cells(row)[column] + " s"
    return render


for _target in ("pi0", "pi1"):
    block(f"bigger.lstdq-call.{_target}.before", sources=[LSTDQ_CALL_IDLE])(
        _call_cell(_target, 1))
    block(f"bigger.lstdq-call.{_target}.today", sources=[LSTDQ_CALL_IDLE])(
        _call_cell(_target, 2))
