"""The paper's calibration sentence, made measurable.

Scherrer (2014, suppl. "Domain and Approximations") sets the noise of its operator "so that
the algorithms are significantly perturbed but not too much". Two measures of a reading say
how perturbed it is, both relative to the exact greedy operator on the same MDPs:

* :func:`step_fraction`, *how much one greedy step keeps*: API's first step from pi_0 (the
  operator's greedy step under nu) improves the loss by this fraction of what the exact greedy
  step from pi_0 gains, ``(E L(pi_0) - E L(pi_1)) / (E L(pi_0) - E L(pi_1*))``: 1 when the
  operator is exact, 0 when its step is no better than pi_0, negative when it is worse;
* :func:`relative_spread`, *how erratic the runs are*: API's within-MDP standard deviation of
  the final loss (the paper's E[Std[L | M]], the scheme it calls the most variable), relative
  to pi_0's loss: 0 when every run on an MDP ends at the same loss.

A reading is **calibrated** (:func:`is_calibrated`) when both are inside the ranges
:data:`FRACTION` and :data:`SPREAD`, fixed before any reading was searched: "significantly
perturbed" is read as a first step that loses at least 10% of the exact step's gain and runs
whose final losses differ by at least 1% of pi_0's loss; "not too much" as a first step that
keeps at least half of that gain and a spread below 20% of pi_0's loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nsrl.exact import backend
from nsrl.greedy.base import Nu
from nsrl.greedy.model_based import ExactGreedy
from nsrl.schemes import rules

FRACTION = (0.5, 0.9)
SPREAD = (0.01, 0.2)
KEYS = ["n_states", "n_actions", "branching", "mdp"]


def step_fraction(loss_pi0, loss_exact, loss_step) -> float:
    """The fraction of the exact greedy step's gain that an approximate step keeps.

    Args:
        loss_pi0: L(pi_0), one per MDP (or a scalar).
        loss_exact: L of the exact greedy policy of v_{pi_0}, one per MDP.
        loss_step: L of the approximate step (its mean over runs), one per MDP.

    Returns:
        ``(mean loss_pi0 - mean loss_step) / (mean loss_pi0 - mean loss_exact)``; a ratio of
        means, so that an MDP where pi_0 is already nearly greedy does not dominate.

    Raises:
        ValueError: the exact step gains nothing on average (the fraction is undefined).

    Examples:
        >>> step_fraction([30.0, 20.0], [10.0, 0.0], [20.0, 10.0])
        0.5
    """
    l0, lx, l1 = (float(np.mean(x)) for x in (loss_pi0, loss_exact, loss_step))
    if not l0 - lx > 0:
        raise ValueError(f"the exact greedy step gains nothing on these MDPs (L(pi_0) = {l0:g}, "
                         f"after the exact step {lx:g}): the fraction is undefined; measure it "
                         f"on MDPs where pi_0 is not greedy.")
    return (l0 - l1) / (l0 - lx)


def relative_spread(within_std, loss_pi0) -> float:
    """Mean within-MDP std of the final loss, relative to the mean loss of pi_0.

    Examples:
        >>> relative_spread([0.5, 1.5], [40.0, 60.0])
        0.02
    """
    return float(np.mean(within_std)) / float(np.mean(loss_pi0))


def is_calibrated(fraction: float, spread: float) -> bool:
    """Whether both measures are inside :data:`FRACTION` and :data:`SPREAD`."""
    return bool(FRACTION[0] <= fraction <= FRACTION[1] and SPREAD[0] <= spread <= SPREAD[1])


def exact_step_losses(mdp) -> tuple[float, float]:
    """(L(pi_0), L(greedy(v_{pi_0}))): pi_0's loss and the exact greedy step's, from the model."""
    pi0 = rules.start_policy()
    step = ExactGreedy(mdp).greedy(pi0, Nu(), None).policy
    b = backend(mdp)
    return float(b.loss(pi0)), float(b.loss(step))


def reference_losses(sweep) -> pd.DataFrame:
    """:func:`exact_step_losses` of every MDP of ``sweep``: columns KEYS, loss_pi0, loss_exact."""
    rows = []
    for shard in sweep.shards():
        l0, lx = exact_step_losses(sweep.model(shard))
        rows.append((shard.n_states, shard.n_actions, shard.branching, shard.mdp, l0, lx))
    return pd.DataFrame(rows, columns=KEYS + ["loss_pi0", "loss_exact"])


def measures(pm: pd.DataFrame, reference: pd.DataFrame) -> dict:
    """Both measures of a reading from its per-MDP statistics and :func:`reference_losses`.

    Args:
        pm: per-MDP statistics (:func:`nsrl.experiments.stats.per_mdp`) with API's rows.
        reference: the reference losses of the same MDPs.

    Returns:
        ``{"step fraction", "relative spread", "calibrated"}``.
    """
    api = pm[pm["scheme"] == "API"]
    first = api[api["iteration"] == 1].merge(reference, on=KEYS)
    last = api[api["iteration"] == api["iteration"].max()].merge(reference, on=KEYS)
    if first.empty:
        raise ValueError("the calibration measures need API's runs: the table has none.")
    fraction = step_fraction(first["loss_pi0"], first["loss_exact"], first["mean"])
    spread = relative_spread(last["std"], last["loss_pi0"])
    return {"step fraction": fraction, "relative spread": spread,
            "calibrated": is_calibrated(fraction, spread)}
