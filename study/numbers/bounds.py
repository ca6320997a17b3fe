"""Values of docs/bounds.md from three committed result files.

The files: benchmarks/results/garnet_constants.txt, bounds_measured.txt and bench_bounds.txt.

The table of concentrability constants of Garnet(n_S, 5, b) (mean of seeds 0, 1, 2) is the
block ``bounds-garnet-constants`` (study.numbers.tables); these are the readings of it that the
page's prose quotes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import cells, listing, md_table, num, read_text, search
from study.numbers.tables import table_after

CONSTANTS = "benchmarks/results/garnet_constants.txt"
ALL_POLICY = ["C(1,0)", "C(1,5)", "C(2,1,0)", "C(2,5,0)", "C(2,5,5)"]


def constants(root: Path, rel: str = CONSTANTS) -> pd.DataFrame:
    """The constants by (n_S, b), as floats."""
    rows = [cells(ln)
            for ln in table_after(root, rel, "| n_S | b | C_pi").splitlines()]
    table = pd.DataFrame(rows[2:], columns=[c.replace("\\", "") for c in rows[0]])
    table[["n_S", "b"]] = table[["n_S", "b"]].astype(int)
    return table.set_index(["n_S", "b"]).astype(float)


@block("bounds-mixing-below-ceiling", sources=[CONSTANTS])
def _below_ceiling(root: Path) -> str:
    """How many times the largest constant at b = 10 is below the ceiling n_S."""
    table = constants(root).xs(10, level="b")
    ratios = table.index / table.max(axis=1)
    return f"{ratios.min():.1f} to {ratios.max():.1f}"


@block("bounds-c-pi-star-ranges", sources=[CONSTANTS])
def _c_pi_star(root: Path) -> str:
    c = constants(root)["C_pi*"]
    mixing = c[c.index.get_level_values("b") == 10]
    other = c[c.index.get_level_values("b") <= 2]
    return (f"stays at {mixing.min():.2f} to {mixing.max():.2f} while it is {other.min():.2f} "
            f"to {other.max():.2f} for b <= 2")


@block("bounds-all-policy-spread", sources=[CONSTANTS])
def _spread(root: Path) -> str:
    """The relative spread (max - min) / max of the all-policy constants, over the rows."""
    table = constants(root)[ALL_POLICY]
    spread = (table.max(axis=1) - table.min(axis=1)) / table.max(axis=1)
    return f"{spread.min():.1%} to {spread.max():.1%}"


def _ratios(root: Path, rel: str) -> tuple[str, str]:
    """C(2,1,0) / C_pi* at n_S = 100 for each b: ('1.2 / 4.3 / 4.4', '1 / 2 / 10')."""
    table = constants(root, rel).xs(100, level="n_S")
    ratio = table["C(2,1,0)"] / table["C_pi*"]
    return " / ".join(f"{r:.1f}" for r in ratio), " / ".join(str(b) for b in ratio.index)


@block("bounds-ratio-100", sources=[CONSTANTS])
def _ratio(root: Path) -> str:
    ratios, bs = _ratios(root, CONSTANTS)
    return f"{ratios} at n_S = 100, A = 5 for b = {bs}"


OTHER_A = {2: "benchmarks/results/garnet_constants_a2.txt",
           10: "benchmarks/results/garnet_constants_a10.txt"}


@block("bounds-ratio-100-other-a", sources=list(OTHER_A.values()))
def _ratio_other_a(root: Path) -> str:
    """The same ratio at A = 2 and A = 10 (n_S = 100)."""
    return " and ".join(f"{_ratios(root, rel)[0]} at A = {a}" for a, rel in OTHER_A.items())


MEASURED = "benchmarks/results/bounds_measured.txt"
SCHEME_NAMES = {"api": "API", "api(0.1)": "API(0.1)", "cpi": "CPI", "cpi(0.1)": "CPI(0.1)",
                "cpi+": "CPI+", "psdp": "PSDP", "nspi(5)": "NSPI(5)"}
KL = "C_pi* (Kakade-Langford)"


def measured(root: Path) -> pd.DataFrame:
    """bounds_measured.txt: one row per (Garnet, gamma, K, scheme), losses and bounds as floats."""
    rows = [cells(ln)
            for ln in table_after(root, MEASURED, "| Garnet S,A,b,seed").splitlines()]
    table = pd.DataFrame(rows[2:], columns=rows[0])
    for col in ("final loss", "best bound"):
        table[col] = table[col].astype(float)
    table["violations"] = table["violations"].astype(int)
    table["instance"] = (table["Garnet S,A,b,seed"].str.rsplit(",", n=1).str[0] + ", "
                         + table["gamma"] + ", " + table["K"])
    return table


def _loss(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def _bound(x: float) -> str:
    return f"{x:#.3g}".rstrip(".") if x < 1000 else f"{x:.1e}"


@block("bounds-measured-table", sources=[MEASURED])
def _measured_table(root: Path) -> str:
    """Final loss / best bound per instance (rows) and scheme (columns)."""
    table = measured(root)
    body = []
    for instance, runs in table.groupby("instance", sort=False):
        cells = [f"{_loss(r['final loss'])} / {_bound(r['best bound'])}"
                 + (" (KL)" if r["row"] == KL else "") for _, r in runs.iterrows()]
        body.append([instance, *cells])
    names = [SCHEME_NAMES[s] for s in table["scheme"].unique()]
    return md_table(["Garnet S,A,b, gamma, K", *names], body)


@block("bounds-measured-violations", sources=[MEASURED])
def _violations(root: Path) -> str:
    table = measured(root)
    return f"{table['violations'].sum()} violations in {len(table)} runs"


def _best_rows(table: pd.DataFrame) -> dict[str, str]:
    """scheme -> its best row, or 'varies' if it is not the same in every instance."""
    return {SCHEME_NAMES[s]: (rows.iloc[0] if rows.nunique() == 1 else "varies")
            for s, rows in table.groupby("scheme", sort=False)["row"]}


@block("bounds-measured-best-rows", sources=[MEASURED])
def _best_rows_text(root: Path) -> str:
    """Which row is the best, grouped: 'API C(2,1,0); API(0.1) and CPI C(1,0); ...'."""
    names = {KL: "Kakade-Langford (KL)", "C(1)_pi*+C(2,5,5)": "C(1)_pi\\* + g^m C(2,m,m)/(1-g^m)"}
    groups: dict[str, list[str]] = {}
    for scheme, row in _best_rows(measured(root)).items():
        groups.setdefault(row, []).append(scheme)
    return "; ".join(listing(s) + " " + names.get(r, r.replace("*", "\\*"))
                     for r, s in groups.items())


@block("bounds-measured-tight", sources=[MEASURED])
def _tight(root: Path) -> str:
    """The runs whose best bound is within a factor 3 of the final loss."""
    table = measured(root)
    table["ratio"] = table["best bound"] / table["final loss"]
    tight = table[table["ratio"] <= 3]
    runs = [f"{SCHEME_NAMES[r['scheme']]} on {r['instance']} ({r['ratio']:.1f})"
            for _, r in tight.iterrows()]
    return (f"the best bound is within a factor 3 of the final loss in {len(tight)} of the "
            f"{len(table)} runs: " + listing(runs))


@block("bounds-measured-ranking", sources=[MEASURED])
def _ranking(root: Path) -> str:
    """How often API's bound is the loosest and PSDP's the best, and who else wins or loses."""
    table = measured(root)
    n = table["instance"].nunique()
    loosest, best, beaten_by = [], [], set()
    for _, runs in table.groupby("instance", sort=False):
        by_bound = runs.set_index("scheme")["best bound"]
        loosest.append(by_bound.idxmax())
        best.append(by_bound.idxmin())
        beaten_by |= {SCHEME_NAMES[s] for s in by_bound.index[by_bound < by_bound["psdp"]]}
    api = loosest.count("api")
    others = sorted({SCHEME_NAMES[s] for s in loosest if s != "api"})
    psdp = best.count("psdp")
    beaten_by = sorted(beaten_by)
    text = f"API's bound is the loosest in {api} of the {n} rows"
    if others:
        text += f" ({listing(others)}'s in the others)"
    text += f"; PSDP's is the best in {psdp} of the {n} rows"
    if beaten_by:
        text += f", and otherwise beaten only by {listing(beaten_by)}"
    return text


SPEED = "benchmarks/results/bench_bounds.txt"


@block("bounds-speed", sources=[SPEED])
def _speed(root: Path) -> str:
    """The DP against brute force on the tiny MDP, and the DP step and full call on Garnets."""
    tiny = search(root, SPEED, r"brute force (\d+) sequences\s+([\d.]+) ms \| DP\s+([\d.]+) ms"
                  r".*same numbers: (\w+)")
    rows = [["c(0..4), 4 states, 2 actions", f"DP {tiny[3]} ms (whole call)",
             f"brute-force enumeration of {num(int(tiny[1]), 0)} sequences: {tiny[2]} ms"
             + (" (same numbers)" if tiny[4] == "True" else " (DIFFERENT numbers)")]]
    garnets = re.findall(r"^Garnet\s*(\d+),\s*(\d+),\s*(\d+): DP step sparse\s+([\d.]+) ms \| "
                         r"dense BLAS\s+([\d.]+) ms.*?: (\d+) terms in\s+([\d.]+) s",
                         read_text(root, SPEED), re.MULTILINE)
    if not garnets:
        raise ValueError(f"{SPEED} has no Garnet line")
    for S, A, b, sparse, dense, terms, secs in garnets:
        rows.append([f"Garnet {S},{A},{b}: one DP step; all constants (gamma 0.99, tol 1e-4)",
                     f"sparse product {sparse} ms; {terms} terms, {secs} s",
                     f"dense BLAS product {dense} ms"])
    load = search(root, SPEED, r"load ([\d.]+)")[1]
    return (md_table(["measurement", "nsrl", "baseline"], rows, "lrr")
            + f"\n\nLoad average at the start: {load} (2 cores); BLAS on one thread.")
