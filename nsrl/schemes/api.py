"""API and API(alpha) (Scherrer 2014, eqs. api and apialpha).

API:         pi_{k+1} <- G_eps(nu, v_{pi_k})
API(alpha):  pi_{k+1} <- (1 - alpha) pi_k + alpha G_eps(nu, v_{pi_k})
"""

from __future__ import annotations

import numpy as np

from nsrl.greedy.base import GreedyOperator, Nu
from nsrl.params import param, set_params
from nsrl.policies import Mixture, Policy
from nsrl.schemes import rules
from nsrl.schemes.base import Step, greedy_step

ALPHA = param(float, 0.1, gt=0, le=1)  # the fixed step of API(alpha) and CPI(alpha)


def fold_in(pi: Policy, new: Policy, alpha: float) -> Policy:
    """(1 - alpha) pi + alpha new, the update of API(alpha) and the CPI family.

    A full step (:func:`nsrl.schemes.rules.replaces`) is ``new`` itself; otherwise a
    :class:`~nsrl.policies.Mixture` that keeps every component (its memory grows by one,
    :func:`nsrl.schemes.rules.memory_after`).
    """
    return new if rules.replaces(alpha) else Mixture.fold(pi, new, alpha)


class API:
    """Approximate Policy Iteration: a full step to the greedy policy (memory 1).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = nsrl.run(API(), nsrl.ExactGreedy(mdp), 10, rng=np.random.default_rng(0))
        >>> bool(h.losses[-1] < 1e-9)
        True
    """

    name = "API"
    params: dict = {}
    fold, step_rule = "replace", "full"  # what the engines read (nsrl.schemes.rules)

    def start(self, pi0: Policy) -> None:
        """Set pi_0."""
        self.pi = pi0

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """pi_{k+1} <- G(nu, v_{pi_k})."""
        g = greedy_step(operator, self.pi, Nu(), rng)
        target, self.pi = self.pi, g.policy
        return Step(target=target, rho=Nu(), greedy=g)

    @property
    def output(self) -> Policy:
        """pi_k."""
        return self.pi


class APIAlpha(API):
    """API(alpha): mix the greedy policy in with weight alpha (paper: alpha = 0.1)."""

    params = {"alpha": ALPHA}
    fold, step_rule = "mix", "fixed"
    alpha: float  # set by set_params

    def __init__(self, alpha: float = 0.1) -> None:
        set_params(self, alpha=alpha)
        self.name = f"API({self.alpha:g})"

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """pi_{k+1} <- (1 - alpha) pi_k + alpha G(nu, v_{pi_k})."""
        g = greedy_step(operator, self.pi, Nu(), rng)
        target, self.pi = self.pi, fold_in(self.pi, g.policy, self.alpha)
        return Step(target=target, rho=Nu(), greedy=g, alpha=self.alpha)
