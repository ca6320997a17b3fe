"""The bigger study's analysis: the variants' table, loss against transitions, gap to exact.

:func:`analyse_powered` is the powered family's (:mod:`nsrl.experiments.bigger.powered`):
intervals, paired comparisons, the flatness check and the observations per domain
(:mod:`nsrl.experiments.bigger.inference`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.exact import loss as exact_loss
from nsrl.experiments.bigger import inference
from nsrl.experiments.observations import markdown_table
from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.sampled.analysis import loss_vs_samples
from nsrl.experiments.variants import write_summary
from nsrl.policies import Deterministic


def analyse(out, experiment) -> list[Path]:
    """Write ``bigger.csv``, ``.md``, ``_loss_vs_samples.png`` and ``_gap.csv`` in ``out``."""
    written = write_summary(out, experiment, figures=[loss_vs_samples])
    gap = gap_to_exact(out, experiment)
    if gap is not None:
        path = Path(out) / f"{experiment.name}_gap.csv"
        gap.to_csv(path)
        written.append(path)
    return written


def final_losses(out, experiment) -> pd.DataFrame:
    """Final mean loss per variant, size and scheme, with pi_0's loss (iteration-0 free)."""
    rows = []
    for name in experiment.sweeps():
        folder = experiment.folder(out, name)
        if not (folder / "manifest.json").exists():
            continue
        _, pm, _ = load_per_mdp(folder)
        last = pm[pm["iteration"] == pm["iteration"].max()]
        table = last.groupby(["n_states", "scheme"])["mean"].mean().rename("loss").reset_index()
        rows.append(table.assign(variant=name))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def gap_to_exact(out, experiment) -> pd.DataFrame | None:
    """Each variant's final mean loss minus the exact operator's, per domain, size, scheme."""
    table = final_losses(out, experiment)
    if table.empty:
        return None
    table["domain"] = table["variant"].str.split("-").str[0]
    table["operator"] = table["variant"].str.split("-", n=1).str[1]
    wide = table.pivot_table(index=["domain", "n_states", "scheme"], columns="operator",
                             values="loss")
    if "exact" not in wide.columns:
        return wide
    return wide.sub(wide["exact"], axis=0).drop(columns="exact").add_prefix("gap ")


def analyse_powered(out, experiment) -> list[Path]:
    """Write the powered family's tables in ``out`` (each ``<name>_*.csv``) and ``<name>.md``.

    ``_intervals.csv``: final mean loss per variant, size and scheme with its 95% t-interval;
    ``_comparisons.csv``: every pair of schemes, unit by unit, Holm-corrected per variant
    and size and over the whole family (:func:`inference.family_holm`); ``_flatness.csv``:
    the exact operator's curves against the flatness criterion; ``_observations.csv``: O1-O6
    and C per domain and operator (both sizes pooled); ``_c.csv``: C's comparisons one by
    one (:func:`inference.c_tests`); ``_margins.csv``: each thresholded clause of O1-O6 with
    its distance to the threshold and standard error, and O6 on the direct tau
    (:func:`inference.margins`); ``_units.csv``: the final loss of every variant, unit and
    scheme; ``_pi0.csv``: pi_0's loss per unit (computed once, read back on a later
    analysis).
    """
    out = Path(out)
    pms = variant_tables(out, experiment)
    intervals, comparisons, observed, finals = [], [], [], []
    for variant, (dom, op, _, pm) in pms.items():
        units = inference.unit_table(pm)
        tag = {"variant": variant, "domain": dom, "operator": op}
        intervals.append(inference.final_intervals(units).assign(**tag))
        comparisons.append(inference.paired_comparisons(units).assign(**tag))
        finals.append(units.reset_index()
                      .melt(id_vars=["n_states", "mdp"], var_name="scheme", value_name="loss")
                      .dropna(subset=["loss"]).assign(**tag))
    pi0 = pi0_losses(out, experiment)
    flat = pd.concat([inference.flatness(pm, pi0.xs(dom, level="domain"))
                      .assign(variant=v, domain=dom)
                      for v, (dom, op, _, pm) in pms.items() if op == "exact"], ignore_index=True)
    by_domain: dict[tuple[str, str], list[pd.DataFrame]] = {}
    for dom, op, _, pm in pms.values():
        by_domain.setdefault((dom, op), []).append(pm)
    c_tests, margins = [], []
    for (dom, op), parts in by_domain.items():
        pooled = pd.concat(parts, ignore_index=True)
        tag = {"domain": dom, "operator": op}
        observed.append(inference.domain_observations(pooled).assign(**tag))
        c_tests.append(inference.c_tests(pooled).assign(**tag))
        margins.append(inference.margins(pooled).assign(**tag))
    tables = {"intervals": pd.concat(intervals, ignore_index=True),
              "comparisons": inference.family_holm(pd.concat(comparisons, ignore_index=True)),
              "flatness": flat, "observations": pd.concat(observed, ignore_index=True),
              "c": pd.concat(c_tests, ignore_index=True),
              "margins": pd.concat(margins, ignore_index=True),
              "units": pd.concat(finals, ignore_index=True)}
    written = []
    for key, table in tables.items():
        path = out / f"{experiment.name}_{key}.csv"
        table.to_csv(path, index=False)
        written.append(path)
    path = out / f"{experiment.name}.md"
    path.write_text(powered_summary(experiment, tables))
    return [*written, out / f"{experiment.name}_pi0.csv", path]


def variant_tables(out, experiment) -> dict[str, tuple[str, str, int, pd.DataFrame]]:
    """variant -> (domain, operator, n_states, per-MDP statistics) of every complete variant."""
    found = {}
    for variant, sweep in experiment.sweeps().items():
        folder = experiment.folder(out, variant)
        if not (folder / "manifest.json").exists():
            continue
        _, pm, coverage = load_per_mdp(folder)
        if coverage.intact < coverage.total:
            raise ValueError(f"{folder} holds {coverage.intact} of {coverage.total} shards: "
                             f"finish it (`--resume`) before the analysis.")
        dom, op = variant.split("-")[:2]
        found[variant] = (dom, op, sweep.n_states[0], pm)
    return found


def pi0_losses(out, experiment) -> pd.Series:
    """pi_0's loss (action 0 everywhere) on every unit of the exact variants.

    Indexed by (n_states, mdp, domain); read from ``<name>_pi0.csv`` when it holds every unit.
    """
    path = Path(out) / f"{experiment.name}_pi0.csv"
    wanted = [(variant.split("-")[0], sweep, shard)
              for variant, sweep in experiment.sweeps().items() if sweep.operator.name == "exact"
              for shard in sweep.shards()]
    keys = [(shard.n_states, shard.mdp, dom) for dom, _, shard in wanted]
    if path.exists():
        known = pd.read_csv(path).set_index(["n_states", "mdp", "domain"])["pi0"]
        if set(keys) <= set(known.index):
            return known
    rows = []
    for dom, sweep, shard in wanted:
        mdp = sweep.model(shard)
        loss = exact_loss(mdp, Deterministic(np.zeros(mdp.n_states, dtype=np.int64)))
        rows.append({"n_states": shard.n_states, "mdp": shard.mdp, "domain": dom, "pi0": loss})
    table = pd.DataFrame(rows)
    table.to_csv(path, index=False)
    return table.set_index(["n_states", "mdp", "domain"])["pi0"]


def powered_summary(experiment, tables: dict[str, pd.DataFrame]) -> str:
    """The powered family's report in Markdown: flatness first, then each domain's findings."""
    flat = tables["flatness"]
    worst = flat.iloc[int(np.argmax(flat["relative"].to_numpy()))]
    lines = [f"# {experiment.question}", "",
             "## Are the exact operator's curves flat?", "",
             f"Criterion: over the last {inference.FLAT_TAIL:.0%} of the iterations every "
             f"curve moves by less than {inference.FLAT_TOLERANCE:.0%} of pi_0's loss on its "
             f"unit, with at least {inference.MIN_ITERATIONS} iterations. "
             f"**{'Met' if flat['flat'].all() else 'Not met'}** "
             f"({int(flat['flat'].sum())}/{len(flat)} curves); the least flat: "
             f"{worst['scheme']} on {worst['variant']} unit {int(worst['mdp'])}, moved "
             f"{worst['relative']:.2%} of pi_0's loss from iteration {int(worst['window'])} "
             f"to {int(worst['iterations'])}.", ""]
    iv = tables["intervals"]
    for variant, part in iv.groupby("variant", sort=False):
        rows = [f"| {r.scheme} | {r.units} | {r.mean:.2f} | [{r.low:.2f}, {r.high:.2f}] |"
                for r in part.sort_values("mean").itertuples()]
        cmp_ = tables["comparisons"]
        sig = cmp_[(cmp_["variant"] == variant) & cmp_["significant"]]
        pairs = [f"{better} < {b if better == a else a}"
                 + ("" if family else " (not over the family)")
                 for a, b, better, family in
                 zip(sig["a"], sig["b"], sig["better"], sig["significant_family"], strict=True)]
        lines += [f"## {variant}: final loss, mean over units and 95% t-interval", "",
                  "| scheme | units | mean | 95% interval |", "|---|---|---|---|", *rows, "",
                  f"Paired comparisons significant after Holm over the variant's pairs (paired "
                  f"t, level {inference.ALPHA:g}): {len(sig)} of "
                  f"{int((cmp_['variant'] == variant).sum())}, "
                  f"{int(sig['significant_family'].sum())} of them after Holm over the "
                  f"family's {len(cmp_)}" + ("; " + ", ".join(pairs) if pairs else ""), ""]
    obs, margins = tables["observations"], tables["margins"]
    for (dom, op), part in obs.groupby(["domain", "operator"], sort=False):
        clauses = margins[(margins["domain"] == dom) & (margins["operator"] == op)]
        lines += [f"## Section 5's observations: {dom}, {op} operator (both sizes pooled)", "",
                  markdown_table(part), "",
                  "Each thresholded clause: its distance to the threshold (> 0: holds), the "
                  "statistic's bootstrap standard error over the units, and whether one "
                  "standard error (or a tie) could move it across:", "",
                  "| | clause | statistic | threshold | distance | se | holds | within |",
                  "|---|---|---|---|---|---|---|---|",
                  *(f"| {r.observation} | {r.clause} | {r.statistic:.4g} | {r.relation} "
                    f"{r.limit:g} | {r.distance:.3g} | {r.se:.2g} | {r.holds} | {r.within} |"
                    for r in clauses.itertuples()),
                  ""]
    return "\n".join(lines)
