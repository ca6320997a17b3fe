"""Blocks of docs/performance.md (and the README) that quote benchmarks/results/*.

Each block reads the committed output of a benchmark; none reruns one (timings depend on
the machine and on its load, which the pages state beside each table).
"""

from __future__ import annotations

import re
from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import RUNS, cells, md_table, num, read_text, repo_runs, runs, search

R = "benchmarks/results/"
QUIET = "bench_sweep_final_code.txt"  # the code of the paper run, nothing else running
_RUNS = repo_runs()
SWEEPS = list(_RUNS["sweep"])  # the bench_sweep.py outputs of the table, in its order
CHANGE = {k: v["file"] for k, v in _RUNS["sweep-change"].items()}  # after / before one change
EXACT = [*_RUNS["exact-change"]["before"], *_RUNS["exact-change"]["after"]]


def sweep_rates(root: Path, name: str) -> tuple[int, int, float]:
    """(fast, baseline) scheme-iterations/s and the fast path's projection on 2 cores, min."""
    rel = R + name
    rate = search(root, rel, r"fast ([\d,]+) .*baseline ([\d,]+)")
    two = search(root, rel, r"fast path :.*?([\d.]+) min on 2")[1]
    return int(rate[1].replace(",", "")), int(rate[2].replace(",", "")), float(two)


@block("perf-sweep", sources=[RUNS, *(R + n for n in SWEEPS)])
def _sweep(root: Path) -> str:
    rows = []
    for name, what in runs(root)["sweep"].items():
        fast, base, two = sweep_rates(root, name)
        rows.append([f"`{name}`", what, num(fast, 0), num(base, 0), f"{fast / base:.1f}x",
                     f"{two:.1f} min"])
    return md_table(["result file", "code and machine", "fast path", "baseline", "ratio",
                     "projected full protocol, 2 cores"], rows, "llrrrr")


@block("perf-sweep-shares", sources=[R + "bench_sweep_final_code.txt"])
def _shares(root: Path) -> str:
    text = read_text(root, R + "bench_sweep_final_code.txt")
    by_size = re.findall(r"n_S = +(\d+):\s+[\d.]+ s\s+([\d.]+)%", text)
    by_scheme = re.findall(r"^  (\S+)\s+[\d.]+ s\s+([\d.]+)%", text, re.MULTILINE)
    if not by_size or not by_scheme:
        raise ValueError(f"{R}bench_sweep_final_code.txt has no time shares")
    return ("Where the time goes: " + ", ".join(f"n_S = {s} {float(p):.0f}%" for s, p in by_size)
            + "; by scheme " + ", ".join(f"{s} {float(p):.0f}%" for s, p in by_scheme) + ".")


@block("perf-quick-fresh", sources=[R + "bench_scale_session_runs.txt"])
def _quick(root: Path) -> str:
    rel = R + "bench_scale_session_runs.txt"
    shards = search(root, rel, r"README's main command[^\n]*\ncomputed (\d+) shards in ([\d.]+) s")
    real = search(root, rel, r"README's main command(?:.*\n)*?real\s+(\d+)m([\d.]+)s")
    total = 60 * int(real[1]) + float(real[2])
    return (f"{shards[1]} shards computed in {shards[2]} s, {total:.1f} s for the whole command "
            f"(statistics and figures included)")


@block("perf-lstdq", sources=[R + "bench_lstdq_speed.txt"])
def _lstdq(root: Path) -> str:
    rel = R + "bench_lstdq_speed.txt"
    new = search(root, rel, r"new: one call \(draw[^|]*\| ([\d.]+)")[1]
    base = search(root, rel, r"baseline: one call \(draw[^|]*\| ([\d.]+)")[1]
    return (f"one LSTD-Q greedy call drawing and using 10^6 transitions (Garnet(100, 4, 2), "
            f"one-hot) takes {new} s, against {base} s for the dense solve of before in the "
            f"same run (target: 0.5 s)")


@block("perf-rollouts", sources=[R + "bench_rollouts.txt"])
def _rollouts(root: Path) -> str:
    rel = R + "bench_rollouts.txt"
    size = search(root, rel, r"= ([\d.]+ M) transitions")[1]
    shipped = search(root, rel, r"fused kernel \(numba\)\s+([\d.]+)")[1]
    gym = search(root, rel, r"per-step Gymnasium.*?\s([\d.]+)\s+[\d.]+\s+\(")[1]
    return (f"one rollout greedy step of {size} transitions (Garnet(100, 5, 2)) takes "
            f"{shipped} s (target: 0.2 s), {gym} s through per-step Gymnasium calls")


def _table_rows(text: str, header_start: str) -> list[list[str]]:
    """Rows of every Markdown table whose header line starts with ``header_start``."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith(header_start):
            inside = True
        elif inside and line.startswith("|") and not line.startswith("|---"):
            rows.append(cells(line.split("|   (")[0] + "|"))
        elif inside and not line.startswith("|"):
            inside = False
    return rows


def _short(cell: str) -> str:
    cell = re.sub(r", [\d.]+ GiB", "", cell)
    cell = re.sub(r"failed \([^)]*Unable to allocate ([\d.]+ GiB)[^)]*\)?", r"out of memory "
                  r"(\1 asked)", cell)
    cell = cell.replace("failed (> 400 s)", "> 400 s").replace("failed (not run)", "-")
    return re.sub(r"\bnanx\b", "-", cell)


SCALE_IDLE = R + "bench_scale_idle_wall.txt"  # the headline: one run on the idle machine
SCALE_LOADED = R + "bench_scale_cpu.txt"  # CPU seconds, another run under load
SCALE_BOUNDS = R + "bench_scale_vstar_bounds.txt"  # --tasks vstar with today's exact backend
SCALE_HEADER = ["n_S", "build", "one evaluation", "v* (policy iteration then)", "loss (v* known)",
                "10 API iterations", "vector env: made", "steps/s, 4096 envs",
                "one LSTD-Q call, 10^6 transitions"]
SCALE_TASKS = ("build", "eval", "vstar", "loss", "api10", "vecenv", "steps")


def scale_rows(root: Path, rel: str) -> dict[str, list[str]]:
    """The complete rows of a ``bench_scale.py`` output by n_S (the last one of each size)."""
    rows = _table_rows(read_text(root, rel), "| n_S | build")
    best = {r[0]: r for r in rows if not any(c.startswith("failed") or c == "-" for c in r)}
    if not best:
        raise ValueError(f"{rel} has no complete row")
    return best


def vstar_bounds(root: Path) -> dict[str, str]:
    """The certified bound of v* by n_S, from the run of today's exact backend.

    The older runs' tables hold the bounds of the solver of their day (policy iteration);
    the bound is deterministic given the code, so one run of ``--tasks vstar`` gives it.
    """
    rows = _table_rows(read_text(root, SCALE_BOUNDS), "| n_S | build")
    out = {}
    for row in rows:
        found = re.search(r"\(([\d.e+-]+)\)$", row[1 + SCALE_TASKS.index("vstar")])
        if found is not None:
            out[row[0]] = found[1]
    if not out:
        raise ValueError(f"{SCALE_BOUNDS} has no v* cell with its bound")
    return out


def _scale_block(rel: str):
    def render(root: Path) -> str:
        i = 1 + SCALE_TASKS.index("vstar")
        rows = [[*r[:i], re.sub(r" \([\d.e+-]+\)$", "", r[i]), *r[i + 1:]]
                for r in scale_rows(root, rel).values()]  # the bound of that day's solver
        return md_table(SCALE_HEADER, rows, "l" + "r" * 8)
    return render


block("perf-scale", sources=[SCALE_IDLE])(_scale_block(SCALE_IDLE))
block("perf-scale-loaded", sources=[SCALE_LOADED])(_scale_block(SCALE_LOADED))


SCALE_SIZES = {"1e3": "1,000", "1e4": "10,000", "1e5": "100,000", "1e6": "1,000,000"}


def _scale_value(task: str, what: str, size: str = "1e6"):
    def render(root: Path) -> str:
        if what == "bound":
            bounds = vstar_bounds(root)
            if SCALE_SIZES[size] not in bounds:
                raise ValueError(f"{SCALE_BOUNDS} has no bound at n_S = {SCALE_SIZES[size]}")
            return bounds[SCALE_SIZES[size]]
        cell = scale_rows(root, SCALE_IDLE)[SCALE_SIZES[size]][1 + SCALE_TASKS.index(task)]
        if what == "rate":
            return cell
        seconds = re.match(r"([\d.]+) s", cell)
        gib = re.search(r"([\d.]+) GiB", cell)
        bound = re.search(r"\(([\d.e+-]+)\)", cell)
        found = {"s": seconds, "GiB": gib, "bound": bound}[what]
        if found is None:
            raise ValueError(f"{SCALE_IDLE}: no {what} in the {SCALE_SIZES[size]} row's "
                             f"{task} cell {cell!r}")
        return found[1] if what == "bound" else f"{found[1]} {what}"
    return render


for _size in SCALE_SIZES:
    for _task in SCALE_TASKS:
        for _what in {"steps": ("rate",), "vstar": ("s", "GiB", "bound")}.get(_task,
                                                                             ("s", "GiB")):
            block(f"scale.{_size}.{_task}.{_what}", optional=True,
                  sources=[SCALE_BOUNDS if _what == "bound" else SCALE_IDLE])(
                _scale_value(_task, _what, _size))


@block("perf-mdptoolbox", sources=[R + "bench_scale_session_runs.txt",
                                   R + "bench_scale_loaded_wall.txt"])
def _mdptoolbox(root: Path) -> str:
    rows = _table_rows(read_text(root, R + "bench_scale_session_runs.txt"), "| n_S | nsrl eval")
    later = _table_rows(read_text(root, R + "bench_scale_loaded_wall.txt"), "| n_S | nsrl eval")
    seen = {r[0] for r in rows}
    rows += [r for r in later if r[0] not in seen and len(r) == 7]
    header = ["n_S", "nsrl evaluation", "mdptoolbox evaluation (sparse / dense)", "nsrl v*",
              "mdptoolbox PI (sparse / dense)", "mdptoolbox VI, epsilon 0.01",
              "speed-up evaluation / v*"]
    return md_table(header, [[_short(c) for c in r] for r in rows], "lrrrrrr")


def exact_run(root: Path, name: str) -> dict[str, str]:
    """One ``bench_exact.py`` output: 'evaluation' and each scheme -> '0.388 ms'."""
    text = read_text(root, R + name)
    found = re.search(r"one evaluation \(deterministic\)\s+([\d.]+ms)", text)
    if found is None:
        raise ValueError(f"{R}{name} has no 'one evaluation' line")
    out = {"evaluation": found[1].replace("ms", " ms")}
    for scheme, ms in re.findall(r"^  (\S+)\s+([\d.]+) ms/iteration", text, re.MULTILINE):
        out[scheme] = f"{ms} ms"
    return out


@block("perf-exact", sources=[RUNS, *(R + n for n in EXACT)])
def _exact(root: Path) -> str:
    change = runs(root)["exact-change"]
    found = [exact_run(root, n) for n in (*change["before"], *change["after"])]
    rows = [[what, *(r.get(what, "-") for r in found)] for what in found[-1]]
    return md_table(["Garnet(200, 10, 2)", "before, run 1", "before, run 2", "after, run 1",
                     "after, run 2"], rows, "lrrrr")


@block("perf-cpi-plus", sources=[R + "bench_cpi_plus_per_k.txt"])
def _cpi_plus(root: Path) -> str:
    text = read_text(root, R + "bench_cpi_plus_per_k.txt")
    rows = re.findall(r"^\s+(\d+) -\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", text, re.MULTILINE)
    whole = re.search(r"whole run\s+([\d.]+s)\s+([\d.]+s)", text)
    if not rows or whole is None:
        raise ValueError(f"{R}bench_cpi_plus_per_k.txt has no per-k rows")
    body = [[f"{a}-{b}", c, f"{d} ms", f"{e} ms"] for a, b, c, d, e in rows]
    body.append(["whole run (100 iterations)", "", whole[1], whole[2]])
    return md_table(["iterations", "candidates", "per candidate, folded mixtures",
                     "flat mixtures (before)"], body, "lrrr")


def _envs_table(rel: str):
    def render(root: Path) -> str:
        text = read_text(root, rel)
        load = search(root, rel, r"load ([\d.]+)")[1]
        rows = re.findall(r"^(native vector env, \w+|kernel alone, \w+|SyncVectorEnv|"
                          r"single env via gym.make)[^\d]*?(?:N=\d+)?\s+([\d.]+)\s+([\d.]+)$",
                          text, re.MULTILINE)
        if len(rows) != 6:
            raise ValueError(f"{rel}: expected 6 timing rows, found {len(rows)}")
        ratios = re.findall(r"^native (\w+): ([\d.]+) M/s.*?(\d+)x SyncVectorEnv", text,
                            re.MULTILINE)
        body = [[name, best, median] for name, best, median in rows]
        return (md_table(["M transitions/s (S=100, A=4, b=5, 4096 envs)", "best", "median"],
                         body, "lrr")
                + f"\n\nLoad average at the start: {load} (2 cores). Best timings against "
                + "`SyncVectorEnv`: " + ", ".join(f"{b} {x}x" for b, _, x in ratios) + ".")
    return render


block("perf-envs", sources=[R + "bench_envs_loaded.txt"])(_envs_table(R + "bench_envs_loaded.txt"))
block("perf-envs-quiet", sources=[R + "bench_envs_quiet.txt"])(
    _envs_table(R + "bench_envs_quiet.txt"))


@block("bench-issue22", sources=[RUNS, *(R + n for n in CHANGE.values())])
def _sweep_change(root: Path) -> str:
    """The fast path's rate after one change and before it, measured back to back."""
    change = runs(root)["sweep-change"]
    rate = {k: sweep_rates(root, change[k]["file"])[0] for k in ("after", "before")}
    after, before = rate["after"], rate["before"]
    table = md_table(["`python benchmarks/bench_sweep.py` (fast path, all 27 instances, one "
                      "core)", "scheme-iterations/s"],
                     [[f"{change[k]['label']} (`{R}{change[k]['file']}`)", num(rate[k], 0)]
                      for k in ("after", "before")], "lr")
    return table + (f"\n\nThe {abs(after - before) / before:.1%} between them is within this "
                    f"machine's drift under load.")


@block("bench-issue22-vs-quiet", sources=[RUNS, R + CHANGE["after"], R + QUIET])
def _change_vs_quiet(root: Path) -> str:
    """The loaded rate after the change as a fraction of the quiet one-sitting paper run's."""
    loaded = sweep_rates(root, runs(root)["sweep-change"]["after"]["file"])[0]
    quiet = sweep_rates(root, QUIET)[0]
    return (f"{loaded / quiet:.2f} times the quiet-machine figure ({num(quiet, 0)} "
            f"scheme-iterations/s, `bench_sweep_final_code.txt`)")


@block("perf-drift", sources=[RUNS, *(R + n for n in SWEEPS)])
def _drift(root: Path) -> str:
    """The other days' fast-path rates as fractions of the quiet paper-run code's."""
    quiet = sweep_rates(root, QUIET)[0]
    others = [sweep_rates(root, n)[0] / quiet for n in runs(root)["sweep"] if n != QUIET]
    return f"{min(others):.2f} to {max(others):.2f} times the quiet run's rate on other days"


@block("perf-sweep-final-2cores", sources=[R + "bench_sweep_final_code.txt"])
def _final_two_cores(root: Path) -> str:
    """The projected full protocol on 2 cores of the code of the committed paper run."""
    return f"{sweep_rates(root, 'bench_sweep_final_code.txt')[2]:.1f} min"
