"""summary.md of a results folder: what was run, on what, how long, and what it found.

:func:`summary_text` writes the report's text (:func:`nsrl.experiments.report.write_report`
writes the statistics and figures it quotes): the sweep, its reading of what the paper leaves
open (:func:`reading`), which quality the statistics are of (the exact loss or a Monte-Carlo
score, :mod:`nsrl.experiments.quality`), the coverage and time, the final table ranked by the
quality's direction, and section 5's observations.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import NEEDS_LOSS, markdown_table
from nsrl.experiments.stats import INSTANCE, STATS, final_summary

CONDITIONS = {"n_states": "n_S", "n_actions": "n_A", "branching": "b"}


def conditions(sweep) -> dict[str, str]:
    """The instance columns the report conditions on (the sweep's axes among n_S, n_A, b)."""
    return {k: v for k, v in CONDITIONS.items() if k in sweep.axis_names}


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


def _wall_time(out: Path) -> tuple[float, int, bool]:
    """Total computing time over the sessions of sessions.jsonl, their number, pooled or not.

    Pooled: a session shared its workers with other sweeps (an experiment's variants). A
    session that ended (even by Ctrl-C or SIGTERM) has an "end" record; one that was killed
    outright counts up to its last finished shard.
    """
    wall: dict[str, float] = {}
    pooled = False
    for rec in _sessions(out):
        sid = str(rec.get("session"))
        pooled = pooled or bool(rec.get("pooled"))
        if rec.get("event") == "end":
            wall[sid] = rec["wall_time"]
        elif rec.get("event") in ("start", "shard"):
            wall[sid] = max(wall.get(sid, 0.0), rec.get("elapsed", 0.0))
    return sum(wall.values()), len(wall), pooled


def _discount(sweep) -> str:
    """The sweep's gamma, where something uses it: a model, or an operator that takes one."""
    if sweep.domain_entry.has_model or "gamma" in sweep.operator_entry.params:
        return f"gamma {sweep.gamma:g}"
    return f"gamma: the operator's own (the sweep's {sweep.gamma:g} is not used)"


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
    if "error" not in pm.columns:  # a domain without a model: no greedy error to measure
        if not sweep.sampled:
            return []
        return [f"## Samples ({sweep.operator.name})", "", "Transitions drawn by the end of a "
                "run, mean over runs (the greedy errors need a model).", "",
                markdown(pd.DataFrame({"transitions": last["samples"].mean()}), ".4g"), ""]
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
    # n_S on Garnets: what a shard's cost grows with (one group for a domain without axes)
    axis, sizes = sweep.grid[0] if sweep.grid else ("", (0,))
    by_size: dict[int, list[float]] = {}
    for r in _sessions(out):
        shard = sweep.shard_of(str(r.get("shard")))
        if "cpu_seconds" in r and shard is not None:
            by_size.setdefault(shard.instance.get(axis, 0), []).append(r["cpu_seconds"])
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
    if not sweep.domain_entry.has_model:  # every option the operator was built with
        parts.append(f"greedy operator {op} on its env{listed(options)}")
    elif op == "projected":
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


def summary_text(sweep, pm, overall, conditioned, coverage, n_common, out, obs) -> str:
    """The text of ``out``/summary.md.

    Args:
        sweep: the folder's sweep.
        pm: the per-MDP statistics used (balanced over instances).
        overall: the overall statistics (stats.csv).
        conditioned: instance column -> its conditioned statistics.
        coverage: the shards used and excluded (:class:`nsrl.experiments.report.Coverage`).
        n_common: MDPs per instance of a balanced partial run (0: complete).
        out: the folder (its sessions.jsonl gives the times).
        obs: the observation table (:func:`nsrl.experiments.observations.observations`).
    """
    wall, sessions, pooled = _wall_time(out)
    q = sweep.quality
    final = final_summary(overall, pm, higher=q.higher)
    mdps = "MDPs" if q.exact else "replicates"  # an env has no random instance to draw
    lines = [
        f"# Results of sweep `{sweep.name}`",
        "",
        f"- Instances: {', '.join(f'{k} in {list(v)}' for k, v in sweep.grid) or 'one'}; "
        f"{sweep.n_mdps} {mdps} each, {sweep.n_runs} runs per {mdps[:-1]} "
        f"and scheme, {sweep.n_iterations} iterations; {_discount(sweep)}, seed "
        f"{sweep.seed}.",
        f"- Reading: {reading(sweep)} (docs/decisions.md).",
        f"- Quality: {q.describe(sweep.domain.name)}.",
        f"- Coverage: {coverage.intact}/{coverage.total} shards (instance x MDP) finished and "
        f"intact; statistics use {pm.groupby(INSTANCE + ['mdp']).ngroups} {mdps}"
        + (f" ({n_common} per instance)." if n_common else "."),
        *([f"- **Excluded**: {coverage.problem()}."] if coverage.excluded else []),
        f"- Wall time of the computation: {wall:.0f} s over {sessions} session(s) "
        + ("(workers shared with the experiment's other variants; " if pooled else "(")
        + "see sessions.jsonl).",
    ]
    cpu, n_cpu, projected = _cpu(out, sweep)
    if n_cpu:
        lines.append(
            f"- Worker CPU time: {cpu:.0f} s for {n_cpu} shards; from the mean per n_S, the "
            f"whole sweep needs about {projected:.0f} CPU s, {projected / 120:.0f} min on 2 "
            f"free cores.")
    lines += _final(sweep, q, final, overall)
    last = sweep.n_iterations
    for col, label in conditions(sweep).items():
        st = conditioned[col]
        st = st[st["iteration"] == last]
        table = st.pivot(index="scheme", columns=col, values="mean").loc[list(final.index)]
        spread = st.pivot(index="scheme", columns=col, values="std_of_mean").loc[list(final.index)]
        table.columns = [f"mean {label}={c}" for c in table.columns]
        spread.columns = [f"Std[E] {label}={c}" for c in spread.columns]
        lines += [f"## Final {q.title} conditioned on {label}", "",
                  markdown(pd.concat([table, spread], axis=1)), ""]
    lines += _stopping(pm)
    lines += _sampled(sweep, pm)
    lines += _observed(q, obs)
    figures = ("expall.png (all instances), exp_n_states.png, exp_n_actions.png, "
               "exp_branching.png") if q.exact else ", ".join(
        ["expall.png (all instances)", *(f"exp_{c}.png" for c in conditions(sweep))])
    lines += [f"Figures: {figures}. Statistics: " + ", ".join(STATS) + " (stats*.csv)."]
    return "\n".join(lines) + "\n"


def _final(sweep, q, final: pd.DataFrame, overall: pd.DataFrame) -> list[str]:
    """The final table's section: ranked by the quality's direction, a score with its games."""
    head = f"## Final {q.title} (iteration {sweep.n_iterations}), ranked by mean"
    notes = [f"k_1pct: first iteration from which the mean {q.name} stays within 1% of its "
             f"final value."]
    if not q.exact:
        head += f" ({q.better})"
        last = overall[overall["iteration"] == overall["iteration"].max()].set_index("scheme")
        final = final.join(last[["games", "mean_ci"]])
        notes.append("games: games per run at this iteration; mean_ci: the mean half-width of "
                     "a run's 95% interval (its Monte-Carlo error, beside the runs' spread).")
    return ["", head, "", *notes, "", markdown(final), ""]


def _observed(q, obs: pd.DataFrame) -> list[str]:
    """Section 5's observations; on a score, which are not judged and why."""
    judged = f"{int((obs['holds'] == True).sum())} of {len(obs)} hold"  # noqa: E712
    if not q.exact:
        skipped = [k for k in obs["observation"] if k in NEEDS_LOSS]
        judged = (f"{int((obs['holds'] == True).sum())} of {len(obs) - len(skipped)} judged "  # noqa: E712
                  f"hold; {', '.join(skipped)} are not judged on a Monte-Carlo score "
                  f"({q.name}): their 'close' is a ratio to the final means, which needs a loss "
                  f"(>= 0, 0 at the optimum); 'worst' and 'better' follow the score's "
                  f"direction ({q.name}: {q.better})")
    return ["## Section 5's observations", "",
            f"{judged} (criteria: nsrl/experiments/observations.py, docs/fidelity.md).", "",
            markdown_table(obs), ""]
