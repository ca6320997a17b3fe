"""Values and tables of docs/sampling.md and docs/rollout_study.md from the committed studies.

Sources (benchmarks/results/): study_greedy_error.txt (the one-call greedy error, four
panels), compare_targets.{csv,txt} (the targets' protocol: final losses and targets),
bench_lstdq.txt (LSTD-Q's consistency), bench_lstdq_speed.txt (one LSTD-Q call's speed),
bench_rollouts.txt (one rollout greedy step's speed), study_rollouts.txt and
study_rollouts_runs.csv (the rollout study).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import RUNS, cells, md_table, num, read_csv, read_text, runs, search
from study.numbers.tables import table_after

R = "benchmarks/results/"
GREEDY = R + "study_greedy_error.txt"
COMPARE = R + "compare_targets.csv"
COMPARE_TXT = R + "compare_targets.txt"
LSTDQ_SPEED = R + "bench_lstdq_speed.txt"
ROLLOUTS = R + "bench_rollouts.txt"
STUDY = R + "study_rollouts.txt"
STUDY_RUNS = R + "study_rollouts_runs.csv"

PANELS = {"50-pi0": "### Garnet(50,4,2), target pi_0",
          "50-pimid": "### Garnet(50,4,2), target pi_mid",
          "100-pi0": "### Garnet(100,4,2), target pi_0",
          "100-pimid": "### Garnet(100,4,2), target pi_mid"}
OPERATORS = {"rollout-csc": "rollout-csc defaults", "rollout-csc-h30": "rollout-csc, H=30",
             "rollout-csc-geometric": "rollout-csc, geometric", "rollout-reg": "rollout-reg",
             "lstdq-onehot": "LSTD-Q one-hot", "lstdq-phi": "LSTD-Q Phi",
             "projected": "projected"}
BUDGETS = ("1e3", "3e3", "1e4", "3e4", "1e5", "3e5", "1e6", "1e7")


def _rows(table: str) -> list[list[str]]:
    return [cells(ln) for ln in table.splitlines()]


def panel(root: Path, key: str) -> pd.DataFrame:
    """One panel of the greedy-error study: rows by operator key, columns by budget + slope."""
    rows = _rows(table_after(root, GREEDY, PANELS[key]))
    out = {}
    for row in rows[2:]:
        op = next((k for k, start in OPERATORS.items() if row[0].startswith(start)), None)
        if op is None:
            raise ValueError(f"{GREEDY}: operator {row[0]!r} is not known to "
                             "study.numbers.sampling")
        out[op] = dict(zip([*BUDGETS, "slope", "s"], row[1:], strict=True))
    return pd.DataFrame(out).T


def _register_greedy() -> None:
    for key in PANELS:
        for op in OPERATORS:
            for column in (*BUDGETS, "slope"):
                def render(root: Path, k=key, o=op, c=column) -> str:
                    return panel(root, k).loc[o, c]
                block(f"sampling.greedy.{key}.{op}.{column}", sources=[GREEDY],
                      optional=True)(render)


_register_greedy()


@block("sampling-greedy-target-loss", sources=[GREEDY])
def _target_loss(root: Path) -> str:
    loss = search(root, GREEDY, r"Garnet\(100,4,2\), target pi_0 \(its loss ([\d.]+)")[1]
    return f"{float(loss):.1f}"


@block("sampling-greedy-seconds", sources=[GREEDY])
def _greedy_seconds(root: Path) -> str:
    return search(root, GREEDY, r"^\((\d+ s) on one core")[1]


SLOPE_NAMES = {"rollout-csc": "rollout defaults", "rollout-reg": "rollout-reg defaults",
               "rollout-csc-h30": "H = 30 without critic",
               "rollout-csc-geometric": "geometric without critic",
               "lstdq-onehot": "LSTD-Q one-hot", "lstdq-phi": "LSTD-Q Phi"}


@block("sampling-greedy-slopes", sources=[GREEDY])
def _slopes(root: Path) -> str:
    slopes = pd.concat([panel(root, k).loc[list(SLOPE_NAMES), "slope"] for k in PANELS],
                       axis=1).astype(float)
    parts = []
    for op, name in SLOPE_NAMES.items():
        lo, hi = slopes.loc[op].max(), slopes.loc[op].min()
        parts.append(f"{name} {lo:.2f}" + (f" to {hi:.2f}" if hi != lo else ""))
    return ", ".join(parts)


@block("sampling-geometric-ratio", sources=[GREEDY])
def _geometric_ratio(root: Path) -> str:
    """How many times the geometric horizon's error exceeds the defaults' at 10^6."""
    ratios = [float(p.loc["rollout-csc-geometric", "1e6"]) / float(p.loc["rollout-csc", "1e6"])
              for p in (panel(root, k) for k in PANELS)]
    return f"{min(ratios):.2g} to {max(ratios):.2g}"


def _range(root: Path, op: str) -> tuple[float, float]:
    values = pd.concat([panel(root, k).loc[op, list(BUDGETS)] for k in PANELS]).astype(float)
    return values.min(), values.max()


@block("sampling-phi-range", sources=[GREEDY])
def _phi_range(root: Path) -> str:
    lo, hi = _range(root, "lstdq-phi")
    plo, phi = _range(root, "projected")
    return (f"{lo:.2f}-{hi:.2f}, the level of the paper's projected operator "
            f"({plo:.2f}-{phi:.2f})")


# --- compare_targets: the targets' protocol --------------------------------------------


def slug(learner: str) -> str:
    """'api(0.1)/exact' -> 'api-0.1-exact', 'cpi+/rollout-csc' -> 'cpi-plus-rollout-csc'."""
    return (learner.replace("+", "-plus").replace("(", "-").replace(")", "").replace("/", "-")
            .split(" ")[0])


def final(root: Path) -> pd.DataFrame:
    """The last checkpoint of every run of compare_targets.csv (learner, seed, samples, loss)."""
    df = read_csv(root, COMPARE)
    return df.sort_values("checkpoint").groupby(["learner", "seed"]).tail(1)


def _final_mean(root: Path, learner: str) -> float:
    runs = final(root)
    runs = runs[runs["learner"] == learner]
    if runs.empty:
        raise ValueError(f"{COMPARE} has no runs of {learner!r}")
    return float(runs["loss"].clip(lower=0).mean())


SCHEMES = ("api", "api(0.1)", "cpi(0.1)", "cpi+", "nspi(5)", "psdp")


def _register_compare() -> None:
    for scheme in SCHEMES:
        for op in ("lstdq", "rollout-csc", "exact"):
            learner = f"{scheme}/{op}"

            def mean(root: Path, n=learner) -> str:
                return f"{_final_mean(root, n):.3f}"

            block(f"sampling.final.{slug(learner)}", sources=[COMPARE], optional=True)(mean)

            def drawn(root: Path, n=learner) -> str:
                return num(final(root).query("learner == @n")["samples"].mean(), 0)

            block(f"sampling.final-samples.{slug(learner)}", sources=[COMPARE],
                  optional=True)(drawn)
            if op == "exact":
                continue

            def gap(root: Path, n=learner, s=scheme) -> str:
                return f"{_final_mean(root, n) - _final_mean(root, s + '/exact'):+.2f}"

            block(f"sampling.gap.{slug(learner)}", sources=[COMPARE], optional=True)(gap)


_register_compare()


def _thousands(x: float) -> str:
    return num(round(x, -3), 0)


@block("sampling-cpi-plus-lstdq", sources=[COMPARE])
def _cpi_plus_lstdq(root: Path) -> str:
    """How many greedy calls of 15 000 transitions CPI+ made with LSTD-Q before stopping."""
    samples = final(root).query("learner == 'cpi+/lstdq'")["samples"]
    calls = samples // 15_000
    return (f"{calls.min()}-{calls.max()} greedy calls ({num(samples.min(), 0)}-"
            f"{num(samples.max(), 0)} transitions)")


@block("sampling-cpi-plus-rollouts", sources=[COMPARE])
def _cpi_plus_rollouts(root: Path) -> str:
    """CPI+ with rollouts: the line search's transitions per iteration, its iterations."""
    df = read_csv(root, COMPARE).query("learner == 'cpi+/rollout-csc'")
    steps, iterations = [], []
    for _, g in df.groupby("seed"):
        drawn = g.sort_values("checkpoint")["samples"].drop_duplicates().diff().fillna(
            g["samples"].min())
        iterations.append(len(drawn))
        steps += [d - 15_000 for d in drawn if d > 2 * 15_000]  # the full iterations
    total = final(root).query("learner == 'cpi+/rollout-csc'")["samples"]
    lo, hi = min(iterations), max(iterations)
    return (f"its line search's rollouts cost about {_thousands(sum(steps) / len(steps))} "
            f"transitions per full iteration, so it made {lo}" + (f"-{hi}" if hi > lo else "")
            + f" iterations ({_thousands(total.min())}-{_thousands(total.max())} transitions)")


@block("sampling-cpi-rollouts-drawn", sources=[COMPARE])
def _cpi_drawn(root: Path) -> str:
    samples = final(root).query("learner == 'cpi(0.1)/rollout-csc'")["samples"]
    return f"{_thousands(samples.min())}-{_thousands(samples.max())}"


def target_before(root: Path, start: str) -> str:
    """The "before (issue)" cell of the targets table's row starting with ``start``."""
    rows = _rows(table_after(root, COMPARE_TXT, "### Targets (issue 12)"))
    row = next((r for r in rows if r[0].startswith(start)), None)
    if row is None:
        raise ValueError(f"{COMPARE_TXT}: no target row starting with {start!r}")
    return row[rows[0].index("before (issue)")]


for _name, _start in {"cpi-lstdq": "CPI(0.1) + LSTD-Q", "api-rollouts": "API + rollouts",
                      "psdp-rollouts": "PSDP + rollouts"}.items():
    block(f"sampling.before.{_name}", sources=[COMPARE_TXT], optional=True)(
        lambda root, s=_start: target_before(root, s))


@block("sampling-compare-seconds", sources=[COMPARE_TXT])
def _compare_seconds(root: Path) -> str:
    return search(root, COMPARE_TXT, r"^\((\d+ s) wall on the shared machine\)")[1]


@block("rollout-study-targets", sources=[COMPARE, COMPARE_TXT])
def _targets_table(root: Path) -> str:
    """Per seed, the final loss of every scheme with rollouts + CSC, and the exact operator."""
    runs = final(root)
    targets = {"api": "<= 0.5", "psdp": "<= 1.0"}
    rows = []
    for scheme in ("api", "psdp", "api(0.1)", "cpi(0.1)", "cpi+", "nspi(5)"):
        own = runs[runs["learner"] == f"{scheme}/rollout-csc"].sort_values("seed")["loss"]
        exact = _final_mean(root, f"{scheme}/exact")
        mean = f"{own.clip(lower=0).mean():.3f}"
        target = ""
        if scheme in targets:
            bound = float(targets[scheme].split()[-1])
            mean = f"**{mean}**"
            target = f"{targets[scheme]}: {'met' if own.mean() <= bound else 'missed'}"
        rows.append([scheme.upper(), *(f"{x:.3f}" for x in own.clip(lower=0)), mean, f"{exact:.3f}",
                     target])
    seeds = sorted(runs["seed"].unique())
    return md_table(["scheme", *(f"seed {s}" for s in seeds), "mean", "exact operator",
                     "target"], rows)


# --- LSTD-Q and rollout speed -----------------------------------------------------------


LSTDQ_ROWS = {  # the page's label -> the start of the benchmark's row
    "draw 10^6 transitions, update the counts, solve (target <= 0.5 s)": "new: one call (draw",
    "drawing the 10^6 transitions alone (compiled walks)": "new: drawing 10^6",
    "the same call, NSPI(5) loop / PSDP 20-policy sequence": ("new: NSPI(5) loop",
                                                              "new: PSDP 20-policy"),
    "15 000 new transitions + 10^6 stored (reuse)": "new: 15 000 new",
}
LSTDQ_BASELINE = "baseline: one call (draw"  # its label: what runs.toml says the baseline ran


@block("sampling-lstdq-speed", sources=[LSTDQ_SPEED, RUNS])
def _lstdq_speed(root: Path) -> str:
    text = read_text(root, LSTDQ_SPEED)
    labels = LSTDQ_ROWS | {runs(root)["lstdq-speed"]["baseline"]: LSTDQ_BASELINE}

    def seconds(start: str) -> str:
        match = re.search(r"^\| " + re.escape(start) + r"[^|]*\| ([\d.]+) \|", text, re.MULTILINE)
        if match is None:
            raise ValueError(f"{LSTDQ_SPEED} has no row starting with {start!r}")
        return match[1]

    rows = []
    for label, start in labels.items():
        cell = (" / ".join(seconds(s) for s in start) if isinstance(start, tuple)
                else seconds(start))
        rows.append([label, f"**{cell}**" if not rows else cell])
    return md_table(["one greedy call", "seconds"], rows, "lr")


@block("sampling-lstdq-speedup", sources=[LSTDQ_SPEED])
def _lstdq_speedup(root: Path) -> str:
    return search(root, LSTDQ_SPEED, r"speed-up of one call: (\d+x)")[1]


@block("sampling-rollouts-speed", sources=[ROLLOUTS])
def _rollouts_speed(root: Path) -> str:
    text = read_text(root, ROLLOUTS)
    labels = {"shipped: CRN + critic (m = 460), fused kernel (numba)":
              "CRN + critic, fused kernel (numba)",
              "shipped: CRN + critic (m = 460), fused kernel (numpy)":
              "CRN + critic, fused kernel (numpy fallback)",
              "previous fast path: independent, env.sample per step":
              "previous fast path (independent rollouts, `env.sample` per step)",
              "per-step Gymnasium reset/step (gym.make)":
              "per-step Gymnasium `reset`/`step`"}
    target = search(root, ROLLOUTS, r"target (<= [\d.]+ s)")[1]
    rows = []
    for start, label in labels.items():
        m = re.search(r"^" + re.escape(start) + r"\s+([\d.]+)\s+([\d.]+)(.*)$", text, re.MULTILINE)
        if m is None:
            raise ValueError(f"{ROLLOUTS} has no row starting with {start!r}")
        seconds, rate, note = m[1], m[2], m[3].strip()
        extra = re.search(r"extrapolated from (\d+) transitions", note)
        if extra:
            label += f" (extrapolated from {num(int(extra[1]), 0)} transitions)"
        cell = f"**{seconds}** (target {target})" if not rows else seconds
        rows.append([label, cell, rate])
    return md_table(["path", "seconds", "M transitions/s"], rows, "lrr")


# --- the rollout study ------------------------------------------------------------------


STUDY_TABLES = {"a": "### A. One-call greedy error nu(T v - T_pi' v), target pi*",
                "a0": "### A. One-call greedy error nu(T v - T_pi' v), target pi_0",
                "b": "### B. Final exact loss", "berr": "Mean in-run greedy error",
                "c": "### C. Final loss against", "d": "### D. Every scheme"}


def study(root: Path, table: str) -> pd.DataFrame:
    """A table of study_rollouts.txt as strings, indexed by config."""
    rows = _rows(table_after(root, STUDY, STUDY_TABLES[table]))
    return pd.DataFrame(rows[2:], columns=rows[0]).set_index("config")


def study_value(root: Path, table: str, config: str, column: str, digits: int | None = None
                ) -> str:
    """One cell of a study table, as written or with ``digits`` decimals."""
    cell = study(root, table).loc[config, column]
    return cell if digits is None else f"{float(cell):.{digits}f}"


@block("rollout-study-pi0-defaults", sources=[STUDY])
def _pi0_defaults(root: Path) -> str:
    return ", ".join(study(root, "a0").loc["m=1 LSTD (defaults)"])


@block("rollout-study-geometric-ratio", sources=[STUDY])
def _study_geometric_ratio(root: Path) -> str:
    """geometric +CRN +strat against H=30 +CRN +strat, budget by budget (target pi*)."""
    table = study(root, "a")
    geo, h30 = table.loc["geometric +CRN +strat"], table.loc["H=30 +CRN +strat"]
    ratios = [(b, float(geo[b]) / float(h30[b])) for b in table.columns
              if geo[b] != "nan" and h30[b] != "nan" and float(h30[b]) > 0]
    (b0, r0), (b1, r1) = ratios[0], ratios[-1]
    return (f"{r0:.1f} times H = 30's error at {float(b0):.0e} transitions per call, "
            f"{r1:.1f} times at {float(b1):.0e}").replace("e+0", "e")


@block("rollout-study-geometric-spread", sources=[STUDY])
def _geometric_spread(root: Path) -> str:
    row = study(root, "a").loc["geometric (old nsrl compare)"].astype(float)
    upto = row.iloc[:-1]
    return (f"{upto.min():.2f}-{upto.max():.2f} from 3e3 to 1e6 transitions per call "
            f"({row.iloc[-1]:.2f} at 1e7)")


@block("rollout-study-seconds", sources=[STUDY])
def _study_seconds(root: Path) -> str:
    wall = int(search(root, STUDY, r"^wall time (\d+) s")[1])
    return f"{num(wall, 0)} s ({wall / 60:.0f} minutes)"


@block("rollout-study-cpi-plus-std", sources=[STUDY_RUNS])
def _cpi_plus_std(root: Path) -> str:
    runs = read_csv(root, STUDY_RUNS)
    cpi = runs[(runs["scheme"] == "cpi+") & (runs["config"] == "m=1 LSTD (defaults)")
               & (runs["per_call"] == 15_000)]["loss"]
    return f"std {cpi.std():.1f} over its {len(cpi)} runs"


@block("rollout-study-cpi-plus-samples", sources=[STUDY_RUNS])
def _cpi_plus_samples(root: Path) -> str:
    runs = read_csv(root, STUDY_RUNS)
    cpi = runs[(runs["scheme"] == "cpi+") & (runs["config"] == "m=1 LSTD (defaults)")
               & (runs["per_call"] == 15_000)]["samples"]
    return f"{_thousands(cpi.mean())}"


def _register_study() -> None:
    configs = {"defaults": "m=1 LSTD (defaults)", "no-strat": "m=1 LSTD, no strat",
               "k4": "m=1 LSTD, K=4", "h30-old": "H=30 (old)", "h30-crn": "H=30 +CRN",
               "h100": "H=100 +CRN +strat", "geometric-crn": "geometric +CRN +strat",
               "oracle-m1": "m=1 exact critic (oracle)", "oracle-m5": "m=5 exact critic (oracle)",
               "m2": "m=2 LSTD", "regression": "m=1 regression",
               "one-walk": "defaults, one walk per d_{pi,nu} state",
               "geometric-old": "geometric (old nsrl compare)"}
    columns = {"a": ("1000000", "10000000"), "a0": ("3000", "10000000"), "b": ("api", "psdp"),
               "berr": ("api",), "c": ("api @ 50000/call",),
               "d": ("api", "api(0.1)", "cpi(0.1)", "cpi+")}
    for table, cols in columns.items():
        for key, config in configs.items():
            for col in cols:
                tag = col.replace(" @ ", "-").replace("/call", "").replace("(", "-").replace(
                    ")", "").replace("+", "-plus")
                for digits in (None, 2, 1):
                    suffix = "" if digits is None else f".{digits}f"

                    def render(root: Path, t=table, c=config, k=col, d=digits) -> str:
                        return study_value(root, t, c, k, d)

                    block(f"rollout-study.{table}.{key}.{tag}{suffix}", sources=[STUDY],
                          optional=True)(render)


_register_study()
