"""Values of docs/scale.md (and the README's 10^6 figures) read from the bench_scale outputs.

Sources (benchmarks/results/): bench_scale_idle_wall.txt (the headline run on the idle
machine), bench_scale_cpu.txt and bench_scale_loaded_wall.txt (other runs under load),
bench_scale_session_runs.txt (the solver choice, the 10^5 sweep, the vector env's runs, the
mdptoolbox comparison), and the runs before and after the exact backend's change below 3 000
states that runs.toml names. The tables themselves are blocks of study.numbers.benchmarks.
"""

from __future__ import annotations

import re
from pathlib import Path

from study.numbers.benchmarks import (
    EXACT,
    SCALE_BOUNDS,
    SCALE_IDLE,
    SCALE_LOADED,
    SCALE_TASKS,
    exact_run,
    scale_rows,
    vstar_bounds,
)
from study.numbers.registry import block
from study.numbers.sources import RUNS, listing, read_text, repo_runs, runs, search

R = "benchmarks/results/"
SESSION = R + "bench_scale_session_runs.txt"
LOADED_WALL = R + "bench_scale_loaded_wall.txt"
SWEEP_MID = [repo_runs()["exact-change"][f"sweep-{w}"] for w in ("after", "before")]
SOLVES = ("eval", "vstar", "loss", "api10")  # the tasks bound by the solves


def _seconds(cell: str) -> float:
    found = re.match(r"([\d.]+) s", cell)
    if found is None:
        raise ValueError(f"no seconds in the cell {cell!r}")
    return float(found[1])


def _row(root: Path, rel: str, size: str = "1,000,000") -> dict[str, str]:
    row = scale_rows(root, rel).get(size)
    if row is None:
        raise ValueError(f"{rel} has no complete row for n_S = {size}")
    return dict(zip(SCALE_TASKS, row[1:], strict=False))


@block("scale-peak-rss-1e5", sources=[SCALE_IDLE])
def _peak_rss(root: Path) -> str:
    """The largest peak RSS of the idle run up to 10^5 states."""
    rows = scale_rows(root, SCALE_IDLE)
    gib = [float(g) for size, row in rows.items() if int(size.replace(",", "")) <= 10**5
           for g in re.findall(r"([\d.]+) GiB", " ".join(row[1:]))]
    if not gib:
        raise ValueError(f"{SCALE_IDLE} has no peak RSS up to 10^5 states")
    return f"{max(gib):.2f} GiB"


@block("scale-loaded-1e6", sources=[SCALE_IDLE, SCALE_LOADED, LOADED_WALL])
def _loaded(root: Path) -> str:
    """The runs under load against the idle one, at 10^6 states, for the solves."""
    idle = _row(root, SCALE_IDLE)

    def ratios(rel: str) -> tuple[str, dict[str, str]]:
        row = _row(root, rel)
        r = [_seconds(row[t]) / _seconds(idle[t]) for t in SOLVES]
        return f"{min(r):.1f}-{max(r):.1f}x", row

    cpu, cpu_row = ratios(SCALE_LOADED)
    wall, wall_row = ratios(LOADED_WALL)
    return (f"in CPU seconds (`bench_scale_cpu.txt`) the solves at 10^6 states (one evaluation, "
            f"v*, a loss, 10 API iterations) take {cpu} the idle run's wall time "
            f"({_seconds(cpu_row['vstar']):g} s for v*, {_seconds(cpu_row['loss']):g} s for a "
            f"loss), in wall clock (`bench_scale_loaded_wall.txt`) {wall} "
            f"({_seconds(wall_row['vstar']):g} s and {_seconds(wall_row['loss']):g} s)")


def _vecenv_runs(root: Path) -> list[str]:
    text = read_text(root, SESSION)
    runs = re.findall(r"^\| 1,000,000 \|(?: failed \(not run\) \|){5} [\d.]+ s, [\d.]+ GiB "
                      r"\| ([\d.]+) M", text, re.MULTILINE)
    if not runs:
        raise ValueError(f"{SESSION} has no '--tasks vecenv' rows at 10^6 states")
    return runs


@block("scale-vecenv-runs", sources=[SESSION])
def _vecenv(root: Path) -> str:
    return listing(_vecenv_runs(root)) + " M"


@block("scale-vecenv-swing", sources=[SESSION])
def _swing(root: Path) -> str:
    runs = [float(r) for r in _vecenv_runs(root)]
    return f"{max(runs) / min(runs):.2f}x"


@block("scale-vecenv-before", sources=[LOADED_WALL])
def _before(root: Path) -> str:
    """The vector env's rate at 10^6 states with the prefetch, before the alignment."""
    rates = re.findall(r"\| ([\d.]+) M \|[^\n]*\(prefetching step", read_text(root, LOADED_WALL))
    if not rates:
        raise ValueError(f"{LOADED_WALL} has no '(prefetching step' row")
    return listing(rates) + " M"


@block("scale-packed-ratio", sources=[SESSION])
def _packed(root: Path) -> str:
    packed = float(search(root, SESSION, r"^packed ([\d.]+) M")[1])
    old = float(search(root, SESSION, r"^old ([\d.]+) M")[1])
    return f"{packed / old:.1f}x ({packed:.1f} against {old:.1f} M transitions/s)"


@block("scale-mdptoolbox-speedup", sources=[SESSION])
def _speedup(root: Path) -> str:
    cells = re.findall(r"^\| [\d,]+ \|.*\| (\d+x / \d+x) \|$", read_text(root, SESSION),
                       re.MULTILINE)
    ups = [int(x) for x in re.findall(r"(\d+)x", " ".join(cells))]
    if not ups:
        raise ValueError(f"{SESSION} has no mdptoolbox speed-ups")
    return f"{min(ups)}-{max(ups)}x"


@block("scale-vstar-bounds", sources=[SCALE_BOUNDS])
def _bounds(root: Path) -> str:
    bounds = [float(b) for b in vstar_bounds(root).values()]
    return f"{min(bounds):.1e} to {max(bounds):.1e}"


@block("scale-vstar-bounds-by-size", sources=[SCALE_BOUNDS])
def _bounds_by_size(root: Path) -> str:
    """Today's certified bound of v* at each size."""
    exponents = {"1,000": "10^3", "10,000": "10^4", "100,000": "10^5", "1,000,000": "10^6"}
    return listing([f"{b} at {exponents.get(n, n)}" for n, b in vstar_bounds(root).items()])


@block("scale-vstar-cpu-1e6", sources=[SCALE_BOUNDS])
def _vstar_cpu(root: Path) -> str:
    """Today's v* at 10^6 states in CPU seconds (the bounds' run, under load)."""
    found = search(root, SCALE_BOUNDS, r"^\| 1,000,000 \|[^|]*\|[^|]*\| ([\d.]+) s")
    return f"{found[1]} CPU s"


@block("scale-sweep-1e5", sources=[SESSION])
def _sweep(root: Path) -> str:
    """The TOML sweep at 10^5 states under /usr/bin/time -v."""
    computed = search(root, SESSION, r"computed 1 shards in ([\d.]+) s")[1]
    wall = search(root, SESSION, r"Elapsed \(wall clock\) time.*: (\d+):([\d.]+)")
    rss = int(search(root, SESSION, r"Maximum resident set size \(kbytes\): (\d+)")[1])
    return (f"{computed} s of computation, {wall[1]} min {float(wall[2]):.0f} s for the whole "
            f"command and a peak RSS of {rss / 2**20:.2f} GiB")


SOLVER_VALUES = {  # name -> (pattern in bench_scale_session_runs.txt, group)
    "dense-3000": (r"dense ([\d.]+-[\d.]+ s), BiCGSTAB", 1),
    "bicgstab-3000": (r"BiCGSTAB ([\d.]+-[\d.]+ ms), SuperLU", 1),
    "superlu-3000.b1": (r"SuperLU ([\d.]+ m?s) at b = 1", 1),
    "superlu-3000.b2": (r"SuperLU [^\n]*?([\d.]+ m?s) at b = 2", 1),
    "superlu-3000.b10": (r"SuperLU [^\n]*?([\d.]+ m?s) at b = 10", 1),
    "bicgstab-iterations.b1": (r"b = 1 \(before the map solve\): (\d+) iterations", 1),
    "bicgstab-seconds.b1": (r"b = 1 \(before the map solve\): \d+ iterations, ([\d.]+ s)", 1),
    "bicgstab-iterations.b2": (r"b = 2: (\d+) iterations", 1),
    "bicgstab-iterations.b10": (r"b = 10: (\d+) iterations", 1),
    "vi-products.b2": (r"b = 2: (\d+) products", 1),
    "vi-products.b1": (r"products, b = 10: \d+, b = 1: (\d+)", 1),
}


def _solver_value(pattern: str, group: int):
    def render(root: Path) -> str:
        return search(root, SESSION, pattern)[group]
    return render


for _name, (_pattern, _group) in SOLVER_VALUES.items():
    block(f"scale.solvers.{_name}", sources=[SESSION])(_solver_value(_pattern, _group))


@block("scale.solvers.bicgstab-products.b2", sources=[SESSION])
def _products(root: Path) -> str:
    """BiCGSTAB makes two products with the matrix per iteration."""
    return str(2 * int(search(root, SESSION, SOLVER_VALUES["bicgstab-iterations.b2"][0])[1]))


@block("scale-exact-eval", sources=[RUNS, *(R + n for n in EXACT)])
def _exact_eval(root: Path) -> str:
    change = runs(root)["exact-change"]
    found = [exact_run(root, n)["evaluation"] for n in (*change["before"], *change["after"])]
    return f"{found[2]} and {found[3]} against {found[0]} and {found[1]}"


@block("scale-exact-schemes", sources=[RUNS, *(R + n for n in EXACT)])
def _exact_schemes(root: Path) -> str:
    """Each scheme's iteration, mean of the two runs after against the two before."""
    change = runs(root)["exact-change"]
    found = [exact_run(root, n) for n in (*change["before"], *change["after"])]

    def ms(run: dict[str, str], scheme: str) -> float:
        return float(run[scheme].split()[0])

    parts, slower = [], []
    for scheme in [k for k in found[0] if k != "evaluation"]:
        before = (ms(found[0], scheme) + ms(found[1], scheme)) / 2
        after = (ms(found[2], scheme) + ms(found[3], scheme)) / 2
        parts.append(f"{scheme.upper()} {after:.2f} vs {before:.2f} ms")
        if after > before:
            slower.append(f"{scheme.upper()} (whose two runs before were "
                          f"{ms(found[0], scheme):.2f} and {ms(found[1], scheme):.2f} ms)")
    verdict = (f"faster after for every scheme but {listing(slower)}" if slower
               else "faster after for every scheme")
    return f"{verdict}: {', '.join(parts)}"


@block("scale-sweep-mid", sources=[RUNS, *(R + n for n in SWEEP_MID)])
def _sweep_mid(root: Path) -> str:
    totals = {}
    for when in ("after", "before"):
        name = runs(root)["exact-change"][f"sweep-{when}"]
        cells = re.findall(r"^\s+\(\d+, \d+, \d+\)(?:\s+[\d.]+){8}\s+([\d.]+)$",
                           read_text(root, R + name), re.MULTILINE)
        if not cells:
            raise ValueError(f"{R}{name} has no per-instance totals")
        totals[when] = sum(float(c) for c in cells)
    return f"{totals['after']:.1f} s against {totals['before']:.1f} s"
