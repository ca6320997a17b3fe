"""Blocks that quote the ``sensitivity`` study committed in docs/sensitivity/.

Tables (``fidelity-*``) and inline values (``fidelity.*``): each reading's figures
(``fidelity.<reading>.<key>``, :data:`READING_KEYS`, and the families computed from the
per-MDP rows: within-MDP stds, ranges by b, the conclusion's comparisons ``c-*``), the
calibration searches' (``fidelity.search.*``, ``fidelity.search-p.*``, ``fidelity.confirm.*``),
figures over sets of readings (the noise readings ``fidelity.noise.*``, the readings with the
paper's features ``fidelity.paper-features.*``, the epsilon readings), the number of readings,
and the projected operator's error and the Garnets' value scale
(``fidelity.operator-error.*``, ``fidelity.values.*``, from benchmarks/study_operator_error.py).
docs/decisions.md quotes some of them.
"""

from __future__ import annotations

import math
from pathlib import Path

from nsrl.experiments.sensitivity.calibration import FRACTION, SPREAD
from nsrl.experiments.sensitivity.sweep import (
    CALIBRATED,
    CLOSEST_AT_PAPER_P,
    CONSTANT_SPAN_P06,
    SHARES,
    VARIANTS,
)
from nsrl.greedy.model_based import ProjectedGreedy
from study.numbers.registry import block
from study.numbers.sources import listing, memo, read_csv, require, slug
from study.sensitivity.blocks import blocks

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


# Per-reading figures computed from the per-MDP rows (per_mdp.csv): the within-MDP std of a
# scheme (fidelity.<reading>.std-<scheme>), the range of the schemes' final means within a
# branching factor (fidelity.<reading>.range-b<b>), the p-value of 'the scheme's within-MDP std
# is below API's' (fidelity.<reading>.p-std-<scheme>), and CPI+'s stopped fractions.
PER_MDP = f"{FOLDER}/per_mdp.csv"


@memo
def _per_reading(root: Path) -> dict:
    """Reading -> its per-MDP rows (read once per render pass)."""
    from nsrl.experiments.sensitivity.analysis import readings

    return readings(require(root, PER_MDP).parent)


@memo
def _final(root: Path, variant: str, criteria=None):
    from nsrl.experiments.observations import Criteria, Final

    found = _per_reading(root)
    if variant not in found:
        raise ValueError(f"{PER_MDP} has no reading {variant!r}")
    return Final(found[variant], criteria or Criteria())


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


# The conclusion's comparisons (C) of one reading, from per_mdp.csv:
# fidelity.<reading>.c-significant ("23 of 60"), .c-significant-without-b10, .c-failed (the
# number that fail), .c-failed-b10 (of which at b = 10), .c-failures (each failing scheme and
# where), .c-failures-b10 (the schemes failing at b = 10), .c-failures-without-b10 (the failures
# elsewhere) and .c-where-<scheme> (where one scheme is significantly below API).
FAMILY_WORDS = {None: "overall", "n_states": "n_S", "n_actions": "n_A", "branching": "b"}


@memo
def _comparisons(root: Path, variant: str, without_b10: bool = False):
    """The comparisons of C under ``variant`` (computed once per render pass)."""
    from nsrl.experiments.observations import Criteria, comparisons

    criteria = Criteria(skip_branching=(10,)) if without_b10 else Criteria()
    return comparisons(_final(root, variant, criteria))


def _where(c) -> str:
    return "overall" if c.family is None else f"{FAMILY_WORDS[c.family]} = {c.value}"


def _c_significant(variant: str, without_b10: bool):
    def render(root: Path) -> str:
        found = _comparisons(root, variant, without_b10)
        return f"{sum(c.significant for c in found)} of {len(found)}"
    return render


def _c_failed(variant: str, b10: bool):
    def render(root: Path) -> str:
        failed = [c for c in _comparisons(root, variant) if not c.significant]
        if b10:
            failed = [c for c in failed if c.family == "branching" and c.value == 10]
        return str(len(failed))
    return render


def _c_failures(variant: str):
    def render(root: Path) -> str:
        found = _comparisons(root, variant)
        failed: dict[str, list[str]] = {}
        for c in found:
            if not c.significant:
                where = "overall" if c.family is None else f"{c.family} = {c.value}"
                failed.setdefault(c.scheme, []).append(where)
        if not failed:
            return f"none of the {len(found)} comparisons fails"
        total = sum(len(v) for v in failed.values())
        return (f"{total} of the {len(found)} comparisons fail: "
                + listing([f"{s} ({', '.join(w)})" for s, w in failed.items()]))
    return render


def _c_failures_b10(variant: str):
    def render(root: Path) -> str:
        schemes = [c.scheme for c in _comparisons(root, variant) if not c.significant
                   and c.family == "branching" and c.value == 10]
        return listing(schemes) if schemes else "none"
    return render


def _c_failures_without_b10(variant: str):
    def render(root: Path) -> str:
        failed = [f"{c.scheme} {'overall' if c.family is None else 'at ' + _where(c)}"
                  for c in _comparisons(root, variant, True) if not c.significant]
        return listing(failed) if failed else "none"
    return render


def _c_where(variant: str, scheme: str):
    def render(root: Path) -> str:
        found = [c for c in _comparisons(root, variant) if c.scheme == scheme]
        if not found:
            raise ValueError(f"{PER_MDP} has no comparison of {scheme} under {variant!r}")
        overall = any(c.significant for c in found if c.family is None)
        subs = [c for c in found if c.family is not None]
        n = sum(c.significant for c in subs)
        where = f"all {len(subs)}" if n == len(subs) else f"{n} of the {len(subs)}"
        if overall:
            return f"overall and in {where} sub-families"
        return f"in {where} sub-families but not overall" if n else "neither overall nor in " \
            "any sub-family"
    return render


C_SCHEMES = ("CPI(0.1)", "CPI+", "PSDP", "NSPI(5)", "NSPI(10)", "NSPI(30)")
for _variant in VARIANTS:
    _stem = f"fidelity.{_variant.replace('+', '_')}"
    for _skip, _suffix in ((False, ""), (True, "-without-b10")):
        block(f"{_stem}.c-significant{_suffix}", sources=[PER_MDP], optional=True)(
            _c_significant(_variant, _skip))
    for _b10, _suffix in ((False, ""), (True, "-b10")):
        block(f"{_stem}.c-failed{_suffix}", sources=[PER_MDP], optional=True)(
            _c_failed(_variant, _b10))
    block(f"{_stem}.c-failures", sources=[PER_MDP], optional=True)(_c_failures(_variant))
    block(f"{_stem}.c-failures-b10", sources=[PER_MDP], optional=True)(
        _c_failures_b10(_variant))
    block(f"{_stem}.c-failures-without-b10", sources=[PER_MDP], optional=True)(
        _c_failures_without_b10(_variant))
    for _s in C_SCHEMES:
        block(f"{_stem}.c-where-{slug(_s)}", sources=[PER_MDP], optional=True)(
            _c_where(_variant, _s))


def _std_next(variant: str):
    def render(root: Path) -> str:
        f = _final(root, variant)
        return f"{max(f.avg(s, 'std') for s in f.mean.columns if s != 'API'):.2f}"
    return render


for _variant in VARIANTS:  # the largest within-MDP std but API's (O1's "next")
    block(f"fidelity.{_variant.replace('+', '_')}.std-next", sources=[PER_MDP],
          optional=True)(_std_next(_variant))


def _flat(change: dict) -> dict:
    """A reading's change under the flat names the page uses (``noise``, ``cpi_epsilon``)."""
    from nsrl.experiments.compat import SCHEME_FLAT

    prefixed = {option: key for key, option in SCHEME_FLAT.items()}
    out = {k: v for k, v in change.items() if k not in ("operator_options", "scheme_options")}
    out.update(change.get("operator_options", {}))
    out.update({prefixed.get(k, k): v for k, v in change.get("scheme_options", {}).items()})
    return out


# Sets of readings the page speaks of together, named by what they change (VARIANTS).
FLAT = {v: _flat(c) for v, c in VARIANTS.items()}
PAPER_FEATURES = [v for v, c in FLAT.items()  # U[0, 1] features, p = n_S / 10
                  if "feature_fraction" not in c and "feature_law" not in c]
AT_PAPER_P = [v for v, c in FLAT.items() if "feature_fraction" not in c]
NOISE_READINGS = [v for v, c in FLAT.items() if set(c) <= {"noise", "noise_model"}]
EPSILON_READINGS = ["default"] + [v for v, c in FLAT.items()
                                  if set(c) - {"schemes"} == {"cpi_epsilon"}]
EXACT_ADVANTAGE = [v for v, c in FLAT.items()  # CPI+ with the exact advantage, else default
                   if c.get("cpi_advantage") == "exact" and SHARES.get(v) == "default"]


def _ceil(x: float, digits: int = 1) -> str:
    """``x`` rounded up at ``digits`` decimals: a bound that stays true ("within 1.2")."""
    return f"{math.ceil(round(x * 10 ** digits, 9)) / 10 ** digits:.{digits}f}"


def _floor(x: float, digits: int = 1) -> str:
    """``x`` rounded down at ``digits`` decimals ("no reading comes within 0.2")."""
    return f"{math.floor(round(x * 10 ** digits, 9)) / 10 ** digits:.{digits}f}"


def _span(values, fmt: str) -> str:
    """'lo-hi' of ``values`` formatted by ``fmt``, or one number when both ends print alike."""
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


def _means(root: Path, readings, scheme: str) -> list[float]:
    table = read_csv(root, CSV).set_index("variant")
    missing = [r for r in readings if r not in table.index]
    if missing:
        raise ValueError(f"{CSV} has no reading {', '.join(missing)}")
    return [float(table.loc[r, f"mean {scheme}"]) for r in readings]


@block("fidelity.readings.most-held", sources=[CSV])
def _most_held(root: Path) -> str:
    return str(int(read_csv(root, CSV)["held"].max()))


@block("fidelity.epsilon.held", sources=[CSV])
def _epsilon_held(root: Path) -> str:
    """How many observations hold at every epsilon, provided no verdict moves with it."""
    table = read_csv(root, CSV).set_index("variant").loc[EPSILON_READINGS, list(OBS)]
    if len(table.drop_duplicates()) != 1:
        raise ValueError(f"the verdicts differ between the epsilon readings "
                         f"{', '.join(EPSILON_READINGS)}: the sentence 'the verdicts do not "
                         f"move' no longer holds; rewrite it")
    return str(int((table.iloc[0] == "yes").sum()))


# The noise model (NOISE_READINGS: relative, none, absolute, span): what it moves.
def _noise_phrase(scheme: str, middle: str):
    def render(root: Path) -> str:
        default, *others = _means(root, NOISE_READINGS, scheme)
        return f"{default:.1f}{middle}{_span(others, '.1f')}"
    return render


block("fidelity.noise.cpi-0.1", sources=[CSV])(
    _noise_phrase("CPI(0.1)", " under relative noise, "))
block("fidelity.noise.cpi-plus", sources=[CSV])(_noise_phrase("CPI+", " against "))
NOISE_MOVED = ("CPI(0.1)", "CPI+")  # the schemes the noise model moves


def _moves(root: Path, scheme: str) -> list[float]:
    default, *others = _means(root, NOISE_READINGS, scheme)
    return [abs(x - default) for x in others]


@block("fidelity.noise.cpi-moves", sources=[CSV])
def _cpi_moves(root: Path) -> str:
    """How far another noise reading moves CPI(0.1) and CPI+ from the default, in units."""
    return _span([m for s in NOISE_MOVED for m in _moves(root, s)], ".0f")


def _others(root: Path) -> list[str]:
    columns = read_csv(root, CSV).columns
    return [c[5:] for c in columns if c.startswith("mean ") and c[5:] not in NOISE_MOVED]


@block("fidelity.noise.others-move", sources=[CSV])
def _others_move(root: Path) -> str:
    """The most the noise model moves any other scheme's final mean (range over readings)."""
    return _ceil(max(max(v) - min(v) for v in
                     (_means(root, NOISE_READINGS, s) for s in _others(root))))


@block("fidelity.noise.others-within", sources=[CSV])
def _others_within(root: Path) -> str:
    """The widest range of the other schemes' final means within one noise reading."""
    means = [_means(root, NOISE_READINGS, s) for s in _others(root)]
    return _ceil(max(max(col) - min(col) for col in zip(*means, strict=True)))


@block("fidelity.noise.cpi-0.1-gain-on-api-0.1", sources=[CSV])
def _cpi_gain_on_api(root: Path) -> str:
    """How much CPI(0.1)'s lead over API(0.1) grows without the relative noise."""
    lead = [a - c for a, c in zip(_means(root, NOISE_READINGS, "API(0.1)"),
                                  _means(root, NOISE_READINGS, "CPI(0.1)"), strict=True)]
    return _span([x - lead[0] for x in lead[1:]], ".0f")


@block("fidelity.paper-features.nspi-30-api", sources=[CSV])
def _nspi_30_api(root: Path) -> str:
    """The largest gap between NSPI(30) and API among the readings with the paper's features."""
    return _ceil(max(abs(a - n) for a, n in zip(_means(root, PAPER_FEATURES, "API"),
                                                _means(root, PAPER_FEATURES, "NSPI(30)"),
                                                strict=True)))


@block("fidelity.default.nspi-30-below-api", sources=[CSV])
def _nspi_30_below_api(root: Path) -> str:
    (api,), (nspi,) = _means(root, ["default"], "API"), _means(root, ["default"], "NSPI(30)")
    return f"{api - nspi:.2f}"


@block("fidelity.readings.o5-worst-p", sources=[PER_MDP])
def _o5_worst_p(root: Path) -> str:
    """The lowest, over every reading, of O5's worst p (NSPI(30) below each of three)."""
    worst = []
    for variant in VARIANTS:
        f = _final(root, variant)
        worst.append(max(f.lower("NSPI(30)", s) for s in ("API(0.1)", "CPI+", "CPI(0.1)")))
    return f"{min(worst):.2g}"


@block("fidelity.paper-features.c-most", sources=[PER_MDP])
def _c_most(root: Path) -> str:
    """The most comparisons of C significant under a reading with the paper's features."""
    counts = {v: _comparisons(root, v) for v in PAPER_FEATURES}
    sig = {v: sum(c.significant for c in found) for v, found in counts.items()}
    best = max(sig.values())
    total = len(next(iter(counts.values())))
    return (f"{best} of the {total} comparisons are significant ("
            + listing([f"`{v}`" for v in PAPER_FEATURES if sig[v] == best]) + ")")


@block("fidelity.paper-features.c-nspi", sources=[PER_MDP])
def _c_nspi(root: Path) -> str:
    """Where NSPI(m) is significantly below API under a reading with the paper's features."""
    found: dict[tuple, list[str]] = {}
    for v in PAPER_FEATURES:
        for c in _comparisons(root, v):
            if c.scheme.startswith("NSPI") and c.significant:
                found.setdefault((c.scheme, _where(c)), []).append(f"`{v}`")
    if not found:
        return "nowhere"
    return listing([f"{s} {w if w == 'overall' else 'at ' + w} under {listing(r)}"
                    for (s, w), r in found.items()])


@block("fidelity.with-exact-advantage.c-sub-cpi-plus", sources=[PER_MDP])
def _c_sub_exact(root: Path) -> str:
    """In how many sub-families CPI+ is below API when it reads the exact advantage."""
    return _span([sum(c.significant for c in _comparisons(root, v)
                      if c.scheme == "CPI+" and c.family is not None)
                  for v in EXACT_ADVANTAGE], "d")


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


@block("decisions.ddof-gap", sources=())
def _ddof_gap(root: Path) -> str:
    """How much ddof = 1 and ddof = 0 standard deviations differ with the paper's runs."""
    from nsrl.experiments.loader import load_sweep

    n = load_sweep("paper").n_runs
    return f"{100 * (math.sqrt(n / (n - 1)) - 1):.1f}% for {n} samples"


@block("fidelity.paper-features.others", sources=())
def _not_paper_features(root: Path) -> str:
    """The readings that leave the paper's features (another law or another p)."""
    return listing([f"`{v}`" for v in VARIANTS if v not in PAPER_FEATURES])
