"""docs/bigger.md's budget study of rollouts + CSC on the grid world at 10^5 states.

``benchmarks/study_grid_rollout_budget.py``.

Its JSON lines (``benchmarks/results/study_grid_rollout_budget.jsonl``): one per (classifier,
scheme, transitions per call), the exact loss after every call of one run on MDP 0 of the
grid world at 10^5 states, or ``losses: null`` with ``stopped`` where the run went over the
script's CPU cap. A later line of the same configuration replaces an earlier one (a rerun).
Set beside the LSTD-Q study of :mod:`study.numbers.grid_transitions` and the family's
committed shard of the same MDP (:mod:`study.numbers.bigger`).
"""

from __future__ import annotations

import json
from pathlib import Path

from study.numbers import grid_transitions as lstdq
from study.numbers.bigger import shard, shard_rel
from study.numbers.registry import block
from study.numbers.sources import listing, md_table, memo, read_text

RESULTS = "benchmarks/results/study_grid_rollout_budget.jsonl"
FAMILY_BUDGET = 100_000  # the bigger family's transitions per call
FAMILY_FIT = "logistic"  # the bigger family's classifier, and the powered family's first run's
SHARD = shard_rel("grid", "rollout", FAMILY_BUDGET)
SCHEMES = {"api": "API", "psdp": "PSDP"}
SHARE, FIRST = lstdq.share, lstdq.first_within


@memo
def records(root: Path) -> list[dict]:
    """The study's records, the last line of each (classifier, scheme, budget) kept.

    In the order scheme, budget, classifier (the family's fit first).
    """
    by_key: dict[tuple, dict] = {}
    for line in read_text(root, RESULTS).splitlines():
        if line.strip():
            r = json.loads(line)
            by_key[(r["classifier"], r["scheme"], r["budget"])] = r
    order = list(SCHEMES)
    return sorted(by_key.values(), key=lambda r: (order.index(r["scheme"]), r["budget"],
                                                  r["classifier"] != FAMILY_FIT))


def done(root: Path, classifier: str = "softmax") -> list[dict]:
    """The finished runs of one classifier."""
    return [r for r in records(root) if r["classifier"] == classifier and r["losses"]]


def budget(n: int) -> str:
    """10^k, or m x 10^k."""
    k = len(str(n)) - 1
    lead = n // 10**k
    return f"10^{k}" if n == 10**k else f"{lead} x 10^{k}" if n == lead * 10**k else str(n)


def at(r: dict, x: float) -> str:
    """A loss with its share of pi_0's."""
    return f"{x:.2f} ({SHARE(x, r['loss_pi0'])})"


def best(r: dict) -> tuple[int, float]:
    """The call (1-based) of the run's lowest loss, and that loss."""
    i = min(range(len(r["losses"])), key=r["losses"].__getitem__)
    return i + 1, r["losses"][i]


@block("grid-rollout-budget", sources=[RESULTS])
def _table(root: Path) -> str:
    rows = []
    for r in records(root):
        head = [SCHEMES[r["scheme"]], r["classifier"], budget(r["budget"]), str(r["iterations"])]
        if not r["losses"]:
            rows.append(head + [f"stopped, {r['stopped']}", "", "", "", ""])
            continue
        call, low = best(r)
        first = FIRST(r["losses"], r["loss_pi0"])
        rows.append(head + [at(r, r["losses"][0]), at(r, r["losses"][-1]),
                            f"{low:.2f} ({SHARE(low, r['loss_pi0'])}, {call})",
                            str(first or "none"), f"{r['cpu_seconds']:.0f}"])
    return md_table(["scheme", "classifier", "transitions per call", "calls",
                     "loss after call 1", "final loss", "best loss (call)",
                     "first call <= 10% of pi_0's", "CPU s"], rows, "lllrrrrrr")


def _largest_stopped(root: Path) -> list[str]:
    return [f"{SCHEMES[r['scheme']]} at {budget(r['budget'])}" for r in records(root)
            if not r["losses"]]


@block("grid-rollout-budget-answer", sources=[RESULTS])
def _answer(root: Path) -> str:
    """Which scheme crosses 10% of pi_0's loss from which budget; else the lowest loss."""
    runs = done(root)
    crossed, missed = [], []
    for s, name in SCHEMES.items():
        mine = [r for r in runs if r["scheme"] == s]
        if not mine:
            continue
        hit = next((r for r in mine if FIRST(r["losses"], r["loss_pi0"])), None)
        if hit:
            crossed.append(f"{name} from {budget(hit['budget'])} transitions per call (call "
                           f"{FIRST(hit['losses'], hit['loss_pi0'])})")
        else:
            missed.append(name)
    most = budget(max(r["budget"] for r in runs))
    low = min(runs, key=lambda r: best(r)[1])
    call, x = best(low)
    text = (f"10% of pi_0's loss is crossed by {listing(crossed)}" if crossed else
            f"no budget up to {most} transitions per call brings {' or '.join(missed)} to 10% "
            f"of pi_0's loss within {low['iterations']} calls")
    if crossed and missed:
        text += f"; not by {listing(missed)} (up to {most} per call)"
    text += (f"; the lowest loss of any call is {at(low, x)}, {SCHEMES[low['scheme']]} at "
             f"{budget(low['budget'])} per call (call {call})")
    stopped = _largest_stopped(root)
    return text + (f" ({listing(stopped)}: stopped at the CPU cap)" if stopped else "")


def _finals(root: Path, scheme: str, budgets: list[int], classifier: str = "softmax") -> str:
    rows = {r["budget"]: r for r in done(root, classifier) if r["scheme"] == scheme}
    shares = [f"{SHARE(rows[n]['losses'][-1], rows[n]['loss_pi0'])}" for n in budgets if n in rows]
    if not shares:
        return ""
    shares[0] += " of pi_0's loss"
    return listing([f"{x} at {budget(n)}" for x, n in zip(shares, [n for n in budgets
                                                                 if n in rows], strict=True)])


@block("grid-rollout-budget-family", sources=[RESULTS])
def _family(root: Path) -> str:
    """At the family's budget: the first call's level, then where the last call ends."""
    fam = {(r["scheme"], r["classifier"]): r for r in records(root)
           if r["budget"] == FAMILY_BUDGET and r["losses"]}
    first = listing([f"{SCHEMES[s]} to {SHARE(r['losses'][0], r['loss_pi0'])}"
                     for (s, c), r in fam.items() if c == "softmax"])
    last = listing([f"{SCHEMES[s]} at {SHARE(r['losses'][-1], r['loss_pi0'])}"
                    for (s, c), r in fam.items() if c == "softmax"])
    text = (f"at {budget(FAMILY_BUDGET)} transitions per call the first call brings {first} of "
            f"pi_0's loss; after the last, {last}")
    old = [f"{SHARE(r['losses'][-1], r['loss_pi0'])} ({SCHEMES[s]})"
           for (s, c), r in fam.items() if c == FAMILY_FIT]
    return text + (f" ({FAMILY_FIT}, the families' first fit: {listing(old)})" if old else "")


@block("grid-rollout-budget-plateau", sources=[RESULTS])
def _plateau(root: Path) -> str:
    """Each scheme's final loss at the budgets above the family's."""
    above = sorted({r["budget"] for r in done(root) if r["budget"] > FAMILY_BUDGET})
    return "; ".join(f"{name} ends at {_finals(root, s, above)}"
                     for s, name in SCHEMES.items() if _finals(root, s, above))


@block("grid-rollout-budget-fits", sources=[RESULTS])
def _fits(root: Path) -> str:
    """softmax against logistic at the family's budget, call by call."""
    fam = {(r["scheme"], r["classifier"]): r for r in records(root)
           if r["budget"] == FAMILY_BUDGET and r["losses"]}
    parts = []
    for s, name in SCHEMES.items():
        a, b = fam.get((s, "softmax")), fam.get((s, FAMILY_FIT))
        if a and b:
            gap = max(abs(x - y) for x, y in zip(a["losses"], b["losses"], strict=True))
            parts.append(f"{gap:.2f} ({name}; {SHARE(gap, a['loss_pi0'])} of pi_0's loss)")
    calls = next(iter(fam.values()))["iterations"]
    return f"the two fits' losses differ by at most {listing(parts)} over the {calls} calls"


@block("grid-rollout-budget-shard", sources=[RESULTS, SHARD])
def _shard(root: Path) -> str:
    """The family's committed shard of the same MDP, for the same pattern."""
    d = shard(root, "grid", "rollout", FAMILY_BUDGET)
    l0 = next(r["loss_pi0"] for r in records(root))
    parts = []
    for name in SCHEMES.values():
        losses = d[d["scheme"] == name].sort_values("iteration")["loss"].tolist()
        parts.append(f"{name} from {SHARE(losses[0], l0)} after call 1 to "
                     f"{SHARE(losses[-1], l0)} after call {len(losses)}")
    return listing(parts)


@block("grid-rollout-budget-floor", sources=[lstdq.RESULTS])
def _floor(root: Path) -> str:
    """The sweep's RBF map's floors, from the LSTD-Q study."""
    f = lstdq.records(root)["floors"].set_index("map").loc["rbf-100"]
    return (f"{f.argmax_of_projected_q:.2f} ({SHARE(f.argmax_of_projected_q, f.loss_pi0)}) "
            f"for the argmax of Q* projected on them, {f.greedy_of_projected_v:.2f} "
            f"({SHARE(f.greedy_of_projected_v, f.loss_pi0)}) for the greedy step of v* "
            f"projected on them")


def _lstdq_row(root: Path, m: str) -> list[str]:
    c = lstdq.records(root)["calls"]
    part = c[c["map"] == m].sort_values("transitions_per_call")
    finished = part[part["losses"].map(lambda x: isinstance(x, list))]
    tried = [lstdq.power(n) for n in part["transitions_per_call"]]
    hit = next(((r.transitions_per_call, FIRST(r.losses, r.loss_pi0))
                for r in finished.itertuples() if FIRST(r.losses, r.loss_pi0)), None)
    if finished.empty:
        low = "none finished within the CPU cap"
    else:
        r = min(finished.itertuples(), key=lambda r: min(r.losses))
        i = min(range(len(r.losses)), key=r.losses.__getitem__)
        low = (f"{r.losses[i]:.2f} ({SHARE(r.losses[i], r.loss_pi0)}; "
               f"{lstdq.power(r.transitions_per_call)}, call {i + 1})")
    n_calls = int(part["iterations"].iloc[0])
    return ["LSTD-Q, fresh transitions each call (API)", f"{lstdq.SHORT[m]}",
            ", ".join(tried), str(n_calls),
            f"{lstdq.power(hit[0])} (call {hit[1]})" if hit else "none", low]


@block("grid-budget-side-by-side", sources=[RESULTS, lstdq.RESULTS])
def _side_by_side(root: Path) -> str:
    """Both budget studies' answers, one row per learner and map or scheme."""
    rows = [_lstdq_row(root, m) for m in lstdq.SHORT
            if m in set(lstdq.records(root)["calls"]["map"])]
    for s, name in SCHEMES.items():
        mine = [r for r in done(root) if r["scheme"] == s]
        if not mine:
            continue
        hit = next((r for r in mine if FIRST(r["losses"], r["loss_pi0"])), None)
        low = min(mine, key=lambda r: best(r)[1])
        call, x = best(low)
        rows.append([f"rollouts + CSC, the family's operator ({name})",
                     "the sweep's 100 RBFs", ", ".join(budget(r["budget"]) for r in mine),
                     str(mine[0]["iterations"]),
                     (f"{budget(hit['budget'])} (call {FIRST(hit['losses'], hit['loss_pi0'])})"
                      if hit else "none"),
                     f"{x:.2f} ({SHARE(x, low['loss_pi0'])}; {budget(low['budget'])}, "
                     f"call {call})"])
    return md_table(["learner", "features", "transitions per call tried", "calls",
                     "first budget with a call <= 10% of pi_0's loss", "lowest loss"],
                    rows, "lllrll")
