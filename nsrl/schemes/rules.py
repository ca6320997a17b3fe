"""Every decision a scheme makes, written once: the reference schemes and batched engines call it.

The schemes of section 2 differ only in *what* they are greedy about, *under which
distribution*, and *how* the greedy policy is folded in. Each scheme states these as data
(class attributes read here, never its class):

* ``fold``: how the greedy policy enters the output (:data:`FOLDS`): ``"replace"`` (API),
  ``"mix"`` (the mixture (1 - alpha) pi + alpha pi' of API(alpha) and the CPI family; a full
  step replaces the mixture, :func:`replaces`), ``"window"`` (NSPI(m): the last m policies),
  ``"prepend"`` (PSDP: the growing sequence); the memory follows (:func:`memory_after`);
* ``step_rule``: the step (:data:`STEP_RULES`): ``"full"``, ``"fixed"`` (``scheme.alpha``) or
  ``"kakade"`` (Kakade & Langford 2002, Theorem 4.1, with a stopping test; :func:`step_size`),
  read from the advantage source ``scheme.advantage`` (:func:`read_advantage`);
* ``line_search``: None, or CPI+'s rule (:data:`LINE_SEARCH_RULES`) choosing among the
  candidates :func:`line_search_steps` (:func:`choose_steps`).

The functions work on scalars (the reference schemes, :mod:`nsrl.schemes`) and on arrays with
one entry per run (the batched engines, :mod:`nsrl.batched`), so that the two can only differ
in how they compute values, never in what they decide with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from nsrl.policies import Constant

START_ACTION = 0  # pi_0 of every scheme, in every state (PSDP starts from the empty policy)

# CPI's accuracy epsilon, in normalised units, when none is given: this fraction of R_max.
EPSILON_FRACTION = 1e-3

FOLDS = ("replace", "mix", "window", "prepend")
STEP_RULES = ("full", "fixed", "kakade")

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


def replaces(alpha: float | np.ndarray) -> bool | np.ndarray:
    """Whether the step (1 - alpha) pi + alpha pi' is pi' itself (alpha == 1).

    Exactly 1 only: the mixture is then dropped (no zero-weight component is kept).
    """
    return np.asarray(alpha) == 1.0 if np.ndim(alpha) else alpha == 1.0


def mix(old: np.ndarray, new: np.ndarray, alpha: float | np.ndarray) -> np.ndarray:
    """(1 - alpha) old + alpha new: the fold of a mixture's table, rewards or system.

    ``alpha`` is a scalar or one step per run (the leading axis of ``old`` and ``new``); a
    full step (alpha == 1) gives ``new`` exactly.

    Examples:
        >>> mix(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([0.25])).tolist()
        [[0.75, 0.25]]
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    alpha = alpha.reshape(alpha.shape + (1,) * (np.ndim(old) - alpha.ndim))
    return (1 - alpha) * old + alpha * new


# A scheme object (nsrl.schemes.base.Scheme): its fold and step rule, and the options its
# rule reads (alpha, advantage, r_max, epsilon, m) when it has them.
AnyScheme = Any


def start_memory(scheme: AnyScheme) -> int:
    """Policies stored by pi_0's output: m copies of pi_0 for NSPI(m), none for PSDP, else 1."""
    return {"window": getattr(scheme, "m", 1), "prepend": 0}.get(scheme.fold, 1)


@overload
def memory_after(scheme: AnyScheme, memory: int, alpha: float = 1.0) -> int: ...
@overload
def memory_after(scheme: AnyScheme, memory: np.ndarray,
                 alpha: float | np.ndarray = 1.0) -> np.ndarray: ...
@overload
def memory_after(scheme: AnyScheme, memory: int, alpha: np.ndarray) -> np.ndarray: ...
def memory_after(scheme: AnyScheme, memory: npt.ArrayLike,
                 alpha: float | np.ndarray = 1.0) -> int | np.ndarray:
    """Policies stored after ``scheme`` folds one new deterministic policy in with ``alpha``.

    ``memory`` and ``alpha`` are scalars or one entry per run.

    Examples:
        >>> from nsrl.schemes import APIAlpha, NSPI
        >>> memory_after(APIAlpha(0.1), 3, 0.1), memory_after(NSPI(5), 5)
        (4, 5)
    """
    memory = np.asarray(memory)
    if scheme.fold == "mix":
        out = np.where(replaces(alpha), 1, memory + 1)
    elif scheme.fold == "prepend":
        out = memory + 1
    else:
        out = np.full(memory.shape, start_memory(scheme))
    return int(out) if out.ndim == 0 else out


def cpi_constants(r_max_model: float | None, r_max: float | None = None,
                  epsilon: float | None = None) -> tuple[float, float]:
    """(R, epsilon) of CPI's step: the given ones, else the model's R_max and its fraction."""
    r = r_max or r_max_model or 1.0
    return float(r), float(epsilon or EPSILON_FRACTION * r)


def read_advantage(scheme: AnyScheme, estimate: float | np.ndarray,
                   exact: Callable[[], float | np.ndarray]) -> float | np.ndarray:
    """The advantage CPI's step reads: the operator's ``estimate``, or ``exact()`` from the model.

    ``exact`` is called only when ``scheme.advantage == "exact"`` (it costs an evaluation).
    """
    return exact() if scheme.advantage == "exact" else estimate


def step_size(scheme: AnyScheme, advantage: Callable[[], float | np.ndarray] | None,
              gamma: float | None, r_max_model: float | None) -> float | np.ndarray:
    """The step of ``scheme`` before any line search; 0 where its stopping test fires.

    ``"full"``: 1; ``"fixed"``: ``scheme.alpha``; ``"kakade"``: :func:`cpi_step` with the
    scheme's R and epsilon (:func:`cpi_constants`), or CPI+'s ``alpha_min`` where it is
    given. ``advantage`` is called (no argument) only by the rules that read it; scalars give
    a float, per-run arrays an array.
    """
    if scheme.step_rule == "kakade" and getattr(scheme, "alpha_min", None) is not None:
        return float(scheme.alpha_min)  # CPI+ with a given smallest step: no stopping test
    if scheme.step_rule == "kakade":
        if gamma is None:
            raise ValueError("CPI's step needs gamma: the operator should expose .mdp or .gamma.")
        r_max, epsilon = cpi_constants(r_max_model, scheme.r_max, scheme.epsilon)
        if advantage is None:
            raise ValueError("CPI's step reads the advantage: pass advantage=.")
        return cpi_step(advantage(), gamma, r_max, epsilon)
    return scheme.alpha if scheme.step_rule == "fixed" else 1.0


def cpi_step(advantage: float | np.ndarray, gamma: float, r_max: float,
             epsilon: float) -> float | np.ndarray:
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


def line_search_steps(alpha: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
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


def choose_steps(owner: npt.ArrayLike, scores: npt.ArrayLike, rule: str = "best",
                 baseline: npt.ArrayLike | None = None) -> np.ndarray:
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
    raise ValueError(f"line_search should be one of {', '.join(LINE_SEARCH_RULES)}, got "
                     f"{rule!r}; e.g. line_search='best'.")
