"""docs/tetris_learning.md and docs/tetris.md: the Tetris preset's results and the benchmarks.

Sources: the committed results folders of ``nsrl reproduce --preset tetris-small`` and
``--preset tetris-large`` (docs/tetris/small_run, docs/tetris/large_run: the experiment's
analysis files tetris_final.csv and tetris_comparisons.csv, each variant's sessions.jsonl with
the workers' CPU seconds per shard), ``benchmarks/results/bench_tetris_csc.txt`` (the two fits
on the same rollouts), ``tetris_step_quality*.txt`` (one step from DT-10),
``bench_tetris_losses.txt`` (CMA-ES's population kernel),
``benchmarks/results/bench_tetris.txt`` (the simulators' pieces per second) and
``benchmarks/results/tetris_best_*.txt`` (the best learned controllers, and the shipped ones
on 10 x 20, on fresh games).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from nsrl.experiments.bigger.inference import holm, interval
from study.numbers.registry import block
from study.numbers.sources import cells, md_table, memo, quoted, read_csv, read_text, require

# board -> (its committed run, the run's variants' folders: "" for a one-sweep experiment)
RUNS = {"small": ("docs/tetris/small_run", ("cbmpi", "dpi", "cbmpi-m2-cmaes", "cbmpi-decay")),
        "large": ("docs/tetris/large_run", ("",))}
RUN = RUNS["small"][0]
ANALYSIS = {"final": "tetris_final.csv", "pairs": "tetris_comparisons.csv"}


def analysis(board: str, kind: str) -> str:
    """The experiment's analysis file of ``kind`` (final, pairs) in the run of ``board``."""
    return f"{RUNS[board][0]}/{ANALYSIS[kind]}"


FINAL = analysis("small", "final")
R = "benchmarks/results/"
SPEED = R + "bench_tetris.txt"
BEST = R + "tetris_best_10x10.txt"
BEST_DECAY = R + "tetris_best_10x10_decay.txt"  # the bounded critic's candidates, 10 x 10
BEST_LARGE = R + "tetris_best_10x20.txt"
SHIPPED_LARGE = R + "tetris_best_10x20_shipped.txt"
BEST_LARGE_DECAY = R + "tetris_best_10x20_decay.txt"  # the bounded critic's study on 10 x 20


def per_variant(board: str, name: str) -> list[str]:
    """The file ``name`` of each variant of the committed run of ``board``."""
    run, variants = RUNS[board]
    return ["/".join(filter(None, (run, variant, name))) for variant in variants]


def sessions(board: str) -> list[str]:
    """The sessions files of the committed run of ``board``, one per variant."""
    return per_variant(board, "sessions.jsonl")


def manifests(board: str) -> list[str]:
    """The manifest files of the committed run of ``board``, one per variant."""
    return per_variant(board, "manifest.json")


def _ci(mean: float, low: float, high: float) -> str:
    if pd.isna(low):
        return f"{mean:,.0f}"
    return f"{mean:,.0f} [{low:,.0f}, {high:,.0f}]"


def operators(root: Path, board: str) -> dict[str, str]:
    """Each variant's operator name (CBMPI, DPI), by the name the analysis files give it.

    A variant of a multi-sweep experiment is named by its folder, a one-sweep experiment's
    by its sweep's name: both are read from the manifests.
    """
    out = {}
    for rel, variant in zip(manifests(board), RUNS[board][1], strict=True):
        sweep = json.loads(read_text(root, rel))["sweep"]
        out[variant or sweep["name"]] = operator_label(sweep["operator"])
    return out


def operator_label(spec: dict) -> str:
    """CBMPI, DPI: the operator's name, with the options set beside the budget (m, the fit)."""
    options = {k: v for k, v in spec.get("options", {}).items() if k != "budget"}
    said = [f"m = {options.pop('m')}"] if "m" in options else []
    if options.pop("fit", "softmax") == "cmaes":
        said.append("CMA-ES")
    if not options.pop("warm_start", True):
        said.append("cold")
    said += [f"{k} = {v}" for k, v in sorted(options.items())]
    name = str(spec["name"]).upper()
    return f"{name} ({', '.join(said)})" if said else name


def final_table(root: Path, board: str) -> str:
    """Per variant and scheme: the last and the best iteration's mean lines with intervals."""
    final, names = analysis(board, "final"), operators(root, board)
    rows = [[names[str(r["variant"])], r["scheme"], str(r["units"]),
             _ci(r["final"], r["final_low"], r["final_high"]),
             f"{_ci(r['best'], r['best_low'], r['best_high'])} (k = {r['best_iteration']})",
             f"{r['memory']:.0f}", f"{r['samples_per_iteration'] / 1e6:.2f} M"]
            for r in read_csv(root, final).to_dict("records")]
    return md_table(["operator", "scheme", "units", "last iteration: mean lines [95%]",
                     "best iteration: mean lines [95%]", "policies stored",
                     "samples per iteration"], rows, "llrrrrr")



def pairs_table(root: Path, board: str) -> str:
    """The pairs significant after Holm over the experiment's pairs, and how many were tested."""
    c, names = read_csv(root, analysis(board, "pairs")), operators(root, board)
    sig = c[c["significant"]].sort_values("p_holm")
    rows = [[names[str(r["variant"])], r["better"], r["b"] if r["better"] == r["a"] else r["a"],
             _ci(abs(r["diff"]), *sorted((abs(r["low"]), abs(r["high"])))) if
             r["low"] * r["high"] > 0 else _ci(abs(r["diff"]), float("nan"), float("nan")),
             f"{r['p_t']:.2g}", f"{r['p_wilcoxon']:.2g}", f"{r['p_holm']:.2g}"]
            for r in sig.to_dict("records")]
    head = (f"{len(sig)} of the {len(c)} pairs of schemes are significant at 5% after Holm's "
            f"correction over all {len(c)} (paired t-test over the units; the Wilcoxon test "
            f"beside it):\n\n")
    if not rows:
        return head.replace(":\n\n", ".\n")
    return head + md_table(["operator", "better", "than", "difference in mean lines [95%]",
                            "p (t)", "p (Wilcoxon)", "p (Holm)"], rows, "lllrrrr") + "\n"



@block("tetris-small-spread", sources=[FINAL])
def spread(root: Path) -> str:
    """CBMPI's schemes by their last iteration's 95% half-width over the units, widest first.

    Every scheme has the same units, so the half-widths order their spread across runs.
    """
    f = read_csv(root, FINAL)
    f = f[f["variant"] == "cbmpi"].assign(half=lambda d: (d["final_high"] - d["final_low"]) / 2)
    return ", ".join(f"{r['scheme']} +- {r['half']:,.0f}"
                     for r in f.sort_values("half", ascending=False).to_dict("records"))


def cpu_hours(root: Path, board: str) -> str:
    """The workers' CPU-hours of the preset, summed over its shards (every variant)."""
    return f"{sum(shard_cpu_seconds(root, rel) for rel in sessions(board)) / 3600:.1f}"


def shard_cpu_seconds(root: Path, rel: str) -> float:
    """The workers' CPU seconds of the shards recorded in the sessions file ``rel``."""
    return sum(float(e["cpu_seconds"]) for e in map(json.loads, read_text(root, rel).splitlines())
               if e.get("event") == "shard")


for _board in RUNS:
    _final, _pairs = analysis(_board, "final"), analysis(_board, "pairs")
    block(f"tetris-{_board}-final", sources=[_final, *manifests(_board)])(
        lambda root, board=_board: final_table(root, board))
    block(f"tetris-{_board}-pairs", sources=[_pairs, *manifests(_board)])(
        lambda root, board=_board: pairs_table(root, board))
    block(f"tetris-{_board}-cpu-hours", sources=sessions(_board))(
        lambda root, board=_board: cpu_hours(root, board))
for _name, _rel in (("tetris-best-10x10", BEST), ("tetris-best-10x10-decay", BEST_DECAY),
                    ("tetris-best-10x20", BEST_LARGE),
                    ("tetris-shipped-10x20", SHIPPED_LARGE),
                    ("tetris-best-10x20-decay", BEST_LARGE_DECAY)):
    block(_name, sources=[_rel])(lambda root, rel=_rel: quoted(root, rel))


def best_scheme(root: Path) -> pd.Series:
    """The row of highest last-iteration mean under the preset's CBMPI step (every scheme)."""
    f = read_csv(root, FINAL)
    return f[f["variant"] == "cbmpi"].sort_values("final", ascending=False).iloc[0]


block("tetris-small-best-scheme", sources=[FINAL])(lambda root: str(best_scheme(root)["scheme"]))
block("tetris-small-best-mean", sources=[FINAL])(
    lambda root: f"{best_scheme(root)['final']:,.0f}")
# The variants that run API alone beside the preset's CBMPI: the papers' configuration
# (m = 2, CMA-ES started afresh), the critic with a bounded horizon (not the papers'), DPI.
SINGLE = {"papers": "cbmpi-m2-cmaes", "decay": "cbmpi-decay", "dpi": "dpi"}


def unit_files(board: str, variant: str) -> list[str]:
    """The shard files (one per unit) of ``variant`` in the committed run of ``board``."""
    return [f"{RUNS[board][0]}/{variant}/shards/w10_h10_m{unit:03d}.parquet"
            for unit in range(10)]


def shard_scores(root: Path, files: list[str], scheme: str = "API") -> pd.DataFrame:
    """``scheme``'s score per unit (rows) and iteration (columns) in the shard ``files``."""
    rows = pd.concat(pd.read_parquet(require(root, rel)) for rel in files)
    rows = rows[rows["scheme"] == scheme]
    return rows.pivot_table(index="mdp", columns="iteration", values="score")


@memo
def scores(root: Path, variant: str, scheme: str = "API") -> pd.DataFrame:
    """``scheme``'s score per unit (rows) and iteration (columns) in the small run's ``variant``."""
    return shard_scores(root, unit_files("small", variant), scheme)


def welch_test(a: np.ndarray, b: np.ndarray, unit: str = "") -> tuple[str, float]:
    """``a`` minus ``b``: 'difference``unit`` [95% interval]' and p by Welch's t-test.

    A p-value of NaN (both samples constant) reads as 1.
    """
    test = stats.ttest_ind(a, b, equal_var=False)
    low, high = test.confidence_interval(0.95)
    p = 1.0 if np.isnan(test.pvalue) else float(test.pvalue)
    return f"{a.mean() - b.mean():+,.0f}{unit} [{low:+,.0f}, {high:+,.0f}]", p


def welch(a: np.ndarray, b: np.ndarray) -> str:
    """``a`` minus ``b`` in lines, its 95% interval and p-value by Welch's t-test."""
    diff, p = welch_test(a, b, " lines")
    return f"{diff}, Welch's p = {p:.2g}"


def variant_row(root: Path, variant: str) -> dict:
    """API's row of ``variant`` in the small board's final table."""
    f = read_csv(root, FINAL)
    return f[(f["variant"] == variant) & (f["scheme"] == "API")].iloc[0].to_dict()


def against_preset(root: Path, variant: str, iteration: int) -> str:
    """API of ``variant`` minus the preset's API at ``iteration``: Welch's t over the units.

    The variants draw their own evaluation games, so the units are not paired across them.
    """
    return welch(scores(root, variant)[iteration].to_numpy(),
                 scores(root, "cbmpi")[iteration].to_numpy())


COMPARED = {"papers": (5, 10), "decay": (5, 10), "dpi": (10,)}  # iterations compared


@block("tetris-small-vs-preset-holm",
       sources=[*(f for v in SINGLE.values() for f in unit_files("small", v)),
                *unit_files("small", "cbmpi")])
def against_preset_holm(root: Path) -> str:
    """The Welch tests of the variants against the preset's API, Holm-corrected together."""
    tests = {}
    for key, variant in SINGLE.items():
        for k in COMPARED[key]:
            tests[f"{variant} at {k}"] = welch_test(scores(root, variant)[k].to_numpy(),
                                                    scores(root, "cbmpi")[k].to_numpy())[1]
    holm = holm_adjusted(tests)
    return ", ".join(f"{name} {p:.2g}" for name, p in holm.items())


def holm_adjusted(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm's adjustment of ``pvalues`` (nsrl's, as the experiments use), smallest p first."""
    adjusted = dict(zip(pvalues, holm(np.array(list(pvalues.values()))), strict=True))
    return dict(sorted(adjusted.items(), key=lambda item: pvalues[item[0]]))


def decay_final(root: Path) -> pd.DataFrame:
    """The bounded critic's rows of the small board's final table (every scheme)."""
    f = read_csv(root, FINAL)
    return f[f["variant"] == SINGLE["decay"]]


@block("tetris-small-decay-schemes", sources=[FINAL, *unit_files("small", "cbmpi"),
                                               *unit_files("small", SINGLE["decay"])])
def decay_schemes(root: Path) -> str:
    """Each scheme's last iteration with the bounded critic and the preset's: Welch, Holm.

    The two variants draw their own evaluation games, so a scheme's units are not paired
    across them; Holm's correction is over the schemes of the table.
    """
    f = read_csv(root, FINAL)
    preset = f[f["variant"] == "cbmpi"].set_index("scheme")
    rows, tests = [], {}
    for r in decay_final(root).to_dict("records"):
        diff, tests[r["scheme"]] = welch_test(
            scores(root, SINGLE["decay"], r["scheme"])[10].to_numpy(),
            scores(root, "cbmpi", r["scheme"])[10].to_numpy())
        p = preset.loc[r["scheme"]]
        rows.append([r["scheme"], _ci(p["final"], p["final_low"], p["final_high"]),
                     _ci(r["final"], r["final_low"], r["final_high"]), diff,
                     f"{tests[r['scheme']]:.2g}"])
    holm = holm_adjusted(tests)
    rows = [[*row, f"{holm[row[0]]:.2g}"] for row in rows]
    return md_table(["scheme", "preset: last iteration [95%]",
                     "critic_decay = 0.7: last iteration [95%]", "difference [95%]",
                     "Welch's p", "p (Holm, over the schemes)"], rows, "lrrrrr")


def decay_best(root: Path) -> pd.Series:
    """The bounded critic's scheme of highest last-iteration mean."""
    return decay_final(root).sort_values("final", ascending=False).iloc[0]


block("tetris-small-decay-best-scheme", sources=[FINAL])(
    lambda root: str(decay_best(root)["scheme"]))
block("tetris-small-decay-best-scheme-last", sources=[FINAL])(
    lambda root: _ci(*(decay_best(root)[k] for k in ("final", "final_low", "final_high"))))


def curve_from(root: Path, variant: str, start: int) -> str:
    """API's mean over the units at each iteration from ``start`` on, in ``variant``."""
    means = scores(root, variant).mean()
    return ", ".join(f"{means[k]:,.0f}" for k in means.index if k >= start)


def variant_cpu_hours(root: Path, variant: str) -> str:
    """The workers' CPU-hours of one variant of the small board's run."""
    rel = "/".join((RUNS["small"][0], variant, "sessions.jsonl"))
    return f"{shard_cpu_seconds(root, rel) / 3600:.1f}"


for _key in ("papers", "decay"):
    block(f"tetris-small-{_key}-cpu-hours",
          sources=[f"{RUNS['small'][0]}/{SINGLE[_key]}/sessions.jsonl"])(
        lambda root, v=SINGLE[_key]: variant_cpu_hours(root, v))
for _key in ("papers", "decay", "cbmpi"):
    _v = SINGLE.get(_key, _key)
    block(f"tetris-small-{_key}-curve", sources=unit_files("small", _v))(
        lambda root, v=_v: curve_from(root, v, 4))
for _key, _variant in SINGLE.items():
    for _k in COMPARED[_key]:
        block(f"tetris-small-{_key}-vs-preset-{_k}",
              sources=[*unit_files("small", _variant), *unit_files("small", "cbmpi")])(
            lambda root, v=_variant, k=_k: against_preset(root, v, k))
    if _key == "dpi":  # its row is in the table; the prose reads its comparison only
        continue
    block(f"tetris-small-{_key}-last", sources=[FINAL])(
        lambda root, v=_variant: _ci(*(variant_row(root, v)[k]
                                       for k in ("final", "final_low", "final_high"))))
    block(f"tetris-small-{_key}-best", sources=[FINAL])(
        lambda root, v=_variant: _ci(*(variant_row(root, v)[k]
                                       for k in ("best", "best_low", "best_high"))))
    block(f"tetris-small-{_key}-best-k", sources=[FINAL])(
        lambda root, v=_variant: str(int(variant_row(root, v)["best_iteration"])))


CSC = R + "bench_tetris_csc.txt"
STEP = R + "tetris_step_quality.txt"
STEP_LONG = R + "tetris_step_quality_calls8.txt"
LOSSES = R + "bench_tetris_losses.txt"
PRESET_ROW = "preset (softmax, warm, m = 5)"  # the step study's row of the preset's operator
block("tetris-csc-table", sources=[CSC])(lambda root: quoted(root, CSC))


@block("tetris-csc-cpu-ratio", sources=[CSC])
def csc_cpu_ratio(root: Path) -> str:
    """CMA-ES's mean fit CPU over the surrogate's, on bench_tetris_csc.txt's rows."""
    rows = [cells(ln) for ln in read_text(root, CSC).splitlines() if ln.startswith("| ")]
    seconds: dict[str, list[float]] = {"softmax": [], "CMA-ES": []}
    for row in rows[1:]:  # the header row first
        seconds[row[2].split(",")[0]].append(float(row[3]))
    return f"{np.mean(seconds['CMA-ES']) / np.mean(seconds['softmax']):.0f}"


block("tetris-step-table", sources=[STEP])(lambda root: quoted(root, STEP))


def step_rows(root: Path, path: str = STEP) -> dict[str, list[str]]:
    """tetris_step_quality.txt's rows by operator (its 9 cells)."""
    rows = [cells(ln) for ln in read_text(root, path).splitlines() if ln.startswith("| ")]
    return {row[0]: row for row in rows[1:]}


@block("tetris-step-preset", sources=[STEP])
def step_preset(root: Path) -> str:
    """The preset's step from the target: mean lines [95%]."""
    return step_rows(root)[PRESET_ROW][2]


STEP_CALLS = {1: R + "tetris_step_quality_calls1.txt", 2: R + "tetris_step_quality_calls2.txt",
              3: STEP, 5: R + "tetris_step_quality_calls5.txt", 8: STEP_LONG}


@block("tetris-step-horizon", sources=list(STEP_CALLS.values()))
def step_horizon(root: Path) -> str:
    """The preset's step from the target after 1 to 8 calls: the critic's horizon grows."""
    m = 5  # the preset's: the last call's critic was fitted calls - 1 times, m placements each
    rows = [[str(calls), str(m * (calls - 1)), *step_rows(root, path)[PRESET_ROW][2:4]]
            for calls, path in STEP_CALLS.items()]
    return md_table(["calls", "critic's horizon (placements)",
                     "last call's policy: mean lines [95%]", "per repeat"], rows, "rrrl")


block("tetris-step-preset-each", sources=[STEP])(
    lambda root: step_rows(root)[PRESET_ROW][3])


@block("tetris-step-target", sources=[STEP])
def step_target(root: Path) -> str:
    """The target's own lines on the step study's games (its header line)."""
    head = read_text(root, STEP).splitlines()[1]
    return re.search(r"target [^:]+: ([\d,]+) \+-", head).group(1)  # type: ignore[union-attr]


@block("tetris-step-losses", sources=[STEP])
def step_losses(root: Path) -> str:
    """The preset's L, fitted against the target's weights, on its rollouts and fresh ones."""
    row = step_rows(root)[PRESET_ROW]
    return (f"{row[4]} against {row[5]} on the call's own rollouts, {row[6]} against {row[7]} "
            "on fresh ones")


@block("tetris-losses-speedup", sources=[LOSSES])
def losses_speedup(root: Path) -> str:
    """bench_tetris_losses.txt's ratio of the previous kernel to today's."""
    text = read_text(root, LOSSES)
    return re.search(r"kernel is ([\d.]+)x faster", text).group(1)  # type: ignore[union-attr]


@block("tetris-speed-table", sources=[SPEED])
def speed_table(root: Path) -> str:
    """bench_tetris.txt's measurements: its header line, the table, the engines' ratios."""
    text = read_text(root, SPEED).splitlines()
    table = [ln for ln in text if ln.startswith("|")]
    notes = [ln for ln in text if ln.startswith(("batch engine", "load"))]
    return f"Measured {text[0].strip()}.\n\n" + "\n".join(table) + "\n\n" + "; ".join(notes) + ".\n"


def speed_figure(root: Path, board: str, simulator: str = "nsrl batch engine") -> str:
    """The (median) pieces per CPU second of ``simulator``'s first row on ``board``.

    ``board`` is e.g. '10 x 20'; the batch engine's first row is today's engine.
    """
    for ln in read_text(root, SPEED).splitlines():
        row = cells(ln)
        if len(row) > 4 and row[0].startswith(simulator) and row[1] == board:
            return row[3].split(" [")[0]
    raise ValueError(f"{SPEED} has no row of {simulator} on {board}")


block("tetris-speed-10x20", sources=[SPEED])(lambda root: speed_figure(root, "10 x 20"))
block("tetris-speed-gym-10x20", sources=[SPEED])(
    lambda root: speed_figure(root, "10 x 20", "tetris-gymnasium"))


def best_rows(root: Path, path: str = BEST) -> dict[str, tuple[float, str]]:
    """tetris_best_*.txt's rows: controller -> (fresh-games mean, 'mean +- half-width')."""
    out = {}
    for ln in read_text(root, path).splitlines():
        row = cells(ln)
        if len(row) == 5 and "+-" in row[3]:
            out[row[0]] = (float(row[3].split(" +-")[0].replace(",", "")), row[3])
    return out


def best_learned(root: Path, *paths: str) -> str:
    """The best candidate's fresh-games score, 'mean +- half-width', over the files ``paths``.

    The files' fresh games are the same (one seed), so their candidates compare.
    """
    found = [v for path in paths or (BEST,) for k, v in best_rows(root, path).items()
             if k.startswith("candidate")]
    return max(found, key=lambda v: v[0])[1]


# The board's best learned policy (docs/tetris/best-10x10.json), over both files' candidates.
block("tetris-best-10x10-score", sources=[BEST, BEST_DECAY])(
    lambda root: best_learned(root, BEST, BEST_DECAY))
block("tetris-best-10x10-decay-score", sources=[BEST_DECAY])(
    lambda root: best_learned(root, BEST_DECAY))
block("tetris-dt10-10x10-score", sources=[BEST])(lambda root: best_rows(root)["DT-10"][1])
block("tetris-best-10x20-preset-score", sources=[BEST_LARGE])(
    lambda root: best_learned(root, BEST_LARGE))
# The board's best learned policy (docs/tetris/best-10x20.json): the preset's or the study's.
block("tetris-best-10x20-score", sources=[BEST_LARGE, BEST_LARGE_DECAY])(
    lambda root: best_learned(root, BEST_LARGE, BEST_LARGE_DECAY))


# A study beside the tetris-large preset (not a variant of it): API with the bounded critic
# (critic_decay = 0.7) on 10 x 20, the preset's budget, units, iterations and games; its
# sweep is the run's sweep.toml.
LARGE_DECAY = "docs/tetris/large_decay_run"


def large_files(run: str) -> list[str]:
    """The shard files (one per unit) of a 10 x 20 run folder ``run``."""
    return [f"{run}/shards/w10_h20_m{unit:03d}.parquet" for unit in range(4)]


@memo
def large_scores(root: Path, run: str) -> pd.DataFrame:
    """API's lines per unit (rows) and iteration (columns) in the 10 x 20 run ``run``."""
    return shard_scores(root, large_files(run))


def _interval(values: np.ndarray) -> str:
    return _ci(*interval(values))


@block("tetris-large-decay-curve",
       sources=[*large_files(RUNS["large"][0]), *large_files(LARGE_DECAY)])
def large_decay_curve(root: Path) -> str:
    """API's mean lines per iteration on 10 x 20, the preset's critic and the bounded one."""
    preset, decay = (large_scores(root, run) for run in (RUNS["large"][0], LARGE_DECAY))
    rows = [[str(k), _interval(preset[k].to_numpy()), _interval(decay[k].to_numpy())]
            for k in preset.columns]
    return md_table(["iteration", "API, the preset's critic: mean lines [95%]",
                     "API, critic_decay = 0.7: mean lines [95%]"], rows, "rrr")


@block("tetris-large-decay-vs-preset",
       sources=[*large_files(RUNS["large"][0]), *large_files(LARGE_DECAY)])
def large_decay_vs_preset(root: Path) -> str:
    """The bounded critic's API minus the preset's at the last iteration: Welch's t."""
    preset, decay = (large_scores(root, run) for run in (RUNS["large"][0], LARGE_DECAY))
    k = int(preset.columns.max())
    return welch(decay[k].to_numpy(), preset[k].to_numpy())


block("tetris-large-decay-cpu-hours", sources=[f"{LARGE_DECAY}/sessions.jsonl"])(
    lambda root: f"{shard_cpu_seconds(root, LARGE_DECAY + '/sessions.jsonl') / 3600:.1f}")
