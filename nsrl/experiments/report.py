"""From a results folder to statistics, figures and ``summary.md`` (``nsrl plot DIR``).

Shards are verified (as ``--resume`` does: key, sweep, rows, checksum) and reduced one at a
time to per-MDP statistics (the full table never has to fit in memory); a shard that fails
verification is left out and named in ``summary.md`` and by ``nsrl plot``. A partial run
(interrupted, to be resumed) is reported on the MDP indices that every instance has, so that
no instance weighs more than another; the coverage (shards intact on disk) is stated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import markdown_table, observations
from nsrl.experiments.plots import plot_figure, plot_loss_vs_samples
from nsrl.experiments.stats import INSTANCE, STATS, final_summary, paper_stats, per_mdp
from nsrl.experiments.storage import open_results, read_shard
from nsrl.experiments.sweep import Sweep

CONDITIONS = {"n_states": "n_S", "n_actions": "n_A", "branching": "b"}


class NoIntactShard(ValueError):
    """A results folder without a single intact shard: there is nothing to report on."""


@dataclass
class Coverage:
    """Which shards the statistics use: intact ones; the rest are missing or excluded.

    Attributes:
        total: shards of the sweep.
        intact: shards read and verified (:func:`~nsrl.experiments.storage.read_shard`).
        excluded: file name -> why it was left out (corrupt, edited, foreign...).
    """

    total: int
    intact: int = 0
    excluded: dict[str, str] = field(default_factory=dict)

    def problem(self) -> str:
        """One line about the excluded files ('' if none)."""
        if not self.excluded:
            return ""
        shown = "; ".join(f"{k}: {v}" for k, v in list(self.excluded.items())[:3])
        more = f"; and {len(self.excluded) - 3} more" if len(self.excluded) > 3 else ""
        return (f"{len(self.excluded)} shard file(s) failed verification and are left out "
                f"({shown}{more}); `nsrl reproduce --resume` with the same preset recomputes "
                f"them")


def load_per_mdp(out) -> tuple[Sweep, pd.DataFrame, Coverage]:
    """(sweep, per-MDP statistics of every intact shard, coverage).

    Every shard file is verified as ``--resume`` does (key, sweep fingerprint of the
    manifest, rows, checksum): a corrupt or edited shard is excluded and listed in the
    coverage, never used.
    """
    sweep, paths = open_results(out)
    parts, coverage = [], Coverage(total=len(sweep.shards()))
    for path in paths:
        table, problem = read_shard(path, sweep)
        if problem or table is None:
            coverage.excluded[path.name] = problem or "unreadable"
            continue
        parts.append(per_mdp(_with_instance(table.to_pandas())))
        coverage.intact += 1
    if not parts:
        why = f" ({coverage.problem()})" if coverage.excluded else ""
        raise NoIntactShard(f"{out} has no intact shard yet{why}: run `nsrl reproduce` first.")
    return sweep, pd.concat(parts, ignore_index=True), coverage


def _with_instance(df: pd.DataFrame) -> pd.DataFrame:
    """The shard table with the paper's instance columns n_S, n_A and b.

    0 where the domain has no such axis (a family with fixed actions and successors): one
    group, never conditioned on.
    """
    for col in INSTANCE:
        if col not in df.columns:
            df[col] = 0
    return df


def conditions(sweep) -> dict[str, str]:
    """The instance columns the report conditions on (the sweep's axes among n_S, n_A, b)."""
    return {k: v for k, v in CONDITIONS.items() if k in sweep.axis_names}


def balanced(pm: pd.DataFrame, sweep) -> tuple[pd.DataFrame, int]:
    """Keep the MDP indices that every instance of the sweep has (all of a complete run)."""
    have = pm.groupby(INSTANCE)["mdp"].unique()
    n_instances = int(np.prod([len(v) for _, v in sweep.grid]))
    if len(have) < n_instances:
        return pm, 0
    common = set.intersection(*(set(v) for v in have))
    return pm[pm["mdp"].isin(common)], len(common)


def write_report(out) -> tuple[list[Path], Coverage]:
    """Write stats CSVs, figures (expall.png, exp_<condition>.png) and summary.md in ``out``.

    Returns:
        The files written and the :class:`Coverage` (shards used, excluded and why).
    """
    out = Path(out)
    sweep, pm, coverage = load_per_mdp(out)
    pm, n_common = balanced(pm, sweep)
    schemes = list(sweep.scheme_names)
    written = []
    overall = paper_stats(pm)
    overall.to_csv(out / "stats.csv", index=False)
    plot_figure(overall, out / "expall.png", schemes, title="All instances")
    written += [out / "stats.csv", out / "expall.png"]
    conditioned = {}
    for col, label in conditions(sweep).items():
        st = paper_stats(pm, [col])
        conditioned[col] = st
        st.to_csv(out / f"stats_{col}.csv", index=False)
        plot_figure(st, out / f"exp_{col}.png", schemes, by=col, title=f"Conditioned on {label}")
        written += [out / f"stats_{col}.csv", out / f"exp_{col}.png"]
    if "samples" in pm.columns:  # a sample-based sweep: loss against transitions
        curves = pm.groupby(["scheme", "iteration"])[["samples", "mean"]].mean().reset_index()
        plot_loss_vs_samples(curves, out / "loss_vs_samples.png",
                             f"{sweep.operator.name}, {sweep.features} features")
        written.append(out / "loss_vs_samples.png")
    obs = observations(pm)
    obs.to_csv(out / "observations.csv", index=False)
    text = _summary_text(sweep, pm, overall, conditioned, coverage, n_common, out, obs)
    (out / "summary.md").write_text(text)
    return written + [out / "observations.csv", out / "summary.md"], coverage


def markdown(df: pd.DataFrame, fmt: str = ".3f") -> str:
    """A DataFrame as a Markdown table (index first), floats with ``fmt``."""
    def cell(x):
        return format(x, fmt) if isinstance(x, float) else str(x)

    head = [str(df.index.name or "")] + [str(c) for c in df.columns]
    rows = [[cell(i)] + [cell(x) for x in row] for i, row in zip(df.index, df.itertuples(
        index=False), strict=True)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def _sessions(out: Path) -> list[dict]:
    """The records of sessions.jsonl; a line cut by a kill mid-write is skipped."""
    path = out / "sessions.jsonl"
    records = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return [r for r in records if isinstance(r, dict)]


def _wall_time(out: Path) -> tuple[float, int]:
    """Total computing time over the sessions of sessions.jsonl, and their number.

    A session that ended (even by Ctrl-C or SIGTERM) has an "end" record; one that was
    killed outright counts up to its last finished shard.
    """
    wall: dict[str, float] = {}
    for rec in _sessions(out):
        sid = str(rec.get("session"))
        if rec.get("event") == "end":
            wall[sid] = rec["wall_time"]
        elif rec.get("event") in ("start", "shard"):
            wall[sid] = max(wall.get(sid, 0.0), rec.get("elapsed", 0.0))
    return sum(wall.values()), len(wall)


def _stopping(pm: pd.DataFrame) -> list[str]:
    """Fraction of runs stopped by CPI's rule at a few iterations.

    The paper says CPI+ "always converges in very few iterations (most of the time less
    than 10, and always less than 20)": this table is what to compare with.
    """
    if "stopped" not in pm.columns:
        return []
    by = pm.groupby(["scheme", "iteration"])["stopped"].mean().unstack("iteration")
    by = by[by.max(axis=1) > 0]
    if by.empty:
        return []
    ks: list = [k for k in (5, 10, 20, 50, 100) if k in by.columns] or [by.columns[-1]]
    table = by[ks].rename(columns=lambda k: f"k={k}")
    return ["## Stopping rule (fraction of runs stopped by iteration k)", "", markdown(table), ""]


def _sampled(sweep, pm: pd.DataFrame) -> list[str]:
    """Transitions and greedy errors of a sample-based sweep, per scheme."""
    if "samples" not in pm.columns:
        return []
    last = pm[pm["iteration"] == pm["iteration"].max()].groupby("scheme")
    table = pd.DataFrame({"transitions": last["samples"].mean(),
                          "greedy error (last call)": last["error"].mean(),
                          "greedy error (mean over calls)": pm.groupby("scheme")["error"].mean()})
    return [f"## Samples and greedy errors ({sweep.operator.name}, {sweep.features} features, "
            f"{sweep.samples_per_pair} x n_S x n_A transitions per call)", "",
            "Greedy error: rho (T v - T_pi' v) of the policy a call returned, measured with the "
            "model (rho = d_{pi,nu} for the CPI family, nu otherwise).", "",
            markdown(table, ".4g"), ""]


def _cpu(out: Path, sweep) -> tuple[float, int, float]:
    """Worker CPU seconds recorded in sessions.jsonl: (total, shards, projected sweep total).

    The projection scales the mean CPU time of each n_S by its number of shards (a partial
    run holds more small shards than its share, since each round starts with them).
    """
    axis, sizes = sweep.grid[0]  # n_S on Garnets: what a shard's cost grows with
    by_size: dict[int, list[float]] = {}
    for r in _sessions(out):
        shard = sweep.shard_of(str(r.get("shard")))
        if "cpu_seconds" in r and shard is not None:
            by_size.setdefault(shard.instance[axis], []).append(r["cpu_seconds"])
    total = sum(sum(v) for v in by_size.values())
    count = sum(len(v) for v in by_size.values())
    per_size = len(sweep.shards()) / len(sizes)
    projected = float(sum(np.mean(v) * per_size for v in by_size.values()))
    if set(by_size) != set(sizes):
        projected = float("nan")  # some n_S never measured: no honest projection
    return total, count, projected


def reading(sweep) -> str:
    """The sweep's domain, operator and readings of what the paper leaves unsaid, in one line."""
    def listed(options: dict) -> str:
        return f" ({', '.join(f'{k} {v}' for k, v in options.items())})" if options else ""

    op, options = sweep.operator.name, sweep.operator_options()
    parts = [f"domain {sweep.domain.name}{listed(sweep.domain.options)}"]
    if op == "projected":
        parts.append(
            f"greedy operator projected: noise {options['noise']:g} ({options['noise_model']}), "
            f"{'a' if options['constant_feature'] else 'no'} constant feature"
            f"{'' if options['feature_law'] == 'uniform' else ', Phi ' + options['feature_law']}"
            f", CPI+'s candidates scored by "
            f"{'exact' if options['value_estimate'] == 'exact' else 'estimated'} values")
    elif sweep.sampled:
        parts.append(f"greedy steps by {op} on {options.get('features', 'phi')} features, "
                     + (f"{options['budget']} transitions per call" if "budget" in
                        sweep.operator.options else f"{sweep.samples_per_pair} x n_S x n_A "
                        f"transitions per call") + listed({k: v for k, v in
                                                           sweep.operator.options.items()
                                                           if k not in ("budget", "features")}))
    else:
        parts.append(f"greedy operator {op}{listed(sweep.operator.options)}")
    cpi = [s for s in sweep.schemes if "advantage" in sweep.scheme_entry(s.name).params]
    if cpi:
        o = {**{"advantage": "operator", "epsilon": None, "line_search": "best"},
             **cpi[-1].options}
        source = "model" if o["advantage"] == "exact" else "operator"
        epsilon = "1e-3 R_max" if o["epsilon"] is None else f"{o['epsilon']:g}"
        parts.append(f"CPI's advantage from the {source}, epsilon {epsilon}, CPI+ line search "
                     f"'{o['line_search']}'")
    return "; ".join(parts)


def _summary_text(sweep, pm, overall, conditioned, coverage, n_common, out, obs) -> str:
    wall, sessions = _wall_time(out)
    final = final_summary(overall, pm)
    lines = [
        f"# Results of sweep `{sweep.name}`",
        "",
        f"- Instances: {', '.join(f'{k} in {list(v)}' for k, v in sweep.grid)}; "
        f"{sweep.n_mdps} MDPs each, {sweep.n_runs} runs per MDP "
        f"and scheme, {sweep.n_iterations} iterations; gamma {sweep.gamma:g}, seed "
        f"{sweep.seed}.",
        f"- Reading: {reading(sweep)} (docs/decisions.md).",
        f"- Coverage: {coverage.intact}/{coverage.total} shards (instance x MDP) finished and "
        f"intact; statistics use {pm.groupby(INSTANCE + ['mdp']).ngroups} MDPs"
        + (f" ({n_common} per instance)." if n_common else "."),
        *([f"- **Excluded**: {coverage.problem()}."] if coverage.excluded else []),
        f"- Wall time of the computation: {wall:.0f} s over {sessions} session(s) "
        f"(see sessions.jsonl).",
    ]
    cpu, n_cpu, projected = _cpu(out, sweep)
    if n_cpu:
        lines.append(
            f"- Worker CPU time: {cpu:.0f} s for {n_cpu} shards; from the mean per n_S, the "
            f"whole sweep needs about {projected:.0f} CPU s, {projected / 120:.0f} min on 2 "
            f"free cores.")
    lines += [
        "",
        f"## Final loss (iteration {sweep.n_iterations}), ranked by mean",
        "",
        "k_1pct: first iteration from which the mean loss stays within 1% of its final value.",
        "",
        markdown(final),
        "",
    ]
    last = sweep.n_iterations
    for col, label in conditions(sweep).items():
        st = conditioned[col]
        st = st[st["iteration"] == last]
        table = st.pivot(index="scheme", columns=col, values="mean").loc[list(final.index)]
        spread = st.pivot(index="scheme", columns=col, values="std_of_mean").loc[list(final.index)]
        table.columns = [f"mean {label}={c}" for c in table.columns]
        spread.columns = [f"Std[E] {label}={c}" for c in spread.columns]
        lines += [f"## Final loss conditioned on {label}", "",
                  markdown(pd.concat([table, spread], axis=1)), ""]
    lines += _stopping(pm)
    lines += _sampled(sweep, pm)
    lines += ["## Section 5's observations", "",
              f"{int((obs['holds'] == True).sum())} of {len(obs)} hold "  # noqa: E712
              "(criteria: nsrl/experiments/observations.py, docs/fidelity.md).", "",
              markdown_table(obs), ""]
    lines += ["Figures: expall.png (all instances), exp_n_states.png, exp_n_actions.png, "
              "exp_branching.png. Statistics: " + ", ".join(STATS) + " (stats*.csv)."]
    return "\n".join(lines) + "\n"
