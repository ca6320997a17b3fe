"""Every decision a scheme makes, written once: the reference schemes and batched engines call it.

The schemes of section 2 differ only in *what* they are greedy about, *under which
distribution*, and *how* the greedy policy is folded in. The functions here hold those
decisions; they work on scalars (the reference schemes, :mod:`nsrl.schemes`) and on arrays
with one entry per run (the batched engines, :mod:`nsrl.batched`), so that the two can only
differ in how they compute values, never in what they decide with them.

* the start: pi_0 takes :data:`START_ACTION` everywhere (:func:`start_policy`);
* the mixture update (1 - alpha) pi + alpha pi' of API(alpha) and the CPI family: a full
  step replaces the mixture (:func:`replaces`), and memory counts the stored policies
  (:func:`memory_after`);
* CPI's step and stopping test (Kakade & Langford 2002, Theorem 4.1; :func:`cpi_step`);
* CPI+'s candidate steps (:func:`line_search_steps`) and the rule that picks one
  (:func:`choose_steps`; :data:`LINE_SEARCH_RULES`).
"""

from __future__ import annotations

import math

import numpy as np

from nsrl.policies import Constant

START_ACTION = 0  # pi_0 of every scheme, in every state (PSDP starts from the empty policy)

# CPI's accuracy epsilon, in normalised units, when none is given: this fraction of R_max.
EPSILON_FRACTION = 1e-3

# What CPI's step and stopping test read: the greedy operator's own estimate of the
# advantage of pi' over pi ("operator"), or the true one from the model ("exact").
ADVANTAGE_SOURCES = ("operator", "exact")

# How CPI+ picks its step among the candidates min(2^i alpha, 1) (the paper's footnote says
# only "a crude line-search mechanism"):
#   "best": the candidate with the best score, the smallest step on ties;
#   "largest-improving": the largest candidate that scores above the current policy
#       (alpha, CPI's own step, when none does);
#   "doubling": from alpha, double while the next candidate scores at least as well.
LINE_SEARCH_RULES = ("best", "largest-improving", "doubling")


def start_policy() -> Constant:
    """pi_0: :data:`START_ACTION` in every state (defined on any observation space)."""
    return Constant(START_ACTION)


def replaces(alpha) -> bool | np.ndarray:
    """Whether the step (1 - alpha) pi + alpha pi' is pi' itself (alpha == 1).

    Exactly 1 only: the mixture is then dropped (no zero-weight component is kept).
    """
    return np.asarray(alpha) == 1.0 if np.ndim(alpha) else alpha == 1.0


def memory_after(memory, alpha):
    """Stored policies after folding one new deterministic policy in with step ``alpha``."""
    return np.where(replaces(alpha), 1, np.asarray(memory) + 1) if np.ndim(alpha) else \
        (1 if replaces(alpha) else memory + 1)


def check_alpha(alpha) -> float:
    """A fixed step of API(alpha) / CPI(alpha): a float in (0, 1], or ValueError."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 1:
        raise ValueError(f"alpha should be a float in (0, 1], got {alpha!r}; e.g. alpha=0.1.")
    return float(alpha)


def check_epsilon(epsilon) -> float | None:
    """CPI's epsilon: None (the default fraction of R_max) or a positive finite float."""
    if epsilon is None:
        return None
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) \
            or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon should be a positive float or None (default "
                         f"{EPSILON_FRACTION:g} R_max), got {epsilon!r}; e.g. epsilon=1e-3.")
    return float(epsilon)


def cpi_constants(r_max_model: float | None, r_max=None, epsilon=None) -> tuple[float, float]:
    """(R, epsilon) of CPI's step: the given ones, else the model's R_max and its fraction."""
    r = r_max or r_max_model or 1.0
    return float(r), float(epsilon or EPSILON_FRACTION * r)


def cpi_step(advantage, gamma: float, r_max: float, epsilon: float):
    """Kakade & Langford's step for an advantage in value units; 0 where CPI stops.

    With A = (1 - gamma) advantage (normalised units): stop when A < 2 epsilon / 3 (also on
    NaN), else alpha = min(1, (1 - gamma) (A - epsilon / 3) / (4 R)). Scalars give a float,
    arrays (one advantage per run) an array.

    Examples:
        >>> cpi_step(50.0, 0.99, 1.0, 1e-3) > 0, cpi_step(0.01, 0.99, 1.0, 1e-3)
        (True, 0.0)
    """
    a = (1.0 - gamma) * np.asarray(advantage, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        go = a >= 2.0 * epsilon / 3.0
        step = np.where(go, np.minimum(1.0, (1.0 - gamma) * (a - epsilon / 3.0) / (4.0 * r_max)),
                        0.0)
    return float(step) if step.ndim == 0 else step


def line_search_steps(alpha) -> tuple[np.ndarray, np.ndarray]:
    """CPI+'s candidates min(2^i alpha_r, 1), i = 0..ceil(log2(1/alpha_r)), for every run.

    Returns (owner, steps): each candidate's run and step. Runs with alpha_r = 0 (CPI has
    stopped) have none; each run's candidates are contiguous, smallest step first.

    Examples:
        >>> line_search_steps([0.3])[1].tolist()
        [0.3, 0.6, 1.0]
    """
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    runs = np.flatnonzero(alpha > 0)
    a = alpha[runs]
    with np.errstate(divide="ignore"):
        count = np.where(a < 1.0, np.maximum(0, np.ceil(np.log2(1.0 / a))), 0).astype(np.int64) + 1
    owner = np.repeat(runs, count)
    start = np.cumsum(count) - count
    i = np.arange(owner.size) - np.repeat(start, count)
    return owner, np.minimum(1.0, np.repeat(a, count) * 2.0**i)


def check_advantage(source: str) -> str:
    """An advantage source of :data:`ADVANTAGE_SOURCES`, or ValueError naming them."""
    if source not in ADVANTAGE_SOURCES:
        raise ValueError(f"advantage should be one of {', '.join(ADVANTAGE_SOURCES)}, got "
                         f"{source!r}; e.g. advantage='operator'.")
    return source


def check_rule(rule: str) -> str:
    """A line-search rule of :data:`LINE_SEARCH_RULES`, or ValueError naming them."""
    if rule not in LINE_SEARCH_RULES:
        raise ValueError(f"line_search should be one of {', '.join(LINE_SEARCH_RULES)}, got "
                         f"{rule!r}; e.g. line_search='best'.")
    return rule


def choose_steps(owner, scores, rule: str = "best", baseline=None) -> np.ndarray:
    """Index of the chosen candidate of every run (in run order), by CPI+'s ``rule``.

    Args:
        owner: each candidate's run, sorted (:func:`line_search_steps`).
        scores: each candidate's score (its estimated nu v).
        rule: one of :data:`LINE_SEARCH_RULES`.
        baseline: per candidate, the score of its run's current policy (``largest-improving``).
    """
    owner, scores = np.asarray(owner), np.asarray(scores, dtype=np.float64)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    group = np.cumsum(np.r_[False, owner[1:] != owner[:-1]])
    index = np.arange(owner.size)
    if rule == "best":
        top = np.maximum.reduceat(scores, starts)
        return np.minimum.reduceat(np.where(scores == top[group], index, owner.size), starts)
    if rule == "largest-improving":
        better = scores > np.asarray(baseline, dtype=np.float64)
        last = np.maximum.reduceat(np.where(better, index, -1), starts)
        return np.where(last >= 0, last, starts)
    if rule == "doubling":  # stop before the first candidate that scores below its predecessor
        drop = np.r_[False, scores[1:] < scores[:-1]] & (np.r_[-1, group[:-1]] == group)
        first_drop = np.minimum.reduceat(np.where(drop, index, owner.size), starts)
        ends = np.r_[starts[1:], owner.size] - 1
        return np.minimum(first_drop - 1, ends)
    raise ValueError(check_rule(rule))
