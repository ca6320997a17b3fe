"""NSPI(m), non-stationary PI with a fixed period (Scherrer 2014, eq. nspi; Scherrer & Lesner 2012).

    pi_{k+1} <- G_eps(nu, v_{(sigma_k^m)^inf}),   sigma_k^m = pi_k pi_{k-1} ... pi_{k-m+1}

It starts from m copies of pi_0, keeps the last m policies and outputs the loop
(sigma_k^m)^inf. NSPI(1) is API.
"""

from __future__ import annotations

import numpy as np

from nsrl.greedy.base import GreedyOperator, Nu
from nsrl.params import param, set_params
from nsrl.policies import NonStationary, Policy
from nsrl.schemes.base import Step, greedy_step


class NSPI:
    """NSPI(m): greedy w.r.t. the value of the m-periodic loop over the last m policies.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> h = nsrl.run(NSPI(5), nsrl.ExactGreedy(mdp), 3, rng=np.random.default_rng(0))
        >>> h.memory.tolist()
        [5, 5, 5]
    """

    params = {"m": param(int, 5, ge=1, le=2**31 - 1)}  # memory is stored as an int32
    fold, step_rule = "window", "full"  # what the engines read (nsrl.schemes.rules)
    m: int  # set by set_params

    def __init__(self, m: int = 5) -> None:
        set_params(self, m=m)
        self.name = f"NSPI({self.m})"

    def start(self, pi0: Policy) -> None:
        """sigma_0^m = pi_0 ... pi_0 (m copies)."""
        self.loop = NonStationary.repeated(pi0, self.m)  # one segment, whatever m

    def step(self, operator: GreedyOperator, rng: np.random.Generator) -> Step:
        """pi_{k+1} <- G(nu, v_{(sigma_k^m)^inf}); drop the oldest policy."""
        g = greedy_step(operator, self.loop, Nu(), rng)
        target = self.loop
        self.loop = target.shifted(g.policy)
        return Step(target=target, rho=Nu(), greedy=g)

    @property
    def output(self) -> NonStationary:
        """(sigma_k^m)^inf."""
        return self.loop
