"""CPI (Kakade & Langford 2002), CPI(alpha) and CPI+ (Scherrer 2014, eq. cpi and section 5).

    pi_{k+1} <- (1 - alpha_{k+1}) pi_k + alpha_{k+1} G_eps(d_{pi_k,nu}, v_{pi_k})

**CPI's step and stopping rule.** Kakade & Langford state them for normalised values
((1 - gamma) sum_t gamma^t r_t, bounded by R = R_max). With ``A_hat`` the operator's
estimate of the policy advantage ``d_{pi_k,nu} (T_{pi'} v_{pi_k} - v_{pi_k})`` (value
units) and ``A = (1 - gamma) A_hat`` its normalised form, for an accuracy ``epsilon``
(normalised units):

* stop when ``A < 2 epsilon / 3`` (the output no longer changes);
* otherwise ``alpha = (1 - gamma) (A - epsilon / 3) / (4 R)``, capped at 1.

This is their Theorem 4.1 step: it guarantees ``nu v_{pi_{k+1}} >= nu v_{pi_k}`` when the
estimate is within epsilon / 3 of the true advantage, and it satisfies the paper's
``alpha_k >= (1 - gamma) epsilon / (12 R)``. The steps are tiny (the paper reports millions
of iterations), so runs are capped by their iteration count.

**CPI+** chooses the step by a line search over ``min(2^i alpha, 1)``, i = 0, 1, ..., where
alpha is CPI's step, keeping the candidate with the best estimate of ``nu v``
(``operator.value``); it shares CPI's stopping rule. **CPI(alpha)** uses a fixed step and
never stops.
"""

from __future__ import annotations

import math

import numpy as np

from nsrl.greedy.base import Occupancy
from nsrl.policies import Mixture
from nsrl.schemes.api import _check_alpha
from nsrl.schemes.base import Step


class CPI:
    """Conservative Policy Iteration with Kakade & Langford's adaptive step and stopping rule.

    Args:
        epsilon: accuracy in normalised units (default ``1e-3 * R_max`` of the MDP, or 1e-3
            when the operator has no model).
        r_max: bound R on the rewards (default: the operator's MDP ``r_max``, else 1).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = nsrl.run(CPI(), nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0))
        >>> bool(np.all(h.steps > 0))
        True
    """

    name = "CPI"

    def __init__(self, epsilon: float | None = None, r_max: float | None = None):
        for label, x in (("epsilon", epsilon), ("r_max", r_max)):
            if x is not None and not (isinstance(x, (int, float)) and x > 0):
                raise ValueError(f"{label} should be a positive float or None, got {x!r}.")
        self.epsilon, self.r_max = epsilon, r_max

    def start(self, pi0) -> None:
        """Set pi_0."""
        self.pi, self.stopped = pi0, False

    def _constants(self, operator) -> tuple[float, float, float]:
        mdp = getattr(operator, "mdp", None)
        gamma = getattr(mdp, "gamma", None) or getattr(operator, "gamma", None)
        if gamma is None:
            raise ValueError("CPI needs gamma: the operator should expose .mdp or .gamma.")
        r_max = self.r_max or (mdp.r_max if mdp is not None else 1.0) or 1.0
        epsilon = self.epsilon or 1e-3 * r_max
        return float(gamma), float(r_max), float(epsilon)

    def kakade_step(self, advantage: float, operator) -> float | None:
        """CPI's step for an estimated advantage (value units), or None when CPI stops."""
        gamma, r_max, epsilon = self._constants(operator)
        a = (1.0 - gamma) * advantage
        if not a >= 2.0 * epsilon / 3.0:  # also stops on NaN
            return None
        return min(1.0, (1.0 - gamma) * (a - epsilon / 3.0) / (4.0 * r_max))

    def choose_step(self, alpha: float, new, operator, rng) -> float:
        """The step actually taken (CPI: the Kakade-Langford step itself)."""
        return alpha

    def step(self, operator, rng) -> Step:
        """One CPI iteration: greedy under d_{pi_k,nu}, then the conservative update."""
        if self.stopped:
            return Step(stopped=True, alpha=0.0)
        rho = Occupancy(self.pi)
        g = operator.greedy(self.pi, rho, rng)
        alpha = self.kakade_step(g.advantage, operator)
        if alpha is None:
            self.stopped = True
            return Step(target=self.pi, rho=rho, greedy=g, alpha=0.0, stopped=True)
        alpha = self.choose_step(alpha, g.policy, operator, rng)
        target, self.pi = self.pi, Mixture.step(self.pi, g.policy, alpha)
        return Step(target=target, rho=rho, greedy=g, alpha=alpha)

    @property
    def output(self):
        """pi_k, a mixture of the greedy policies."""
        return self.pi


class CPIPlus(CPI):
    """CPI+: CPI whose step is the best of min(2^i alpha_CPI, 1) by estimated nu-value."""

    name = "CPI+"

    def choose_step(self, alpha: float, new, operator, rng) -> float:
        """Line search over {min(2^i alpha, 1)}; ties keep the smaller step."""
        n = max(0, math.ceil(math.log2(1.0 / alpha))) if alpha < 1.0 else 0
        candidates = [min(1.0, alpha * 2.0**i) for i in range(n + 1)]
        values = [operator.value(Mixture.step(self.pi, new, a), rng) for a in candidates]
        return candidates[int(np.argmax(values))]


class CPIAlpha(CPI):
    """CPI(alpha): CPI with a fixed step alpha and no stopping rule (paper: alpha = 0.1)."""

    def __init__(self, alpha: float = 0.1):
        super().__init__()
        self.alpha = _check_alpha(alpha)
        self.name = f"CPI({alpha:g})"

    def step(self, operator, rng) -> Step:
        """pi_{k+1} <- (1 - alpha) pi_k + alpha G(d_{pi_k,nu}, v_{pi_k})."""
        rho = Occupancy(self.pi)
        g = operator.greedy(self.pi, rho, rng)
        target, self.pi = self.pi, Mixture.step(self.pi, g.policy, self.alpha)
        return Step(target=target, rho=rho, greedy=g, alpha=self.alpha)
