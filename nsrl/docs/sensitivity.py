"""Blocks that quote the ``sensitivity`` study committed in docs/sensitivity/.

Tables (``fidelity-*``) and inline values (``fidelity.*``): each reading's figures
(``fidelity.<reading>.<key>``, :data:`READING_KEYS`), the calibration searches'
(``fidelity.search-p.*``, ``fidelity.confirm.*``) and the number of readings.
"""

from __future__ import annotations

import math
from pathlib import Path

from nsrl.docs.registry import block
from nsrl.docs.sources import listing, memo, read_csv, slug
from nsrl.experiments.sensitivity.analysis import blocks
from nsrl.experiments.sensitivity.calibration import FRACTION, SPREAD
from nsrl.experiments.sensitivity.sweep import (
    CALIBRATED,
    CLOSEST_AT_PAPER_P,
    CONSTANT_SPAN_P06,
    VARIANTS,
)
from nsrl.greedy.model_based import ProjectedGreedy

CSV = "docs/sensitivity/sensitivity.csv"
OBSERVATIONS = "docs/sensitivity/observations.csv"
OBS = ("O1", "O2", "O3", "O4", "O5", "O6", "C")


def default_verdicts(root: Path) -> str:
    """'O1, O3 and O6 hold; O2, O4, O5 and C do not' for the ``default`` reading."""
    obs = read_csv(root, OBSERVATIONS)
    rows = obs[obs["variant"] == "default"].set_index("observation")["holds"]
    if rows.empty:
        raise ValueError(f"{OBSERVATIONS} has no row of the variant 'default'")
    held = [o for o in OBS if bool(rows[o])]
    failed = [o for o in OBS if not bool(rows[o])]
    text = f"{listing(held)} {'holds' if len(held) == 1 else 'hold'}" if held else "none holds"
    return text + (f"; {listing(failed)} do not" if failed else "")


@block("readme-sensitivity", sources=[CSV])
def _summary(root: Path) -> str:
    table = read_csv(root, CSV).set_index("variant")
    best = int(table["held"].max())
    at_best = list(table.index[table["held"] == best])
    never = [o for o in OBS if not (table[o] == "yes").any()]
    default = [o for o in OBS if table.loc["default", o] == "yes"]
    text = (f"{len(table)} readings; the most any reading holds is {best} of the {len(OBS)} "
            f"checks ({len(at_best)} reading(s): {listing(at_best)}); the default holds "
            f"{int(table.loc['default', 'held'])} ({listing(default) if default else 'none'})")
    return text + (f"; no reading holds {listing(never)}" if never else "") + "."


FOLDER = "docs/sensitivity"
study_blocks = memo(blocks)  # the study's tables, computed once per render pass
FIDELITY = {  # block of docs/fidelity.md -> the study's files it is rendered from
    "verdicts": ("sensitivity.csv",), "means": ("sensitivity.csv",),
    "spread": ("sensitivity.csv",), "robustness": ("robustness.csv",),
    "search": ("calibration_search.csv",), "search-p": ("calibration_search_p.csv",),
    "search-p-noise": ("calibration_search_p.csv",),
    "search-confirm": ("calibration_confirm.csv",),
}


def _fidelity(name: str):
    def render(root: Path) -> str:
        return study_blocks(Path(root) / FOLDER)[name]
    return render


for _name, _files in FIDELITY.items():
    block(f"fidelity-{_name}", sources=[f"{FOLDER}/{f}" for f in _files])(_fidelity(_name))


# Inline values of one reading, from sensitivity.csv: fidelity.<reading>.<key> ('+' in a
# reading's name written '_').
SCHEMES = ("API", "API(0.1)", "CPI(0.1)", "CPI+", "NSPI(5)", "NSPI(10)", "NSPI(30)", "PSDP")
READING_KEYS = {
    "step": lambda r: f"{r['step fraction']:.2f}",
    "spread": lambda r: f"{r['relative spread']:.2f}",
    "held": lambda r: str(int(r["held"])),
    "holds": lambda r: listing([o for o in OBS if r[o] == "yes"]) or "none",
    "fails": lambda r: listing([o for o in OBS if r[o] != "yes"]) or "none",
    "cpi-plus-stopped-20": lambda r: f"{100 * r['CPI+ stopped k=20']:.0f}%",
    "flips": lambda r: r["verdicts that a threshold changes"],
    **{f"mean-{slug(s)}": (lambda r, s=s: f"{r[f'mean {s}']:.2f}") for s in SCHEMES},
}


def _reading_value(variant: str, key: str):
    def render(root: Path) -> str:
        table = read_csv(root, CSV).set_index("variant")
        if variant not in table.index:
            raise ValueError(f"{CSV} has no reading {variant!r}")
        return READING_KEYS[key](table.loc[variant])
    return render


def _measured(variant: str, check: str):
    def render(root: Path) -> str:
        obs = read_csv(root, OBSERVATIONS).set_index(["variant", "observation"])
        if (variant, check) not in obs.index:
            raise ValueError(f"{OBSERVATIONS} has no check {check} of the reading {variant!r}")
        return str(obs.loc[(variant, check), "measured"])
    return render


for _variant in VARIANTS:
    _stem = f"fidelity.{_variant.replace('+', '_')}"
    for _key in READING_KEYS:
        block(f"{_stem}.{_key}", sources=[CSV], optional=True)(_reading_value(_variant, _key))
    for _check in OBS:  # what observations.csv measured for the check (fidelity.x.measured-o1)
        block(f"{_stem}.measured-{_check.lower()}", sources=[OBSERVATIONS], optional=True)(
            _measured(_variant, _check))


@block("fidelity.readings", sources=[CSV])
def _readings(root: Path) -> str:
    return str(len(read_csv(root, CSV)))


@block("fidelity.calibrated.cpu", sources=[f"{FOLDER}/cpu_seconds.csv"])
def _calibrated_cpu(root: Path) -> str:
    cpu = read_csv(root, f"{FOLDER}/cpu_seconds.csv").set_index("variant")
    return f"{cpu.loc['calibrated', 'CPU s']:.0f}"


SEARCH_P = f"{FOLDER}/calibration_search_p.csv"
CONFIRM = f"{FOLDER}/calibration_confirm.csv"


def _at_paper_iota(root: Path, rel: str):
    found = read_csv(root, rel)
    return found, found[found["noise"] == 0.1]


def _measures(row) -> str:
    return f"step kept {row['step fraction']:.2f}, spread {row['relative spread']:.2f}"


def _setting(row) -> str:
    constant = "a constant feature" if row["constant_feature"] else "no constant feature"
    return f"{row['feature_law']} features, {constant}, {row['noise_model']} noise"


def _row_of(table, reading: dict):
    row = table[(table["feature_fraction"] == reading["feature_fraction"])
                & (table["feature_law"] == "uniform")
                & (table["constant_feature"] == reading["constant_feature"])
                & (table["noise_model"] == reading["noise_model"])]
    if len(row) != 1:
        raise ValueError(f"no single row of the reading {reading} in the search")
    return row.iloc[0]


@block("fidelity.search-p.size", sources=[SEARCH_P])
def _search_size(root: Path) -> str:
    found, paper = _at_paper_iota(root, SEARCH_P)
    settings = len(paper[["feature_law", "constant_feature", "noise_model"]].drop_duplicates())
    return (f"{settings} settings x {paper['feature_fraction'].nunique()} values of p, and "
            f"{len(found) - len(paper)} with another iota: {len(found)} rows, "
            f"{found['CPU s'].sum():.0f} CPU s")


@block("fidelity.search-p.first", sources=[SEARCH_P])
def _search_first(root: Path) -> str:
    _, paper = _at_paper_iota(root, SEARCH_P)
    hits = paper[paper["calibrated"]].sort_values("feature_fraction", kind="stable")
    row = hits.iloc[0]
    return f"{row['feature_fraction']:g} n_S ({_setting(row)}: {_measures(row)})"


@block("fidelity.search-p.first-uniform", sources=[SEARCH_P])
def _search_first_uniform(root: Path) -> str:
    _, paper = _at_paper_iota(root, SEARCH_P)
    row = _row_of(paper, CONSTANT_SPAN_P06)
    if not row["calibrated"]:
        raise ValueError("the reading constant-span-p0.6 is not calibrated in the search")
    return f"{row['feature_fraction']:g} n_S ({_setting(row)}: {_measures(row)})"


@block("fidelity.search-p.never", sources=[SEARCH_P])
def _search_never(root: Path) -> str:
    _, paper = _at_paper_iota(root, SEARCH_P)
    relative = paper[paper["noise_model"] == "relative"]
    bare = paper[~paper["constant_feature"] & (paper["feature_fraction"] < 1)]
    return (f"{int(relative['calibrated'].sum())} of the {len(relative)} settings with "
            f"relative noise and {int(bare['calibrated'].sum())} of the {len(bare)} without a "
            f"constant feature below p = n_S")


@block("fidelity.confirm.size", sources=[CONFIRM])
def _confirm_size(root: Path) -> str:
    found = read_csv(root, CONFIRM)
    return f"{len(found)} settings, {found['CPU s'].sum():.0f} CPU s"


@block("fidelity.confirm.p06", sources=[CONFIRM])
def _confirm_p06(root: Path) -> str:
    return _measures(_row_of(_at_paper_iota(root, CONFIRM)[1], CONSTANT_SPAN_P06))


@block("fidelity.confirm.calibrated", sources=[CONFIRM])
def _confirm_calibrated(root: Path) -> str:
    row = _row_of(_at_paper_iota(root, CONFIRM)[1], CALIBRATED)
    return f"{row['feature_fraction']:g} n_S ({_measures(row)})"


@block("fidelity.calibration.ranges", sources=())
def _ranges(root: Path) -> str:
    return (f"step kept in [{FRACTION[0] + 0.05:g}, {FRACTION[1] - 0.05:g}], spread at most "
            f"{SPREAD[1] - 0.05:g}")


@block("fidelity.calibrated.p", sources=())
def _calibrated_p(root: Path) -> str:
    return f"p = {CALIBRATED['feature_fraction']:g} n_S"


@block("fidelity.calibrated.c-failures", sources=[f"{FOLDER}/per_mdp.csv"])
def _c_failures(root: Path) -> str:
    """The conclusion's comparisons that fail under ``calibrated``, by scheme."""
    from nsrl.experiments.observations import Final, paired_p
    from nsrl.experiments.sensitivity.analysis import readings

    read_csv(root, f"{FOLDER}/per_mdp.csv")
    f = Final(readings(root / FOLDER)["calibrated"])
    failed: dict[str, list[str]] = {}
    tried = 0
    for col in (None, "n_states", "n_actions", "branching"):
        parts = [(None, f.mean)] if col is None else list(f.mean.groupby(level=col))
        for value, part in parts:
            for scheme in [c for c in f.mean.columns if c not in ("API", "API(0.1)")]:
                tried += 1
                if paired_p((part[scheme] - part["API"]).to_numpy(), f.c.test) >= f.c.level:
                    where = "overall" if col is None else f"{col} = {value}"
                    failed.setdefault(scheme, []).append(where)
    if not failed:
        return f"none of the {tried} comparisons fails"
    total = sum(len(v) for v in failed.values())
    return (f"{total} of the {tried} comparisons fail: "
            + listing([f"{s} ({', '.join(w)})" for s, w in failed.items()]))


# Per-reading figures computed from the per-MDP rows (per_mdp.csv): the within-MDP std of a
# scheme (fidelity.<reading>.std-<scheme>), the range of the schemes' final means within a
# branching factor (fidelity.<reading>.range-b<b>), the p-value of 'the scheme's within-MDP std
# is below API's' (fidelity.<reading>.p-std-<scheme>), and CPI+'s stopped fractions.
PER_MDP = f"{FOLDER}/per_mdp.csv"
_FINALS: dict[tuple[str, float], dict] = {}


def _final(root: Path, variant: str):
    from nsrl.experiments.observations import Final
    from nsrl.experiments.sensitivity.analysis import readings

    path = Path(root) / PER_MDP
    key = (str(path), path.stat().st_mtime)
    if key not in _FINALS:
        _FINALS.clear()
        _FINALS[key] = readings(Path(root) / FOLDER)
    found = _FINALS[key]
    if variant not in found:
        raise ValueError(f"{PER_MDP} has no reading {variant!r}")
    return Final(found[variant])


def _std(variant: str, scheme: str):
    return lambda root: f"{_final(root, variant).avg(scheme, 'std'):.2f}"


def _p_std(variant: str, scheme: str, than: str = "API"):
    return lambda root: f"{_final(root, variant).lower(scheme, than, 'std'):.2g}"


def _range_b(variant: str, b: int):
    def render(root: Path) -> str:
        means = _final(root, variant).mean.groupby(level="branching").mean()
        if b not in means.index:
            raise ValueError(f"{PER_MDP} has no branching {b} for {variant!r}")
        row = means.loc[b]
        return f"{row.max() - row.min():.2f}"
    return render


STOPPED = {"stopped-1": "CPI+ stopped k=1", "stopped-10": "CPI+ stopped k=10"}


def _stopped(variant: str, column: str):
    def render(root: Path) -> str:
        return f"{100 * read_csv(root, CSV).set_index('variant').loc[variant, column]:.0f}%"
    return render


for _variant in VARIANTS:
    _stem = f"fidelity.{_variant.replace('+', '_')}"
    for _s in SCHEMES:
        block(f"{_stem}.std-{slug(_s)}", sources=[PER_MDP], optional=True)(_std(_variant, _s))
        if _s != "API":
            block(f"{_stem}.p-std-{slug(_s)}", sources=[PER_MDP], optional=True)(
                _p_std(_variant, _s))
    block(f"{_stem}.p-std-psdp-vs-cpi-plus", sources=[PER_MDP], optional=True)(
        _p_std(_variant, "PSDP", "CPI+"))
    for _b in (1, 2, 10):
        block(f"{_stem}.range-b{_b}", sources=[PER_MDP], optional=True)(_range_b(_variant, _b))
    for _key, _col in STOPPED.items():
        block(f"{_stem}.{_key}", sources=[CSV], optional=True)(_stopped(_variant, _col))


# Two schemes' (or readings') final means compared: the difference and how far apart they
# are, relative to their average (the checks' "within 10%").
def _mean_of(root: Path, variant: str, scheme: str) -> float:
    return float(read_csv(root, CSV).set_index("variant").loc[variant, f"mean {scheme}"])


@block("fidelity.estimated-scores.cost", sources=[CSV])
def _scores_cost(root: Path) -> str:
    return f"{_mean_of(root, 'estimated-scores', 'CPI+') - _mean_of(root, 'default', 'CPI+'):.2f}"


@block("fidelity.estimated-scores.cost-pct", sources=[CSV])
def _scores_cost_pct(root: Path) -> str:
    a, b = _mean_of(root, "estimated-scores", "CPI+"), _mean_of(root, "default", "CPI+")
    return f"{100 * (a - b) / b:.0f}%"


def _apart(variant: str, a: str, b: str):
    def render(root: Path) -> str:
        x, y = _mean_of(root, variant, a), _mean_of(root, variant, b)
        return f"{100 * abs(x - y) / ((x + y) / 2):.0f}%"
    return render


APART = {"cpi-plus-cpi": ("CPI+", "CPI(0.1)"), "psdp-nspi-30": ("PSDP", "NSPI(30)"),
         "psdp-cpi": ("PSDP", "CPI(0.1)"), "psdp-cpi-plus": ("PSDP", "CPI+")}
for _variant in VARIANTS:
    for _key, (_a, _b) in APART.items():
        block(f"fidelity.{_variant.replace('+', '_')}.apart-{_key}",
              sources=[CSV], optional=True)(_apart(_variant, _a, _b))


# The first calibration search, one value per setting:
# fidelity.search.<law>-<constant|bare>-<noise>.step / .spread
SEARCH = f"{FOLDER}/calibration_search.csv"


def _search_value(law: str, constant: bool, noise: str, column: str, fmt: str):
    def render(root: Path) -> str:
        t = read_csv(root, SEARCH)
        row = t[(t["feature_law"] == law) & (t["constant_feature"] == constant)
                & (t["noise_model"] == noise)]
        if len(row) != 1:
            raise ValueError(f"{SEARCH} has no single row {law}, {constant}, {noise}")
        return format(float(row.iloc[0][column]), fmt)
    return render


for _law in ("uniform", "centred", "gaussian", "binary"):
    for _const in (False, True):
        for _noise in ("relative", "absolute", "span"):
            _stem = f"fidelity.search.{_law}-{'constant' if _const else 'bare'}-{_noise}"
            block(f"{_stem}.step", sources=[SEARCH], optional=True)(
                _search_value(_law, _const, _noise, "step fraction", ".2f"))
            block(f"{_stem}.spread", sources=[SEARCH], optional=True)(
                _search_value(_law, _const, _noise, "relative spread", ".2g"))


def _gain(variant: str, scheme: str):
    def render(root: Path) -> str:
        return f"{_mean_of(root, 'default', scheme) - _mean_of(root, variant, scheme):.2f}"
    return render


for _variant in VARIANTS:  # how much lower a scheme ends than under the default reading
    for _s in SCHEMES:
        block(f"fidelity.{_variant.replace('+', '_')}.gain-{slug(_s)}", sources=[CSV],
              optional=True)(_gain(_variant, _s))


def _floor(x: float, digits: int = 1) -> str:
    """``x`` rounded down at ``digits`` decimals ("no reading comes within 0.2")."""
    return f"{math.floor(round(x * 10 ** digits, 9)) / 10 ** digits:.{digits}f}"


def _span(values, fmt: str) -> str:
    """'lo-hi' of ``values`` formatted by ``fmt``, or one number when both ends print alike."""
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


AT_PAPER_P = [v for v, c in VARIANTS.items() if "feature_fraction" not in c]


# The first calibration search (calibration_search.csv, p = n_S / 10): what moves the step.
def _search(root: Path):
    return read_csv(root, SEARCH)


@block("fidelity.search.other-laws-most", sources=[SEARCH])
def _other_laws_most(root: Path) -> str:
    t = _search(root)
    return f"{100 * t[t['feature_law'] != 'uniform']['step fraction'].max():.0f}%"


@block("fidelity.search.closest-short", sources=[SEARCH])
def _closest_short(root: Path) -> str:
    """How far the setting that misses least (closest-at-paper-p) is below the range."""
    t = _search(root)
    c = CLOSEST_AT_PAPER_P
    row = t[(t["feature_law"] == c["feature_law"]) & (t["constant_feature"] ==
            c["constant_feature"]) & (t["noise_model"] == c["noise_model"])]
    if len(row) != 1:
        raise ValueError(f"{SEARCH} has no single row of the reading closest-at-paper-p")
    return f"{FRACTION[0] - float(row['step fraction'].iloc[0]):.2f}"


@block("fidelity.search.noise-effect", sources=[SEARCH])
def _noise_effect(root: Path) -> str:
    """The most the noise model moves the step kept, the law and constant feature fixed."""
    moves = _search(root).groupby(["feature_law", "constant_feature"], sort=False)[
        "step fraction"].agg(lambda x: x.max() - x.min()).sort_values(kind="stable")
    (law, constant), top = moves.index[-1], moves.iloc[-1]
    with_ = "a constant one" if constant else "no constant one"
    return f"{moves.iloc[-2]:.2f} ({top:.2f} with {law} features and {with_})"


@block("fidelity.search.law-effect", sources=[SEARCH])
def _law_effect(root: Path) -> str:
    """The most the law and constant feature move the step kept, the noise model fixed."""
    moves = _search(root).groupby("noise_model")["step fraction"].agg(
        lambda x: x.max() - x.min())
    return f"{moves.max():.2f}"


@block("fidelity.at-paper-p.short", sources=[CSV])
def _at_paper_p_short(root: Path) -> str:
    """How far below the range the best reading at p = n_S / 10 stays (rounded down)."""
    table = read_csv(root, CSV).set_index("variant")
    return _floor(FRACTION[0] - float(table.loc[AT_PAPER_P, "step fraction"].max()))


# The projected operator's greedy error at CPI's first call, and the scale of Garnet values
# (benchmarks/study_operator_error.py).
ERRORS = f"{FOLDER}/operator_error.csv"
VALUES = f"{FOLDER}/garnet_values.csv"


@block("fidelity.operator-error.median", sources=[ERRORS])
def _error_median(root: Path) -> str:
    return f"{read_csv(root, ERRORS)['error'].median():.2g}"


@block("fidelity.operator-error.mean", sources=[ERRORS])
def _error_mean(root: Path) -> str:
    return f"{read_csv(root, ERRORS)['error'].mean():.2g}"


@block("fidelity.operator-error.size", sources=[ERRORS])
def _error_size(root: Path) -> str:
    e = read_csv(root, ERRORS)
    instances = len(e[["n_states", "n_actions", "branching"]].drop_duplicates())
    return (f"{instances} instances x {e['mdp'].nunique()} MDPs x {e['draw'].nunique()} draws "
            f"of the noise")


def _values(root: Path) -> tuple[float, float]:
    """Medians over the study's MDPs of the mean value of pi_0 and of the optimal policy."""
    v = read_csv(root, VALUES)
    return float(v["value_pi0"].median()), float(v["value_star"].median())


@block("fidelity.values.range", sources=[VALUES])
def _values_range(root: Path) -> str:
    return "-".join(f"{round(x, -1):.0f}" for x in _values(root))


@block("fidelity.values.pi0", sources=[VALUES])
def _value_pi0(root: Path) -> str:
    return f"{_values(root)[0]:.0f}"


@block("fidelity.values.star", sources=[VALUES])
def _value_star(root: Path) -> str:
    return f"{_values(root)[1]:.0f}"


IOTA = ProjectedGreedy.params["noise"].default  # the paper's 0.1


@block("fidelity.values.absolute-noise", sources=[VALUES])
def _absolute_noise(root: Path) -> str:
    """Absolute noise of amplitude iota, as a share of pi_0's typical value."""
    return f"{100 * IOTA / _values(root)[0]:.1f}%"


@block("fidelity.values.relative-noise", sources=[VALUES])
def _relative_noise(root: Path) -> str:
    """What relative noise of amplitude iota moves a value by, from pi_0's to v*'s."""
    return _span([IOTA * x for x in _values(root)], ".0f")
